/*
 * test_e2e_new.c — C++'s new and delete in kernels on pocl through the layer (spec 2.2, 2.3),
 * with a C++ for OpenCL module compiled offline (kernels/new_cxx.clcpp): objects and arrays
 * made and destroyed (constructors and destructors counted, over-aligned objects aligned, the
 * heap empty after), lists that live across launches; throwing new that finds no room, in the
 * kernel and two calls deep: the work-items that got memory did their work, those that did not
 * stopped before writing through NULL, the heap counts them (CL_DEVICE_HEAP_INFO_BAD_ALLOCS_EXT)
 * and stays consistent, the report names the kernel; nothrow new returns NULL and reports
 * nothing; the program's binary loaded again still stops and reports.
 * The main run has CLDM_BAD_ALLOC=report (the report, no abort). With argument "abort" (the
 * default setting) child processes fill the heap and run a throwing new: each must end with
 * SIGABRT after the report line, one from clFinish, one that waits with a blocking read only,
 * so that the callback on the layer's read of the count reports and aborts.
 */
#include <string.h>

#include "e2e_util.h"

#define ITEMS 96 /* work-items with i % 3 == 0 ask for too much: 32 of them */
#define MANY 4   /* new_cxx.clcpp: Counted objects of the array per work-item */
#define TOO_BIG ((cl_ulong)1 << 40)

static e2e t;
static cl_program prog;

static int setup(void **state) {
  (void)state;
  e2e_open(&t);
  prog = e2e_program(&t, "new_cxx");
  return 0;
}

static int teardown(void **state) {
  (void)state;
  clReleaseProgram(prog);
  e2e_close(&t);
  return 0;
}

static void assert_contains(const char *text, const char *needle) {
  if (!strstr(text, needle))
    fail_msg("expected \"%s\" in the layer's output:\n%s", needle, text);
}

static void read_ints(cl_mem m, int *v, size_t n) {
  assert_int_equal(clEnqueueReadBuffer(t.queue, m, CL_TRUE, 0, n * sizeof(*v), v, 0, NULL, NULL),
                   CL_SUCCESS);
}

static void read_ulongs(cl_mem m, cl_ulong *v, size_t n) {
  assert_int_equal(clEnqueueReadBuffer(t.queue, m, CL_TRUE, 0, n * sizeof(*v), v, 0, NULL, NULL),
                   CL_SUCCESS);
}

static void set_args(cl_kernel k, cl_mem a, cl_mem b, const cl_ulong *big) {
  assert_int_equal(clSetKernelArg(k, 0, sizeof(cl_mem), &a), CL_SUCCESS);
  if (b)
    assert_int_equal(clSetKernelArg(k, 1, sizeof(cl_mem), &b), CL_SUCCESS);
  if (big)
    assert_int_equal(clSetKernelArg(k, 2, sizeof(*big), big), CL_SUCCESS);
}

static void release_all(cl_mem ptrs) {
  cl_kernel release = e2e_kernel(prog, "release");
  set_args(release, ptrs, NULL, NULL);
  e2e_run(&t, release, ITEMS);
  clReleaseKernel(release);
}

static void test_objects(void **state) {
  (void)state;
  cl_kernel k = e2e_kernel(prog, "objects");
  cl_mem out = e2e_buffer(&t, ITEMS * sizeof(int)), counts = e2e_buffer(&t, 2 * sizeof(int)),
         misaligned = e2e_buffer(&t, sizeof(int));
  cl_int n = 10;
  assert_int_equal(clSetKernelArg(k, 0, sizeof(cl_mem), &out), CL_SUCCESS);
  assert_int_equal(clSetKernelArg(k, 1, sizeof(cl_mem), &counts), CL_SUCCESS);
  assert_int_equal(clSetKernelArg(k, 2, sizeof(cl_mem), &misaligned), CL_SUCCESS);
  assert_int_equal(clSetKernelArg(k, 3, sizeof(n), &n), CL_SUCCESS);
  e2e_stderr cap;
  e2e_stderr_begin(&cap);
  e2e_run(&t, k, ITEMS);
  char *err = e2e_stderr_end(&cap);
  int v[ITEMS], c[2], bad;
  read_ints(out, v, ITEMS);
  read_ints(counts, c, 2);
  read_ints(misaligned, &bad, 1);
  for (int i = 0; i < ITEMS; i++) {
    int want = i + i + n * i + n * (n - 1) / 2 + MANY * (MANY - 1) / 2;
    if (v[i] != want)
      fail_msg("work-item %d: %d, expected %d", i, v[i], want);
  }
  assert_int_equal(c[0], ITEMS * (1 + MANY)); /* constructions */
  assert_int_equal(c[1], ITEMS * (1 + MANY)); /* destructions, by cl_ext_delete(_array) */
  assert_int_equal(bad, 0);                   /* alignas(64) honoured */
  assert_null(strstr(err, "stopped"));
  assert_int_equal(e2e_heap_stat(&t, NULL, CL_DEVICE_HEAP_INFO_LIVE_ALLOCATIONS_EXT), 0);
  assert_int_equal(e2e_heap_stat(&t, NULL, CL_DEVICE_HEAP_INFO_INVALID_FREES_EXT), 0);
  assert_int_equal(e2e_heap_stat(&t, NULL, CL_DEVICE_HEAP_INFO_BAD_ALLOCS_EXT), 0);
  free(err);
  clReleaseMemObject(out);
  clReleaseMemObject(counts);
  clReleaseMemObject(misaligned);
  clReleaseKernel(k);
}

/* objects made by one launch, used and deleted by another */
static void test_lists_across_launches(void **state) {
  (void)state;
  cl_kernel build = e2e_kernel(prog, "list_build"), sum = e2e_kernel(prog, "list_sum_delete");
  cl_mem heads = e2e_buffer(&t, ITEMS * sizeof(cl_ulong)),
         out = e2e_buffer(&t, ITEMS * sizeof(int));
  cl_int n = 16;
  assert_int_equal(clSetKernelArg(build, 0, sizeof(cl_mem), &heads), CL_SUCCESS);
  assert_int_equal(clSetKernelArg(build, 1, sizeof(n), &n), CL_SUCCESS);
  cl_ulong live0 = e2e_heap_stat(&t, NULL, CL_DEVICE_HEAP_INFO_LIVE_ALLOCATIONS_EXT);
  e2e_run(&t, build, ITEMS);
  assert_int_equal(e2e_heap_stat(&t, NULL, CL_DEVICE_HEAP_INFO_LIVE_ALLOCATIONS_EXT),
                   live0 + ITEMS * (cl_ulong)n);
  set_args(sum, heads, out, NULL);
  e2e_run(&t, sum, ITEMS);
  int v[ITEMS];
  read_ints(out, v, ITEMS);
  for (int i = 0; i < ITEMS; i++)
    assert_int_equal(v[i], n * i + n * (n - 1) / 2);
  assert_int_equal(e2e_heap_stat(&t, NULL, CL_DEVICE_HEAP_INFO_LIVE_ALLOCATIONS_EXT), live0);
  clReleaseMemObject(heads);
  clReleaseMemObject(out);
  clReleaseKernel(build);
  clReleaseKernel(sum);
}

/* Runs a stop kernel over ITEMS work-items with sizes TOO_BIG for i % 3 == 0: `marks` is what a
 * work-item that got memory leaves in out[i]. */
static void run_stops(const char *name, int marks) {
  cl_kernel k = e2e_kernel(prog, name);
  cl_mem out = e2e_buffer(&t, ITEMS * sizeof(int)), ptrs = e2e_buffer(&t, ITEMS * sizeof(cl_ulong));
  cl_ulong big = TOO_BIG;
  set_args(k, out, ptrs, &big);
  cl_ulong failed0 = e2e_heap_stat(&t, NULL, CL_DEVICE_HEAP_INFO_FAILED_ALLOCATIONS_EXT);
  cl_ulong stops0 = e2e_heap_stat(&t, NULL, CL_DEVICE_HEAP_INFO_BAD_ALLOCS_EXT);
  e2e_stderr cap;
  e2e_stderr_begin(&cap);
  e2e_run(&t, k, ITEMS); /* clFinish: the report comes before it returns */
  char *err = e2e_stderr_end(&cap);
  int v[ITEMS];
  cl_ulong p[ITEMS];
  read_ints(out, v, ITEMS);
  read_ulongs(ptrs, p, ITEMS);
  int stopped = 0;
  for (int i = 0; i < ITEMS; i++) {
    int stops = i % 3 == 0;
    stopped += stops;
    if (v[i] != (stops ? 0 : marks) || (p[i] == 0) != stops)
      fail_msg("%s: work-item %d: out %d, pointer %#llx", name, i, v[i], (unsigned long long)p[i]);
  }
  char want[256];
  snprintf(want, sizeof want,
           "cl_ext_device_malloc: kernel %s: %d work-items stopped: operator new found no room "
           "(std::bad_alloc; heap of ",
           name, stopped);
  assert_contains(err, want);
  assert_null(strstr(err, "aborting"));
  /* the heap counts them, holds the blocks of the others, and is consistent */
  assert_int_equal(e2e_heap_stat(&t, NULL, CL_DEVICE_HEAP_INFO_BAD_ALLOCS_EXT), stops0 + stopped);
  assert_int_equal(e2e_heap_stat(&t, NULL, CL_DEVICE_HEAP_INFO_FAILED_ALLOCATIONS_EXT),
                   failed0 + stopped);
  assert_int_equal(e2e_heap_stat(&t, NULL, CL_DEVICE_HEAP_INFO_LIVE_ALLOCATIONS_EXT),
                   ITEMS - stopped);
  release_all(ptrs);
  assert_int_equal(e2e_heap_stat(&t, NULL, CL_DEVICE_HEAP_INFO_LIVE_ALLOCATIONS_EXT), 0);
  assert_int_equal(e2e_heap_stat(&t, NULL, CL_DEVICE_HEAP_INFO_INVALID_FREES_EXT), 0);
  free(err);
  clReleaseMemObject(out);
  clReleaseMemObject(ptrs);
  clReleaseKernel(k);
}

static void test_stop_in_kernel(void **state) {
  (void)state;
  run_stops("stop_in_kernel", 1);
}

static void test_stop_in_helper(void **state) {
  (void)state;
  run_stops("stop_in_helper", 2);
}

static void test_nothrow(void **state) {
  (void)state;
  cl_kernel k = e2e_kernel(prog, "nothrow_new");
  cl_mem out = e2e_buffer(&t, ITEMS * sizeof(int)), ptrs = e2e_buffer(&t, ITEMS * sizeof(cl_ulong));
  cl_ulong big = TOO_BIG;
  set_args(k, out, ptrs, &big);
  cl_ulong stops0 = e2e_heap_stat(&t, NULL, CL_DEVICE_HEAP_INFO_BAD_ALLOCS_EXT);
  e2e_stderr cap;
  e2e_stderr_begin(&cap);
  e2e_run(&t, k, ITEMS);
  char *err = e2e_stderr_end(&cap);
  int v[ITEMS];
  read_ints(out, v, ITEMS);
  for (int i = 0; i < ITEMS; i++)
    assert_int_equal(v[i], i % 3 == 0 ? -1 : 1);
  assert_null(strstr(err, "stopped"));
  assert_int_equal(e2e_heap_stat(&t, NULL, CL_DEVICE_HEAP_INFO_BAD_ALLOCS_EXT), stops0);
  release_all(ptrs);
  assert_int_equal(e2e_heap_stat(&t, NULL, CL_DEVICE_HEAP_INFO_LIVE_ALLOCATIONS_EXT), 0);
  free(err);
  clReleaseMemObject(out);
  clReleaseMemObject(ptrs);
  clReleaseKernel(k);
}

/* The program's binary, loaded again: its kernels still stop and are still reported (the
 * layer's record of the binary says which may stop). */
static void test_binary_kept(void **state) {
  (void)state;
  size_t size = 0;
  assert_int_equal(clGetProgramInfo(prog, CL_PROGRAM_BINARY_SIZES, sizeof size, &size, NULL),
                   CL_SUCCESS);
  unsigned char *bin = malloc(size);
  assert_non_null(bin);
  assert_int_equal(clGetProgramInfo(prog, CL_PROGRAM_BINARIES, sizeof bin, &bin, NULL), CL_SUCCESS);
  cl_int err, status;
  const unsigned char *cbin = bin;
  cl_program again =
      clCreateProgramWithBinary(t.context, 1, &t.device, &size, &cbin, &status, &err);
  assert_int_equal(err, CL_SUCCESS);
  assert_int_equal(clBuildProgram(again, 1, &t.device, "", NULL, NULL), CL_SUCCESS);
  free(bin);
  cl_program saved = prog;
  prog = again;
  run_stops("stop_in_kernel", 1);
  prog = saved;
  clReleaseProgram(again);
}

#define HOGS 8 /* work-items that fill the heap with 64 KiB blocks */

/* Fills the heap (hog): every 64 KiB block taken, chained per work-item in heads. */
static cl_mem fill_heap(cl_program p) {
  cl_kernel hog = e2e_kernel(p, "hog");
  cl_mem heads = e2e_buffer(&t, HOGS * sizeof(cl_ulong));
  assert_int_equal(clSetKernelArg(hog, 0, sizeof(cl_mem), &heads), CL_SUCCESS);
  e2e_run(&t, hog, HOGS);
  clReleaseKernel(hog);
  return heads;
}

/* A throwing new on a full heap: every work-item stops; then the heap is given back. */
static void test_full_heap(void **state) {
  (void)state;
  cl_mem heads = fill_heap(prog);
  cl_ulong blocks = e2e_heap_stat(&t, NULL, CL_DEVICE_HEAP_INFO_LIVE_ALLOCATIONS_EXT);
  assert_true(blocks > 0);
  cl_kernel k = e2e_kernel(prog, "stop_in_kernel");
  cl_mem out = e2e_buffer(&t, ITEMS * sizeof(int)), ptrs = e2e_buffer(&t, ITEMS * sizeof(cl_ulong));
  cl_ulong small = 64, stops0 = e2e_heap_stat(&t, NULL, CL_DEVICE_HEAP_INFO_BAD_ALLOCS_EXT);
  set_args(k, out, ptrs, &small);
  e2e_stderr cap;
  e2e_stderr_begin(&cap);
  e2e_run(&t, k, ITEMS);
  char *err = e2e_stderr_end(&cap);
  char want[128];
  snprintf(want, sizeof want, "kernel stop_in_kernel: %d work-items stopped", ITEMS);
  assert_contains(err, want);
  assert_int_equal(e2e_read_u32_sum(&t, out, ITEMS), 0); /* nobody wrote */
  assert_int_equal(e2e_heap_stat(&t, NULL, CL_DEVICE_HEAP_INFO_BAD_ALLOCS_EXT), stops0 + ITEMS);
  assert_int_equal(e2e_heap_stat(&t, NULL, CL_DEVICE_HEAP_INFO_LIVE_ALLOCATIONS_EXT), blocks);
  cl_kernel give = e2e_kernel(prog, "hog_release");
  assert_int_equal(clSetKernelArg(give, 0, sizeof(cl_mem), &heads), CL_SUCCESS);
  e2e_run(&t, give, HOGS);
  assert_int_equal(e2e_heap_stat(&t, NULL, CL_DEVICE_HEAP_INFO_LIVE_ALLOCATIONS_EXT), 0);
  assert_int_equal(e2e_heap_stat(&t, NULL, CL_DEVICE_HEAP_INFO_INVALID_FREES_EXT), 0);
  free(err);
  clReleaseKernel(give);
  clReleaseKernel(k);
  clReleaseMemObject(heads);
  clReleaseMemObject(out);
  clReleaseMemObject(ptrs);
}

/* The child of run_abort_child: fills the heap and runs a throwing new. `async` (non-NULL): no
 * clFinish, the read's callback. */
static void abort_child(void *async) {
  e2e_open(&t);
  cl_program p = e2e_program(&t, "new_cxx");
  fill_heap(p);
  cl_kernel k = e2e_kernel(p, "stop_in_kernel");
  cl_mem out = e2e_buffer(&t, ITEMS * sizeof(int)), ptrs = e2e_buffer(&t, ITEMS * sizeof(cl_ulong));
  cl_ulong small = 64;
  set_args(k, out, ptrs, &small);
  size_t global = ITEMS;
  clEnqueueNDRangeKernel(t.queue, k, 1, NULL, &global, NULL, 0, NULL, NULL);
  if (!async) {
    clFinish(t.queue); /* reports and aborts */
    return;
  }
  int v;
  clEnqueueReadBuffer(t.queue, out, CL_TRUE, 0, sizeof(v), &v, 0, NULL, NULL);
  sleep(20); /* the callback aborts meanwhile */
}

/* The default (CLDM_BAD_ALLOC unset): the child must print the report naming the kernel and
 * abort. */
static void run_abort_child(int async) {
  char *text = e2e_child_aborts(abort_child, async ? &t : NULL);
  char want[128];
  snprintf(want, sizeof want, "cl_ext_device_malloc: kernel stop_in_kernel: %d work-items stopped",
           ITEMS);
  assert_contains(text, want);
  assert_contains(text, "cl_ext_device_malloc: std::bad_alloc not handled: aborting");
  free(text);
}

static void test_abort(void **state) {
  (void)state;
  run_abort_child(0);
}

static void test_abort_async(void **state) {
  (void)state;
  run_abort_child(1);
}

int main(int argc, char **argv) {
  if (argc > 1 && !strcmp(argv[1], "abort")) {
    const struct CMUnitTest abort_tests[] = {cmocka_unit_test(test_abort),
                                             cmocka_unit_test(test_abort_async)};
    return cmocka_run_group_tests(abort_tests, NULL, NULL);
  }
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_objects),        cmocka_unit_test(test_lists_across_launches),
      cmocka_unit_test(test_stop_in_kernel), cmocka_unit_test(test_stop_in_helper),
      cmocka_unit_test(test_nothrow),        cmocka_unit_test(test_full_heap),
      cmocka_unit_test(test_binary_kept),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
