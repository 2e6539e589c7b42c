/*
 * test_layer_ptx.c — the PTX route (layer_ptx.c, layer_build.c; spec 1.1, 1.5, 3.4) on the
 * NVIDIA-like stub ICD (stub_icd.c built with STUB_NVIDIA: NVIDIA's vendor id, no IL, a
 * compute capability, programs from binaries), under both loaders. The layer makes the device
 * a SPIR-V device (IL version, cl_khr_il_program and cl_ext_device_malloc in the extension
 * queries, clCreateProgramWithILKHR) and hands the driver PTX: CL_PROGRAM_BINARIES of a program
 * created from IL is PTX text with the kernels as entries (the hidden heap pointer last),
 * CL_PROGRAM_IL still returns the application's module, build options that do not apply to a
 * compiled module are dropped; a module that calls the backend's own cldm_target_* functions
 * builds alone; a module the backend cannot translate builds with a failure
 * and the reason as its build log; compile + link translate the inputs together.
 * Source programs (layer_source.c): an allocating source becomes a PTX program behind the
 * application's handle (kernels made from it hide the heap argument and name the
 * application's program), its binary comes back through clCreateProgramWithBinary with the
 * argument hidden again, while a PTX binary the layer did not make is left alone; a source
 * that names malloc but does not allocate reaches the driver untouched; compile errors give
 * clang's diagnostics as the build log; separately compiled sources link into one PTX program.
 * With argument "off" (run with CLDM_NVIDIA=off) the device is left as the driver reports it;
 * with "checked" (run with CLDM_CHECK=1) allocating modules get the checked allocator (spec 2.4).
 * Arguments: [off|checked] DIR — DIR holds alloc_basic.spv, noalloc.spv, link_lib.spv,
 * link_main_plain.spv (tests/e2e), image.spv and target.spv (tests/ptx).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "cldm_test_util.h"
#include "cldm_cl_device.h"
#include "cldm_file.h"
#include "cldm_heap_layout.h"
#include "stub_icd.h"

static const char *e2e_dir, *ptx_dir;
static cl_device_id dev;
static cl_platform_id plat;
static cl_context ctx;

static void *read_kernel(const char *dir, const char *name, size_t *size) {
  char path[4096];
  snprintf(path, sizeof(path), "%s/%s", dir, name);
  void *buf = cldm_file_read(path, size);
  if (!buf)
    fail_msg("cannot read %s", path);
  return buf;
}

static char *device_string(cl_device_info name) {
  size_t n = 0;
  assert_int_equal(clGetDeviceInfo(dev, name, 0, NULL, &n), CL_SUCCESS);
  char *s = malloc(n);
  assert_int_equal(clGetDeviceInfo(dev, name, n, s, NULL), CL_SUCCESS);
  assert_int_equal(strlen(s) + 1, n);
  return s;
}

static int has_name_version(cl_device_info name, const char *what, cl_version *version) {
  size_t n = 0;
  assert_int_equal(clGetDeviceInfo(dev, name, 0, NULL, &n), CL_SUCCESS);
  cl_name_version *v = malloc(n ? n : 1);
  assert_int_equal(clGetDeviceInfo(dev, name, n, v, NULL), CL_SUCCESS);
  int found = 0;
  for (size_t i = 0; i < n / sizeof(*v); i++)
    if (!strcmp(v[i].name, what)) {
      found++;
      if (version)
        *version = v[i].version;
    }
  free(v);
  return found;
}

/* The PTX the driver holds for program p (CL_PROGRAM_BINARIES), NUL-terminated. */
static char *program_binary(cl_program p) {
  size_t size = 0;
  assert_int_equal(clGetProgramInfo(p, CL_PROGRAM_BINARY_SIZES, sizeof(size), &size, NULL),
                   CL_SUCCESS);
  assert_true(size > 0);
  unsigned char *bin = malloc(size + 1);
  assert_int_equal(clGetProgramInfo(p, CL_PROGRAM_BINARIES, sizeof(bin), &bin, NULL), CL_SUCCESS);
  bin[size] = '\0';
  return (char *)bin;
}

static char *build_log(cl_program p) {
  size_t n = 0;
  assert_int_equal(clGetProgramBuildInfo(p, dev, CL_PROGRAM_BUILD_LOG, 0, NULL, &n), CL_SUCCESS);
  char *log = malloc(n);
  assert_int_equal(clGetProgramBuildInfo(p, dev, CL_PROGRAM_BUILD_LOG, n, log, NULL), CL_SUCCESS);
  return log;
}

static const char *last_build_options(void) {
  typedef const char *(*fn_t)(void);
  fn_t fn = (fn_t)clGetExtensionFunctionAddressForPlatform(plat, STUB_LAST_BUILD_OPTIONS_FUNCTION);
  assert_non_null(fn);
  return fn();
}

static cl_program create(const char *dir, const char *name, void **il, size_t *size) {
  *il = read_kernel(dir, name, size);
  cl_int err;
  cl_program p = clCreateProgramWithIL(ctx, *il, *size, &err);
  assert_int_equal(err, CL_SUCCESS);
  assert_non_null(p);
  return p;
}

static void assert_il_returned(cl_program p, const void *il, size_t size) {
  size_t got = 0;
  assert_int_equal(clGetProgramInfo(p, CL_PROGRAM_IL, 0, NULL, &got), CL_SUCCESS);
  assert_int_equal(got, size);
  void *buf = malloc(size);
  assert_int_equal(clGetProgramInfo(p, CL_PROGRAM_IL, size, buf, NULL), CL_SUCCESS);
  assert_memory_equal(buf, il, size);
  free(buf);
}

static void test_loader(void **state) {
  char why[4200];
  if (!cldm_test_loader_matches(why, sizeof(why)))
    fail_msg("%s", why);
}

/* ---- advertising (spec 1.1) --------------------------------------------------------------- */

static void test_device_becomes_spirv_device(void **state) {
  /* the first device query loaded the translator (this is an NVIDIA device without IL) */
  size_t il_size = 0;
  assert_int_equal(clGetDeviceInfo(dev, CL_DEVICE_IL_VERSION, 0, NULL, &il_size), CL_SUCCESS);
  assert_true(cldm_test_mapped("libcldm-ptx"));
  char *il = device_string(CL_DEVICE_IL_VERSION);
  assert_string_equal(il, "SPIR-V_1.0 SPIR-V_1.1 SPIR-V_1.2");
  free(il);
  cl_version v = 0;
  assert_int_equal(has_name_version(CL_DEVICE_ILS_WITH_VERSION, "SPIR-V", NULL), 3);
  char *ext = device_string(CL_DEVICE_EXTENSIONS);
  assert_non_null(strstr(ext, STUB_NV_DEVICE_EXTENSIONS)); /* the driver's list, kept */
  assert_true(cldm_cl_has_word(ext, "cl_khr_il_program"));
  assert_true(cldm_cl_has_word(ext, CL_EXT_DEVICE_MALLOC_EXTENSION_NAME));
  free(ext);
  assert_int_equal(has_name_version(CL_DEVICE_EXTENSIONS_WITH_VERSION, "cl_khr_il_program", &v), 1);
  assert_int_equal(v, CL_MAKE_VERSION(1, 0, 0));
  assert_int_equal(
      has_name_version(CL_DEVICE_EXTENSIONS_WITH_VERSION, CL_EXT_DEVICE_MALLOC_EXTENSION_NAME, &v),
      1);
  assert_int_equal(v, CL_EXT_DEVICE_MALLOC_EXTENSION_VERSION);
  size_t n = 0;
  assert_int_equal(clGetPlatformInfo(plat, CL_PLATFORM_EXTENSIONS, 0, NULL, &n), CL_SUCCESS);
  char *pext = malloc(n);
  assert_int_equal(clGetPlatformInfo(plat, CL_PLATFORM_EXTENSIONS, n, pext, NULL), CL_SUCCESS);
  assert_true(cldm_cl_has_word(pext, "cl_khr_il_program"));
  assert_true(cldm_cl_has_word(pext, CL_EXT_DEVICE_MALLOC_EXTENSION_NAME));
  free(pext);
  assert_non_null(clGetExtensionFunctionAddressForPlatform(plat, "clCreateProgramWithILKHR"));
  assert_non_null(clGetExtensionFunctionAddressForPlatform(plat, "clSetDeviceHeapSizeEXT"));
  size_t heap = 0;
  assert_int_equal(clGetDeviceInfo(dev, CL_DEVICE_HEAP_SIZE_EXT, sizeof(heap), &heap, NULL),
                   CL_SUCCESS);
  assert_int_equal(heap, CL_DEVICE_HEAP_SIZE_DEFAULT_EXT);
}

/* ---- programs ----------------------------------------------------------------------------- */

static void test_allocating_module_becomes_ptx(void **state) {
  void *il;
  size_t size;
  cl_program p = create(e2e_dir, "alloc_basic.spv", &il, &size);
  char *ptx = program_binary(p);
  assert_non_null(strstr(ptx, ".version "));
  assert_non_null(strstr(ptx, ".target sm_86")); /* 9.0 is newer than LLVM 15 knows */
  assert_non_null(strstr(ptx, ".entry "));
  /* the first line names the kernels that take the heap (layer_binary.c reads it back) */
  assert_true(!strncmp(ptx, "// cl_ext_device_malloc heap arguments: ", 40));
  assert_non_null(strstr(ptx, " fill:2"));
  assert_null(strstr(ptx, ".extern")); /* the allocator is linked in: nothing left to resolve */
  /* compute capability 9.0: the NVPTX allocator, which combines a warp's calls and orders
   * its atomics at GPU scope in the instructions (device/cl/cldm_atomic_nv.clh) */
  assert_non_null(strstr(ptx, "match.any.sync"));
  assert_non_null(strstr(ptx, "atom.acquire.gpu.global.add.u64"));
  assert_null(strstr(ptx, "membar.gl"));
  assert_il_returned(p, il, size);
  /* options a compiled module ignores are dropped; the rest reach the driver */
  assert_int_equal(clBuildProgram(p, 1, &dev,
                                  "-DX=1 -D Y -I /tmp -cl-std=CL2.0 -cl-mad-enable -Iinc "
                                  "-cl-fast-relaxed-math",
                                  NULL, NULL),
                   CL_SUCCESS);
  assert_string_equal(last_build_options(), "-cl-mad-enable -cl-fast-relaxed-math");
  cl_build_status status = CL_BUILD_NONE;
  assert_int_equal(
      clGetProgramBuildInfo(p, dev, CL_PROGRAM_BUILD_STATUS, sizeof(status), &status, NULL),
      CL_SUCCESS);
  assert_int_equal(status, CL_BUILD_SUCCESS);
  free(ptx);
  free(il);
  assert_int_equal(clReleaseProgram(p), CL_SUCCESS);
}

static void test_non_allocating_module_becomes_ptx(void **state) {
  void *il;
  size_t size;
  cl_program p = create(e2e_dir, "noalloc.spv", &il, &size);
  char *ptx = program_binary(p);
  assert_non_null(strstr(ptx, ".entry add_one("));
  assert_il_returned(p, il, size);
  assert_int_equal(clBuildProgram(p, 1, &dev, NULL, NULL, NULL), CL_SUCCESS);
  assert_string_equal(last_build_options(), "");
  free(ptx);
  free(il);
  clReleaseProgram(p);
}

static void test_untranslatable_module_fails_to_build(void **state) {
  void *il;
  size_t size;
  cl_program p = create(ptx_dir, "image.spv", &il, &size);
  assert_il_returned(p, il, size);
  assert_int_equal(clBuildProgram(p, 1, &dev, "", NULL, NULL), CL_BUILD_PROGRAM_FAILURE);
  cl_build_status status = CL_BUILD_SUCCESS;
  assert_int_equal(
      clGetProgramBuildInfo(p, dev, CL_PROGRAM_BUILD_STATUS, sizeof(status), &status, NULL),
      CL_SUCCESS);
  assert_int_equal(status, CL_BUILD_ERROR);
  char *log = build_log(p);
  if (!strstr(log, "PTX translation failed") || !strstr(log, "image"))
    fail_msg("build log does not give the reason: \"%s\"", log);
  free(log);
  assert_int_equal(clCompileProgram(p, 1, &dev, "", 0, NULL, NULL, NULL, NULL),
                   CL_COMPILE_PROGRAM_FAILURE);
  free(il);
  clReleaseProgram(p);
}

/* A module calling the backend's own allocator functions (cldm_target_*) is no link-only
 * module: it builds alone, and its PTX defines them (nothing left .extern). */
static void test_target_imports_build_alone(void **state) {
  void *il;
  size_t size;
  cl_program p = create(ptx_dir, "target.spv", &il, &size);
  char *ptx = program_binary(p);
  assert_non_null(strstr(ptx, ".entry target_roundtrip("));
  assert_non_null(strstr(ptx, ".func  (.param .b64 func_retval0) cldm_target_malloc("));
  assert_null(strstr(ptx, ".extern"));
  assert_int_equal(clBuildProgram(p, 1, &dev, "", NULL, NULL), CL_SUCCESS);
  cl_build_status status = CL_BUILD_NONE;
  assert_int_equal(
      clGetProgramBuildInfo(p, dev, CL_PROGRAM_BUILD_STATUS, sizeof(status), &status, NULL),
      CL_SUCCESS);
  assert_int_equal(status, CL_BUILD_SUCCESS);
  free(ptx);
  free(il);
  clReleaseProgram(p);
}

/* HIP device code (tests/e2e/kernels/new_hip.hip) imports OpenCL C's work-item and barrier
 * functions by their mangled names (_Z12get_local_idj, ...) and C++'s operator new and delete:
 * libclc and the allocator resolve them, so the module builds alone (no link-only module). */
static void test_hip_module_builds_alone(void **state) {
  void *il;
  size_t size;
  cl_program p = create(e2e_dir, "new_hip.spv", &il, &size);
  char *ptx = program_binary(p);
  assert_non_null(strstr(ptx, ".entry "));
  assert_null(strstr(ptx, ".extern"));
  assert_int_equal(clBuildProgram(p, 1, &dev, "", NULL, NULL), CL_SUCCESS);
  free(ptx);
  free(il);
  clReleaseProgram(p);
}

static void test_malformed_module_rejected(void **state) {
  uint32_t junk[8] = {0x07230203u, 0x00010000u, 0, 100, 0, 0xFFFFFFFFu, 1, 2};
  cl_int err = CL_SUCCESS;
  cl_program p = clCreateProgramWithIL(ctx, junk, sizeof(junk), &err);
  assert_null(p);
  assert_int_equal(err, CL_INVALID_VALUE);
}

static void test_compile_and_link(void **state) {
  void *il_lib, *il_main, *il_alloc;
  size_t n_lib, n_main, n_alloc;
  cl_program lib = create(e2e_dir, "link_lib.spv", &il_lib, &n_lib);
  cl_program plain = create(e2e_dir, "link_main_plain.spv", &il_main, &n_main);
  cl_program whole = create(e2e_dir, "alloc_basic.spv", &il_alloc, &n_alloc);
  cl_program inputs[2] = {plain, lib};
  for (int i = 0; i < 2; i++)
    assert_int_equal(clCompileProgram(inputs[i], 1, &dev, "-DZ", 0, NULL, NULL, NULL, NULL),
                     CL_SUCCESS);
  cl_int err;
  cl_program linked =
      clLinkProgram(ctx, 1, &dev, "-cl-denorms-are-zero", 2, inputs, NULL, NULL, &err);
  assert_int_equal(err, CL_SUCCESS);
  assert_non_null(linked);
  assert_string_equal(last_build_options(), "-cl-denorms-are-zero");
  char *ptx = program_binary(linked);
  assert_non_null(strstr(ptx, ".entry use_twice("));
  assert_non_null(strstr(ptx, ".entry lib_fill("));
  free(ptx);
  /* a whole program compiled and linked alone */
  assert_int_equal(clCompileProgram(whole, 1, &dev, "", 0, NULL, NULL, NULL, NULL), CL_SUCCESS);
  cl_program alone = clLinkProgram(ctx, 1, &dev, "", 1, &whole, NULL, NULL, &err);
  assert_int_equal(err, CL_SUCCESS);
  ptx = program_binary(alone);
  assert_non_null(strstr(ptx, ".entry "));
  free(ptx);
  /* the linked program cannot be linked again on this route: a clear error */
  cl_program again = clLinkProgram(ctx, 1, &dev, "", 1, &linked, NULL, NULL, &err);
  assert_null(again);
  assert_int_equal(err, CL_INVALID_OPERATION);
  clReleaseProgram(alone);
  clReleaseProgram(linked);
  clReleaseProgram(whole);
  clReleaseProgram(plain);
  clReleaseProgram(lib);
  free(il_lib);
  free(il_main);
  free(il_alloc);
}

/* ---- source programs ----------------------------------------------------------------------- */

static const char src_alloc[] = "kernel void fill(global ulong *out, uint n) {\n"
                                "  out[get_global_id(0)] = (ulong)malloc(n * SCALE);\n"
                                "}\n";

static cl_program from_source(const char *src) {
  cl_int err;
  cl_program p = clCreateProgramWithSource(ctx, 1, &src, NULL, &err);
  assert_int_equal(err, CL_SUCCESS);
  return p;
}

static cl_uint kernel_args(cl_program p, const char *name) {
  cl_int err;
  cl_kernel k = clCreateKernel(p, name, &err);
  assert_int_equal(err, CL_SUCCESS);
  cl_uint n = 0;
  assert_int_equal(clGetKernelInfo(k, CL_KERNEL_NUM_ARGS, sizeof(n), &n, NULL), CL_SUCCESS);
  assert_int_equal(clSetKernelArg(k, n, sizeof(cl_mem), NULL), CL_INVALID_ARG_INDEX);
  clReleaseKernel(k);
  return n;
}

static void test_source_program_becomes_ptx(void **state) {
  cl_program p = from_source(src_alloc);
  assert_int_equal(clBuildProgram(p, 1, &dev, "-DSCALE=2 -cl-mad-enable", NULL, NULL), CL_SUCCESS);
  assert_string_equal(last_build_options(), "-cl-mad-enable");
  char *ptx = program_binary(p);
  assert_true(!strncmp(ptx, "// cl_ext_device_malloc heap arguments: fill:2\n", 47));
  assert_non_null(strstr(ptx, ".entry fill("));
  free(ptx);
  size_t n = 0;
  assert_int_equal(clGetProgramInfo(p, CL_PROGRAM_SOURCE, 0, NULL, &n), CL_SUCCESS);
  char *src = malloc(n);
  assert_int_equal(clGetProgramInfo(p, CL_PROGRAM_SOURCE, n, src, NULL), CL_SUCCESS);
  assert_string_equal(src, src_alloc); /* the driver's source program, untouched */
  free(src);
  cl_int err;
  cl_kernel k = clCreateKernel(p, "fill", &err);
  assert_int_equal(err, CL_SUCCESS);
  cl_uint nargs = 0;
  assert_int_equal(clGetKernelInfo(k, CL_KERNEL_NUM_ARGS, sizeof(nargs), &nargs, NULL), CL_SUCCESS);
  assert_int_equal(nargs, 2);
  cl_program kp = NULL;
  assert_int_equal(clGetKernelInfo(k, CL_KERNEL_PROGRAM, sizeof(kp), &kp, NULL), CL_SUCCESS);
  assert_ptr_equal(kp, p);
  /* the kernel keeps the program alive, as a driver's kernel does */
  assert_int_equal(clReleaseProgram(p), CL_SUCCESS);
  assert_int_equal(clGetKernelInfo(k, CL_KERNEL_PROGRAM, sizeof(kp), &kp, NULL), CL_SUCCESS);
  cl_uint refs = 0;
  assert_int_equal(clGetProgramInfo(kp, CL_PROGRAM_REFERENCE_COUNT, sizeof(refs), &refs, NULL),
                   CL_SUCCESS);
  assert_int_equal(refs, 1);
  assert_int_equal(clReleaseKernel(k), CL_SUCCESS);
}

/* C++ for OpenCL source (spec 2.3) on the PTX route: the operators are declared implicitly
 * (they take generic pointers, which the route translates though NVIDIA's driver reports no
 * generic address space), `new` allocates, cl_ext_delete frees. */
static void test_cxx_source_program_becomes_ptx(void **state) {
  static const char *src =
      "struct Node { int v; Node *next; Node(int x, Node *n) : v(x), next(n) {} };\n"
      "kernel void make(global ulong *out) {\n"
      "  Node *n = new Node((int)get_global_id(0), nullptr);\n"
      "  int *a = new int[4];\n"
      "  a[0] = n->v;\n"
      "  out[get_global_id(0)] = (ulong)n + (ulong)a[0];\n"
      "  cl_ext_delete(n);\n"
      "  cl_ext_delete_array(a);\n"
      "}\n";
  cl_program p = from_source(src);
  cl_int err = clBuildProgram(p, 1, &dev, "-cl-std=CLC++2021", NULL, NULL);
  if (err != CL_SUCCESS) {
    char *log = build_log(p);
    fail_msg("build failed (%d): %s", err, log);
  }
  char *ptx = program_binary(p);
  assert_true(!strncmp(ptx, "// cl_ext_device_malloc heap arguments: ", 40));
  assert_non_null(strstr(ptx, ".entry "));
  assert_null(strstr(ptx, ".extern"));
  free(ptx);
  assert_int_equal(clReleaseProgram(p), CL_SUCCESS);
}

static void test_source_binary_round_trip(void **state) {
  cl_program p = from_source(src_alloc);
  assert_int_equal(clBuildProgram(p, 1, &dev, "-DSCALE=1", NULL, NULL), CL_SUCCESS);
  char *ptx = program_binary(p);
  clReleaseProgram(p);
  cl_int err, status;
  size_t len = strlen(ptx) + 1;
  const unsigned char *bin = (const unsigned char *)ptx;
  cl_program again = clCreateProgramWithBinary(ctx, 1, &dev, &len, &bin, &status, &err);
  assert_int_equal(err, CL_SUCCESS);
  assert_int_equal(clBuildProgram(again, 1, &dev, "", NULL, NULL), CL_SUCCESS);
  assert_int_equal(kernel_args(again, "fill"), 2); /* recognised: the heap stays hidden */
  clReleaseProgram(again);
  /* the same PTX without the layer's first line is not the layer's: left as it is */
  const unsigned char *foreign = (const unsigned char *)strchr(ptx, '\n') + 1;
  size_t flen = strlen((const char *)foreign) + 1;
  cl_program other = clCreateProgramWithBinary(ctx, 1, &dev, &flen, &foreign, &status, &err);
  assert_int_equal(err, CL_SUCCESS);
  assert_int_equal(clBuildProgram(other, 1, &dev, "", NULL, NULL), CL_SUCCESS);
  assert_int_equal(kernel_args(other, "fill"), 3);
  clReleaseProgram(other);
  free(ptx);
}

static void test_source_not_allocating_untouched(void **state) {
  static const char src[] = "kernel void k(global int *x) { int free = 1; x[0] = free; }\n";
  cl_program p = from_source(src);
  assert_int_equal(clBuildProgram(p, 1, &dev, "-DX", NULL, NULL), CL_SUCCESS);
  assert_string_equal(last_build_options(), "-DX -D cl_ext_device_malloc=1");
  size_t n = 0;
  assert_int_equal(clGetProgramBuildInfo(p, dev, CL_PROGRAM_BUILD_OPTIONS, 0, NULL, &n),
                   CL_SUCCESS);
  assert_int_equal(n, 4); /* "-DX" and its NUL */
  clReleaseProgram(p);
}

static void test_source_compile_error(void **state) {
  static const char src[] = "kernel void k(global ulong *x) {\n  x[0] = (ulong)malloc(4) +;\n}\n";
  cl_program p = from_source(src);
  assert_int_equal(clBuildProgram(p, 1, &dev, "", NULL, NULL), CL_BUILD_PROGRAM_FAILURE);
  cl_build_status status = CL_BUILD_SUCCESS;
  assert_int_equal(
      clGetProgramBuildInfo(p, dev, CL_PROGRAM_BUILD_STATUS, sizeof(status), &status, NULL),
      CL_SUCCESS);
  assert_int_equal(status, CL_BUILD_ERROR);
  char *log = build_log(p);
  if (!strstr(log, "<kernel>:2:") || !strstr(log, "error: expected expression"))
    fail_msg("build log \"%s\" lacks the diagnostic", log);
  free(log);
  clReleaseProgram(p);
}

static void test_source_compile_and_link(void **state) {
  static const char main_src[] =
      "uint twice(uint x);\n"
      "kernel void use(global ulong *out) { out[0] = (ulong)malloc(twice(4)); }\n";
  static const char lib_src[] = "uint twice(uint x) { return 2 * x; }\n"
                                "kernel void lib_k(global uint *x) { x[0] = twice(x[0]); }\n";
  cl_program m = from_source(main_src), l = from_source(lib_src);
  assert_int_equal(clCompileProgram(m, 1, &dev, "", 0, NULL, NULL, NULL, NULL), CL_SUCCESS);
  assert_int_equal(clCompileProgram(l, 1, &dev, "", 0, NULL, NULL, NULL, NULL), CL_SUCCESS);
  cl_program inputs[2] = {m, l};
  cl_int err;
  cl_program linked = clLinkProgram(ctx, 1, &dev, "", 2, inputs, NULL, NULL, &err);
  assert_int_equal(err, CL_SUCCESS);
  char *ptx = program_binary(linked);
  assert_non_null(strstr(ptx, ".entry use("));
  assert_non_null(strstr(ptx, ".entry lib_k("));
  free(ptx);
  assert_int_equal(kernel_args(linked, "use"), 1);
  assert_int_equal(kernel_args(linked, "lib_k"), 1);
  clReleaseProgram(linked);
  clReleaseProgram(m);
  clReleaseProgram(l);
}

/* ---- kernel handles ----------------------------------------------------------------------- */

/* CL_KERNEL_NUM_ARGS of k, the hidden argument's index refused by clSetKernelArg. */
static cl_uint hidden_args(cl_kernel k) {
  cl_uint n = 0;
  assert_int_equal(clGetKernelInfo(k, CL_KERNEL_NUM_ARGS, sizeof(n), &n, NULL), CL_SUCCESS);
  assert_int_equal(clSetKernelArg(k, n, sizeof(cl_mem), NULL), CL_INVALID_ARG_INDEX);
  return n;
}

static cl_uint program_refs(cl_program p) {
  cl_uint refs = 0;
  assert_int_equal(clGetProgramInfo(p, CL_PROGRAM_REFERENCE_COUNT, sizeof(refs), &refs, NULL),
                   CL_SUCCESS);
  return refs;
}

/* The application's handles to a kernel of built program p are counted by the layer: its
 * last release drops the kernel's records although the driver still holds the kernel (a
 * launch in flight), and a new kernel that gets the freed kernel's handle is tracked afresh:
 * its heap argument stays hidden and it names p. Before, the layer read the driver's count,
 * kept the records of a kernel released during a launch, and a kernel made later at the same
 * address was lost to cldm_kernel_find (the count of records went to 0 with one left): its
 * launches went to the driver without the heap argument (pocl: CL_INVALID_KERNEL_ARGS); and
 * a kernel of a source program kept its reference on the program. */
static void recycled_kernel_handle(cl_program p) {
  typedef cl_int (*driver_ref_fn)(cl_kernel, cl_int);
  driver_ref_fn driver_ref =
      (driver_ref_fn)clGetExtensionFunctionAddressForPlatform(plat, STUB_DRIVER_REF_FUNCTION);
  assert_non_null(driver_ref);
  cl_uint refs = program_refs(p);
  cl_int err;
  cl_kernel k1 = clCreateKernel(p, "fill", &err);
  assert_int_equal(err, CL_SUCCESS);
  assert_int_equal(clRetainKernel(k1), CL_SUCCESS); /* a second handle of the application's */
  assert_int_equal(driver_ref(k1, 1), CL_SUCCESS);  /* a launch in flight */
  assert_int_equal(clReleaseKernel(k1), CL_SUCCESS);
  assert_int_equal(hidden_args(k1), 2); /* one handle left: still tracked */
  assert_int_equal(clReleaseKernel(k1), CL_SUCCESS);
  assert_int_equal(driver_ref(k1, -1), CL_SUCCESS); /* the launch is done: the driver frees k1 */
  assert_int_equal(program_refs(p), refs);          /* nothing holds p for the dead kernel */
  cl_kernel k2 = clCreateKernel(p, "fill", &err);
  assert_int_equal(err, CL_SUCCESS);
  assert_ptr_equal(k2, k1); /* the stub reuses the freed kernel's memory */
  assert_int_equal(hidden_args(k2), 2);
  cl_program kp = NULL;
  assert_int_equal(clGetKernelInfo(k2, CL_KERNEL_PROGRAM, sizeof(kp), &kp, NULL), CL_SUCCESS);
  assert_ptr_equal(kp, p);
  assert_int_equal(clReleaseKernel(k2), CL_SUCCESS);
  assert_int_equal(program_refs(p), refs);
}

static void test_recycled_kernel_handle(void **state) {
  void *il;
  size_t size;
  cl_program p = create(e2e_dir, "alloc_basic.spv", &il, &size);
  assert_int_equal(clBuildProgram(p, 1, &dev, NULL, NULL, NULL), CL_SUCCESS);
  recycled_kernel_handle(p);
  free(il);
  assert_int_equal(clReleaseProgram(p), CL_SUCCESS);
}

static void test_recycled_kernel_handle_source(void **state) {
  cl_program p = from_source(src_alloc);
  assert_int_equal(clBuildProgram(p, 1, &dev, "-DSCALE=2", NULL, NULL), CL_SUCCESS);
  recycled_kernel_handle(p);
  assert_int_equal(clReleaseProgram(p), CL_SUCCESS);
}

/* A program released while a kernel of it lives keeps its record (the kernel's program still
 * answers the application's IL), and the record goes with the kernel, also one released during
 * a launch: a program the driver makes later at the same address (a PTX binary not the layer's,
 * which it leaves alone) is not taken for the old one. Before, the record of a program released
 * before its kernels stayed for good: a leak, and a later program at its address answered the
 * old IL and the old kernels' hidden arguments. */
static void test_program_record_lifetime(void **state) {
  typedef cl_int (*driver_ref_fn)(cl_kernel, cl_int);
  driver_ref_fn driver_ref =
      (driver_ref_fn)clGetExtensionFunctionAddressForPlatform(plat, STUB_DRIVER_REF_FUNCTION);
  void *il;
  size_t size;
  cl_program p = create(e2e_dir, "alloc_basic.spv", &il, &size);
  assert_int_equal(clBuildProgram(p, 1, &dev, NULL, NULL, NULL), CL_SUCCESS);
  char *ptx = program_binary(p);
  cl_int err;
  cl_kernel k = clCreateKernel(p, "fill", &err);
  assert_int_equal(err, CL_SUCCESS);
  assert_int_equal(clRetainProgram(p), CL_SUCCESS);
  assert_int_equal(clReleaseProgram(p), CL_SUCCESS);
  assert_int_equal(clReleaseProgram(p), CL_SUCCESS); /* the application's last handle */
  cl_program kp = NULL;
  assert_int_equal(clGetKernelInfo(k, CL_KERNEL_PROGRAM, sizeof(kp), &kp, NULL), CL_SUCCESS);
  assert_ptr_equal(kp, p);
  assert_il_returned(kp, il, size);
  assert_int_equal(hidden_args(k), 2);
  assert_int_equal(driver_ref(k, 1), CL_SUCCESS); /* a launch in flight */
  assert_int_equal(clReleaseKernel(k), CL_SUCCESS);
  assert_int_equal(driver_ref(k, -1), CL_SUCCESS); /* done: the driver frees k, then p */
  const unsigned char *foreign = (const unsigned char *)strchr(ptx, '\n') + 1;
  size_t flen = strlen((const char *)foreign) + 1;
  cl_int status;
  cl_program other = clCreateProgramWithBinary(ctx, 1, &dev, &flen, &foreign, &status, &err);
  assert_int_equal(err, CL_SUCCESS);
  assert_ptr_equal(other, p); /* the stub reuses the freed program's memory */
  size_t got = 1;
  assert_int_equal(clGetProgramInfo(other, CL_PROGRAM_IL, 0, NULL, &got), CL_SUCCESS);
  assert_int_equal(got, 0); /* the driver's answer for a program from a binary */
  assert_int_equal(clBuildProgram(other, 1, &dev, "", NULL, NULL), CL_SUCCESS);
  assert_int_equal(kernel_args(other, "fill"), 3); /* the driver's kernel, all arguments seen */
  assert_int_equal(clReleaseProgram(other), CL_SUCCESS);
  free(ptx);
  free(il);
}

/* ---- CLDM_CHECK=1 ------------------------------------------------------------------------- */

/* Checked mode on the PTX route: the checked cl12 allocator, translated like any module, not
 * the NVPTX allocator (which has no checked build). */
static void test_checked_allocator(void **state) {
  void *il;
  size_t size;
  cl_program p = create(e2e_dir, "alloc_basic.spv", &il, &size);
  char *ptx = program_binary(p);
  assert_non_null(strstr(ptx, ".entry "));
  assert_non_null(strstr(ptx, " fill:2"));
  assert_null(strstr(ptx, ".extern"));
  assert_non_null(strstr(ptx, "membar.gl"));
  assert_null(strstr(ptx, "match.any.sync")); /* not the NVPTX allocator */
  /* the trailer's seal, CLDM_CHECK_TRAILER_MAGIC, is written by every checked malloc */
  char magic[16];
  snprintf(magic, sizeof magic, "%u", (unsigned)CLDM_CHECK_TRAILER_MAGIC);
  assert_non_null(strstr(ptx, magic));
  assert_int_equal(clBuildProgram(p, 1, &dev, NULL, NULL, NULL), CL_SUCCESS);
  free(ptx);
  free(il);
  assert_int_equal(clReleaseProgram(p), CL_SUCCESS);
}

/* ---- CLDM_NVIDIA=off ---------------------------------------------------------------------- */

static void test_route_off(void **state) {
  assert_false(cldm_test_mapped("libcldm-ptx")); /* switched off: never loaded */
  char *il = device_string(CL_DEVICE_IL_VERSION);
  assert_string_equal(il, ""); /* the driver's own answer */
  free(il);
  char *ext = device_string(CL_DEVICE_EXTENSIONS);
  assert_string_equal(ext, STUB_NV_DEVICE_EXTENSIONS);
  free(ext);
  size_t size;
  void *spv = read_kernel(e2e_dir, "alloc_basic.spv", &size);
  cl_int err = CL_SUCCESS;
  assert_null(clCreateProgramWithIL(ctx, spv, size, &err));
  assert_int_equal(err, CL_INVALID_OPERATION); /* what the driver says */
  free(spv);
}

static int setup(void **state) {
  dev = cldm_cl_find_device("stub-nv", NULL, &plat);
  assert_non_null(dev);
  cl_int err;
  ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
  assert_int_equal(err, CL_SUCCESS);
  return 0;
}

static int teardown(void **state) {
  clReleaseContext(ctx);
  return 0;
}

int main(int argc, char **argv) {
  int off = argc > 1 && !strcmp(argv[1], "off");
  int checked = argc > 1 && !strcmp(argv[1], "checked");
  if (argc < 3 + off + checked) {
    fprintf(stderr, "usage: test_layer_ptx [off|checked] E2E_KERNEL_DIR PTX_KERNEL_DIR\n");
    return 2;
  }
  e2e_dir = argv[1 + off + checked];
  ptx_dir = argv[2 + off + checked];
  if (checked) {
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_loader),
                                       cmocka_unit_test(test_checked_allocator)};
    return cmocka_run_group_tests_name("ptx route, checked mode", tests, setup, teardown);
  }
  if (off) {
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_loader),
                                       cmocka_unit_test(test_route_off)};
    return cmocka_run_group_tests_name("ptx route off", tests, setup, teardown);
  }
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_loader),
      cmocka_unit_test(test_device_becomes_spirv_device),
      cmocka_unit_test(test_allocating_module_becomes_ptx),
      cmocka_unit_test(test_non_allocating_module_becomes_ptx),
      cmocka_unit_test(test_untranslatable_module_fails_to_build),
      cmocka_unit_test(test_hip_module_builds_alone),
      cmocka_unit_test(test_malformed_module_rejected),
      cmocka_unit_test(test_target_imports_build_alone),
      cmocka_unit_test(test_compile_and_link),
      cmocka_unit_test(test_source_program_becomes_ptx),
      cmocka_unit_test(test_cxx_source_program_becomes_ptx),
      cmocka_unit_test(test_source_binary_round_trip),
      cmocka_unit_test(test_source_not_allocating_untouched),
      cmocka_unit_test(test_source_compile_error),
      cmocka_unit_test(test_source_compile_and_link),
      cmocka_unit_test(test_recycled_kernel_handle),
      cmocka_unit_test(test_recycled_kernel_handle_source),
      cmocka_unit_test(test_program_record_lifetime),
  };
  return cmocka_run_group_tests_name("ptx route", tests, setup, teardown);
}
