/*
 * test_layer_source.c — source programs through the layer on the stub ICD's SPIR-V device,
 * under both loaders (layer_source.c, layer_build.c; spec 1.5.1): the driver always holds the
 * application's exact source (CL_PROGRAM_SOURCE is the stub's copy); a source that cannot use
 * the extension (its names only in comments and strings) is never touched, not even its build
 * options; one that names them but does not allocate is built by the driver with
 * cl_ext_device_malloc defined while CL_PROGRAM_BUILD_OPTIONS reports the application's
 * options; an allocating one is built from its compiled, lowered module (the driver receives
 * SPIR-V with the hidden heap parameter and the options that apply to a compiled module); a
 * source that does not compile fails with the compiler's diagnostics as its build log (the
 * stub compiles nothing, so the layer's own log); clCompileProgram takes input headers; a
 * device without SPIR-V is left alone; a source's record lives as long as its kernels.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "cldm_test_util.h"
#include "cldm_cl_device.h"
#include "stub_icd.h"

static const char alloc_src[] = "kernel void fill(global ulong *out, uint n) {\n"
                                "  global uint *p = malloc(N * n * sizeof(uint));\n"
                                "  out[get_global_id(0)] = (ulong)p;\n"
                                "}\n";
static const char mention_src[] = "/* malloc(4) and free(p) in a comment */\n"
                                  "constant char msg[] = \"calloc in a string\";\n"
                                  "kernel void k(global int *x) { x[0] = msg['f']; }\n";
static const char local_free_src[] =
    "kernel void k(global int *x) { int free = 1; x[0] = free; } // free: a local variable\n";
static const char bad_src[] = "kernel void k(global ulong *x) {\n"
                              "  x[0] = (ulong)malloc(4) +;\n"
                              "}\n";

static cl_platform_id plat;

static void test_loader(void **state) {
  char why[4200];
  if (!cldm_test_loader_matches(why, sizeof(why)))
    fail_msg("%s", why);
}

static cl_context context_on(const char *device, cl_device_id *dev) {
  *dev = cldm_cl_find_device(device, NULL, &plat);
  assert_non_null(*dev);
  cl_int err;
  cl_context ctx = clCreateContext(NULL, 1, dev, NULL, NULL, &err);
  assert_int_equal(err, CL_SUCCESS);
  return ctx;
}

static cl_program from_source(cl_context ctx, const char *src) {
  cl_int err;
  cl_program p = clCreateProgramWithSource(ctx, 1, &src, NULL, &err);
  assert_int_equal(err, CL_SUCCESS);
  return p;
}

static const char *last_build_options(void) {
  typedef const char *(*fn_t)(void);
  fn_t fn = (fn_t)clGetExtensionFunctionAddressForPlatform(plat, STUB_LAST_BUILD_OPTIONS_FUNCTION);
  assert_non_null(fn);
  return fn();
}

static char *program_string(cl_program p, cl_program_info name) {
  size_t n = 0;
  assert_int_equal(clGetProgramInfo(p, name, 0, NULL, &n), CL_SUCCESS);
  char *s = calloc(1, n + 1);
  assert_int_equal(clGetProgramInfo(p, name, n, s, NULL), CL_SUCCESS);
  return s;
}

static char *build_string(cl_program p, cl_device_id dev, cl_program_build_info name) {
  size_t n = 0;
  assert_int_equal(clGetProgramBuildInfo(p, dev, name, 0, NULL, &n), CL_SUCCESS);
  char *s = calloc(1, n + 1);
  assert_int_equal(clGetProgramBuildInfo(p, dev, name, n, s, NULL), CL_SUCCESS);
  return s;
}

/* The driver holds exactly `src`. */
static void assert_driver_source(cl_program p, const char *src) {
  char *got = program_string(p, CL_PROGRAM_SOURCE);
  assert_string_equal(got, src);
  free(got);
}

static int contains(const void *hay, size_t n, const char *needle) {
  size_t m = strlen(needle);
  for (size_t i = 0; i + m <= n; i++)
    if (!memcmp((const char *)hay + i, needle, m))
      return 1;
  return 0;
}

/* A program of `src` built with `opts`; the driver's build got `driver_opts`. */
static cl_program built(cl_context ctx, cl_device_id dev, const char *src, const char *opts,
                        const char *driver_opts) {
  cl_program p = from_source(ctx, src);
  assert_int_equal(clBuildProgram(p, 1, &dev, opts, NULL, NULL), CL_SUCCESS);
  assert_string_equal(last_build_options(), driver_opts);
  return p;
}

static void test_mention_only_untouched(void **state) {
  cl_device_id dev;
  cl_context ctx = context_on("stub-spirv", &dev);
  /* not even a define */
  cl_program p = built(ctx, dev, mention_src, "-DX=1 -cl-std=CL1.2", "-DX=1 -cl-std=CL1.2");
  assert_driver_source(p, mention_src);
  clReleaseProgram(p);
  clReleaseContext(ctx);
}

static void test_names_but_no_allocation(void **state) {
  cl_device_id dev;
  cl_context ctx = context_on("stub-spirv", &dev);
  /* the driver builds the untouched source, with the feature macro defined */
  cl_program p = built(ctx, dev, local_free_src, "-DX=1", "-DX=1 -D cl_ext_device_malloc=1");
  assert_driver_source(p, local_free_src);
  char *opts = build_string(p, dev, CL_PROGRAM_BUILD_OPTIONS);
  assert_string_equal(opts, "-DX=1");
  free(opts);
  clReleaseProgram(p);
  clReleaseContext(ctx);
}

static void test_allocating_source_built_from_module(void **state) {
  cl_device_id dev;
  cl_context ctx = context_on("stub-spirv", &dev);
  cl_program p = from_source(ctx, alloc_src);
  const char *options = "-DN=3 -cl-kernel-arg-info -I /nonexistent -cl-std=CL1.2";
  assert_int_equal(clBuildProgram(p, 1, &dev, options, NULL, NULL), CL_SUCCESS);
  /* the compiled module's build: options of a compiled module only */
  assert_string_equal(last_build_options(), "-cl-kernel-arg-info");
  char *opts = build_string(p, dev, CL_PROGRAM_BUILD_OPTIONS);
  assert_string_equal(opts, options);
  free(opts);
  cl_build_status status = CL_BUILD_NONE;
  assert_int_equal(
      clGetProgramBuildInfo(p, dev, CL_PROGRAM_BUILD_STATUS, sizeof(status), &status, NULL),
      CL_SUCCESS);
  assert_int_equal(status, CL_BUILD_SUCCESS);
  assert_driver_source(p, alloc_src); /* the application's handle keeps its source */
  /* the binaries are the target's: the lowered module (the stub returns what it was given) */
  size_t size = 0;
  assert_int_equal(clGetProgramInfo(p, CL_PROGRAM_BINARY_SIZES, sizeof(size), &size, NULL),
                   CL_SUCCESS);
  assert_true(size > 20);
  unsigned char *bin = malloc(size);
  assert_int_equal(clGetProgramInfo(p, CL_PROGRAM_BINARIES, sizeof(bin), &bin, NULL), CL_SUCCESS);
  uint32_t magic;
  memcpy(&magic, bin, 4);
  assert_int_equal(magic, 0x07230203u);
  assert_true(contains(bin, size, "__cldm_heap")); /* the hidden parameter */
  assert_true(contains(bin, size, "fill"));
  free(bin);
  clReleaseProgram(p);
  clReleaseContext(ctx);
}

static void test_compile_error_log(void **state) {
  cl_device_id dev;
  cl_context ctx = context_on("stub-spirv", &dev);
  cl_program p = from_source(ctx, bad_src);
  assert_int_equal(clBuildProgram(p, 1, &dev, "", NULL, NULL), CL_BUILD_PROGRAM_FAILURE);
  cl_build_status status = CL_BUILD_SUCCESS;
  assert_int_equal(
      clGetProgramBuildInfo(p, dev, CL_PROGRAM_BUILD_STATUS, sizeof(status), &status, NULL),
      CL_SUCCESS);
  assert_int_equal(status, CL_BUILD_ERROR);
  char *log = build_string(p, dev, CL_PROGRAM_BUILD_LOG);
  /* clang's format, on the user's line 2 (the implicit header does not shift lines) */
  if (!strstr(log, "<kernel>:2:") || !strstr(log, "error: expected expression"))
    fail_msg("build log \"%s\" lacks the diagnostic", log);
  free(log);
  assert_int_equal(clCompileProgram(p, 1, &dev, "", 0, NULL, NULL, NULL, NULL),
                   CL_COMPILE_PROGRAM_FAILURE);
  clReleaseProgram(p);
  clReleaseContext(ctx);
}

static void test_compile_with_header(void **state) {
  cl_device_id dev;
  cl_context ctx = context_on("stub-spirv", &dev);
  static const char header[] = "#define N 5\nstatic global uint *grab(uint n) { return "
                               "(global uint *)calloc(n, sizeof(uint)); }\n";
  static const char main_src[] = "#include \"defs.h\"\n"
                                 "kernel void fill(global ulong *out) {\n"
                                 "  out[get_global_id(0)] = (ulong)grab(N);\n"
                                 "}\n";
  cl_program h = from_source(ctx, header), p = from_source(ctx, main_src);
  const char *names[1] = {"defs.h"};
  assert_int_equal(clCompileProgram(p, 1, &dev, "-DM=1", 1, &h, names, NULL, NULL), CL_SUCCESS);
  assert_string_equal(last_build_options(), ""); /* the module's compile, -D consumed */
  size_t size = 0;
  assert_int_equal(clGetProgramInfo(p, CL_PROGRAM_BINARY_SIZES, sizeof(size), &size, NULL),
                   CL_SUCCESS);
  unsigned char *bin = malloc(size);
  assert_int_equal(clGetProgramInfo(p, CL_PROGRAM_BINARIES, sizeof(bin), &bin, NULL), CL_SUCCESS);
  assert_true(contains(bin, size, "__cldm_heap"));
  free(bin);
  /* without the header the source does not compile */
  cl_program q = from_source(ctx, main_src);
  assert_int_equal(clCompileProgram(q, 1, &dev, "", 0, NULL, NULL, NULL, NULL),
                   CL_COMPILE_PROGRAM_FAILURE);
  char *log = build_string(q, dev, CL_PROGRAM_BUILD_LOG);
  if (!strstr(log, "defs.h"))
    fail_msg("build log \"%s\" does not name the missing header", log);
  free(log);
  clReleaseProgram(q);
  clReleaseProgram(p);
  clReleaseProgram(h);
  clReleaseContext(ctx);
}

/* A source the layer keeps a record of (it names `free`) that does not allocate: the driver
 * builds it and makes its kernels, which hold the program out of the layer's sight. Released by
 * the application while such a kernel lives, its record goes with the kernel (the layer counts
 * the kernel as a holder). Before, the record went only at a release that found the driver's
 * count at 1, which never came: it stayed, and a later program at the same address that the
 * layer does not look at (its names only in comments and strings) was built as the old one,
 * through the layer's compile of the old text, with the layer's macro in its options. */
static void test_record_lives_with_kernels(void **state) {
  cl_device_id dev;
  cl_context ctx = context_on("stub-spirv", &dev);
  cl_program p = built(ctx, dev, local_free_src, "-DA", "-DA -D cl_ext_device_malloc=1");
  cl_int err;
  cl_kernel k = clCreateKernel(p, "k", &err);
  assert_int_equal(err, CL_SUCCESS);
  assert_int_equal(clReleaseProgram(p), CL_SUCCESS);             /* the application's last handle */
  assert_int_equal(clReleaseKernel(k), CL_SUCCESS);              /* the driver frees k, then p */
  cl_program other = built(ctx, dev, mention_src, "-DB", "-DB"); /* not even a define */
  assert_ptr_equal(other, p); /* the stub reuses the freed program's memory */
  assert_driver_source(other, mention_src);
  clReleaseProgram(other);
  clReleaseContext(ctx);
}

static void test_device_without_spirv_left_alone(void **state) {
  cl_device_id dev;
  cl_context ctx = context_on("stub-plain", &dev);
  cl_program p = from_source(ctx, alloc_src);
  assert_int_equal(clBuildProgram(p, 1, &dev, "-DN=3", NULL, NULL), CL_SUCCESS);
  assert_string_equal(last_build_options(), "-DN=3");
  assert_driver_source(p, alloc_src);
  assert_false(cldm_test_mapped("libcldm-clc")); /* nothing was compiled for it */
  clReleaseProgram(p);
  clReleaseContext(ctx);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_loader),
      cmocka_unit_test(test_mention_only_untouched),
      cmocka_unit_test(test_device_without_spirv_left_alone),
      cmocka_unit_test(test_names_but_no_allocation),
      cmocka_unit_test(test_allocating_source_built_from_module),
      cmocka_unit_test(test_compile_error_log),
      cmocka_unit_test(test_compile_with_header),
      cmocka_unit_test(test_record_lives_with_kernels),
  };
  return cmocka_run_group_tests_name("source programs", tests, NULL, NULL);
}
