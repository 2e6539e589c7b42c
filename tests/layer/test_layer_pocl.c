/*
 * test_layer_pocl.c — the layer on the real driver (pocl 6.0), under both loaders: the right
 * loader is loaded, pocl's device and platform report cl_ext_device_malloc once, the entry
 * points are found through clGetExtensionFunctionAddressForPlatform and work on real handles
 * (spec 1.1-1.4).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "cldm_test_util.h"
#include "cldm_cl_device.h"

#define EXT CL_EXT_DEVICE_MALLOC_EXTENSION_NAME

static cl_platform_id platform;
static cl_device_id device;

static int setup(void **state) {
  device = cldm_cl_find_device(NULL, NULL, &platform);
  return device ? 0 : -1;
}

static void test_loader(void **state) {
  char why[4200];
  if (!cldm_test_loader_matches(why, sizeof(why)))
    fail_msg("%s", why);
}

static int count_words(const char *list, const char *word) {
  int n = 0;
  size_t len = strlen(word);
  for (const char *p = list; (p = strstr(p, word)); p += len)
    n += (p == list || p[-1] == ' ') && (p[len] == 0 || p[len] == ' ');
  return n;
}

static void test_extension_reported(void **state) {
  char *il = cldm_cl_device_info(device, CL_DEVICE_IL_VERSION, NULL);
  assert_non_null(strstr(il, "SPIR-V"));
  free(il);
  char *ext = cldm_cl_device_info(device, CL_DEVICE_EXTENSIONS, NULL);
  assert_int_equal(count_words(ext, EXT), 1);
  assert_true(cldm_cl_has_word(ext, "cl_khr_il_program")); /* the driver's list is kept */
  free(ext);
  char *pext = cldm_test_platform_info(platform, CL_PLATFORM_EXTENSIONS, NULL);
  assert_int_equal(count_words(pext, EXT), 1);
  free(pext);
  size_t size = 0;
  cl_name_version *v = cldm_cl_device_info(device, CL_DEVICE_EXTENSIONS_WITH_VERSION, &size);
  int found = 0;
  for (size_t i = 0; i < size / sizeof(*v); i++)
    if (!strcmp(v[i].name, EXT)) {
      found++;
      assert_int_equal(v[i].version, CL_EXT_DEVICE_MALLOC_EXTENSION_VERSION);
    }
  assert_int_equal(found, 1);
  free(v);
}

static void test_heap_size_entry_point(void **state) {
  clSetDeviceHeapSizeEXT_fn set =
      (clSetDeviceHeapSizeEXT_fn)clGetExtensionFunctionAddressForPlatform(platform,
                                                                          "clSetDeviceHeapSizeEXT");
  assert_non_null(set);
  cl_ulong max_alloc = 0;
  assert_int_equal(
      clGetDeviceInfo(device, CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof(max_alloc), &max_alloc, NULL),
      CL_SUCCESS);
  assert_int_equal(set(device, (size_t)max_alloc + 1), CL_INVALID_VALUE);
  assert_int_equal(set(device, 4u << 20), CL_SUCCESS);
  size_t v = 0;
  assert_int_equal(clGetDeviceInfo(device, CL_DEVICE_HEAP_SIZE_EXT, sizeof(v), &v, NULL),
                   CL_SUCCESS);
  assert_int_equal(v, 4u << 20);
}

static void test_heap_info_and_reset_without_heap(void **state) {
  clGetDeviceHeapInfoEXT_fn info =
      (clGetDeviceHeapInfoEXT_fn)clGetExtensionFunctionAddressForPlatform(platform,
                                                                          "clGetDeviceHeapInfoEXT");
  clEnqueueResetDeviceHeapEXT_fn reset =
      (clEnqueueResetDeviceHeapEXT_fn)clGetExtensionFunctionAddressForPlatform(
          platform, "clEnqueueResetDeviceHeapEXT");
  assert_non_null(info);
  assert_non_null(reset);
  cl_int err;
  cl_context ctx = clCreateContext(NULL, 1, &device, NULL, NULL, &err);
  assert_int_equal(err, CL_SUCCESS);
  cl_command_queue q = clCreateCommandQueueWithProperties(ctx, device, NULL, &err);
  assert_int_equal(err, CL_SUCCESS);
  /* no heap yet: counters are 0 and no heap is created by asking (spec 1.3) */
  static const cl_device_heap_info_ext counters[] = {
      CL_DEVICE_HEAP_INFO_BYTES_IN_USE_EXT,     CL_DEVICE_HEAP_INFO_PEAK_BYTES_HELD_EXT,
      CL_DEVICE_HEAP_INFO_LIVE_ALLOCATIONS_EXT, CL_DEVICE_HEAP_INFO_FAILED_ALLOCATIONS_EXT,
      CL_DEVICE_HEAP_INFO_INVALID_FREES_EXT,    CL_DEVICE_HEAP_INFO_BYTES_HELD_EXT,
      CL_DEVICE_HEAP_INFO_BAD_ALLOCS_EXT};
  for (size_t i = 0; i < sizeof counters / sizeof counters[0]; i++) {
    cl_device_heap_info_ext p = counters[i];
    cl_ulong v = 99;
    size_t ret = 0;
    assert_int_equal(info(q, p, sizeof(v), &v, &ret), CL_SUCCESS);
    assert_int_equal(v, 0);
    assert_int_equal(ret, sizeof(cl_ulong));
  }
  cl_ulong size = 0;
  assert_int_equal(info(q, CL_DEVICE_HEAP_INFO_SIZE_EXT, sizeof(size), &size, NULL), CL_SUCCESS);
  assert_true(size > 0 && size <= (4u << 20));
  assert_int_equal(info(q, CL_DEVICE_HEAP_INFO_SIZE_EXT, sizeof(size) - 1, &size, NULL),
                   CL_INVALID_VALUE);
  assert_int_equal(info(q, 0x1234, sizeof(size), &size, NULL), CL_INVALID_VALUE);
  assert_int_equal(info(q, CL_DEVICE_HEAP_INFO_BAD_ALLOCS_EXT + 1, sizeof(size), &size, NULL),
                   CL_INVALID_VALUE);
  /* reset is an ordered command with an event */
  cl_event ev = NULL;
  assert_int_equal(reset(q, 0, NULL, &ev), CL_SUCCESS);
  assert_non_null(ev);
  assert_int_equal(clWaitForEvents(1, &ev), CL_SUCCESS);
  assert_int_equal(reset(q, 1, NULL, NULL), CL_INVALID_EVENT_WAIT_LIST);
  clReleaseEvent(ev);
  clReleaseCommandQueue(q);
  clReleaseContext(ctx);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_loader),
      cmocka_unit_test(test_extension_reported),
      cmocka_unit_test(test_heap_size_entry_point),
      cmocka_unit_test(test_heap_info_and_reset_without_heap),
  };
  return cmocka_run_group_tests(tests, setup, NULL);
}
