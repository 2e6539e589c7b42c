/*
 * test_layer_extfn.c — layer_extfn.c on the stub ICD, under both loaders: the extension's
 * entry points come from clGetExtensionFunctionAddressForPlatform (and the deprecated
 * clGetExtensionFunctionAddress), including the unsuffixed clSetDeviceHeapSize alias; other
 * names reach the driver; a platform without SPIR-V devices sees only the driver's answers.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "cldm_test_util.h"
#include "cldm_cl_device.h"
#include "stub_icd.h"

static const char *const names[] = {"clSetDeviceHeapSizeEXT", "clGetDeviceHeapInfoEXT",
                                    "clEnqueueResetDeviceHeapEXT"};

static void test_lookup_supported_platform(void **state) {
  cl_platform_id pa = NULL;
  cldm_cl_find_device("stub-spirv", NULL, &pa);
  assert_non_null(pa);
  for (int i = 0; i < 3; i++)
    assert_non_null(clGetExtensionFunctionAddressForPlatform(pa, names[i]));
  void *alias = clGetExtensionFunctionAddressForPlatform(pa, "clSetDeviceHeapSize");
  assert_ptr_equal(alias, clGetExtensionFunctionAddressForPlatform(pa, "clSetDeviceHeapSizeEXT"));
  /* other names go down to the driver */
  cl_int (*probe)(void) =
      (cl_int(*)(void))clGetExtensionFunctionAddressForPlatform(pa, STUB_PROBE_FUNCTION);
  assert_non_null(probe);
  assert_int_equal(probe(), STUB_PROBE_RESULT);
  assert_null(clGetExtensionFunctionAddressForPlatform(pa, "clNoSuchFunctionEXT"));
  assert_null(clGetExtensionFunctionAddressForPlatform(pa, "clSetDeviceHeapSizeEXTX"));
}

static void test_lookup_transparent_platform(void **state) {
  cl_platform_id pb = NULL;
  cldm_cl_find_device("stub-legacy", NULL, &pb);
  assert_non_null(pb);
  for (int i = 0; i < 3; i++)
    assert_null(clGetExtensionFunctionAddressForPlatform(pb, names[i]));
  cl_int (*probe)(void) =
      (cl_int(*)(void))clGetExtensionFunctionAddressForPlatform(pb, STUB_PROBE_FUNCTION);
  assert_non_null(probe);
  assert_int_equal(probe(), STUB_PROBE_RESULT);
}

static void test_lookup_deprecated(void **state) {
  cl_platform_id pa = NULL;
  cldm_cl_find_device("stub-spirv", NULL, &pa);
  for (int i = 0; i < 3; i++)
    assert_ptr_equal(clGetExtensionFunctionAddress(names[i]),
                     clGetExtensionFunctionAddressForPlatform(pa, names[i]));
  assert_ptr_equal(clGetExtensionFunctionAddress("clSetDeviceHeapSize"),
                   clGetExtensionFunctionAddress("clSetDeviceHeapSizeEXT"));
  assert_null(clGetExtensionFunctionAddress("clNoSuchFunctionEXT"));
}

static void test_entry_points_reject_bad_queues(void **state) {
  cl_platform_id pa = NULL;
  cldm_cl_find_device("stub-spirv", NULL, &pa);
  clGetDeviceHeapInfoEXT_fn info =
      (clGetDeviceHeapInfoEXT_fn)clGetExtensionFunctionAddressForPlatform(pa,
                                                                          "clGetDeviceHeapInfoEXT");
  clEnqueueResetDeviceHeapEXT_fn reset =
      (clEnqueueResetDeviceHeapEXT_fn)clGetExtensionFunctionAddressForPlatform(
          pa, "clEnqueueResetDeviceHeapEXT");
  cl_ulong v;
  assert_int_equal(info(NULL, CL_DEVICE_HEAP_INFO_SIZE_EXT, sizeof(v), &v, NULL),
                   CL_INVALID_COMMAND_QUEUE);
  assert_int_equal(reset(NULL, 0, NULL, NULL), CL_INVALID_COMMAND_QUEUE);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_lookup_supported_platform),
      cmocka_unit_test(test_lookup_transparent_platform),
      cmocka_unit_test(test_lookup_deprecated),
      cmocka_unit_test(test_entry_points_reject_bad_queues),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
