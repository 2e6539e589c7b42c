/*
 * test_e2e_alloc.c — kernels that allocate run on pocl through the layer (spec 1.5-1.7, 2):
 * allocation in kernels and in helpers shared by two kernels, results checked on the host,
 * pointers that persist across launches and are read by a kernel that does not allocate,
 * frees in a later kernel and in another program of the same context, calloc/realloc/
 * aligned_alloc, aligned_alloc's capacity for every alignment, many arguments, the hidden argument invisible, CL_PROGRAM_IL returning the
 * application's module. argv[1] (optional): the module variant to load, e.g. "alloc_basic"
 * (Import-linkage form) or "alloc_basic.extinst" (raised to the OpExtInst form).
 */
#include "e2e_util.h"

#define ITEMS 512
#define WORDS 24

static const char *module = "alloc_basic";
static e2e t;
static cl_program prog;

static int setup(void **state) {
  e2e_open(&t);
  prog = e2e_program(&t, module);
  return 0;
}

static int teardown(void **state) {
  clReleaseProgram(prog);
  e2e_close(&t);
  return 0;
}

static void test_alloc_persist_and_free(void **state) {
  cl_mem ptrs = e2e_buffer(&t, ITEMS * sizeof(cl_ulong));
  cl_mem bad = e2e_buffer(&t, sizeof(cl_uint));
  cl_kernel fill = e2e_kernel(prog, "fill"), check = e2e_kernel(prog, "check"),
            release = e2e_kernel(prog, "release");
  cl_uint n = WORDS, per_item = 1;
  assert_int_equal(clSetKernelArg(fill, 0, sizeof(cl_mem), &ptrs), CL_SUCCESS);
  assert_int_equal(clSetKernelArg(fill, 1, sizeof(n), &n), CL_SUCCESS);
  e2e_run(&t, fill, ITEMS);

  /* every work-item got memory; stats count it (spec 1.3) */
  cl_ulong live = e2e_heap_stat(&t, NULL, CL_DEVICE_HEAP_INFO_LIVE_ALLOCATIONS_EXT);
  assert_int_equal(live, ITEMS);
  cl_ulong requested = 0;
  for (int i = 0; i < ITEMS; i++)
    requested += (cl_ulong)(i % 13 + 1) * WORDS * 4;
  cl_ulong in_use = e2e_heap_stat(&t, NULL, CL_DEVICE_HEAP_INFO_BYTES_IN_USE_EXT);
  assert_true(in_use >= requested);
  assert_true(in_use <= requested + requested / 4 + ITEMS * 16); /* size classes stay tight */
  cl_ulong held = e2e_heap_stat(&t, NULL, CL_DEVICE_HEAP_INFO_BYTES_HELD_EXT);
  assert_true(held >= in_use); /* the pages the blocks lie in */
  assert_true(held <= e2e_heap_stat(&t, NULL, CL_DEVICE_HEAP_INFO_SIZE_EXT));

  /* a later launch of a kernel that does not allocate reads the data: pointers persist */
  assert_int_equal(clSetKernelArg(check, 0, sizeof(cl_mem), &ptrs), CL_SUCCESS);
  assert_int_equal(clSetKernelArg(check, 1, sizeof(n), &n), CL_SUCCESS);
  assert_int_equal(clSetKernelArg(check, 2, sizeof(per_item), &per_item), CL_SUCCESS);
  assert_int_equal(clSetKernelArg(check, 3, sizeof(cl_mem), &bad), CL_SUCCESS);
  e2e_run(&t, check, ITEMS);
  assert_int_equal(e2e_read_u32_sum(&t, bad, 1), 0);

  assert_int_equal(clSetKernelArg(release, 0, sizeof(cl_mem), &ptrs), CL_SUCCESS);
  e2e_run(&t, release, ITEMS);
  assert_int_equal(e2e_heap_stat(&t, NULL, CL_DEVICE_HEAP_INFO_LIVE_ALLOCATIONS_EXT), 0);
  assert_int_equal(e2e_heap_stat(&t, NULL, CL_DEVICE_HEAP_INFO_BYTES_IN_USE_EXT), 0);
  assert_true(e2e_heap_stat(&t, NULL, CL_DEVICE_HEAP_INFO_PEAK_BYTES_HELD_EXT) >= held);
  assert_int_equal(e2e_heap_stat(&t, NULL, CL_DEVICE_HEAP_INFO_INVALID_FREES_EXT), 0);
  clReleaseKernel(fill);
  clReleaseKernel(check);
  clReleaseKernel(release);
  clReleaseMemObject(ptrs);
  clReleaseMemObject(bad);
}

/* Capacity with aligned requests through the layer's heap (SVM or buffer): for every power of
 * two from 256 B to 64 KiB (those above the heap memory's own alignment; tests/device covers
 * 16 B up, in smaller heaps), 4-byte aligned_allocs until NULL; the heap holds exactly its
 * size divided by the alignment of them, every one aligned (spec 2.1). */
static void test_aligned_capacity(void **state) {
  cl_kernel fill = e2e_kernel(prog, "aligned_fill"), release = e2e_kernel(prog, "release");
  cl_ulong size = e2e_heap_stat(&t, NULL, CL_DEVICE_HEAP_INFO_SIZE_EXT);
  cl_ulong failed0 = e2e_heap_stat(&t, NULL, CL_DEVICE_HEAP_INFO_FAILED_ALLOCATIONS_EXT);
  cl_ulong live0 = e2e_heap_stat(&t, NULL, CL_DEVICE_HEAP_INFO_LIVE_ALLOCATIONS_EXT);
  assert_int_equal(live0, 0); /* the first test of the program: a fresh heap */
  for (cl_uint align = 256; align <= 65536; align *= 2) {
    size_t cap = (size_t)(size / align), n = cap + cap / 16 + 64;
    cl_mem ptrs = e2e_buffer(&t, n * sizeof(cl_ulong)), bad = e2e_buffer(&t, sizeof(cl_uint));
    assert_int_equal(clSetKernelArg(fill, 0, sizeof(cl_mem), &ptrs), CL_SUCCESS);
    assert_int_equal(clSetKernelArg(fill, 1, sizeof(cl_mem), &bad), CL_SUCCESS);
    assert_int_equal(clSetKernelArg(fill, 2, sizeof(align), &align), CL_SUCCESS);
    e2e_run(&t, fill, n);
    cl_ulong live = e2e_heap_stat(&t, NULL, CL_DEVICE_HEAP_INFO_LIVE_ALLOCATIONS_EXT);
    cl_ulong failed = e2e_heap_stat(&t, NULL, CL_DEVICE_HEAP_INFO_FAILED_ALLOCATIONS_EXT);
    printf("aligned_alloc(%u, 4): %llu of %zu requests (heap %llu bytes)\n", align,
           (unsigned long long)live, n, (unsigned long long)size);
    assert_int_equal(e2e_read_u32_sum(&t, bad, 1), 0);
    assert_int_equal(live, cap);
    assert_int_equal(failed - failed0, n - cap);
    failed0 = failed;
    assert_int_equal(clSetKernelArg(release, 0, sizeof(cl_mem), &ptrs), CL_SUCCESS);
    e2e_run(&t, release, n);
    assert_int_equal(e2e_heap_stat(&t, NULL, CL_DEVICE_HEAP_INFO_LIVE_ALLOCATIONS_EXT), 0);
    assert_int_equal(e2e_heap_stat(&t, NULL, CL_DEVICE_HEAP_INFO_INVALID_FREES_EXT), 0);
    clReleaseMemObject(ptrs);
    clReleaseMemObject(bad);
  }
  clReleaseKernel(fill);
  clReleaseKernel(release);
}

static void test_free_in_other_program(void **state) {
  cl_program other = e2e_program(&t, "free_other");
  cl_mem ptrs = e2e_buffer(&t, ITEMS * sizeof(cl_ulong));
  cl_mem bad = e2e_buffer(&t, sizeof(cl_uint));
  cl_kernel fill = e2e_kernel(prog, "fill_again"), cf = e2e_kernel(other, "check_and_free");
  cl_uint n = WORDS;
  cl_ulong live0 = e2e_heap_stat(&t, NULL, CL_DEVICE_HEAP_INFO_LIVE_ALLOCATIONS_EXT);
  clSetKernelArg(fill, 0, sizeof(cl_mem), &ptrs);
  clSetKernelArg(fill, 1, sizeof(n), &n);
  e2e_run(&t, fill, ITEMS);
  assert_int_equal(e2e_heap_stat(&t, NULL, CL_DEVICE_HEAP_INFO_LIVE_ALLOCATIONS_EXT),
                   live0 + ITEMS);
  clSetKernelArg(cf, 0, sizeof(cl_mem), &ptrs);
  clSetKernelArg(cf, 1, sizeof(n), &n);
  clSetKernelArg(cf, 2, sizeof(cl_mem), &bad);
  e2e_run(&t, cf, ITEMS);
  assert_int_equal(e2e_read_u32_sum(&t, bad, 1), 0);
  assert_int_equal(e2e_heap_stat(&t, NULL, CL_DEVICE_HEAP_INFO_LIVE_ALLOCATIONS_EXT), live0);
  assert_int_equal(e2e_heap_stat(&t, NULL, CL_DEVICE_HEAP_INFO_INVALID_FREES_EXT), 0);
  clReleaseKernel(fill);
  clReleaseKernel(cf);
  clReleaseProgram(other);
  clReleaseMemObject(ptrs);
  clReleaseMemObject(bad);
}

static void test_calloc_realloc_aligned(void **state) {
  cl_mem results = e2e_buffer(&t, ITEMS * sizeof(cl_uint));
  cl_kernel k = e2e_kernel(prog, "variants");
  clSetKernelArg(k, 0, sizeof(cl_mem), &results);
  e2e_run(&t, k, ITEMS);
  cl_uint r[ITEMS];
  assert_int_equal(clEnqueueReadBuffer(t.queue, results, CL_TRUE, 0, sizeof(r), r, 0, NULL, NULL),
                   CL_SUCCESS);
  for (int i = 0; i < ITEMS; i++)
    if (r[i])
      fail_msg("work-item %d: failure bits 0x%x (1 calloc NULL, 2 not zero, 4 realloc NULL, "
               "8 realloc lost data, 16 misaligned aligned_alloc, 32 not 16-byte aligned)",
               i, r[i]);
  assert_int_equal(e2e_heap_stat(&t, NULL, CL_DEVICE_HEAP_INFO_INVALID_FREES_EXT), 0);
  clReleaseKernel(k);
  clReleaseMemObject(results);
}

static void test_hidden_argument_invisible(void **state) {
  cl_kernel k = e2e_kernel(prog, "many_args");
  cl_uint nargs = 0;
  assert_int_equal(clGetKernelInfo(k, CL_KERNEL_NUM_ARGS, sizeof(nargs), &nargs, NULL), CL_SUCCESS);
  assert_int_equal(nargs, 9);
  cl_mem dummy = e2e_buffer(&t, 64);
  assert_int_equal(clSetKernelArg(k, 9, sizeof(cl_mem), &dummy), CL_INVALID_ARG_INDEX);
  assert_int_equal(clSetKernelArg(k, 10, sizeof(cl_mem), &dummy), CL_INVALID_ARG_INDEX);
  assert_int_equal(clSetKernelArgSVMPointer(k, 9, NULL), CL_INVALID_ARG_INDEX);
  char name[64];
  assert_int_equal(clGetKernelArgInfo(k, 9, CL_KERNEL_ARG_NAME, sizeof(name), name, NULL),
                   CL_INVALID_ARG_INDEX);
  cl_program p = NULL;
  assert_int_equal(clGetKernelInfo(k, CL_KERNEL_PROGRAM, sizeof(p), &p, NULL), CL_SUCCESS);
  assert_ptr_equal(p, prog);
  char fname[64] = "";
  assert_int_equal(clGetKernelInfo(k, CL_KERNEL_FUNCTION_NAME, sizeof(fname), fname, NULL),
                   CL_SUCCESS);
  assert_string_equal(fname, "many_args");

  /* and the kernel runs with all nine user arguments set */
  cl_mem out = e2e_buffer(&t, 64 * sizeof(cl_ulong)), f = e2e_buffer(&t, 64 * sizeof(cl_uint));
  cl_uint a = 1, b = 2, c = 3, g = 7, h = 8;
  cl_ulong d = 4;
  cl_float e = 5.0f;
  clSetKernelArg(k, 0, sizeof(cl_mem), &out);
  clSetKernelArg(k, 1, sizeof(a), &a);
  clSetKernelArg(k, 2, sizeof(b), &b);
  clSetKernelArg(k, 3, sizeof(c), &c);
  clSetKernelArg(k, 4, sizeof(d), &d);
  clSetKernelArg(k, 5, sizeof(e), &e);
  clSetKernelArg(k, 6, sizeof(cl_mem), &f);
  clSetKernelArg(k, 7, sizeof(g), &g);
  clSetKernelArg(k, 8, sizeof(h), &h);
  e2e_run(&t, k, 64);
  assert_int_equal(e2e_read_u32_sum(&t, f, 64), 64 * 30);

  /* a clone keeps the rules and runs too */
  cl_int err;
  cl_kernel clone = clCloneKernel(k, &err);
  assert_int_equal(err, CL_SUCCESS);
  assert_int_equal(clGetKernelInfo(clone, CL_KERNEL_NUM_ARGS, sizeof(nargs), &nargs, NULL),
                   CL_SUCCESS);
  assert_int_equal(nargs, 9);
  assert_int_equal(clSetKernelArg(clone, 9, sizeof(cl_mem), &dummy), CL_INVALID_ARG_INDEX);
  e2e_run(&t, clone, 64);
  clReleaseKernel(clone);
  clReleaseKernel(k);
  clReleaseMemObject(dummy);
  clReleaseMemObject(out);
  clReleaseMemObject(f);
}

static void test_kernels_in_program(void **state) {
  cl_kernel ks[16];
  cl_uint n = 0;
  assert_int_equal(clCreateKernelsInProgram(prog, 16, ks, &n), CL_SUCCESS);
  assert_int_equal(n, 8);
  for (cl_uint i = 0; i < n; i++) {
    char name[64] = "";
    cl_uint nargs = 0;
    clGetKernelInfo(ks[i], CL_KERNEL_FUNCTION_NAME, sizeof(name), name, NULL);
    clGetKernelInfo(ks[i], CL_KERNEL_NUM_ARGS, sizeof(nargs), &nargs, NULL);
    cl_uint want = !strcmp(name, "fill") || !strcmp(name, "fill_again") ? 2
                   : !strcmp(name, "check")                             ? 4
                   : !strcmp(name, "aligned_fill")                      ? 3
                   : !strcmp(name, "release") || !strcmp(name, "variants") || !strcmp(name, "plain")
                       ? 1
                   : !strcmp(name, "many_args") ? 9
                                                : 99;
    if (nargs != want)
      fail_msg("%s: CL_KERNEL_NUM_ARGS %u, want %u", name, nargs, want);
    clReleaseKernel(ks[i]);
  }
  /* a kernel that does not allocate runs without any heap argument */
  cl_kernel plain = e2e_kernel(prog, "plain");
  cl_mem x = e2e_buffer(&t, 16 * sizeof(cl_uint));
  clSetKernelArg(plain, 0, sizeof(cl_mem), &x);
  e2e_run(&t, plain, 16);
  assert_int_equal(e2e_read_u32_sum(&t, x, 16), 16);
  clReleaseKernel(plain);
  clReleaseMemObject(x);
}

/* Generic result and argument types (OpenCL C 2.0 unqualified pointers) */
static void test_generic_pointers(void **state) {
  cl_program g = e2e_program(&t, "alloc_generic");
  cl_kernel k = e2e_kernel(g, "generic_roundtrip");
  cl_mem out = e2e_buffer(&t, ITEMS * sizeof(cl_uint));
  clSetKernelArg(k, 0, sizeof(cl_mem), &out);
  cl_ulong live0 = e2e_heap_stat(&t, NULL, CL_DEVICE_HEAP_INFO_LIVE_ALLOCATIONS_EXT);
  e2e_run(&t, k, ITEMS);
  cl_uint r[ITEMS];
  assert_int_equal(clEnqueueReadBuffer(t.queue, out, CL_TRUE, 0, sizeof(r), r, 0, NULL, NULL),
                   CL_SUCCESS);
  for (cl_uint i = 0; i < ITEMS; i++) {
    cl_uint n = 1 + i % 29, want = n * i + n * (n - 1) / 2;
    if (r[i] != want)
      fail_msg("work-item %u: %#x, want %#x", i, r[i], want);
  }
  assert_int_equal(e2e_heap_stat(&t, NULL, CL_DEVICE_HEAP_INFO_LIVE_ALLOCATIONS_EXT), live0);
  clReleaseMemObject(out);
  clReleaseKernel(k);
  clReleaseProgram(g);
}

static void test_program_il_is_original(void **state) {
  char rel[256];
  snprintf(rel, sizeof(rel), "kernels/%s.spv", module);
  size_t size;
  void *il = e2e_read_file(rel, &size);
  size_t got_size = 0;
  assert_int_equal(clGetProgramInfo(prog, CL_PROGRAM_IL, 0, NULL, &got_size), CL_SUCCESS);
  assert_int_equal(got_size, size);
  void *got = malloc(size);
  assert_int_equal(clGetProgramInfo(prog, CL_PROGRAM_IL, size, got, NULL), CL_SUCCESS);
  assert_memory_equal(got, il, size);
  assert_int_equal(clGetProgramInfo(prog, CL_PROGRAM_IL, size - 1, got, NULL), CL_INVALID_VALUE);
  free(got);
  free(il);
}

int main(int argc, char **argv) {
  if (argc > 1)
    module = argv[1];
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_aligned_capacity),
      cmocka_unit_test(test_alloc_persist_and_free),
      cmocka_unit_test(test_free_in_other_program),
      cmocka_unit_test(test_calloc_realloc_aligned),
      cmocka_unit_test(test_hidden_argument_invisible),
      cmocka_unit_test(test_kernels_in_program),
      cmocka_unit_test(test_generic_pointers),
      cmocka_unit_test(test_program_il_is_original),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
