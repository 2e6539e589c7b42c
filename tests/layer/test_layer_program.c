/*
 * test_layer_program.c — programs from IL (layer_il.c) and their records (layer_program.c) on
 * the stub ICD, under both loaders (spec 1.5): on a device without SPIR-V the layer passes even
 * an allocating module down byte-identical; on a SPIR-V device the driver receives the lowered
 * module (no trace of malloc imports or the SPV_EXT_device_malloc set) while CL_PROGRAM_IL
 * still returns the application's bytes.
 * argv[1]: an allocating module (Import-linkage form); argv[2]: a non-allocating one.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "cldm_test_util.h"
#include "cldm_cl_device.h"
#include "cldm_file.h"
#include <CL/cl_icd.h>
#include "stub_icd.h"

static const char *alloc_path, *noalloc_path;

static void *read_file(const char *path, size_t *size) {
  void *buf = cldm_file_read(path, size);
  assert_non_null(buf);
  return buf;
}

static int contains(const void *hay, size_t n, const char *needle) {
  size_t m = strlen(needle);
  for (size_t i = 0; i + m <= n; i++)
    if (!memcmp((const char *)hay + i, needle, m))
      return 1;
  return 0;
}

/* What the driver (stub) got: it answers CL_PROGRAM_IL with its own copy; the layer answers
 * for lowered programs, so the stub's copy is reached through the driver's dispatch table. */
static void *driver_il(cl_program p, size_t *size) {
  const cl_icd_dispatch *driver = *(const cl_icd_dispatch *const *)p;
  assert_int_equal(driver->clGetProgramInfo(p, CL_PROGRAM_IL, 0, NULL, size), CL_SUCCESS);
  void *buf = malloc(*size);
  assert_int_equal(driver->clGetProgramInfo(p, CL_PROGRAM_IL, *size, buf, NULL), CL_SUCCESS);
  return buf;
}

static cl_program create(const char *device, const void *il, size_t size, cl_context *ctx) {
  cl_device_id d = cldm_cl_find_device(device, NULL, NULL);
  assert_non_null(d);
  cl_int err;
  *ctx = clCreateContext(NULL, 1, &d, NULL, NULL, &err);
  assert_int_equal(err, CL_SUCCESS);
  cl_program p = clCreateProgramWithIL(*ctx, il, size, &err);
  assert_int_equal(err, CL_SUCCESS);
  return p;
}

/* The driver of `device` receives the module at `path` exactly as the application gave it. */
static void expect_passed_on_unchanged(const char *device, const char *path) {
  size_t size, got_size;
  void *il = read_file(path, &size);
  cl_context ctx;
  cl_program p = create(device, il, size, &ctx);
  void *got = driver_il(p, &got_size);
  assert_int_equal(got_size, size);
  assert_memory_equal(got, il, size);
  free(got);
  clReleaseProgram(p);
  clReleaseContext(ctx);
  free(il);
}

static void test_no_spirv_device_untouched(void **state) {
  expect_passed_on_unchanged("stub-plain", alloc_path);
}

static void test_spirv_device_lowered(void **state) {
  size_t size, got_size, app_size;
  void *il = read_file(alloc_path, &size);
  assert_true(contains(il, size, "malloc"));
  cl_context ctx;
  cl_program p = create("stub-spirv", il, size, &ctx);
  void *got = driver_il(p, &got_size);
  assert_false(got_size == size && !memcmp(got, il, size));
  assert_false(contains(got, got_size, "SPV_EXT_device_malloc"));
  assert_true(contains(got, got_size, "cldm_malloc")); /* the allocator is linked in */
  /* the application still sees its own module */
  assert_int_equal(clGetProgramInfo(p, CL_PROGRAM_IL, 0, NULL, &app_size), CL_SUCCESS);
  assert_int_equal(app_size, size);
  void *app = malloc(app_size);
  assert_int_equal(clGetProgramInfo(p, CL_PROGRAM_IL, app_size, app, NULL), CL_SUCCESS);
  assert_memory_equal(app, il, size);
  free(app);
  free(got);
  clReleaseProgram(p);
  clReleaseContext(ctx);
  free(il);
}

static void test_spirv_device_non_allocating_untouched(void **state) {
  expect_passed_on_unchanged("stub-spirv", noalloc_path);
}

/* Devices that take SPIR-V (or none) never make the layer load its PTX translator, nor LLVM
 * with it (the stub ICD loads no LLVM of its own). */
static void test_no_llvm_without_nvidia(void **state) {
  assert_false(cldm_test_mapped("libcldm-ptx"));
  assert_false(cldm_test_mapped("libLLVM"));
}

int main(int argc, char **argv) {
  if (argc < 3)
    return 2;
  alloc_path = argv[1];
  noalloc_path = argv[2];
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_no_spirv_device_untouched),
      cmocka_unit_test(test_spirv_device_lowered),
      cmocka_unit_test(test_spirv_device_non_allocating_untouched),
      cmocka_unit_test(test_no_llvm_without_nvidia),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
