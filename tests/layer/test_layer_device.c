/*
 * test_layer_device.c — layer_device.c through clSetDeviceHeapSizeEXT on the stub ICD, under
 * both loaders (spec 1.2): device checks, size limits, and CL_DEVICE_HEAP_SIZE_EXT following
 * the setting. (The CL_INVALID_OPERATION rule needs a live heap: tests/e2e covers it on pocl.)
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "cldm_test_util.h"
#include "cldm_cl_device.h"
#include "stub_icd.h"

static clSetDeviceHeapSizeEXT_fn set_heap_size;

static int setup(void **state) {
  cl_platform_id pa = NULL;
  cldm_cl_find_device("stub-spirv", NULL, &pa);
  set_heap_size = (clSetDeviceHeapSizeEXT_fn)clGetExtensionFunctionAddressForPlatform(
      pa, "clSetDeviceHeapSizeEXT");
  return set_heap_size ? 0 : -1;
}

static size_t heap_size(cl_device_id d) {
  size_t v = 0;
  assert_int_equal(clGetDeviceInfo(d, CL_DEVICE_HEAP_SIZE_EXT, sizeof(v), &v, NULL), CL_SUCCESS);
  return v;
}

static void test_invalid_devices(void **state) {
  assert_int_equal(set_heap_size(NULL, 16u << 20), CL_INVALID_DEVICE);
  assert_int_equal(set_heap_size(cldm_cl_find_device("stub-plain", NULL, NULL), 16u << 20),
                   CL_INVALID_DEVICE);
  assert_int_equal(set_heap_size(cldm_cl_find_device("stub-legacy", NULL, NULL), 16u << 20),
                   CL_INVALID_DEVICE);
}

static void test_invalid_sizes(void **state) {
  cl_device_id d = cldm_cl_find_device("stub-spirv", NULL, NULL);
  size_t before = heap_size(d);
  assert_int_equal(set_heap_size(d, 0), CL_INVALID_VALUE);
  assert_int_equal(set_heap_size(d, CL_DEVICE_HEAP_SIZE_MIN_EXT - 1), CL_INVALID_VALUE);
  assert_int_equal(set_heap_size(d, STUB_DEVICE1_MAX_ALLOC + 1), CL_INVALID_VALUE);
  assert_int_equal(set_heap_size(d, SIZE_MAX), CL_INVALID_VALUE);
  assert_int_equal(heap_size(d), before);
}

static void test_valid_sizes(void **state) {
  cl_device_id d = cldm_cl_find_device("stub-spirv", NULL, NULL);
  assert_int_equal(set_heap_size(d, CL_DEVICE_HEAP_SIZE_MIN_EXT), CL_SUCCESS);
  assert_int_equal(heap_size(d), CL_DEVICE_HEAP_SIZE_MIN_EXT);
  assert_int_equal(set_heap_size(d, STUB_DEVICE1_MAX_ALLOC), CL_SUCCESS);
  assert_int_equal(heap_size(d), STUB_DEVICE1_MAX_ALLOC);
  /* the unsuffixed alias is the same function */
  clSetDeviceHeapSizeEXT_fn alias =
      (clSetDeviceHeapSizeEXT_fn)clGetExtensionFunctionAddress("clSetDeviceHeapSize");
  assert_int_equal(alias(d, 3u << 20), CL_SUCCESS);
  assert_int_equal(heap_size(d), 3u << 20);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_invalid_devices),
      cmocka_unit_test(test_invalid_sizes),
      cmocka_unit_test(test_valid_sizes),
  };
  return cmocka_run_group_tests(tests, setup, NULL);
}
