/*
 * test_e2e_program.c — program entry through the layer on pocl (spec 1.5): a module that does
 * not allocate reaches the driver byte-identical (and is not dumped); malformed modules fail
 * with CL_INVALID_VALUE and a one-line message naming the word offset; clCreateProgramWithILKHR
 * found through extension lookup lowers like clCreateProgramWithIL; clCompileProgram +
 * clLinkProgram of a whole-program module work and keep the hidden argument hidden; lowered
 * modules land in CLDM_DUMP_DIR (set by the test registration).
 */
#include <dirent.h>

#include "e2e_util.h"

static e2e t;

static int setup(void **state) {
  e2e_open(&t);
  return 0;
}

static int teardown(void **state) {
  e2e_close(&t);
  return 0;
}

static int count_dumps(void) {
  const char *dir = getenv("CLDM_DUMP_DIR");
  DIR *d = dir ? opendir(dir) : NULL;
  int n = 0;
  for (struct dirent *e; d && (e = readdir(d));)
    n += strstr(e->d_name, ".spv") != NULL;
  if (d)
    closedir(d);
  return n;
}

static void test_non_allocating_module_untouched(void **state) {
  size_t size;
  void *il = e2e_read_file("kernels/noalloc.spv", &size);
  int dumps = count_dumps();
  cl_int err;
  cl_program p = clCreateProgramWithIL(t.context, il, size, &err);
  assert_int_equal(err, CL_SUCCESS);
  size_t got_size = 0;
  assert_int_equal(clGetProgramInfo(p, CL_PROGRAM_IL, 0, NULL, &got_size), CL_SUCCESS);
  assert_int_equal(got_size, size);
  void *got = malloc(size);
  assert_int_equal(clGetProgramInfo(p, CL_PROGRAM_IL, size, got, NULL), CL_SUCCESS);
  assert_memory_equal(got, il, size);
  assert_int_equal(count_dumps(), dumps); /* nothing was lowered */
  assert_int_equal(clBuildProgram(p, 1, &t.device, "", NULL, NULL), CL_SUCCESS);
  cl_kernel k = e2e_kernel(p, "add_one");
  cl_mem x = e2e_buffer(&t, 8 * sizeof(cl_uint));
  clSetKernelArg(k, 0, sizeof(cl_mem), &x);
  e2e_run(&t, k, 8);
  assert_int_equal(e2e_read_u32_sum(&t, x, 8), 8);
  cl_uint nargs;
  clGetKernelInfo(k, CL_KERNEL_NUM_ARGS, sizeof(nargs), &nargs, NULL);
  assert_int_equal(nargs, 1);
  clReleaseMemObject(x);
  clReleaseKernel(k);
  clReleaseProgram(p);
  free(got);
  free(il);
}

static void expect_rejected(const void *il, size_t size, const char *fragment) {
  e2e_stderr cap;
  e2e_stderr_begin(&cap);
  cl_int err = CL_SUCCESS;
  cl_program p = clCreateProgramWithIL(t.context, il, size, &err);
  char *text = e2e_stderr_end(&cap);
  assert_null(p);
  assert_int_equal(err, CL_INVALID_VALUE);
  if (!strstr(text, "clCreateProgramWithIL") || !strstr(text, fragment))
    fail_msg("layer message \"%s\" lacks \"%s\"", text, fragment);
  assert_non_null(strchr(text, '\n'));
  assert_ptr_equal(strchr(text, '\n'), text + strlen(text) - 1); /* exactly one line */
  free(text);
}

static void test_malformed_modules_rejected(void **state) {
  size_t size;
  uint32_t *il = e2e_read_file("kernels/alloc_basic.spv", &size);
  uint32_t *bad = malloc(size);

  memcpy(bad, il, size);
  bad[0] = 0x12345678; /* bad magic */
  expect_rejected(bad, size, "word 0");

  /* truncated in the middle of an instruction */
  expect_rejected(il, size / 2 + 2, "word");

  /* an id at or beyond the header's bound */
  memcpy(bad, il, size);
  bad[3] = 2;
  expect_rejected(bad, size, "bound");

  /* a word count of zero in the first instruction */
  memcpy(bad, il, size);
  bad[5] = 0;
  expect_rejected(bad, size, "word 5");
  free(bad);
  free(il);
}

/* Runs `fill` (2 visible arguments) on `items` work-items of `program`, checks that the heap
 * gained exactly that many allocations, frees them with `release` and checks they are gone. */
static void fill_and_release(cl_program program, size_t items) {
  cl_kernel k = e2e_kernel(program, "fill");
  cl_uint nargs;
  clGetKernelInfo(k, CL_KERNEL_NUM_ARGS, sizeof(nargs), &nargs, NULL);
  assert_int_equal(nargs, 2);
  cl_mem ptrs = e2e_buffer(&t, items * sizeof(cl_ulong));
  cl_uint n = 4;
  assert_int_equal(clSetKernelArg(k, 2, sizeof(cl_mem), &ptrs), CL_INVALID_ARG_INDEX);
  clSetKernelArg(k, 0, sizeof(cl_mem), &ptrs);
  clSetKernelArg(k, 1, sizeof(n), &n);
  cl_ulong live0 = e2e_heap_stat(&t, NULL, CL_DEVICE_HEAP_INFO_LIVE_ALLOCATIONS_EXT);
  e2e_run(&t, k, items);
  assert_int_equal(e2e_heap_stat(&t, NULL, CL_DEVICE_HEAP_INFO_LIVE_ALLOCATIONS_EXT),
                   live0 + items);
  cl_kernel r = e2e_kernel(program, "release");
  clSetKernelArg(r, 0, sizeof(cl_mem), &ptrs);
  e2e_run(&t, r, items);
  assert_int_equal(e2e_heap_stat(&t, NULL, CL_DEVICE_HEAP_INFO_LIVE_ALLOCATIONS_EXT), live0);
  clReleaseKernel(k);
  clReleaseKernel(r);
  clReleaseMemObject(ptrs);
}

static void test_il_khr_entry_point(void **state) {
  typedef cl_program(CL_API_CALL * create_fn)(cl_context, const void *, size_t, cl_int *);
  create_fn create =
      (create_fn)clGetExtensionFunctionAddressForPlatform(t.platform, "clCreateProgramWithILKHR");
  assert_non_null(create);
  size_t size;
  void *il = e2e_read_file("kernels/alloc_basic.spv", &size);
  int dumps = count_dumps();
  cl_int err;
  cl_program p = create(t.context, il, size, &err);
  assert_int_equal(err, CL_SUCCESS);
  assert_int_equal(count_dumps(), dumps + 1); /* lowered, and dumped */
  assert_int_equal(clBuildProgram(p, 1, &t.device, "", NULL, NULL), CL_SUCCESS);
  fill_and_release(p, 32);
  clReleaseProgram(p);
  free(il);
}

static void test_compile_and_link_whole_program(void **state) {
  size_t size;
  void *il = e2e_read_file("kernels/alloc_basic.spv", &size);
  cl_int err;
  cl_program p = clCreateProgramWithIL(t.context, il, size, &err);
  assert_int_equal(err, CL_SUCCESS);
  assert_int_equal(clCompileProgram(p, 1, &t.device, "", 0, NULL, NULL, NULL, NULL), CL_SUCCESS);
  cl_program linked = clLinkProgram(t.context, 1, &t.device, "", 1, &p, NULL, NULL, &err);
  assert_int_equal(err, CL_SUCCESS);
  fill_and_release(linked, 16);
  clReleaseProgram(linked);
  clReleaseProgram(p);
  free(il);
}

static cl_program compiled(const char *name) {
  char rel[256];
  snprintf(rel, sizeof(rel), "kernels/%s.spv", name);
  size_t size;
  void *il = e2e_read_file(rel, &size);
  cl_int err;
  cl_program p = clCreateProgramWithIL(t.context, il, size, &err);
  free(il);
  assert_int_equal(err, CL_SUCCESS);
  assert_int_equal(clCompileProgram(p, 1, &t.device, "", 0, NULL, NULL, NULL, NULL), CL_SUCCESS);
  return p;
}

/* Separately compiled modules (spec 1.5): a call into another module's allocating function
 * is refused at link time with a message; calls into its other functions link and run. */
static void test_separate_compilation(void **state) {
  cl_program lib = compiled("link_lib"), main_alloc = compiled("link_main_alloc"),
             main_plain = compiled("link_main_plain");
  cl_program both[2] = {main_alloc, lib};
  e2e_stderr cap;
  e2e_stderr_begin(&cap);
  cl_int err = CL_SUCCESS;
  cl_program bad = clLinkProgram(t.context, 1, &t.device, "", 2, both, NULL, NULL, &err);
  char *text = e2e_stderr_end(&cap);
  assert_null(bad);
  assert_int_equal(err, CL_LINK_PROGRAM_FAILURE);
  if (!strstr(text, "clLinkProgram") || !strstr(text, "\"make_buffer\""))
    fail_msg("layer message \"%s\" does not name make_buffer", text);
  free(text);

  both[0] = main_plain;
  cl_program linked = clLinkProgram(t.context, 1, &t.device, "", 2, both, NULL, NULL, &err);
  assert_int_equal(err, CL_SUCCESS);
  cl_kernel k = e2e_kernel(linked, "use_twice");
  cl_uint v[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  cl_mem x =
      clCreateBuffer(t.context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof(v), v, &err);
  clSetKernelArg(k, 0, sizeof(cl_mem), &x);
  e2e_run(&t, k, 8);
  assert_int_equal(e2e_read_u32_sum(&t, x, 8), 72);
  /* the library's own allocating kernel keeps its hidden argument hidden in the linked program */
  cl_kernel lk = e2e_kernel(linked, "lib_fill");
  cl_uint nargs = 0;
  clGetKernelInfo(lk, CL_KERNEL_NUM_ARGS, sizeof(nargs), &nargs, NULL);
  assert_int_equal(nargs, 1);
  cl_mem out = e2e_buffer(&t, 4 * sizeof(cl_ulong));
  clSetKernelArg(lk, 0, sizeof(cl_mem), &out);
  cl_ulong live0 = e2e_heap_stat(&t, NULL, CL_DEVICE_HEAP_INFO_LIVE_ALLOCATIONS_EXT);
  e2e_run(&t, lk, 4);
  assert_int_equal(e2e_heap_stat(&t, NULL, CL_DEVICE_HEAP_INFO_LIVE_ALLOCATIONS_EXT), live0 + 4);
  assert_int_equal(t.reset_heap(t.queue, 0, NULL, NULL), CL_SUCCESS);
  clReleaseMemObject(out);
  clReleaseKernel(lk);
  clReleaseMemObject(x);
  clReleaseKernel(k);
  clReleaseProgram(linked);
  clReleaseProgram(lib);
  clReleaseProgram(main_alloc);
  clReleaseProgram(main_plain);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_non_allocating_module_untouched),
      cmocka_unit_test(test_malformed_modules_rejected),
      cmocka_unit_test(test_il_khr_entry_point),
      cmocka_unit_test(test_compile_and_link_whole_program),
      cmocka_unit_test(test_separate_compilation),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
