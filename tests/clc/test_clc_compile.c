/*
 * test_clc_compile.c — libcldm-clc.so, loaded with dlopen through its one exported symbol as
 * the layer loads it: OpenCL C source -> SPIR-V the engine lowers (the demo's kernels, with
 * their argument information), the extension's header included (the feature macro, the global
 * forms for OpenCL C 1.2 and 3.0 without generic pointers, the generic forms for 2.0 and 3.0
 * with them, CL_EXT_DEVICE_MALLOC_NO_DECLARATIONS), #include of it and of input headers,
 * options that would abort opencl-clang filtered out, and clang's diagnostics as the log; and
 * C++ for OpenCL (clang's own front end): new, new[] of a type with a destructor (its size check
 * rewritten for the translator), nothrow new, delete, the helpers, malloc as extern "C", all
 * declared by the header, for both C++ for OpenCL versions, and its diagnostics.
 * Arguments: the library, the source tree.
 */
#include <dlfcn.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cldm_clc.h"
#include "cldm_file.h"
#include "cldm_spirv.h"

static const cldm_clc_api *api;
static const char *source_dir;

/* pocl's CPU device answers, in part */
static const char pocl_names[] =
    "cl_khr_byte_addressable_store cl_khr_global_int32_base_atomics cl_khr_fp64 "
    "cl_khr_int64_base_atomics cl_khr_3d_image_writes __opencl_c_images __opencl_c_3d_image_writes "
    "__opencl_c_read_write_images __opencl_c_generic_address_space __opencl_c_fp64 "
    "__opencl_c_int64 __opencl_c_atomic_order_acq_rel __opencl_c_atomic_scope_device";
static const char no_generic_names[] =
    "cl_khr_fp64 cl_khr_3d_image_writes __opencl_c_fp64 __opencl_c_int64 "
    "__opencl_c_images __opencl_c_3d_image_writes "
    "__opencl_c_read_write_images";

static cldm_clc_status compile(const char *src, const char *options, const char *names,
                               cldm_clc_result *out) {
  cldm_clc_request req;
  memset(&req, 0, sizeof(req));
  req.source = src;
  req.options = options;
  req.device_extensions = names;
  req.opencl_version = 300;
  req.source_name = "<kernel>";
  return api->compile(&req, out);
}

/* Compiles and expects success; returns the engine's report of the module. */
static void expect_ok(const char *src, const char *options, const char *names,
                      cldm_spirv_report *report) {
  cldm_clc_result out;
  cldm_clc_status st = compile(src, options, names, &out);
  if (st != CLDM_CLC_OK)
    fail_msg("%s: %s", api->status_name(st), out.log ? out.log : "(no log)");
  uint32_t magic;
  assert_true(out.spirv_size > 20 && out.spirv_size % 4 == 0);
  memcpy(&magic, out.spirv, 4);
  assert_int_equal(magic, 0x07230203u);
  assert_int_equal(cldm_spirv_inspect(out.spirv, out.spirv_size, report, NULL), CLDM_SPIRV_OK);
  api->free_result(&out);
  assert_null(out.spirv); /* zeroed */
}

/* Compiles and expects a compile error whose log holds `fragment`. */
static void expect_error(const char *src, const char *options, const char *names,
                         const char *fragment) {
  cldm_clc_result out;
  assert_int_equal(compile(src, options, names, &out), CLDM_CLC_E_COMPILE);
  assert_null(out.spirv);
  assert_non_null(out.log);
  if (!strstr(out.log, fragment))
    fail_msg("log \"%s\" lacks \"%s\"", out.log, fragment);
  api->free_result(&out);
}

static void test_demo_kernels(void **state) {
  char path[4096];
  snprintf(path, sizeof(path), "%s/examples/kernels/lists.cl", source_dir);
  size_t n;
  char *src = cldm_file_read(path, &n);
  assert_non_null(src);
  cldm_clc_result out;
  assert_int_equal(compile(src, "-cl-std=CL1.2", pocl_names, &out), CLDM_CLC_OK);
  assert_int_equal(out.num_kernels, 2);
  const cldm_clc_kernel *k = &out.kernels[0];
  assert_string_equal(k->name, "build_lists");
  assert_int_equal(k->num_args, 3);
  assert_string_equal(k->args[0].name, "heads");
  assert_string_equal(k->args[0].type_name, "ulong*");
  assert_int_equal(k->args[0].addr_space, 1);
  assert_string_equal(k->args[1].name, "max_len");
  assert_string_equal(k->args[1].type_name, "uint");
  assert_int_equal(k->args[1].addr_space, 0);
  cldm_spirv_report r;
  assert_int_equal(cldm_spirv_inspect(out.spirv, out.spirv_size, &r, NULL), CLDM_SPIRV_OK);
  assert_true(r.allocates);
  assert_true(r.forms & CLDM_SPIRV_FORM_IMPORT);
  assert_int_equal(r.num_kernels, 2);
  assert_true(r.kernels[0].takes_heap);
  cldm_spirv_report_free(&r);
  api->free_result(&out);
  free(src);
}

static void test_argument_qualifiers(void **state) {
  static const char src[] =
      "kernel void q(global const float *restrict a, local int *b, constant uint *c,\n"
      "              volatile global ulong *d, read_only image2d_t img) {\n"
      "  d[0] = (ulong)malloc(4) + (ulong)a[0] + b[0] + c[0];\n"
      "}\n";
  cldm_clc_result out;
  assert_int_equal(compile(src, "", pocl_names, &out), CLDM_CLC_OK);
  assert_int_equal(out.num_kernels, 1);
  const cldm_clc_arg *a = out.kernels[0].args;
  assert_int_equal(out.kernels[0].num_args, 5);
  assert_int_equal(a[0].type_qual, CLDM_CLC_QUAL_CONST | CLDM_CLC_QUAL_RESTRICT);
  assert_int_equal(a[1].addr_space, 3);
  assert_int_equal(a[2].addr_space, 2);
  assert_int_equal(a[3].type_qual, CLDM_CLC_QUAL_VOLATILE);
  assert_int_equal(a[4].access, 1);
  assert_string_equal(a[4].type_name, "image2d_t");
  api->free_result(&out);
}

static const char global_src[] = "kernel void k(global ulong *out) {\n"
                                 "  global uint *p = malloc(8);\n"
                                 "  out[0] = (ulong)p;\n"
                                 "  free(p);\n"
                                 "}\n";
static const char generic_src[] = "kernel void k(global ulong *out) {\n"
                                  "  uint *p = malloc(8);\n"
                                  "  p = realloc(p, 16);\n"
                                  "  uint *q = calloc(2, 4), *r = aligned_alloc(64, 64);\n"
                                  "  out[0] = (ulong)p + (ulong)q + (ulong)r;\n"
                                  "  free(p);\n"
                                  "  free(q);\n"
                                  "  free(r);\n"
                                  "}\n";

static void test_declaration_forms(void **state) {
  cldm_spirv_report r;
  /* OpenCL C 1.2: global pointers */
  expect_ok(global_src, "", pocl_names, &r);
  assert_true(r.allocates);
  cldm_spirv_report_free(&r);
  expect_error(generic_src, "-cl-std=CL1.2", pocl_names, "changes address space");
  /* 2.0, and 3.0 with generic pointers: generic forms */
  expect_ok(generic_src, "-cl-std=CL2.0", pocl_names, &r);
  assert_true(r.allocates);
  cldm_spirv_report_free(&r);
  expect_ok(generic_src, "-cl-std=CL3.0", pocl_names, &r);
  cldm_spirv_report_free(&r);
  expect_error(global_src, "-cl-std=CL3.0", pocl_names, "changes address space");
  /* 3.0 without generic pointers: global forms again */
  expect_ok(global_src, "-cl-std=CL3.0", no_generic_names, &r);
  cldm_spirv_report_free(&r);
}

static void test_feature_macro_and_opt_out(void **state) {
  static const char macro[] = "#if cl_ext_device_malloc != 1\n#error no feature macro\n#endif\n"
                              "#ifndef CL_EXT_DEVICE_MALLOC_GENERIC_FORMS\n"
                              "kernel void k(global int *x) { x[0] = 1; }\n#endif\n";
  cldm_spirv_report r;
  expect_ok(macro, "", pocl_names, &r);
  assert_false(r.allocates);
  assert_int_equal(r.num_kernels, 1);
  cldm_spirv_report_free(&r);
  /* a program's own declarations of other types clash with the header's ... */
  static const char own[] = "extern global void *malloc(size_t size);\n"
                            "kernel void k(global ulong *x) { x[0] = (ulong)malloc(4); }\n";
  expect_error(own, "-cl-std=CL2.0", pocl_names, "conflicting types for 'malloc'");
  /* ... unless it leaves the declarations to itself */
  expect_ok(own, "-cl-std=CL2.0 -D CL_EXT_DEVICE_MALLOC_NO_DECLARATIONS", pocl_names, &r);
  assert_true(r.allocates);
  cldm_spirv_report_free(&r);
  /* the same types are fine */
  expect_ok(own, "-cl-std=CL1.2", pocl_names, &r);
  cldm_spirv_report_free(&r);
}

static void test_includes(void **state) {
  static const char angle[] = "#include <cl_ext_device_malloc.h>\n"
                              "#include \"cl_ext_device_malloc.h\"\n"
                              "#include \"inc/util.h\"\n"
                              "kernel void k(global ulong *x) { x[0] = (ulong)grab(); }\n";
  static const char util[] = "static global void *grab(void) { return malloc(UTIL_SIZE); }\n";
  const char *sources[1] = {util}, *names[1] = {"inc/util.h"};
  cldm_clc_request req;
  memset(&req, 0, sizeof(req));
  req.source = angle;
  req.options = "-DUTIL_SIZE=12";
  req.num_headers = 1;
  req.header_sources = sources;
  req.header_names = names;
  cldm_clc_result out;
  cldm_clc_status st = api->compile(&req, &out);
  if (st != CLDM_CLC_OK)
    fail_msg("%s", out.log ? out.log : "(no log)");
  cldm_spirv_report r;
  assert_int_equal(cldm_spirv_inspect(out.spirv, out.spirv_size, &r, NULL), CLDM_SPIRV_OK);
  assert_true(r.allocates);
  cldm_spirv_report_free(&r);
  api->free_result(&out);
  /* without the input header */
  req.num_headers = 0;
  assert_int_equal(api->compile(&req, &out), CLDM_CLC_E_COMPILE);
  assert_non_null(strstr(out.log, "inc/util.h"));
  api->free_result(&out);
}

static void test_dangerous_options(void **state) {
  cldm_spirv_report r;
  /* -x and -triple abort opencl-clang, -g LLVMSPIRVLib; unknown options are dropped */
  expect_ok(global_src, "-x cl -triple spir64-unknown-unknown -x spir -O3 -bogus -s x.cl",
            pocl_names, &r);
  cldm_spirv_report_free(&r);
  expect_ok(global_src, "-cl-opt-disable -cl-fast-relaxed-math -w -g", pocl_names, &r);
  cldm_spirv_report_free(&r);
}

static void test_diagnostics(void **state) {
  static const char bad[] = "kernel void k(global ulong *x) {\n"
                            "  x[0] = (ulong)malloc(4) +;\n"
                            "}\n";
  cldm_clc_result out;
  assert_int_equal(compile(bad, "", pocl_names, &out), CLDM_CLC_E_COMPILE);
  /* clang's format on the source's own line: the header does not shift it */
  assert_non_null(strstr(out.log, "<kernel>:2:28: error: expected expression"));
  assert_non_null(strstr(out.log, "  x[0] = (ulong)malloc(4) +;\n"));
  assert_non_null(strstr(out.log, "^"));
  api->free_result(&out);
  /* warnings of a successful compile come back too */
  static const char warn[] = "kernel void k(global ulong *x) { int unused_var; x[0] = "
                             "(ulong)malloc(4); }\n";
  assert_int_equal(compile(warn, "-Wunused-variable", pocl_names, &out), CLDM_CLC_OK);
  api->free_result(&out);
  cldm_clc_request req;
  memset(&req, 0, sizeof(req));
  assert_int_equal(api->compile(&req, &out), CLDM_CLC_E_INVALID_ARG);
  assert_int_equal(api->compile(NULL, &out), CLDM_CLC_E_INVALID_ARG);
}

/* What the module imports: 1 if the disassembly-free check finds `name` among its strings. */
static int module_has(const void *spirv, size_t size, const char *name) {
  size_t n = strlen(name);
  for (size_t i = 0; i + n <= size; i += 4) /* SPIR-V strings start on a word */
    if (!memcmp((const char *)spirv + i, name, n) && ((const char *)spirv)[i + n] == '\0')
      return 1;
  return 0;
}

static void test_cxx(void **state) {
  static const char src[] = "struct D { int v; D() : v(1) {} ~D() { v = 0; } };\n"
                            "kernel void k(global int *out, int n) {\n"
                            "  D *one = new D;\n"
                            "  D *many = new D[n];\n"
                            "  int *maybe = new (std::nothrow) int[n];\n"
                            "  int *m = (int *)malloc(4);\n"
                            "  out[0] = one->v + many[n - 1].v + (maybe != nullptr);\n"
                            "  cl_ext_delete(one);\n"
                            "  cl_ext_delete_array(many);\n"
                            "  ::operator delete[](maybe);\n"
                            "  free(m);\n"
                            "}\n";
  static const char *const stds[] = {"-cl-std=CLC++2021", "-cl-std=CLC++"};
  for (int i = 0; i < 2; i++) {
    cldm_clc_result out;
    cldm_clc_status st = compile(src, stds[i], pocl_names, &out);
    if (st != CLDM_CLC_OK)
      fail_msg("%s: %s: %s", stds[i], api->status_name(st), out.log ? out.log : "(no log)");
    cldm_spirv_report r;
    assert_int_equal(cldm_spirv_inspect(out.spirv, out.spirv_size, &r, NULL), CLDM_SPIRV_OK);
    assert_true(r.allocates && (r.forms & CLDM_SPIRV_FORM_CXX) &&
                (r.forms & CLDM_SPIRV_FORM_IMPORT));
    assert_int_equal(r.num_kernels, 1);
    assert_true(r.kernels[0].throwing_new);
    cldm_spirv_report_free(&r);
    assert_true(module_has(out.spirv, out.spirv_size, "_Znwm"));
    assert_true(module_has(out.spirv, out.spirv_size, "_Znam"));
    assert_true(module_has(out.spirv, out.spirv_size, "_ZnamRU3AS2KSt9nothrow_t"));
    assert_true(module_has(out.spirv, out.spirv_size, "_ZdlPU3AS4v"));
    assert_true(module_has(out.spirv, out.spirv_size, "malloc"));
    assert_false(module_has(out.spirv, out.spirv_size, "llvm.uadd.with.overflow.i64"));
    api->free_result(&out);
  }
  /* diagnostics name the source's own lines, as for OpenCL C */
  expect_error("kernel void k(global int *o) {\n  o[0] = *new int(undeclared);\n}\n",
               "-cl-std=CLC++2021", pocl_names, "<kernel>:2:19: error: use of undeclared");
}

static void test_header_text(void **state) {
  char path[4096];
  snprintf(path, sizeof(path), "%s/include/opencl-c/cl_ext_device_malloc.h", source_dir);
  size_t n, hn = 0;
  char *file = cldm_file_read(path, &n);
  assert_non_null(file);
  const char *text = api->header(&hn);
  assert_int_equal(hn, n);
  assert_memory_equal(text, file, n); /* the shipped header is the one built in */
  free(file);
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: test_clc_compile LIBCLDM_CLC SOURCE_DIR\n");
    return 2;
  }
  void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    fprintf(stderr, "%s\n", dlerror());
    return 1;
  }
  cldm_clc_get_api_fn get = (cldm_clc_get_api_fn)dlsym(h, CLDM_CLC_GET_API_SYMBOL);
  if (!get || !(api = get(CLDM_CLC_API_VERSION)) || get(CLDM_CLC_API_VERSION + 1)) {
    fprintf(stderr, "no API table of version %u\n", CLDM_CLC_API_VERSION);
    return 1;
  }
  source_dir = argv[2];
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_demo_kernels),
      cmocka_unit_test(test_argument_qualifiers),
      cmocka_unit_test(test_declaration_forms),
      cmocka_unit_test(test_feature_macro_and_opt_out),
      cmocka_unit_test(test_includes),
      cmocka_unit_test(test_dangerous_options),
      cmocka_unit_test(test_diagnostics),
      cmocka_unit_test(test_header_text),
      cmocka_unit_test(test_cxx),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
