/*
 * test_e2e_source.c — programs as applications make them, on pocl through the layer
 * (spec 1.5.1, 1.5.2, 2.3): OpenCL C source that calls malloc/free, and program binaries that come back.
 *   - the demo's kernels and the end-to-end kernels as source programs, run and checked;
 *   - the implicit declarations (global forms for OpenCL C 1.2, generic forms for 3.0) and the
 *     feature macro, without any declaration in the source; OpenCL C 2.0, which pocl's device
 *     does not compile, refused as for a plain program; the same header used offline;
 *   - build options: -D, -I (a header that allocates), -cl-std=, and an option the driver does
 *     not know (the same error as for a plain program);
 *   - a syntax error gives the driver's own build log, as for a plain program;
 *   - sources that do not allocate reach the driver byte-identical and run;
 *   - argument information (-cl-kernel-arg-info) answers as for a plain program;
 *   - separate compilation with an input header, linked with a plain library; a link that
 *     passes an allocating function between modules is refused; rebuilds while kernels exist
 *     refused as by the driver; several threads building source programs at once;
 *   - CL_PROGRAM_BINARIES of allocating programs (from source and from IL) loaded again with
 *     clCreateProgramWithBinary, in this process and in a later one (this executable run again
 *     with "load FILE N"), hide the heap argument and run; the later process recognises the
 *     binary through the record file the layer wrote (with another cache directory it does not).
 * Sources are read from the source tree (CLDM_TEST_SOURCE_DIR), SPIR-V from the build tree.
 */
#include <pthread.h>
#include <sys/stat.h>
#include <sys/wait.h>

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

static char *read_text(const char *rel) {
  char path[4096];
  snprintf(path, sizeof(path), "%s/%s", CLDM_TEST_SOURCE_DIR, rel);
  size_t n;
  char *buf = cldm_file_read(path, &n);
  if (!buf)
    fail_msg("cannot read %s", path);
  char *text = realloc(buf, n + 1);
  text[n] = '\0';
  return text;
}

static cl_program source_program(const char *src) {
  cl_int err;
  cl_program p = clCreateProgramWithSource(t.context, 1, &src, NULL, &err);
  assert_int_equal(err, CL_SUCCESS);
  return p;
}

static char *build_log(cl_program p) {
  size_t n = 0;
  assert_int_equal(clGetProgramBuildInfo(p, t.device, CL_PROGRAM_BUILD_LOG, 0, NULL, &n),
                   CL_SUCCESS);
  char *log = calloc(1, n + 1);
  assert_int_equal(clGetProgramBuildInfo(p, t.device, CL_PROGRAM_BUILD_LOG, n, log, NULL),
                   CL_SUCCESS);
  return log;
}

/* Creates and builds a source program; fails the test (with the log) on a build error. */
static cl_program built(const char *src, const char *options) {
  cl_program p = source_program(src);
  cl_int err = clBuildProgram(p, 1, &t.device, options, NULL, NULL);
  if (err != CL_SUCCESS) {
    char *log = build_log(p);
    fail_msg("clBuildProgram = %d: %s", err, log);
  }
  return p;
}

static cl_uint num_args(cl_kernel k) {
  cl_uint n = 0;
  assert_int_equal(clGetKernelInfo(k, CL_KERNEL_NUM_ARGS, sizeof(n), &n, NULL), CL_SUCCESS);
  return n;
}

static cl_ulong live(void) {
  return e2e_heap_stat(&t, NULL, CL_DEVICE_HEAP_INFO_LIVE_ALLOCATIONS_EXT);
}

static void assert_driver_source(cl_program p, const char *src) {
  size_t n = 0;
  assert_int_equal(clGetProgramInfo(p, CL_PROGRAM_SOURCE, 0, NULL, &n), CL_SUCCESS);
  char *got = calloc(1, n + 1);
  assert_int_equal(clGetProgramInfo(p, CL_PROGRAM_SOURCE, n, got, NULL), CL_SUCCESS);
  assert_string_equal(got, src);
  free(got);
}

/* Runs alloc_basic's fill (2 visible arguments) on `items` work-items, checks the heap gained
 * that many allocations and that release frees them. */
static void fill_and_release(cl_program program, size_t items) {
  cl_kernel k = e2e_kernel(program, "fill");
  assert_int_equal(num_args(k), 2);
  cl_mem ptrs = e2e_buffer(&t, items * sizeof(cl_ulong));
  cl_uint n = 4;
  assert_int_equal(clSetKernelArg(k, 2, sizeof(cl_mem), &ptrs), CL_INVALID_ARG_INDEX);
  assert_int_equal(clSetKernelArg(k, 0, sizeof(cl_mem), &ptrs), CL_SUCCESS);
  assert_int_equal(clSetKernelArg(k, 1, sizeof(n), &n), CL_SUCCESS);
  cl_ulong live0 = live();
  e2e_run(&t, k, items);
  assert_int_equal(live(), live0 + items);
  cl_kernel r = e2e_kernel(program, "release");
  assert_int_equal(clSetKernelArg(r, 0, sizeof(cl_mem), &ptrs), CL_SUCCESS);
  e2e_run(&t, r, items);
  assert_int_equal(live(), live0);
  clReleaseKernel(k);
  clReleaseKernel(r);
  clReleaseMemObject(ptrs);
}

/* ---- the demo's and the end-to-end kernels as source programs ---------------------------- */

static void test_demo_lists_as_source(void **state) {
  char *src = read_text("examples/kernels/lists.cl");
  cl_program p = built(src, "");
  assert_driver_source(p, src);
  cl_kernel build = e2e_kernel(p, "build_lists"), consume = e2e_kernel(p, "consume_lists");
  assert_int_equal(num_args(build), 3);
  enum { ITEMS = 512, MAX_LEN = 9 };
  cl_mem heads = e2e_buffer(&t, ITEMS * sizeof(cl_ulong)),
         sums = e2e_buffer(&t, ITEMS * sizeof(cl_ulong)),
         lengths = e2e_buffer(&t, ITEMS * sizeof(cl_uint)), failed = e2e_buffer(&t, 4);
  cl_uint max_len = MAX_LEN;
  clSetKernelArg(build, 0, sizeof(cl_mem), &heads);
  clSetKernelArg(build, 1, sizeof(max_len), &max_len);
  clSetKernelArg(build, 2, sizeof(cl_mem), &failed);
  clSetKernelArg(consume, 0, sizeof(cl_mem), &heads);
  clSetKernelArg(consume, 1, sizeof(cl_mem), &sums);
  clSetKernelArg(consume, 2, sizeof(cl_mem), &lengths);
  cl_ulong live0 = live();
  e2e_run(&t, build, ITEMS);
  assert_true(live() > live0);
  e2e_run(&t, consume, ITEMS);
  assert_int_equal(live(), live0);
  cl_ulong s[ITEMS];
  cl_uint len[ITEMS];
  clEnqueueReadBuffer(t.queue, sums, CL_TRUE, 0, sizeof(s), s, 0, NULL, NULL);
  clEnqueueReadBuffer(t.queue, lengths, CL_TRUE, 0, sizeof(len), len, 0, NULL, NULL);
  for (cl_ulong i = 0; i < ITEMS; i++) {
    cl_ulong l = 1 + i % MAX_LEN;
    assert_int_equal(len[i], l);
    assert_int_equal(s[i], l * i + l * (l - 1) / 2);
  }
  assert_int_equal(e2e_read_u32_sum(&t, failed, 1), 0);
  clReleaseMemObject(heads);
  clReleaseMemObject(sums);
  clReleaseMemObject(lengths);
  clReleaseMemObject(failed);
  clReleaseKernel(build);
  clReleaseKernel(consume);
  clReleaseProgram(p);
  free(src);
}

static void test_e2e_kernels_as_source(void **state) {
  char *src = read_text("tests/e2e/kernels/alloc_basic.cl");
  cl_program p = built(src, "");
  size_t nk = 0;
  assert_int_equal(clGetProgramInfo(p, CL_PROGRAM_NUM_KERNELS, sizeof(nk), &nk, NULL), CL_SUCCESS);
  assert_int_equal(nk, 8);
  char names[512] = "";
  assert_int_equal(clGetProgramInfo(p, CL_PROGRAM_KERNEL_NAMES, sizeof(names), names, NULL),
                   CL_SUCCESS);
  assert_non_null(strstr(names, "fill"));
  assert_non_null(strstr(names, "variants"));
  assert_non_null(strstr(names, "aligned_fill"));
  fill_and_release(p, 64);
  /* calloc, realloc and aligned_alloc: results[i] == 0 when all went well */
  cl_kernel v = e2e_kernel(p, "variants");
  cl_mem results = e2e_buffer(&t, 32 * sizeof(cl_uint));
  clSetKernelArg(v, 0, sizeof(cl_mem), &results);
  cl_ulong live0 = live();
  e2e_run(&t, v, 32);
  assert_int_equal(e2e_read_u32_sum(&t, results, 32), 0);
  assert_int_equal(live(), live0);
  clReleaseMemObject(results);
  clReleaseKernel(v);
  /* a second program of the context frees what this one allocated */
  char *other = read_text("tests/e2e/kernels/free_other.cl");
  cl_program q = built(other, "");
  cl_kernel fill = e2e_kernel(p, "fill_again"), check = e2e_kernel(q, "check_and_free");
  cl_mem ptrs = e2e_buffer(&t, 16 * sizeof(cl_ulong)), bad = e2e_buffer(&t, 4);
  cl_uint n = 3;
  clSetKernelArg(fill, 0, sizeof(cl_mem), &ptrs);
  clSetKernelArg(fill, 1, sizeof(n), &n);
  clSetKernelArg(check, 0, sizeof(cl_mem), &ptrs);
  clSetKernelArg(check, 1, sizeof(n), &n);
  clSetKernelArg(check, 2, sizeof(cl_mem), &bad);
  e2e_run(&t, fill, 16);
  assert_int_equal(live(), live0 + 16);
  e2e_run(&t, check, 16);
  assert_int_equal(live(), live0);
  assert_int_equal(e2e_read_u32_sum(&t, bad, 1), 0);
  clReleaseMemObject(ptrs);
  clReleaseMemObject(bad);
  clReleaseKernel(fill);
  clReleaseKernel(check);
  clReleaseProgram(q);
  clReleaseProgram(p);
  free(other);
  free(src);
}

static void test_generic_kernels_as_source(void **state) {
  char *src = read_text("tests/e2e/kernels/alloc_generic.cl");
  {
    cl_program p = built(src, "-cl-std=CL3.0");
    cl_kernel k = e2e_kernel(p, "generic_roundtrip");
    cl_mem out = e2e_buffer(&t, 64 * sizeof(cl_uint));
    clSetKernelArg(k, 0, sizeof(cl_mem), &out);
    cl_ulong live0 = live();
    e2e_run(&t, k, 64);
    assert_int_equal(live(), live0);
    cl_uint got[64];
    clEnqueueReadBuffer(t.queue, out, CL_TRUE, 0, sizeof(got), got, 0, NULL, NULL);
    for (cl_uint i = 0; i < 64; i++) {
      cl_uint n = 1 + i % 29;
      assert_int_equal(got[i], n * i + n * (n - 1) / 2);
    }
    clReleaseMemObject(out);
    clReleaseKernel(k);
    clReleaseProgram(p);
  }
  free(src);
}

/* ---- the OpenCL C interface: implicit declarations and the feature macro ------------------ */

static const char implicit_src[] =
    "kernel void implicit(global ulong *out) {\n"
    "  size_t i = get_global_id(0);\n"
    "  global uint *a = (global uint *)malloc(16);\n"
    "  global uint *b = (global uint *)calloc(4, sizeof(uint));\n"
    "  global uint *c = (global uint *)aligned_alloc(256, 64);\n"
    "  if (a)\n"
    "    a[0] = (uint)i;\n"
    "  a = (global uint *)realloc(a, 64);\n"
    "  ulong ok = a && b && c && (ulong)c % 256 == 0 && b[3] == 0 && a[0] == (uint)i;\n"
    "#ifdef cl_ext_device_malloc\n"
    "  ok |= (ulong)cl_ext_device_malloc << 1;\n"
    "#endif\n"
    "  free(a);\n"
    "  free(b);\n"
    "  free(c);\n"
    "  out[i] = ok;\n"
    "}\n";

static const char generic_src[] = "kernel void gen(global uint *out) {\n"
                                  "  size_t i = get_global_id(0);\n"
                                  "  uint *p = malloc(4 * sizeof(uint));\n"
                                  "  if (p) {\n"
                                  "    p[3] = (uint)i;\n"
                                  "    out[i] = p[3] + 1;\n"
                                  "  }\n"
                                  "  free(p);\n"
                                  "}\n";

static void run_implicit(const char *std) {
  char options[64];
  snprintf(options, sizeof(options), "-cl-std=%s", std);
  cl_program p = built(implicit_src, options);
  cl_kernel k = e2e_kernel(p, "implicit");
  cl_mem out = e2e_buffer(&t, 32 * sizeof(cl_ulong));
  clSetKernelArg(k, 0, sizeof(cl_mem), &out);
  cl_ulong live0 = live();
  e2e_run(&t, k, 32);
  assert_int_equal(live(), live0);
  cl_ulong got[32];
  clEnqueueReadBuffer(t.queue, out, CL_TRUE, 0, sizeof(got), got, 0, NULL, NULL);
  for (int i = 0; i < 32; i++)
    if (got[i] != 3)
      fail_msg("%s: work-item %d: %llu (1: allocations, 2: cl_ext_device_malloc)", std, i,
               (unsigned long long)got[i]);
  clReleaseMemObject(out);
  clReleaseKernel(k);
  clReleaseProgram(p);
}

static void test_implicit_declarations(void **state) {
  run_implicit("CL1.2");
  run_implicit("CL3.0");
  /* generic pointers need no cast under 3.0 (and 2.0); under 1.2 they are private pointers */
  {
    cl_program p = built(generic_src, "-cl-std=CL3.0");
    cl_kernel k = e2e_kernel(p, "gen");
    cl_mem out = e2e_buffer(&t, 16 * sizeof(cl_uint));
    clSetKernelArg(k, 0, sizeof(cl_mem), &out);
    e2e_run(&t, k, 16);
    assert_int_equal(e2e_read_u32_sum(&t, out, 16), 16 * 15 / 2 + 16);
    clReleaseMemObject(out);
    clReleaseKernel(k);
    clReleaseProgram(p);
  }
  cl_program p = source_program(generic_src);
  assert_int_equal(clBuildProgram(p, 1, &t.device, "-cl-std=CL1.2", NULL, NULL),
                   CL_BUILD_PROGRAM_FAILURE);
  clReleaseProgram(p);
  /* pocl's CPU device compiles OpenCL C 1.2 and 3.0, not 2.0: refused as for a plain program */
  static const char plain[] = "kernel void k(global int *x) { x[0] = 1; }\n";
  cl_program a = source_program(generic_src), b = source_program(plain);
  cl_int ea = clBuildProgram(a, 1, &t.device, "-cl-std=CL2.0", NULL, NULL);
  assert_int_not_equal(ea, CL_SUCCESS);
  assert_int_equal(ea, clBuildProgram(b, 1, &t.device, "-cl-std=CL2.0", NULL, NULL));
  char *la = build_log(a), *lb = build_log(b);
  assert_string_equal(la, lb);
  free(la);
  free(lb);
  clReleaseProgram(a);
  clReleaseProgram(b);
}

/* The shipped header used offline (kernels/header_offline.cl, compiled at build time). */
static void test_header_offline(void **state) {
  static const char *const modules[] = {"header_offline", "header_offline.cl20"};
  for (int m = 0; m < 2; m++) {
    cl_program p = e2e_program(&t, modules[m]);
    cl_kernel k = e2e_kernel(p, "offline");
    assert_int_equal(num_args(k), 1);
    cl_mem out = e2e_buffer(&t, 16 * sizeof(cl_ulong));
    clSetKernelArg(k, 0, sizeof(cl_mem), &out);
    cl_ulong live0 = live();
    e2e_run(&t, k, 16);
    assert_int_equal(live(), live0);
    cl_ulong got[16];
    clEnqueueReadBuffer(t.queue, out, CL_TRUE, 0, sizeof(got), got, 0, NULL, NULL);
    for (int i = 0; i < 16; i++)
      assert_int_equal(got[i], i + 1);
    clReleaseMemObject(out);
    clReleaseKernel(k);
    clReleaseProgram(p);
  }
}

/* ---- build options ------------------------------------------------------------------------ */

static const char options_src[] =
    "#include <source_util.h>\n"
    "kernel void iota(global ulong *out, global uint *sum) {\n"
    "  size_t i = get_global_id(0);\n"
    "  global uint *p = source_util_iota(COUNT, (uint)i);\n"
    "  uint s = 0;\n"
    "  for (uint k = 0; p && k < COUNT; k++)\n"
    "    s += p[k];\n"
    "  sum[i] = s;\n"
    "  out[i] = (ulong)p;\n"
    "}\n"
    "kernel void drop(global ulong *out) { free((global void *)out[get_global_id(0)]); }\n";

static void test_build_options(void **state) {
  char options[4200];
  snprintf(options, sizeof(options),
           "-D COUNT=5 -I %s/tests/e2e/kernels/include -cl-std=CL1.2 "
           "-cl-mad-enable",
           CLDM_TEST_SOURCE_DIR);
  cl_program p = built(options_src, options);
  char got[4200] = "";
  assert_int_equal(
      clGetProgramBuildInfo(p, t.device, CL_PROGRAM_BUILD_OPTIONS, sizeof(got), got, NULL),
      CL_SUCCESS);
  assert_string_equal(got, options);
  cl_kernel k = e2e_kernel(p, "iota"), d = e2e_kernel(p, "drop");
  cl_mem out = e2e_buffer(&t, 8 * sizeof(cl_ulong)), sum = e2e_buffer(&t, 8 * sizeof(cl_uint));
  clSetKernelArg(k, 0, sizeof(cl_mem), &out);
  clSetKernelArg(k, 1, sizeof(cl_mem), &sum);
  clSetKernelArg(d, 0, sizeof(cl_mem), &out);
  cl_ulong live0 = live();
  e2e_run(&t, k, 8);
  assert_int_equal(live(), live0 + 8);
  e2e_run(&t, d, 8);
  assert_int_equal(live(), live0);
  assert_int_equal(e2e_read_u32_sum(&t, sum, 8), 5 * (8 * 7 / 2) + 8 * 10);
  clReleaseMemObject(out);
  clReleaseMemObject(sum);
  clReleaseKernel(k);
  clReleaseKernel(d);
  clReleaseProgram(p);

  /* without -I the header is not found: a failed build */
  cl_program q = source_program(options_src);
  assert_int_equal(clBuildProgram(q, 1, &t.device, "-D COUNT=5", NULL, NULL),
                   CL_BUILD_PROGRAM_FAILURE);
  char *log = build_log(q);
  if (!strstr(log, "source_util.h"))
    fail_msg("build log \"%s\" does not name the header", log);
  free(log);
  clReleaseProgram(q);

  /* an option the driver does not know: the driver's answer, as for a plain program */
  static const char plain[] = "kernel void k(global int *x) { x[0] = 1; }\n";
  static const char allocating[] = "kernel void k(global ulong *x) { x[0] = (ulong)malloc(8); }\n";
  cl_program a = source_program(plain), b = source_program(allocating);
  cl_int ea = clBuildProgram(a, 1, &t.device, "-cldm-no-such-option", NULL, NULL);
  cl_int eb = clBuildProgram(b, 1, &t.device, "-cldm-no-such-option", NULL, NULL);
  assert_int_not_equal(ea, CL_SUCCESS);
  assert_int_equal(eb, ea);
  clReleaseProgram(a);
  clReleaseProgram(b);
}

/* ---- compile errors ------------------------------------------------------------------------ */

/* The log with each "tempfile_XXXXXX" name (pocl's file of the source) masked. */
static char *masked(char *log) {
  for (char *p = log; (p = strstr(p, "tempfile_")) != NULL; p += 9)
    for (char *q = p + 9; *q && *q != '.' && *q != ':'; q++)
      *q = 'X';
  return log;
}

static void test_syntax_error_log(void **state) {
  static const char allocating[] = "kernel void k(global ulong *x) {\n"
                                   "  global uint *p = (global uint *)malloc(4);\n"
                                   "  x[0] = (ulong)p +;\n"
                                   "}\n";
  static const char plain[] = "kernel void k(global ulong *x) {\n"
                              "  global uint *p = (global uint *)x;\n"
                              "  x[0] = (ulong)p +;\n"
                              "}\n";
  cl_program a = source_program(allocating), b = source_program(plain);
  assert_int_equal(clBuildProgram(a, 1, &t.device, "", NULL, NULL), CL_BUILD_PROGRAM_FAILURE);
  assert_int_equal(clBuildProgram(b, 1, &t.device, "", NULL, NULL), CL_BUILD_PROGRAM_FAILURE);
  cl_build_status status = CL_BUILD_SUCCESS;
  assert_int_equal(
      clGetProgramBuildInfo(a, t.device, CL_PROGRAM_BUILD_STATUS, sizeof(status), &status, NULL),
      CL_SUCCESS);
  assert_int_equal(status, CL_BUILD_ERROR);
  char *la = masked(build_log(a)), *lb = masked(build_log(b));
  if (!strstr(la, ":3:") || !strstr(la, "expected expression"))
    fail_msg("log \"%s\" does not name line 3's error", la);
  assert_string_equal(la, lb); /* the driver's own log, as for the plain program */
  free(la);
  free(lb);
  cl_kernel k = clCreateKernel(a, "k", &(cl_int){0});
  assert_null(k);
  clReleaseProgram(a);
  clReleaseProgram(b);
}

/* ---- sources that do not allocate --------------------------------------------------------- */

static void test_non_allocating_untouched(void **state) {
  static const char *const sources[] = {
      /* the names only in comments and strings: never compiled by the layer */
      "/* malloc(4) and free(p) are in a comment */\n"
      "constant char msg[] = \"calloc, realloc, aligned_alloc\";\n"
      "kernel void add(global uint *x) { x[get_global_id(0)] += 1 + (msg[0] == 'z'); }\n",
      /* a name used for something else: compiled, found not to allocate, given to the driver */
      "kernel void add(global uint *x) {\n"
      "  uint free = 1; // free is a local variable here\n"
      "  x[get_global_id(0)] += free;\n"
      "}\n",
  };
  for (int i = 0; i < 2; i++) {
    cl_program p = built(sources[i], "-cl-kernel-arg-info");
    assert_driver_source(p, sources[i]);
    cl_kernel k = e2e_kernel(p, "add");
    assert_int_equal(num_args(k), 1);
    char name[64] = "";
    assert_int_equal(clGetKernelArgInfo(k, 0, CL_KERNEL_ARG_NAME, sizeof(name), name, NULL),
                     CL_SUCCESS);
    assert_string_equal(name, "x"); /* the driver built the source: it knows the names */
    cl_mem x = e2e_buffer(&t, 8 * sizeof(cl_uint));
    clSetKernelArg(k, 0, sizeof(cl_mem), &x);
    e2e_run(&t, k, 8);
    assert_int_equal(e2e_read_u32_sum(&t, x, 8), 8);
    clReleaseMemObject(x);
    clReleaseKernel(k);
    clReleaseProgram(p);
  }
}

/* ---- argument information -------------------------------------------------------------------- */

static void test_arg_info(void **state) {
  static const char allocating[] =
      "kernel void sig(global const float *restrict in, local int *scratch, constant uint *c,\n"
      "                volatile global ulong *out, uint n) {\n"
      "  out[0] = (ulong)malloc(n) + (ulong)in[0] + scratch[0] + c[0];\n"
      "}\n";
  static const char plain[] =
      "kernel void sig(global const float *restrict in, local int *scratch, constant uint *c,\n"
      "                volatile global ulong *out, uint n) {\n"
      "  out[0] = (ulong)n + (ulong)in[0] + scratch[0] + c[0];\n"
      "}\n";
  static const cl_kernel_arg_info queries[] = {
      CL_KERNEL_ARG_ADDRESS_QUALIFIER, CL_KERNEL_ARG_ACCESS_QUALIFIER, CL_KERNEL_ARG_TYPE_NAME,
      CL_KERNEL_ARG_TYPE_QUALIFIER, CL_KERNEL_ARG_NAME};
  cl_program a = built(allocating, "-cl-kernel-arg-info"), b = built(plain, "-cl-kernel-arg-info");
  cl_kernel ka = e2e_kernel(a, "sig"), kb = e2e_kernel(b, "sig");
  assert_int_equal(num_args(ka), 5);
  for (cl_uint i = 0; i < 5; i++)
    for (size_t q = 0; q < sizeof(queries) / sizeof(queries[0]); q++) {
      char va[256] = "", vb[256] = "";
      size_t na = 0, nb = 0;
      cl_int ea = clGetKernelArgInfo(ka, i, queries[q], sizeof(va), va, &na);
      cl_int eb = clGetKernelArgInfo(kb, i, queries[q], sizeof(vb), vb, &nb);
      assert_int_equal(eb, CL_SUCCESS);
      assert_int_equal(ea, eb);
      assert_int_equal(na, nb);
      if (memcmp(va, vb, na))
        fail_msg("argument %u, query %#x: \"%s\" where the driver says \"%s\"", i,
                 (unsigned)queries[q], va, vb);
    }
  char name[64];
  assert_int_equal(clGetKernelArgInfo(ka, 5, CL_KERNEL_ARG_NAME, sizeof(name), name, NULL),
                   CL_INVALID_ARG_INDEX); /* the hidden argument */
  clReleaseKernel(ka);
  clReleaseKernel(kb);
  clReleaseProgram(a);
  clReleaseProgram(b);
}

/* ---- separate compilation ------------------------------------------------------------------- */

static void test_separate_compilation_with_header(void **state) {
  static const char header[] =
      "static global uint *make(uint n) { return (global uint *)malloc(n * sizeof(uint)); }\n"
      "uint twice(uint x);\n";
  static const char main_src[] = "#include \"alloc_util.h\"\n"
                                 "kernel void produce(global ulong *out) {\n"
                                 "  size_t i = get_global_id(0);\n"
                                 "  global uint *p = make(2);\n"
                                 "  if (p)\n"
                                 "    p[0] = twice((uint)i);\n"
                                 "  out[i] = (ulong)p;\n"
                                 "}\n"
                                 "kernel void consume(global ulong *out, global uint *vals) {\n"
                                 "  size_t i = get_global_id(0);\n"
                                 "  global uint *p = (global uint *)out[i];\n"
                                 "  vals[i] = p ? p[0] : 0xffffffffu;\n"
                                 "  free(p);\n"
                                 "}\n";
  static const char lib_src[] = "uint twice(uint x) { return 2 * x; }\n";
  cl_program h = source_program(header), m = source_program(main_src), l = source_program(lib_src);
  const char *names[1] = {"alloc_util.h"};
  cl_int err = clCompileProgram(m, 1, &t.device, "", 1, &h, names, NULL, NULL);
  if (err != CL_SUCCESS) {
    char *log = build_log(m);
    fail_msg("clCompileProgram = %d: %s", err, log);
  }
  assert_int_equal(clCompileProgram(l, 1, &t.device, "", 0, NULL, NULL, NULL, NULL), CL_SUCCESS);
  cl_program inputs[2] = {m, l};
  cl_program linked = clLinkProgram(t.context, 1, &t.device, "", 2, inputs, NULL, NULL, &err);
  assert_int_equal(err, CL_SUCCESS);
  cl_kernel pk = e2e_kernel(linked, "produce"), ck = e2e_kernel(linked, "consume");
  assert_int_equal(num_args(pk), 1);
  cl_mem out = e2e_buffer(&t, 16 * sizeof(cl_ulong)), vals = e2e_buffer(&t, 16 * sizeof(cl_uint));
  clSetKernelArg(pk, 0, sizeof(cl_mem), &out);
  clSetKernelArg(ck, 0, sizeof(cl_mem), &out);
  clSetKernelArg(ck, 1, sizeof(cl_mem), &vals);
  cl_ulong live0 = live();
  e2e_run(&t, pk, 16);
  assert_int_equal(live(), live0 + 16);
  e2e_run(&t, ck, 16);
  assert_int_equal(live(), live0);
  assert_int_equal(e2e_read_u32_sum(&t, vals, 16), 2 * (16 * 15 / 2));
  clReleaseMemObject(out);
  clReleaseMemObject(vals);
  clReleaseKernel(pk);
  clReleaseKernel(ck);
  clReleaseProgram(linked);

  /* an allocating function called from another, separately compiled module: refused, also
   * when the caller's source names nothing of the extension */
  static const char alloc_lib[] =
      "global uint *mk(uint n) { return (global uint *)malloc(n * sizeof(uint)); }\n";
  static const char caller[] = "global uint *mk(uint n);\n"
                               "kernel void k(global ulong *o) { o[0] = (ulong)mk(4); }\n";
  cl_program al = source_program(alloc_lib), c = source_program(caller);
  assert_int_equal(clCompileProgram(al, 1, &t.device, "", 0, NULL, NULL, NULL, NULL), CL_SUCCESS);
  assert_int_equal(clCompileProgram(c, 1, &t.device, "", 0, NULL, NULL, NULL, NULL), CL_SUCCESS);
  cl_program pair[2] = {c, al};
  e2e_stderr cap;
  e2e_stderr_begin(&cap);
  cl_program bad = clLinkProgram(t.context, 1, &t.device, "", 2, pair, NULL, NULL, &err);
  char *text = e2e_stderr_end(&cap);
  assert_null(bad);
  assert_int_equal(err, CL_LINK_PROGRAM_FAILURE);
  if (!strstr(text, "\"mk\""))
    fail_msg("layer message \"%s\" does not name mk", text);
  free(text);
  clReleaseProgram(al);
  clReleaseProgram(c);
  clReleaseProgram(h);
  clReleaseProgram(m);
  clReleaseProgram(l);
}

static void test_rebuild_with_kernels(void **state) {
  static const char allocating[] = "kernel void k(global ulong *x) { x[0] = (ulong)malloc(8); }\n";
  static const char plain[] = "kernel void k(global ulong *x) { x[0] = 8; }\n";
  cl_program a = built(allocating, ""), b = built(plain, "");
  cl_kernel ka = e2e_kernel(a, "k"), kb = e2e_kernel(b, "k");
  cl_int ea = clBuildProgram(a, 1, &t.device, "", NULL, NULL);
  assert_int_equal(ea, clBuildProgram(b, 1, &t.device, "", NULL, NULL));
  assert_int_equal(ea, CL_INVALID_OPERATION);
  cl_program kp = NULL;
  assert_int_equal(clGetKernelInfo(ka, CL_KERNEL_PROGRAM, sizeof(kp), &kp, NULL), CL_SUCCESS);
  assert_ptr_equal(kp, a);
  clReleaseKernel(ka);
  clReleaseKernel(kb);
  /* without kernels the program can be built again */
  assert_int_equal(clBuildProgram(a, 1, &t.device, "-cl-mad-enable", NULL, NULL), CL_SUCCESS);
  ka = e2e_kernel(a, "k");
  assert_int_equal(num_args(ka), 1);
  clReleaseKernel(ka);
  clReleaseProgram(a);
  clReleaseProgram(b);
}

/* Several threads build allocating source programs at once (one compiler, serialised inside)
 * and create their kernels, which hide the heap argument. */
typedef struct builder {
  const char *src;
  cl_int err;
  cl_uint nargs;
} builder;

static void *build_and_run(void *arg) {
  builder *b = arg;
  cl_program p = clCreateProgramWithSource(t.context, 1, &b->src, NULL, &b->err);
  if (b->err == CL_SUCCESS)
    b->err = clBuildProgram(p, 1, &t.device, "", NULL, NULL);
  cl_kernel k = b->err == CL_SUCCESS ? clCreateKernel(p, "fill", &b->err) : NULL;
  if (k) {
    b->err = clGetKernelInfo(k, CL_KERNEL_NUM_ARGS, sizeof(b->nargs), &b->nargs, NULL);
    clReleaseKernel(k);
  }
  if (p)
    clReleaseProgram(p);
  return NULL;
}

static void test_concurrent_source_builds(void **state) {
  char *src = read_text("tests/e2e/kernels/alloc_basic.cl");
  enum { THREADS = 4 };
  char *texts[THREADS];
  builder b[THREADS];
  pthread_t th[THREADS];
  for (int i = 0; i < THREADS; i++) {
    texts[i] = malloc(strlen(src) + 64);
    sprintf(texts[i], "%s\n/* builder %d */\n", src, i); /* programs of their own */
    b[i] = (builder){texts[i], -1, 0};
    assert_int_equal(pthread_create(&th[i], NULL, build_and_run, &b[i]), 0);
  }
  for (int i = 0; i < THREADS; i++) {
    pthread_join(th[i], NULL);
    assert_int_equal(b[i].err, CL_SUCCESS);
    assert_int_equal(b[i].nargs, 2);
    free(texts[i]);
  }
  free(src);
}

/* ---- program binaries ------------------------------------------------------------------------ */

static unsigned char *program_binary(cl_program p, size_t *size) {
  assert_int_equal(clGetProgramInfo(p, CL_PROGRAM_BINARY_SIZES, sizeof(*size), size, NULL),
                   CL_SUCCESS);
  assert_true(*size > 0);
  unsigned char *bin = malloc(*size);
  assert_int_equal(clGetProgramInfo(p, CL_PROGRAM_BINARIES, sizeof(bin), &bin, NULL), CL_SUCCESS);
  return bin;
}

static cl_program from_binary(const unsigned char *bin, size_t size) {
  cl_int err, status;
  cl_program p = clCreateProgramWithBinary(t.context, 1, &t.device, &size, &bin, &status, &err);
  assert_int_equal(err, CL_SUCCESS);
  assert_int_equal(status, CL_SUCCESS);
  assert_int_equal(clBuildProgram(p, 1, &t.device, "", NULL, NULL), CL_SUCCESS);
  return p;
}

static void test_binaries_round_trip(void **state) {
  /* a source program */
  char *src = read_text("tests/e2e/kernels/alloc_basic.cl");
  cl_program p = built(src, "");
  size_t size;
  unsigned char *bin = program_binary(p, &size);
  clReleaseProgram(p);
  p = from_binary(bin, size);
  fill_and_release(p, 32);
  /* its binary again (what a cache that re-saves does) */
  size_t size2;
  unsigned char *bin2 = program_binary(p, &size2);
  clReleaseProgram(p);
  p = from_binary(bin2, size2);
  fill_and_release(p, 8);
  clReleaseProgram(p);
  free(bin2);
  free(bin);
  free(src);
  /* a program from IL */
  p = e2e_program(&t, "alloc_basic");
  bin = program_binary(p, &size);
  clReleaseProgram(p);
  p = from_binary(bin, size);
  fill_and_release(p, 16);
  clReleaseProgram(p);
  free(bin);
  /* a program the layer did not touch stays the driver's */
  p = e2e_program(&t, "noalloc");
  bin = program_binary(p, &size);
  clReleaseProgram(p);
  p = from_binary(bin, size);
  cl_kernel k = e2e_kernel(p, "add_one");
  assert_int_equal(num_args(k), 1);
  clReleaseKernel(k);
  clReleaseProgram(p);
  free(bin);
}

/* Runs this executable as "load FILE N" (with XDG_CACHE_HOME=cache if cache is not NULL);
 * returns its exit status. */
static int run_child(const char *file, const char *expect, const char *cache) {
  fflush(NULL);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    if (cache)
      setenv("XDG_CACHE_HOME", cache, 1);
    execl("/proc/self/exe", "test_e2e_source", "load", file, expect, (char *)NULL);
    _exit(127);
  }
  int status = 0;
  assert_int_equal(waitpid(pid, &status, 0), pid);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

static void test_binaries_in_a_later_process(void **state) {
  char *src = read_text("tests/e2e/kernels/alloc_basic.cl");
  static const char tag[] = "\n/* a later process */\n"; /* a binary of its own */
  char *text = malloc(strlen(src) + sizeof(tag));
  sprintf(text, "%s%s", src, tag);
  cl_program p = built(text, "-cl-kernel-arg-info");
  size_t size;
  unsigned char *bin = program_binary(p, &size);
  clReleaseProgram(p);
  const char *dir = getenv("CLDM_TEST_DATA_DIR");
  char file[4096], empty[4096];
  snprintf(file, sizeof(file), "%s/source-binary-%d.bin", dir ? dir : ".", (int)getpid());
  snprintf(empty, sizeof(empty), "%s/empty-cache-%d", dir ? dir : ".", (int)getpid());
  FILE *f = fopen(file, "wb");
  assert_non_null(f);
  assert_int_equal(fwrite(bin, 1, size, f), size);
  fclose(f);
  mkdir(empty, 0700);
  assert_int_equal(run_child(file, "2", NULL), 0);  /* recognised from the record file */
  assert_int_equal(run_child(file, "3", empty), 0); /* without it: the driver's kernel */
  unlink(file);
  char rec_dir[4200];
  snprintf(rec_dir, sizeof(rec_dir), "%s/cl_ext_device_malloc", empty);
  rmdir(rec_dir);
  rmdir(empty);
  free(bin);
  free(text);
  free(src);
}

/* ---- "load FILE N": the later process ------------------------------------------------------ */

static const char *load_file;
static cl_uint load_expect;

static void test_load_binary(void **state) {
  size_t size;
  void *bin = cldm_file_read(load_file, &size);
  assert_non_null(bin);
  cl_program p = from_binary(bin, size);
  cl_kernel k = e2e_kernel(p, "fill");
  assert_int_equal(num_args(k), load_expect);
  if (load_expect == 2) {
    char name[64] = "";
    assert_int_equal(clGetKernelArgInfo(k, 1, CL_KERNEL_ARG_NAME, sizeof(name), name, NULL),
                     CL_SUCCESS); /* the argument information came with the record */
    assert_string_equal(name, "n");
    fill_and_release(p, 24);
  }
  clReleaseKernel(k);
  clReleaseProgram(p);
  free(bin);
}

int main(int argc, char **argv) {
  if (argc == 4 && !strcmp(argv[1], "load")) {
    load_file = argv[2];
    load_expect = (cl_uint)atoi(argv[3]);
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_load_binary)};
    return cmocka_run_group_tests_name("later process", tests, setup, teardown);
  }
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_demo_lists_as_source),
      cmocka_unit_test(test_e2e_kernels_as_source),
      cmocka_unit_test(test_generic_kernels_as_source),
      cmocka_unit_test(test_implicit_declarations),
      cmocka_unit_test(test_header_offline),
      cmocka_unit_test(test_build_options),
      cmocka_unit_test(test_syntax_error_log),
      cmocka_unit_test(test_non_allocating_untouched),
      cmocka_unit_test(test_arg_info),
      cmocka_unit_test(test_separate_compilation_with_header),
      cmocka_unit_test(test_rebuild_with_kernels),
      cmocka_unit_test(test_concurrent_source_builds),
      cmocka_unit_test(test_binaries_round_trip),
      cmocka_unit_test(test_binaries_in_a_later_process),
  };
  return cmocka_run_group_tests_name("source programs and binaries", tests, setup, teardown);
}
