/*
 * test_e2e_new_source.c — C++ for OpenCL source programs through the layer (spec 1.5.1, 2.3):
 * clCreateProgramWithSource and clBuildProgram with -cl-std=CLC++2021 and -cl-std=CLC++, the
 * source declaring nothing: new, new[], std::nothrow, cl_ext_delete and cl_ext_delete_array
 * come from the implicit header. Objects made in one launch are summed and destroyed in the
 * next, the heap is empty after; a throwing new that finds no room is reported naming the kernel
 * (the run has CLDM_BAD_ALLOC=report); a source that does not compile fails its build with the
 * diagnostics on the application's lines.
 */
#include <string.h>

#include "e2e_util.h"

#define ITEMS 64
#define NODES 8

static const char list_source[] =
    "struct Node {\n"
    "  int value;\n"
    "  Node *next;\n"
    "  Node(int v, Node *n) : value(v), next(n) {}\n"
    "  ~Node() { value = -1; }\n"
    "};\n"
    "struct Pair { int a, b; Pair() : a(1), b(2) {} ~Pair() {} };\n"
    "kernel void build(global ulong *heads, int n) {\n"
    "  int i = (int)get_global_id(0);\n"
    "  Node *head = nullptr;\n"
    "  for (int k = 0; k < n; k++)\n"
    "    head = new Node(i + k, head);\n"
    "  heads[i] = (ulong)head;\n"
    "}\n"
    "kernel void sum(global ulong *heads, global int *out, int n) {\n"
    "  int i = (int)get_global_id(0), s = 0;\n"
    "  Pair *pairs = new Pair[n];\n" /* a cookie and its size check (uadd.with.overflow) */
    "  int *scratch = new (std::nothrow) int[n];\n"
    "  for (Node *p = (Node *)heads[i]; p;) {\n"
    "    Node *next = p->next;\n"
    "    s += p->value;\n"
    "    cl_ext_delete(p);\n"
    "    p = next;\n"
    "  }\n"
    "  for (int k = 0; k < n; k++)\n"
    "    s += pairs[k].a + pairs[k].b;\n"
    "  out[i] = scratch ? s : -1;\n"
    "  cl_ext_delete_array(pairs);\n"
    "  cl_ext_delete_array(scratch);\n"
    "  heads[i] = 0;\n"
    "}\n"
    "kernel void too_big(global int *out, ulong big) {\n"
    "  int i = (int)get_global_id(0);\n"
    "  char *p = new char[i % 2 ? big : 16];\n"
    "  p[0] = 1;\n"
    "  out[i] = 1;\n"
    "  ::operator delete[](p);\n"
    "}\n";

static e2e t;

static cl_program build_source(const char *text, const char *options, cl_int *err, char *log,
                               size_t cap) {
  cl_int e;
  cl_program p = clCreateProgramWithSource(t.context, 1, &text, NULL, &e);
  assert_int_equal(e, CL_SUCCESS);
  *err = clBuildProgram(p, 1, &t.device, options, NULL, NULL);
  log[0] = '\0';
  clGetProgramBuildInfo(p, t.device, CL_PROGRAM_BUILD_LOG, cap, log, NULL);
  return p;
}

static void run_lists(const char *std_option) {
  e2e_open(&t);
  cl_int err;
  char log[8192];
  cl_program p = build_source(list_source, std_option, &err, log, sizeof log);
  if (err != CL_SUCCESS)
    fail_msg("%s: clBuildProgram = %d:\n%s", std_option, err, log);
  cl_kernel build = e2e_kernel(p, "build"), sum = e2e_kernel(p, "sum");
  cl_mem heads = e2e_buffer(&t, ITEMS * sizeof(cl_ulong)),
         out = e2e_buffer(&t, ITEMS * sizeof(int));
  cl_int n = NODES;
  assert_int_equal(clSetKernelArg(build, 0, sizeof(cl_mem), &heads), CL_SUCCESS);
  assert_int_equal(clSetKernelArg(build, 1, sizeof(n), &n), CL_SUCCESS);
  e2e_run(&t, build, ITEMS);
  assert_int_equal(e2e_heap_stat(&t, NULL, CL_DEVICE_HEAP_INFO_LIVE_ALLOCATIONS_EXT),
                   ITEMS * NODES);
  assert_int_equal(clSetKernelArg(sum, 0, sizeof(cl_mem), &heads), CL_SUCCESS);
  assert_int_equal(clSetKernelArg(sum, 1, sizeof(cl_mem), &out), CL_SUCCESS);
  assert_int_equal(clSetKernelArg(sum, 2, sizeof(n), &n), CL_SUCCESS);
  e2e_run(&t, sum, ITEMS);
  int v[ITEMS];
  assert_int_equal(clEnqueueReadBuffer(t.queue, out, CL_TRUE, 0, sizeof v, v, 0, NULL, NULL),
                   CL_SUCCESS);
  for (int i = 0; i < ITEMS; i++)
    assert_int_equal(v[i], NODES * i + NODES * (NODES - 1) / 2 + 3 * NODES);
  assert_int_equal(e2e_heap_stat(&t, NULL, CL_DEVICE_HEAP_INFO_LIVE_ALLOCATIONS_EXT), 0);
  assert_int_equal(e2e_heap_stat(&t, NULL, CL_DEVICE_HEAP_INFO_INVALID_FREES_EXT), 0);
  clReleaseMemObject(heads);
  clReleaseMemObject(out);
  clReleaseKernel(build);
  clReleaseKernel(sum);
  clReleaseProgram(p);
  e2e_close(&t);
}

static void test_lists_2021(void **state) {
  (void)state;
  run_lists("-cl-std=CLC++2021");
}

static void test_lists_1_0(void **state) {
  (void)state;
  run_lists("-cl-std=CLC++");
}

static void test_stop_reported(void **state) {
  (void)state;
  e2e_open(&t);
  cl_int err;
  char log[8192];
  cl_program p = build_source(list_source, "-cl-std=CLC++2021", &err, log, sizeof log);
  assert_int_equal(err, CL_SUCCESS);
  cl_kernel k = e2e_kernel(p, "too_big");
  cl_mem out = e2e_buffer(&t, ITEMS * sizeof(int));
  cl_ulong big = (cl_ulong)1 << 40;
  assert_int_equal(clSetKernelArg(k, 0, sizeof(cl_mem), &out), CL_SUCCESS);
  assert_int_equal(clSetKernelArg(k, 1, sizeof(big), &big), CL_SUCCESS);
  e2e_stderr cap;
  e2e_stderr_begin(&cap);
  e2e_run(&t, k, ITEMS);
  char *text = e2e_stderr_end(&cap);
  char want[128];
  snprintf(want, sizeof want, "kernel too_big: %d work-items stopped", ITEMS / 2);
  if (!strstr(text, want))
    fail_msg("expected \"%s\" in:\n%s", want, text);
  assert_int_equal(e2e_read_u32_sum(&t, out, ITEMS), ITEMS / 2); /* the even ones went on */
  assert_int_equal(e2e_heap_stat(&t, NULL, CL_DEVICE_HEAP_INFO_BAD_ALLOCS_EXT), ITEMS / 2);
  free(text);
  clReleaseMemObject(out);
  clReleaseKernel(k);
  clReleaseProgram(p);
  e2e_close(&t);
}

static void test_compile_error(void **state) {
  (void)state;
  e2e_open(&t);
  cl_int err;
  char log[8192];
  cl_program p = build_source("kernel void k(global int *o) {\n  o[0] = *new int(undeclared);\n}\n",
                              "-cl-std=CLC++2021", &err, log, sizeof log);
  assert_int_equal(err, CL_BUILD_PROGRAM_FAILURE);
  if (!strstr(log, "2:") || !strstr(log, "undeclared"))
    fail_msg("the build log does not name line 2's error:\n%s", log);
  clReleaseProgram(p);
  e2e_close(&t);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_lists_2021),
      cmocka_unit_test(test_lists_1_0),
      cmocka_unit_test(test_stop_reported),
      cmocka_unit_test(test_compile_error),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
