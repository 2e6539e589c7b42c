/*
 * test_e2e_multidev.c — contexts of two devices (spec 1.2-1.4, 1.7: one heap per (context,
 * device)): heap sizes set per device, one program built for both, both devices allocating at
 * once from two host threads, statistics per device, a block of one device freed by a kernel
 * on the other (an invalid free there, nothing lost on either heap), the reset of one device's
 * heap leaving the other's alone, and the context's release freeing both heaps.
 *
 * The devices are the first two that report the extension on the first platform that has two
 * (find_two). On pocl, ctest asks for two CPU devices (POCL_DEVICES="cpu cpu"); on NVIDIA's
 * driver they are two GPUs; where no platform has two, every case is skipped, saying so.
 */
#include <pthread.h>
#include <time.h>

#include "e2e_util.h"

#define ITEMS 2048 /* work-items of a launch, each allocating (i % 13 + 1) * WORDS words */
#define WORDS 4
#define ROUNDS 12

typedef struct multidev {
  e2e env; /* the platform and the entry points; env.device is dev[0] */
  cl_device_id dev[2];
  size_t heap_size[2];
  cl_context context;
  cl_command_queue queue[2];
  cl_program program;
  int gone; /* the context's destructor callback ran */
} multidev;

static multidev m;
static int have_two = -1; /* -1 not looked yet, else 1 or 0 (then why_not says why) */
static char why_not[512];

/* The first platform with two devices that report the extension, its first two of them into
 * m.dev and its entry points into m.env: pocl's two CPU devices under ctest, two GPUs on
 * NVIDIA's driver, whatever other platforms the loader lists first. Where no platform has two,
 * why_not says what each has; that fails the test where ctest asked pocl for two
 * (POCL_DEVICES set, a pocl platform with fewer), and skips it elsewhere. */
static int find_two(void) {
  e2e_lookup(&m.env);
  cl_uint np = 0;
  assert_int_equal(clGetPlatformIDs(0, NULL, &np), CL_SUCCESS);
  cl_platform_id *ps = calloc(np, sizeof(*ps));
  assert_int_equal(clGetPlatformIDs(np, ps, NULL), CL_SUCCESS);
  cl_platform_id chosen = NULL;
  int pocl_short = 0;
  size_t used =
      (size_t)snprintf(why_not, sizeof(why_not), "needs two devices with %s on one platform; found",
                       CL_EXT_DEVICE_MALLOC_EXTENSION_NAME);
  for (cl_uint p = 0; p < np && !chosen; p++) {
    cl_uint n = 0, found = 0;
    if (clGetDeviceIDs(ps[p], CL_DEVICE_TYPE_ALL, 0, NULL, &n) != CL_SUCCESS)
      n = 0;
    cl_device_id *all = calloc(n ? n : 1, sizeof(*all));
    if (n && clGetDeviceIDs(ps[p], CL_DEVICE_TYPE_ALL, n, all, NULL) != CL_SUCCESS)
      n = 0;
    for (cl_uint i = 0; i < n; i++) {
      char *ext = cldm_cl_device_info(all[i], CL_DEVICE_EXTENSIONS, NULL);
      if (ext && cldm_cl_has_word(ext, CL_EXT_DEVICE_MALLOC_EXTENSION_NAME)) {
        if (found < 2)
          m.dev[found] = all[i];
        found++;
      }
      free(ext);
    }
    free(all);
    char *name = cldm_test_platform_info(ps[p], CL_PLATFORM_NAME, NULL);
    if (found >= 2)
      chosen = ps[p];
    else if (name && strstr(name, "Portable Computing Language"))
      pocl_short = 1;
    if (used < sizeof(why_not))
      used += (size_t)snprintf(why_not + used, sizeof(why_not) - used, "%s \"%s\": %u of %u",
                               p ? "," : "", name ? name : "?", found, n);
    free(name);
  }
  free(ps);
  if (!chosen) {
    if (pocl_short && getenv("POCL_DEVICES")) /* ctest sets POCL_DEVICES: pocl must give two */
      fail_msg("%s (POCL_DEVICES=%s)", why_not, getenv("POCL_DEVICES"));
    return 0;
  }
  m.env.platform = chosen;
  m.env.device = m.dev[0];
  m.env.set_heap_size = (clSetDeviceHeapSizeEXT_fn)clGetExtensionFunctionAddressForPlatform(
      chosen, "clSetDeviceHeapSizeEXT");
  m.env.heap_info = (clGetDeviceHeapInfoEXT_fn)clGetExtensionFunctionAddressForPlatform(
      chosen, "clGetDeviceHeapInfoEXT");
  m.env.reset_heap = (clEnqueueResetDeviceHeapEXT_fn)clGetExtensionFunctionAddressForPlatform(
      chosen, "clEnqueueResetDeviceHeapEXT");
  assert_non_null(m.env.set_heap_size);
  assert_non_null(m.env.heap_info);
  assert_non_null(m.env.reset_heap);
  return 1;
}

static int two(void) {
  if (have_two < 0)
    have_two = find_two();
  return have_two;
}

/* At the start of each case (cmocka skips only from a test's body). */
static void need_two(void) {
  if (!two()) {
    print_message("skipped: %s\n", why_not);
    skip();
  }
}

static void CL_CALLBACK on_destroy(cl_context c, void *flag) {
  __atomic_store_n((int *)flag, 1, __ATOMIC_RELEASE);
}

/* Sets the heap sizes (2 MiB and 4 MiB: no heap exists), makes the context of both devices, a
 * queue each and the program of alloc_basic.spv built for both. */
static int open_context(void **state) {
  if (!two())
    return 0;
  for (int d = 0; d < 2; d++) {
    m.heap_size[d] = (size_t)(d + 1) << 21;
    assert_int_equal(m.env.set_heap_size(m.dev[d], m.heap_size[d]), CL_SUCCESS);
  }
  cl_int err;
  m.context = clCreateContext(NULL, 2, m.dev, NULL, NULL, &err);
  assert_int_equal(err, CL_SUCCESS);
  m.gone = 0;
  assert_int_equal(clSetContextDestructorCallback(m.context, on_destroy, &m.gone), CL_SUCCESS);
  for (int d = 0; d < 2; d++) {
    m.queue[d] = clCreateCommandQueueWithProperties(m.context, m.dev[d], NULL, &err);
    assert_int_equal(err, CL_SUCCESS);
  }
  size_t size;
  void *il = e2e_read_file("kernels/alloc_basic.spv", &size);
  m.program = clCreateProgramWithIL(m.context, il, size, &err);
  free(il);
  assert_int_equal(err, CL_SUCCESS);
  err = clBuildProgram(m.program, 2, m.dev, "", NULL, NULL);
  if (err != CL_SUCCESS) {
    char log[8192] = "";
    clGetProgramBuildInfo(m.program, m.dev[1], CL_PROGRAM_BUILD_LOG, sizeof(log) - 1, log, NULL);
    fail_msg("clBuildProgram for both devices = %d: %s", err, log);
  }
  return 0;
}

/* Releases everything: both heaps go with the context (its destructor callback runs, and both
 * sizes may be set again), polled for up to 20 s as the driver may destroy it in a thread of
 * its own. */
static int close_context(void **state) {
  if (!two())
    return 0;
  clReleaseProgram(m.program);
  for (int d = 0; d < 2; d++)
    clReleaseCommandQueue(m.queue[d]);
  clReleaseContext(m.context);
  struct timespec ms = {0, 10000000};
  cl_int err[2] = {CL_INVALID_OPERATION, CL_INVALID_OPERATION};
  for (int i = 0; i < 2000; i++) {
    for (int d = 0; d < 2; d++)
      if (err[d] == CL_INVALID_OPERATION)
        err[d] = m.env.set_heap_size(m.dev[d], CL_DEVICE_HEAP_SIZE_DEFAULT_EXT);
    if (err[0] != CL_INVALID_OPERATION && err[1] != CL_INVALID_OPERATION &&
        __atomic_load_n(&m.gone, __ATOMIC_ACQUIRE))
      break;
    nanosleep(&ms, NULL);
  }
  assert_int_equal(err[0], CL_SUCCESS);
  assert_int_equal(err[1], CL_SUCCESS);
  assert_int_equal(__atomic_load_n(&m.gone, __ATOMIC_ACQUIRE), 1);
  return 0;
}

static cl_ulong stat(int d, cl_device_heap_info_ext name) {
  cl_ulong v = 0;
  assert_int_equal(m.env.heap_info(m.queue[d], name, sizeof(v), &v, NULL), CL_SUCCESS);
  return v;
}

/* The kernels of one device's work: fill, check (counting into `bad`) and release on `ptrs`. */
typedef struct work {
  int device;
  cl_mem ptrs, bad;
  cl_kernel fill, check, release;
  pthread_barrier_t *start;
  cl_int err;
  cl_uint bad_count;
} work;

static void work_open(work *w, int device) {
  w->device = device;
  cl_int err;
  w->ptrs = clCreateBuffer(m.context, CL_MEM_READ_WRITE, ITEMS * sizeof(cl_ulong), NULL, &err);
  assert_int_equal(err, CL_SUCCESS);
  w->bad = clCreateBuffer(m.context, CL_MEM_READ_WRITE, sizeof(cl_uint), NULL, &err);
  assert_int_equal(err, CL_SUCCESS);
  w->fill = e2e_kernel(m.program, "fill");
  w->check = e2e_kernel(m.program, "check");
  w->release = e2e_kernel(m.program, "release");
  cl_uint words = WORDS, per_item = 1;
  assert_int_equal(clSetKernelArg(w->fill, 0, sizeof(cl_mem), &w->ptrs), CL_SUCCESS);
  assert_int_equal(clSetKernelArg(w->fill, 1, sizeof(words), &words), CL_SUCCESS);
  assert_int_equal(clSetKernelArg(w->check, 0, sizeof(cl_mem), &w->ptrs), CL_SUCCESS);
  assert_int_equal(clSetKernelArg(w->check, 1, sizeof(words), &words), CL_SUCCESS);
  assert_int_equal(clSetKernelArg(w->check, 2, sizeof(per_item), &per_item), CL_SUCCESS);
  assert_int_equal(clSetKernelArg(w->check, 3, sizeof(cl_mem), &w->bad), CL_SUCCESS);
  assert_int_equal(clSetKernelArg(w->release, 0, sizeof(cl_mem), &w->ptrs), CL_SUCCESS);
  cl_uint zero = 0;
  assert_int_equal(clEnqueueFillBuffer(m.queue[device], w->bad, &zero, sizeof(zero), 0,
                                       sizeof(zero), 0, NULL, NULL),
                   CL_SUCCESS);
  assert_int_equal(clFinish(m.queue[device]), CL_SUCCESS);
}

static void work_close(work *w) {
  clReleaseKernel(w->fill);
  clReleaseKernel(w->check);
  clReleaseKernel(w->release);
  clReleaseMemObject(w->ptrs);
  clReleaseMemObject(w->bad);
}

/* Enqueues `k` on the work's device (ITEMS work-items) and waits. */
static cl_int work_run(const work *w, cl_kernel k) {
  size_t global = ITEMS;
  cl_int err = clEnqueueNDRangeKernel(m.queue[w->device], k, 1, NULL, &global, NULL, 0, NULL, NULL);
  return err != CL_SUCCESS ? err : clFinish(m.queue[w->device]);
}

static cl_uint work_bad(const work *w) {
  cl_uint bad = 0;
  assert_int_equal(
      clEnqueueReadBuffer(m.queue[w->device], w->bad, CL_TRUE, 0, sizeof(bad), &bad, 0, NULL, NULL),
      CL_SUCCESS);
  return bad;
}

/* A host thread's rounds on its device: fill, check, release; the last round's blocks stay. */
static void *work_thread(void *arg) {
  work *w = arg;
  pthread_barrier_wait(w->start); /* the first launches on both devices create both heaps */
  cl_int err = CL_SUCCESS;
  for (int r = 0; r < ROUNDS && err == CL_SUCCESS; r++) {
    err = work_run(w, w->fill);
    if (err == CL_SUCCESS)
      err = work_run(w, w->check);
    if (err == CL_SUCCESS && r < ROUNDS - 1)
      err = work_run(w, w->release);
  }
  w->err = err;
  return NULL;
}

/* Live allocations, bytes in use, failures and invalid frees of device d's heap. */
static void expect_heap(int d, cl_ulong live, cl_ulong invalid_frees) {
  assert_int_equal(stat(d, CL_DEVICE_HEAP_INFO_LIVE_ALLOCATIONS_EXT), live);
  assert_int_equal(stat(d, CL_DEVICE_HEAP_INFO_FAILED_ALLOCATIONS_EXT), 0);
  assert_int_equal(stat(d, CL_DEVICE_HEAP_INFO_INVALID_FREES_EXT), invalid_frees);
  cl_ulong in_use = stat(d, CL_DEVICE_HEAP_INFO_BYTES_IN_USE_EXT);
  /* each block at least its (i % 13 + 1) * WORDS words */
  assert_true(live ? in_use >= ITEMS * WORDS * sizeof(cl_uint) : in_use == 0);
}

static void test_sizes_per_device(void **state) {
  need_two();
  cl_ulong size[2];
  for (int d = 0; d < 2; d++) { /* no heap yet: the size one created now would have */
    size[d] = stat(d, CL_DEVICE_HEAP_INFO_SIZE_EXT);
    assert_true(size[d] <= m.heap_size[d] && size[d] > m.heap_size[d] / 2);
    assert_int_equal(stat(d, CL_DEVICE_HEAP_INFO_LIVE_ALLOCATIONS_EXT), 0);
  }
  assert_true(size[1] > size[0]);
  work w[2];
  for (int d = 0; d < 2; d++) {
    work_open(&w[d], d);
    assert_int_equal(work_run(&w[d], w[d].fill), CL_SUCCESS);
    assert_int_equal(stat(d, CL_DEVICE_HEAP_INFO_SIZE_EXT), size[d]);
    /* a heap of the device exists in a live context: its size is fixed, the other's too */
    assert_int_equal(m.env.set_heap_size(m.dev[d], 4u << 20), CL_INVALID_OPERATION);
  }
  for (int d = 0; d < 2; d++) {
    expect_heap(d, ITEMS, 0);
    assert_int_equal(work_run(&w[d], w[d].release), CL_SUCCESS);
    expect_heap(d, 0, 0);
    work_close(&w[d]);
  }
}

static void test_concurrent_allocation(void **state) {
  need_two();
  pthread_barrier_t start;
  pthread_barrier_init(&start, NULL, 2);
  work w[2];
  pthread_t thread[2];
  for (int d = 0; d < 2; d++) {
    work_open(&w[d], d);
    w[d].start = &start;
  }
  for (int d = 0; d < 2; d++)
    assert_int_equal(pthread_create(&thread[d], NULL, work_thread, &w[d]), 0);
  for (int d = 0; d < 2; d++)
    pthread_join(thread[d], NULL);
  pthread_barrier_destroy(&start);
  for (int d = 0; d < 2; d++) {
    assert_int_equal(w[d].err, CL_SUCCESS);
    assert_int_equal(work_bad(&w[d]), 0);
    /* each device's heap holds its own thread's last round, exactly */
    expect_heap(d, ITEMS, 0);
  }
  for (int d = 0; d < 2; d++) {
    assert_int_equal(work_run(&w[d], w[d].release), CL_SUCCESS);
    expect_heap(d, 0, 0);
    work_close(&w[d]);
  }
}

static void test_free_on_other_device(void **state) {
  need_two();
  work w[2];
  for (int d = 0; d < 2; d++) {
    work_open(&w[d], d);
    assert_int_equal(work_run(&w[d], w[d].fill), CL_SUCCESS);
  }
  /* device 1 frees device 0's blocks (a copy of their pointers, which release zeroes): not
   * blocks of its heap, so invalid frees there, and nothing freed on either heap */
  cl_int err;
  cl_mem theirs =
      clCreateBuffer(m.context, CL_MEM_READ_WRITE, ITEMS * sizeof(cl_ulong), NULL, &err);
  assert_int_equal(err, CL_SUCCESS);
  assert_int_equal(clEnqueueCopyBuffer(m.queue[0], w[0].ptrs, theirs, 0, 0,
                                       ITEMS * sizeof(cl_ulong), 0, NULL, NULL),
                   CL_SUCCESS);
  assert_int_equal(clFinish(m.queue[0]), CL_SUCCESS);
  assert_int_equal(clSetKernelArg(w[1].release, 0, sizeof(cl_mem), &theirs), CL_SUCCESS);
  assert_int_equal(work_run(&w[1], w[1].release), CL_SUCCESS);
  clReleaseMemObject(theirs);
  expect_heap(1, ITEMS, ITEMS);
  expect_heap(0, ITEMS, 0);
  /* device 0's blocks are intact, and its own kernel frees them; device 1's its own */
  assert_int_equal(work_run(&w[0], w[0].check), CL_SUCCESS);
  assert_int_equal(work_bad(&w[0]), 0);
  assert_int_equal(work_run(&w[0], w[0].release), CL_SUCCESS);
  expect_heap(0, 0, 0);
  assert_int_equal(clSetKernelArg(w[1].release, 0, sizeof(cl_mem), &w[1].ptrs), CL_SUCCESS);
  assert_int_equal(work_run(&w[1], w[1].release), CL_SUCCESS);
  expect_heap(1, 0, ITEMS);
  for (int d = 0; d < 2; d++)
    work_close(&w[d]);
}

static void test_reset_one_device(void **state) {
  need_two();
  work w[2];
  for (int d = 0; d < 2; d++) {
    work_open(&w[d], d);
    assert_int_equal(work_run(&w[d], w[d].fill), CL_SUCCESS);
  }
  cl_event ev;
  assert_int_equal(m.env.reset_heap(m.queue[0], 0, NULL, &ev), CL_SUCCESS);
  assert_int_equal(clWaitForEvents(1, &ev), CL_SUCCESS);
  clReleaseEvent(ev);
  expect_heap(0, 0, 0);
  assert_int_equal(stat(0, CL_DEVICE_HEAP_INFO_PEAK_BYTES_HELD_EXT), 0);
  /* device 1's heap: its blocks still live and intact */
  expect_heap(1, ITEMS, 0);
  assert_true(stat(1, CL_DEVICE_HEAP_INFO_PEAK_BYTES_HELD_EXT) > 0);
  assert_int_equal(work_run(&w[1], w[1].check), CL_SUCCESS);
  assert_int_equal(work_bad(&w[1]), 0);
  assert_int_equal(work_run(&w[1], w[1].release), CL_SUCCESS);
  expect_heap(1, 0, 0);
  for (int d = 0; d < 2; d++)
    work_close(&w[d]);
}

/* Blocks left on both heaps when the application releases everything: both heaps go with the
 * context (close_context checks it). */
static void test_release_frees_both(void **state) {
  need_two();
  work w[2];
  for (int d = 0; d < 2; d++) {
    work_open(&w[d], d);
    assert_int_equal(work_run(&w[d], w[d].fill), CL_SUCCESS);
    expect_heap(d, ITEMS, 0);
    work_close(&w[d]);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_sizes_per_device, open_context, close_context),
      cmocka_unit_test_setup_teardown(test_concurrent_allocation, open_context, close_context),
      cmocka_unit_test_setup_teardown(test_free_on_other_device, open_context, close_context),
      cmocka_unit_test_setup_teardown(test_reset_one_device, open_context, close_context),
      cmocka_unit_test_setup_teardown(test_release_frees_both, open_context, close_context),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
