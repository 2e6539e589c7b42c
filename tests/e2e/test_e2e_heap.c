/*
 * test_e2e_heap.c — the heap's host API on pocl through the layer (spec 1.2-1.4, 1.7):
 * exhaustion with a small heap (NULL, failures counted, capacity fully back after frees),
 * invalid and double frees counted and harmless, reset, heap-size rules against live heaps
 * (before the first launch, after, in a second context, again once the contexts are gone),
 * two queues sharing a heap, two contexts with separate heaps, and contexts still being
 * destroyed once the application releases them (the layer frees its heaps), also when a launch
 * still runs at the last release, a heap whose memory outlives a launch that waits for a user
 * event well past the release, and a heap as large as the device allows.
 */
#include <time.h>

#include "e2e_util.h"

#define BLOCK 4096ul
#define ITEMS 1024 /* 4 MiB of requests against a 1 MiB heap */

static e2e t;

static void set_args_grab(cl_kernel k, cl_mem ptrs, cl_ulong size) {
  assert_int_equal(clSetKernelArg(k, 0, sizeof(cl_mem), &ptrs), CL_SUCCESS);
  assert_int_equal(clSetKernelArg(k, 1, sizeof(size), &size), CL_SUCCESS);
}

/* Number of non-NULL pointers; checks they are distinct and BLOCK apart at least. */
static size_t count_granted(const e2e *e, cl_mem ptrs, size_t n) {
  cl_ulong *p = malloc(n * sizeof(*p));
  assert_int_equal(
      clEnqueueReadBuffer(e->queue, ptrs, CL_TRUE, 0, n * sizeof(*p), p, 0, NULL, NULL),
      CL_SUCCESS);
  size_t granted = 0;
  for (size_t i = 0; i < n; i++)
    if (p[i]) {
      p[granted++] = p[i];
      assert_int_equal(p[i] & 15, 0);
    }
  for (size_t i = 0; i < granted; i++) /* no overlap: sorted neighbours are BLOCK apart */
    for (size_t j = i + 1; j < granted; j++) {
      cl_ulong a = p[i] < p[j] ? p[i] : p[j], b = p[i] < p[j] ? p[j] : p[i];
      if (b - a < BLOCK)
        fail_msg("allocations %#llx and %#llx overlap", (unsigned long long)a,
                 (unsigned long long)b);
    }
  free(p);
  return granted;
}

static void test_exhaustion_and_reuse(void **state) {
  e2e_lookup(&t);
  assert_int_equal(t.set_heap_size(t.device, CL_DEVICE_HEAP_SIZE_MIN_EXT), CL_SUCCESS);
  e2e_open(&t);
  cl_program p = e2e_program(&t, "exhaust");
  cl_kernel grab = e2e_kernel(p, "grab"), release = e2e_kernel(p, "release");
  cl_mem ptrs = e2e_buffer(&t, ITEMS * sizeof(cl_ulong));
  set_args_grab(grab, ptrs, BLOCK);
  clSetKernelArg(release, 0, sizeof(cl_mem), &ptrs);

  e2e_run(&t, grab, ITEMS);
  size_t first = count_granted(&t, ptrs, ITEMS);
  cl_ulong size = e2e_heap_stat(&t, NULL, CL_DEVICE_HEAP_INFO_SIZE_EXT);
  assert_true(size <= CL_DEVICE_HEAP_SIZE_MIN_EXT && size >= CL_DEVICE_HEAP_SIZE_MIN_EXT / 2);
  /* full: some requests failed, and were counted; what was granted fills the heap well */
  assert_true(first > 0 && first < ITEMS);
  assert_int_equal(e2e_heap_stat(&t, NULL, CL_DEVICE_HEAP_INFO_FAILED_ALLOCATIONS_EXT),
                   ITEMS - first);
  assert_int_equal(e2e_heap_stat(&t, NULL, CL_DEVICE_HEAP_INFO_LIVE_ALLOCATIONS_EXT), first);
  assert_true(first * BLOCK >= size * 8 / 10);
  print_message("1 MiB heap: %zu of %d 4 KiB blocks granted (%.1f %% of the usable %llu bytes)\n",
                first, ITEMS, 100.0 * first * BLOCK / size, (unsigned long long)size);

  /* every block back after the frees: the same number is granted again */
  e2e_run(&t, release, ITEMS);
  assert_int_equal(e2e_heap_stat(&t, NULL, CL_DEVICE_HEAP_INFO_LIVE_ALLOCATIONS_EXT), 0);
  e2e_run(&t, grab, ITEMS);
  assert_int_equal(count_granted(&t, ptrs, ITEMS), first);

  /* reset frees everything as an ordered command and zeroes the counters */
  cl_event ev;
  assert_int_equal(t.reset_heap(t.queue, 0, NULL, &ev), CL_SUCCESS);
  assert_int_equal(clWaitForEvents(1, &ev), CL_SUCCESS);
  clReleaseEvent(ev);
  assert_int_equal(e2e_heap_stat(&t, NULL, CL_DEVICE_HEAP_INFO_LIVE_ALLOCATIONS_EXT), 0);
  assert_int_equal(e2e_heap_stat(&t, NULL, CL_DEVICE_HEAP_INFO_FAILED_ALLOCATIONS_EXT), 0);
  assert_int_equal(e2e_heap_stat(&t, NULL, CL_DEVICE_HEAP_INFO_PEAK_BYTES_HELD_EXT), 0);
  assert_int_equal(e2e_heap_stat(&t, NULL, CL_DEVICE_HEAP_INFO_BYTES_HELD_EXT), 0);
  e2e_run(&t, grab, ITEMS);
  assert_int_equal(count_granted(&t, ptrs, ITEMS), first);
  e2e_run(&t, release, ITEMS);

  clReleaseMemObject(ptrs);
  clReleaseKernel(grab);
  clReleaseKernel(release);
  clReleaseProgram(p);
  e2e_close(&t);
}

static void test_invalid_frees(void **state) {
  e2e_open(&t);
  cl_program p = e2e_program(&t, "exhaust");
  cl_kernel bad = e2e_kernel(p, "bad_frees");
  cl_mem ptrs = e2e_buffer(&t, 64 * sizeof(cl_ulong));
  clSetKernelArg(bad, 0, sizeof(cl_mem), &ptrs);
  e2e_run(&t, bad, 64);
  assert_int_equal(e2e_heap_stat(&t, NULL, CL_DEVICE_HEAP_INFO_INVALID_FREES_EXT), 128);
  assert_int_equal(e2e_heap_stat(&t, NULL, CL_DEVICE_HEAP_INFO_LIVE_ALLOCATIONS_EXT), 0);
  assert_int_equal(e2e_heap_stat(&t, NULL, CL_DEVICE_HEAP_INFO_BYTES_IN_USE_EXT), 0);
  clReleaseMemObject(ptrs);
  clReleaseKernel(bad);
  clReleaseProgram(p);
  e2e_close(&t);
}

static int destroyed;
static void CL_CALLBACK on_destroy(cl_context c, void *flag) {
  __atomic_store_n((int *)flag, 1, __ATOMIC_RELEASE);
}

static void test_heap_size_rules_and_lifetime(void **state) {
  e2e_lookup(&t);
  size_t two_mib = 2u << 20, v = 0;
  assert_int_equal(t.set_heap_size(t.device, two_mib), CL_SUCCESS);
  e2e a = t, b = t;
  e2e_open(&a);
  e2e_open(&b);
  destroyed = 0;
  assert_int_equal(clSetContextDestructorCallback(a.context, on_destroy, &destroyed), CL_SUCCESS);
  /* no heap yet anywhere: still settable, and the query reports the prospective size */
  assert_int_equal(a.set_heap_size(a.device, two_mib), CL_SUCCESS);
  assert_int_equal(e2e_heap_stat(&a, NULL, CL_DEVICE_HEAP_INFO_LIVE_ALLOCATIONS_EXT), 0);
  cl_ulong prospective = e2e_heap_stat(&a, NULL, CL_DEVICE_HEAP_INFO_SIZE_EXT);
  assert_true(prospective > two_mib / 2 && prospective <= two_mib);

  cl_program p = e2e_program(&a, "exhaust");
  cl_kernel grab = e2e_kernel(p, "grab");
  cl_mem ptrs = e2e_buffer(&a, 16 * sizeof(cl_ulong));
  set_args_grab(grab, ptrs, 64);
  e2e_run(&a, grab, 16);
  assert_int_equal(e2e_heap_stat(&a, NULL, CL_DEVICE_HEAP_INFO_SIZE_EXT), prospective);
  /* a heap exists in a live context: the size is fixed (CUDA's rule) */
  assert_int_equal(a.set_heap_size(a.device, 4u << 20), CL_INVALID_OPERATION);
  assert_int_equal(clGetDeviceInfo(a.device, CL_DEVICE_HEAP_SIZE_EXT, sizeof(v), &v, NULL),
                   CL_SUCCESS);
  assert_int_equal(v, two_mib);

  /* a second queue of the same context sees the same heap */
  cl_int err;
  cl_command_queue q2 = clCreateCommandQueueWithProperties(a.context, a.device, NULL, &err);
  assert_int_equal(err, CL_SUCCESS);
  assert_int_equal(e2e_heap_stat(&a, q2, CL_DEVICE_HEAP_INFO_LIVE_ALLOCATIONS_EXT), 16);
  clReleaseCommandQueue(q2);
  /* a second context has its own heap (none yet) */
  assert_int_equal(e2e_heap_stat(&b, NULL, CL_DEVICE_HEAP_INFO_LIVE_ALLOCATIONS_EXT), 0);
  cl_program pb = e2e_program(&b, "exhaust");
  cl_kernel grab_b = e2e_kernel(pb, "grab");
  cl_mem ptrs_b = e2e_buffer(&b, 8 * sizeof(cl_ulong));
  set_args_grab(grab_b, ptrs_b, 64);
  e2e_run(&b, grab_b, 8);
  assert_int_equal(e2e_heap_stat(&b, NULL, CL_DEVICE_HEAP_INFO_LIVE_ALLOCATIONS_EXT), 8);
  assert_int_equal(e2e_heap_stat(&a, NULL, CL_DEVICE_HEAP_INFO_LIVE_ALLOCATIONS_EXT), 16);

  /* release context A entirely: its heap goes, so A is really destroyed; B's heap still
   * fixes the size */
  clReleaseMemObject(ptrs);
  clReleaseKernel(grab);
  clReleaseProgram(p);
  e2e_close(&a);
  assert_int_equal(destroyed, 1);
  assert_int_equal(b.set_heap_size(b.device, 4u << 20), CL_INVALID_OPERATION);

  /* release B in another order (context first, objects after): its heap goes too */
  cl_context bctx = b.context;
  destroyed = 0;
  assert_int_equal(clSetContextDestructorCallback(bctx, on_destroy, &destroyed), CL_SUCCESS);
  clReleaseCommandQueue(b.queue);
  clReleaseContext(bctx);
  assert_int_equal(destroyed, 0); /* the program, kernel and buffer still hold it */
  clReleaseMemObject(ptrs_b);
  clReleaseKernel(grab_b);
  clReleaseProgram(pb);
  assert_int_equal(destroyed, 1);
  /* no live heap anywhere: the size may change again */
  assert_int_equal(t.set_heap_size(t.device, 4u << 20), CL_SUCCESS);
  assert_int_equal(clGetDeviceInfo(t.device, CL_DEVICE_HEAP_SIZE_EXT, sizeof(v), &v, NULL),
                   CL_SUCCESS);
  assert_int_equal(v, 4u << 20);
}

/* Waits for the heap of a context whose objects the application released to go: once the
 * size may be set again (spec 1.2) and the context's destructor callback set *gone (the
 * driver may run it in a thread of its own, a moment after the heap's last object went).
 * Polled for up to 20 s; before the layer looked again for such heaps, they held their
 * context for good. */
static void await_released(int *gone) {
  cl_int err = CL_INVALID_OPERATION;
  struct timespec ms = {0, 10000000};
  for (int i = 0; i < 2000; i++) {
    if (err == CL_INVALID_OPERATION)
      err = t.set_heap_size(t.device, CL_DEVICE_HEAP_SIZE_DEFAULT_EXT);
    if (err != CL_INVALID_OPERATION && __atomic_load_n(gone, __ATOMIC_ACQUIRE))
      break;
    nanosleep(&ms, NULL);
  }
  assert_int_equal(err, CL_SUCCESS);
  assert_int_equal(__atomic_load_n(gone, __ATOMIC_ACQUIRE), 1);
}

/* Released while its kernel still runs: the application releases every object without waiting
 * for the launch. The driver then holds the context (through the queue of the command in
 * flight) after the application's last release; once the command is done, nothing but the
 * heap's own objects holds it, and the heap must go (spec 1.7: freed with the context, whose
 * destructor callbacks run), and with it the size may be set again (spec 1.2). The last
 * release is the context's or, with `gate_last`, that of a user event the launch waited for,
 * set complete after the context's release: that release must not wait for the launch (it
 * would wait for ever on a driver that runs the launch only once the event is set) and the
 * heap's memory must stay until the launch is done. The launch takes well under a second on
 * pocl. */
static void released_in_flight(int gate_last) {
  e2e_lookup(&t);
  assert_int_equal(t.set_heap_size(t.device, 64u << 20), CL_SUCCESS);
  e2e a = t;
  e2e_open(&a);
  int gone = 0;
  assert_int_equal(clSetContextDestructorCallback(a.context, on_destroy, &gone), CL_SUCCESS);
  cl_program p = e2e_program(&a, "exhaust");
  cl_kernel grab = e2e_kernel(p, "grab");
  size_t items = 1u << 20; /* 16 MiB of 16-byte blocks */
  cl_mem ptrs = e2e_buffer(&a, items * sizeof(cl_ulong));
  set_args_grab(grab, ptrs, 16);
  cl_int err;
  cl_event gate = clCreateUserEvent(a.context, &err);
  assert_int_equal(err, CL_SUCCESS);
  assert_int_equal(clEnqueueNDRangeKernel(a.queue, grab, 1, NULL, &items, NULL, 1, &gate, NULL),
                   CL_SUCCESS);
  assert_int_equal(clFlush(a.queue), CL_SUCCESS);
  clReleaseMemObject(ptrs);
  clReleaseKernel(grab);
  clReleaseProgram(p);
  if (!gate_last) {
    assert_int_equal(clSetUserEventStatus(gate, CL_COMPLETE), CL_SUCCESS);
    clReleaseEvent(gate);
  }
  e2e_close(&a);
  if (gate_last) {
    assert_int_equal(clSetUserEventStatus(gate, CL_COMPLETE), CL_SUCCESS);
    clReleaseEvent(gate);
  }
  await_released(&gone);
}

static void test_released_while_running(void **state) { released_in_flight(0); }
static void test_released_while_running_gate_last(void **state) { released_in_flight(1); }

static int compare_u64(const void *a, const void *b) {
  cl_ulong x = *(const cl_ulong *)a, y = *(const cl_ulong *)b;
  return x < y ? -1 : x > y;
}

/* The heap's memory outlives a launch gated by a user event that the application sets well
 * after it released the context and every other object (spec 1.7): the launch allocates from
 * the heap, fills its blocks and reads them back, and reports into host memory (fine-grained
 * system SVM: no object of the context is needed to read it). A heap freed at the release
 * would be gone under the launch (pocl's 64 MiB SVM allocation is a mapping of its own, which
 * free unmaps): the launch would crash, or its blocks would read back other bytes. */
static void test_heap_outlives_gated_launch(void **state) {
  e2e_lookup(&t);
  cl_device_svm_capabilities caps = 0;
  assert_int_equal(clGetDeviceInfo(t.device, CL_DEVICE_SVM_CAPABILITIES, sizeof(caps), &caps, NULL),
                   CL_SUCCESS);
  if (!(caps & CL_DEVICE_SVM_FINE_GRAIN_SYSTEM)) {
    print_message("skipped: the device has no fine-grained system SVM to report into\n");
    skip();
  }
  assert_int_equal(t.set_heap_size(t.device, 64u << 20), CL_SUCCESS);
  e2e a = t;
  e2e_open(&a);
  int gone = 0;
  assert_int_equal(clSetContextDestructorCallback(a.context, on_destroy, &gone), CL_SUCCESS);
  cl_program p = e2e_program(&a, "gated");
  cl_kernel scribble = e2e_kernel(p, "scribble");
  size_t items = 1u << 16;
  cl_uint words = 16; /* 4 MiB of 64-byte blocks */
  cl_ulong *results = malloc(items * sizeof(*results));
  assert_non_null(results);
  for (size_t i = 0; i < items; i++)
    results[i] = 2; /* not written */
  assert_int_equal(clSetKernelArgSVMPointer(scribble, 0, results), CL_SUCCESS);
  assert_int_equal(clSetKernelArg(scribble, 1, sizeof(words), &words), CL_SUCCESS);
  cl_int err;
  cl_event gate = clCreateUserEvent(a.context, &err);
  assert_int_equal(err, CL_SUCCESS);
  assert_int_equal(clEnqueueNDRangeKernel(a.queue, scribble, 1, NULL, &items, NULL, 1, &gate, NULL),
                   CL_SUCCESS);
  assert_int_equal(clFlush(a.queue), CL_SUCCESS);
  clReleaseKernel(scribble);
  clReleaseProgram(p);
  e2e_close(&a);
  /* past the moment a release may give the driver (200 ms): the launch has not run, and its
   * context is not destroyed while a command of it waits */
  struct timespec wait = {0, 400000000};
  nanosleep(&wait, NULL);
  assert_int_equal(__atomic_load_n(&gone, __ATOMIC_ACQUIRE), 0);
  assert_int_equal(__atomic_load_n(&results[0], __ATOMIC_RELAXED), 2);
  assert_int_equal(clSetUserEventStatus(gate, CL_COMPLETE), CL_SUCCESS);
  clReleaseEvent(gate);
  await_released(&gone); /* the context goes after its launch completed */
  for (size_t i = 0; i < items; i++) {
    if (results[i] == 0 || results[i] == 1 || results[i] == 2 || (results[i] & 15))
      fail_msg("work-item %zu: %#llx (0: NULL, 1: read back other bytes, 2: did not run)", i,
               (unsigned long long)results[i]);
  }
  qsort(results, items, sizeof(*results), compare_u64);
  for (size_t i = 1; i < items; i++) /* distinct blocks, a block's size apart at least */
    if (results[i] - results[i - 1] < words * sizeof(cl_uint))
      fail_msg("blocks %#llx and %#llx overlap", (unsigned long long)results[i - 1],
               (unsigned long long)results[i]);
  free(results);
}

/* The largest setting (CL_DEVICE_MAX_MEM_ALLOC_SIZE) still gives a heap: the metadata comes
 * out of the usable size, not on top of the limit (spec 1.2). */
static void test_heap_at_max_alloc(void **state) {
  e2e_lookup(&t);
  cl_ulong max_alloc = 0;
  assert_int_equal(
      clGetDeviceInfo(t.device, CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof(max_alloc), &max_alloc, NULL),
      CL_SUCCESS);
  assert_int_equal(t.set_heap_size(t.device, (size_t)max_alloc), CL_SUCCESS);
  e2e_open(&t);
  cl_program p = e2e_program(&t, "exhaust");
  cl_kernel grab = e2e_kernel(p, "grab"), release = e2e_kernel(p, "release");
  cl_mem ptrs = e2e_buffer(&t, 64 * sizeof(cl_ulong));
  set_args_grab(grab, ptrs, 1u << 20); /* 64 MiB in 1 MiB blocks */
  clSetKernelArg(release, 0, sizeof(cl_mem), &ptrs);
  e2e_run(&t, grab, 64);
  assert_int_equal(e2e_heap_stat(&t, NULL, CL_DEVICE_HEAP_INFO_LIVE_ALLOCATIONS_EXT), 64);
  cl_ulong size = e2e_heap_stat(&t, NULL, CL_DEVICE_HEAP_INFO_SIZE_EXT);
  assert_true(size < max_alloc && size > max_alloc - max_alloc / 50);
  e2e_run(&t, release, 64);
  clReleaseMemObject(ptrs);
  clReleaseKernel(grab);
  clReleaseKernel(release);
  clReleaseProgram(p);
  e2e_close(&t);
  assert_int_equal(t.set_heap_size(t.device, CL_DEVICE_HEAP_SIZE_DEFAULT_EXT), CL_SUCCESS);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_exhaustion_and_reuse),
      cmocka_unit_test(test_invalid_frees),
      cmocka_unit_test(test_heap_size_rules_and_lifetime),
      cmocka_unit_test(test_heap_at_max_alloc),
      cmocka_unit_test(test_released_while_running),
      cmocka_unit_test(test_released_while_running_gate_last),
      cmocka_unit_test(test_heap_outlives_gated_launch),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
