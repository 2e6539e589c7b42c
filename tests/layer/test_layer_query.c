/*
 * test_layer_query.c — layer_query.c on the stub ICD, under both loaders (spec 1.1, 1.2):
 * extension strings and arrays of SPIR-V devices gain exactly one entry, size queries and
 * truncated buffers follow the OpenCL rules, platforms gain the name only when a device has
 * it, and devices without SPIR-V are answered exactly as the driver answers.
 * Optional argv[1]: the expected default heap size in bytes (CLDM_HEAP_SIZE test variant).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "cldm_test_util.h"
#include "cldm_cl_device.h"
#include "stub_icd.h"

#define EXT CL_EXT_DEVICE_MALLOC_EXTENSION_NAME
#ifndef CL_DEVICE_SPIRV_EXTENDED_INSTRUCTION_SETS_KHR
#define CL_DEVICE_SPIRV_EXTENDED_INSTRUCTION_SETS_KHR 0x12B9
#endif

static size_t expected_default_heap = CL_DEVICE_HEAP_SIZE_DEFAULT_EXT;

static void test_loader(void **state) {
  char why[4200];
  if (!cldm_test_loader_matches(why, sizeof(why)))
    fail_msg("%s", why);
}

static void test_spirv_device_extensions(void **state) {
  cl_device_id d = cldm_cl_find_device("stub-spirv", NULL, NULL);
  assert_non_null(d);
  const char *want = STUB_DEVICE1_EXTENSIONS EXT " "; /* driver's trailing-space style kept */
  size_t size = 0;
  assert_int_equal(clGetDeviceInfo(d, CL_DEVICE_EXTENSIONS, 0, NULL, &size), CL_SUCCESS);
  assert_int_equal(size, strlen(want) + 1);
  char buf[256];
  memset(buf, 0xAB, sizeof(buf));
  size_t ret = 0;
  /* one byte short: CL_INVALID_VALUE, nothing written */
  assert_int_equal(clGetDeviceInfo(d, CL_DEVICE_EXTENSIONS, size - 1, buf, &ret), CL_INVALID_VALUE);
  for (size_t i = 0; i < sizeof(buf); i++)
    assert_int_equal((unsigned char)buf[i], 0xAB);
  assert_int_equal(clGetDeviceInfo(d, CL_DEVICE_EXTENSIONS, size, buf, &ret), CL_SUCCESS);
  assert_int_equal(ret, size);
  assert_string_equal(buf, want);
  /* asking again does not append twice */
  assert_int_equal(clGetDeviceInfo(d, CL_DEVICE_EXTENSIONS, sizeof(buf), buf, NULL), CL_SUCCESS);
  assert_string_equal(buf, want);
}

static void test_spirv_device_extensions_with_version(void **state) {
  cl_device_id d = cldm_cl_find_device("stub-spirv", NULL, NULL);
  size_t size = 0;
  assert_int_equal(clGetDeviceInfo(d, CL_DEVICE_EXTENSIONS_WITH_VERSION, 0, NULL, &size),
                   CL_SUCCESS);
  assert_int_equal(size, 3 * sizeof(cl_name_version));
  cl_name_version v[4];
  memset(v, 0x5A, sizeof(v));
  assert_int_equal(clGetDeviceInfo(d, CL_DEVICE_EXTENSIONS_WITH_VERSION, size - 1, v, NULL),
                   CL_INVALID_VALUE);
  assert_int_equal(((unsigned char *)v)[0], 0x5A);
  assert_int_equal(clGetDeviceInfo(d, CL_DEVICE_EXTENSIONS_WITH_VERSION, sizeof(v), v, &size),
                   CL_SUCCESS);
  assert_int_equal(size, 3 * sizeof(cl_name_version));
  assert_string_equal(v[0].name, "cl_khr_il_program");
  assert_string_equal(v[1].name, "cl_stub_spirv");
  assert_string_equal(v[2].name, EXT);
  assert_int_equal(v[2].version, CL_EXT_DEVICE_MALLOC_EXTENSION_VERSION);
}

static void test_spirv_sets(void **state) {
  cl_device_id d = cldm_cl_find_device("stub-spirv", NULL, NULL);
  size_t size = 0;
  assert_int_equal(
      clGetDeviceInfo(d, CL_DEVICE_SPIRV_EXTENDED_INSTRUCTION_SETS_KHR, 0, NULL, &size),
      CL_SUCCESS);
  assert_int_equal(size, 2 * sizeof(const char *));
  const char *sets[2] = {NULL, NULL};
  assert_int_equal(clGetDeviceInfo(d, CL_DEVICE_SPIRV_EXTENDED_INSTRUCTION_SETS_KHR,
                                   sizeof(const char *), sets, NULL),
                   CL_INVALID_VALUE);
  assert_null(sets[0]);
  assert_int_equal(
      clGetDeviceInfo(d, CL_DEVICE_SPIRV_EXTENDED_INSTRUCTION_SETS_KHR, sizeof(sets), sets, NULL),
      CL_SUCCESS);
  assert_string_equal(sets[0], STUB_SPIRV_SET0);
  assert_string_equal(sets[1], CL_EXT_DEVICE_MALLOC_SPIRV_EXT_INST_SET);
}

static void test_heap_size_query(void **state) {
  cl_device_id d = cldm_cl_find_device("stub-spirv", NULL, NULL);
  size_t v = 0, ret = 0;
  assert_int_equal(clGetDeviceInfo(d, CL_DEVICE_HEAP_SIZE_EXT, sizeof(v), &v, &ret), CL_SUCCESS);
  assert_int_equal(ret, sizeof(size_t));
  assert_int_equal(v, expected_default_heap);
  assert_int_equal(clGetDeviceInfo(d, CL_DEVICE_HEAP_SIZE_EXT, sizeof(v) - 1, &v, NULL),
                   CL_INVALID_VALUE);
}

/* Devices without SPIR-V: every answer is the driver's. */
static void test_transparent_devices(void **state) {
  static const struct {
    const char *name, *ext;
  } devs[] = {{"stub-plain", STUB_DEVICE0_EXTENSIONS}, {"stub-legacy", STUB_DEVICE2_EXTENSIONS}};
  for (int i = 0; i < 2; i++) {
    cl_device_id d = cldm_cl_find_device(devs[i].name, NULL, NULL);
    assert_non_null(d);
    size_t size = 0;
    char *ext = cldm_cl_device_info(d, CL_DEVICE_EXTENSIONS, &size);
    assert_string_equal(ext, devs[i].ext);
    assert_int_equal(size, strlen(devs[i].ext) + 1);
    free(ext);
    cl_name_version *v = cldm_cl_device_info(d, CL_DEVICE_EXTENSIONS_WITH_VERSION, &size);
    assert_non_null(v);
    for (size_t k = 0; k < size / sizeof(*v); k++)
      assert_string_not_equal(v[k].name, EXT);
    free(v);
    size_t hs;
    assert_int_equal(clGetDeviceInfo(d, CL_DEVICE_HEAP_SIZE_EXT, sizeof(hs), &hs, NULL),
                     CL_INVALID_VALUE);
    assert_int_equal(
        clGetDeviceInfo(d, CL_DEVICE_SPIRV_EXTENDED_INSTRUCTION_SETS_KHR, 0, NULL, &size),
        CL_INVALID_VALUE);
  }
  /* the legacy device's IL query stays invalid */
  size_t size;
  assert_int_equal(clGetDeviceInfo(cldm_cl_find_device("stub-legacy", NULL, NULL),
                                   CL_DEVICE_IL_VERSION, 0, NULL, &size),
                   CL_INVALID_VALUE);
}

static void test_platforms(void **state) {
  cl_platform_id pa = NULL, pb = NULL;
  cldm_cl_find_device("stub-spirv", NULL, &pa);
  cldm_cl_find_device("stub-legacy", NULL, &pb);
  assert_non_null(pa);
  assert_non_null(pb);
  size_t size = 0;
  char *a = cldm_test_platform_info(pa, CL_PLATFORM_EXTENSIONS, &size);
  assert_string_equal(a, STUB_PLATFORM_A_EXTENSIONS " " EXT);
  assert_int_equal(size, strlen(a) + 1);
  char small[8];
  assert_int_equal(clGetPlatformInfo(pa, CL_PLATFORM_EXTENSIONS, sizeof(small), small, NULL),
                   CL_INVALID_VALUE);
  free(a);
  cl_name_version *v = cldm_test_platform_info(pa, CL_PLATFORM_EXTENSIONS_WITH_VERSION, &size);
  assert_int_equal(size, 3 * sizeof(*v));
  assert_string_equal(v[2].name, EXT);
  free(v);
  char *b = cldm_test_platform_info(pb, CL_PLATFORM_EXTENSIONS, &size);
  assert_string_equal(b, STUB_PLATFORM_B_EXTENSIONS);
  free(b);
  v = cldm_test_platform_info(pb, CL_PLATFORM_EXTENSIONS_WITH_VERSION, &size);
  assert_int_equal(size, 2 * sizeof(*v));
  free(v);
}

int main(int argc, char **argv) {
  if (argc > 1)
    expected_default_heap = strtoull(argv[1], NULL, 0);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_loader),
      cmocka_unit_test(test_spirv_device_extensions),
      cmocka_unit_test(test_spirv_device_extensions_with_version),
      cmocka_unit_test(test_spirv_sets),
      cmocka_unit_test(test_heap_size_query),
      cmocka_unit_test(test_transparent_devices),
      cmocka_unit_test(test_platforms),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
