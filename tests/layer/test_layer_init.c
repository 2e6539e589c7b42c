/*
 * test_layer_init.c — layer_init.c, loaded with dlopen like a loader does: the exported
 * symbols, clGetLayerInfo, clInitLayer / clInitLayerWithProperties / clDeinitLayer, and the
 * rule that the layer never reads past the num_entries the loader passed: the fake next
 * dispatch table ends right before a PROT_NONE guard page, for 149 entries (ocl-icd 2.3.1),
 * 150 (newer Khronos headers) and a truncated 60-entry table.
 * argv[1]: path of libcldm-layer.so.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmocka.h>

#include <CL/cl_layer.h>

#include "cldm_test_util.h"

#define CLDM_TEST_SLOT(fn) (offsetof(cl_icd_dispatch, fn) / sizeof(void *))
typedef intptr_t test_layer_properties;
typedef cl_int (*init_props_fn)(cl_uint, const cl_icd_dispatch *, cl_uint *,
                                const cl_icd_dispatch **, const test_layer_properties *);
typedef cl_int (*deinit_fn)(void);

static const char *layer_path;
static void *layer;

/* ---- a fake driver below the layer ------------------------------------------------------ */
static int fake_dev_spirv, fake_dev_plain, fake_platform; /* addresses serve as handles */

static cl_int fake_return(const void *src, size_t n, size_t size, void *value, size_t *ret) {
  if (value && size < n)
    return CL_INVALID_VALUE;
  if (value)
    memcpy(value, src, n);
  if (ret)
    *ret = n;
  return CL_SUCCESS;
}

static cl_int CL_API_CALL fake_GetDeviceInfo(cl_device_id d, cl_device_info name, size_t size,
                                             void *value, size_t *ret) {
  int spirv = d == (cl_device_id)&fake_dev_spirv;
  switch (name) {
  case CL_DEVICE_TYPE: {
    cl_device_type t = CL_DEVICE_TYPE_GPU;
    return fake_return(&t, sizeof(t), size, value, ret);
  }
  case CL_DEVICE_MAX_MEM_ALLOC_SIZE: {
    cl_ulong m = 1ull << 30;
    return fake_return(&m, sizeof(m), size, value, ret);
  }
  case CL_DEVICE_IL_VERSION: {
    const char *il = spirv ? "SPIR-V_1.1" : "";
    return fake_return(il, strlen(il) + 1, size, value, ret);
  }
  case CL_DEVICE_EXTENSIONS:
    return fake_return("cl_a cl_b", 10, size, value, ret);
  default:
    return CL_INVALID_VALUE;
  }
}

static cl_int CL_API_CALL fake_GetDeviceIDs(cl_platform_id p, cl_device_type t, cl_uint n,
                                            cl_device_id *devs, cl_uint *num) {
  if (devs && n >= 2) {
    devs[0] = (cl_device_id)&fake_dev_plain;
    devs[1] = (cl_device_id)&fake_dev_spirv;
  }
  if (num)
    *num = 2;
  return CL_SUCCESS;
}

static cl_int CL_API_CALL fake_GetPlatformInfo(cl_platform_id p, cl_platform_info name, size_t size,
                                               void *value, size_t *ret) {
  if (name != CL_PLATFORM_EXTENSIONS)
    return CL_INVALID_VALUE;
  return fake_return("cl_khr_icd", 11, size, value, ret);
}

static int fake_probe;
static void *CL_API_CALL fake_GetExtensionFunctionAddress(const char *name) {
  return strcmp(name, "clFakeEXT") ? NULL : &fake_probe;
}

/* A next table of `entries` slots ending right before a guard page. */
static cl_icd_dispatch *guarded_table(cl_uint entries, void **map, size_t *map_size) {
  long page = sysconf(_SC_PAGESIZE);
  size_t bytes = entries * sizeof(void *);
  size_t pages = (bytes + page - 1) / page;
  *map_size = (pages + 1) * page;
  char *m = mmap(NULL, *map_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  assert_true(m != MAP_FAILED);
  assert_int_equal(mprotect(m + pages * page, page, PROT_NONE), 0);
  void **slots = (void **)(m + pages * page - bytes);
  memset(slots, 0, bytes);
  const cl_icd_dispatch proto = {
      .clGetPlatformInfo = fake_GetPlatformInfo,
      .clGetDeviceIDs = fake_GetDeviceIDs,
      .clGetDeviceInfo = fake_GetDeviceInfo,
      .clGetExtensionFunctionAddress = fake_GetExtensionFunctionAddress,
  };
  size_t copy = entries < sizeof(proto) / sizeof(void *) ? entries : sizeof(proto) / sizeof(void *);
  memcpy(slots, &proto, copy * sizeof(void *));
  *map = m;
  return (cl_icd_dispatch *)slots;
}

/* ---- tests ------------------------------------------------------------------------------ */

static void test_exports(void **state) {
  const char *exported[] = {"clGetLayerInfo", "clInitLayer", "clInitLayerWithProperties",
                            "clDeinitLayer"};
  for (int i = 0; i < 4; i++)
    assert_non_null(dlsym(layer, exported[i]));
  /* internal functions stay hidden */
  assert_null(dlsym(layer, "clGetDeviceInfo_wrap"));
  assert_null(dlsym(layer, "cldm_device_snapshot"));
  assert_null(dlsym(layer, "clGetDeviceInfo"));
}

static void test_get_layer_info(void **state) {
  pfn_clGetLayerInfo info = (pfn_clGetLayerInfo)dlsym(layer, "clGetLayerInfo");
  cl_layer_api_version v = 0;
  size_t ret = 0;
  assert_int_equal(info(CL_LAYER_API_VERSION, sizeof(v), &v, &ret), CL_SUCCESS);
  assert_int_equal(v, CL_LAYER_API_VERSION_100);
  assert_int_equal(ret, sizeof(v));
  assert_int_equal(info(CL_LAYER_API_VERSION, sizeof(v) - 1, &v, NULL), CL_INVALID_VALUE);
  assert_int_equal(info(CL_LAYER_NAME, 0, NULL, &ret), CL_SUCCESS);
  char name[128];
  assert_true(ret <= sizeof(name));
  assert_int_equal(info(CL_LAYER_NAME, sizeof(name), name, NULL), CL_SUCCESS);
  assert_true(strncmp(name, "cl_ext_device_malloc layer", 26) == 0);
  assert_int_equal(info(0x1234, sizeof(name), name, NULL), CL_INVALID_VALUE);
  assert_int_equal(info(CL_LAYER_NAME, 0, NULL, NULL), CL_INVALID_VALUE);
}

static void check_table(cl_uint entries) {
  pfn_clInitLayer init = (pfn_clInitLayer)dlsym(layer, "clInitLayer");
  void *map;
  size_t map_size;
  cl_icd_dispatch *next = guarded_table(entries, &map, &map_size);
  const cl_icd_dispatch *mine = NULL;
  cl_uint mine_entries = 0;
  assert_int_equal(init(entries, next, &mine_entries, &mine), CL_SUCCESS);
  assert_int_equal(mine_entries, sizeof(cl_icd_dispatch) / sizeof(void *));
  assert_non_null(mine->clGetDeviceInfo);
  assert_non_null(mine->clGetPlatformInfo);
  assert_null(mine->clCreateBuffer); /* not intercepted: the loader fills it from below */

  /* A SPIR-V device gains the extension; another does not. */
  char buf[64];
  assert_int_equal(mine->clGetDeviceInfo((cl_device_id)&fake_dev_spirv, CL_DEVICE_EXTENSIONS,
                                         sizeof(buf), buf, NULL),
                   CL_SUCCESS);
  assert_string_equal(buf, "cl_a cl_b cl_ext_device_malloc");
  assert_int_equal(mine->clGetDeviceInfo((cl_device_id)&fake_dev_plain, CL_DEVICE_EXTENSIONS,
                                         sizeof(buf), buf, NULL),
                   CL_SUCCESS);
  assert_string_equal(buf, "cl_a cl_b");
  assert_int_equal(mine->clGetPlatformInfo((cl_platform_id)&fake_platform, CL_PLATFORM_EXTENSIONS,
                                           sizeof(buf), buf, NULL),
                   CL_SUCCESS);
  assert_string_equal(buf, "cl_khr_icd cl_ext_device_malloc");

  /* Extension lookups: ours always; the driver's only if its slot lies within the table. */
  assert_non_null(mine->clGetExtensionFunctionAddress("clSetDeviceHeapSizeEXT"));
  void *fake = mine->clGetExtensionFunctionAddress("clFakeEXT");
  if (CLDM_TEST_SLOT(clGetExtensionFunctionAddress) < entries)
    assert_ptr_equal(fake, &fake_probe);
  else
    assert_null(fake);
  /* clGetExtensionFunctionAddressForPlatform is NULL in the fake table (or beyond it). */
  assert_null(
      mine->clGetExtensionFunctionAddressForPlatform((cl_platform_id)&fake_platform, "clFakeEXT"));
  munmap(map, map_size);
}

static void test_init_149(void **state) { check_table(149); }
static void test_init_150(void **state) { check_table(150); }
static void test_init_short(void **state) { check_table(60); }

static void test_init_errors(void **state) {
  pfn_clInitLayer init = (pfn_clInitLayer)dlsym(layer, "clInitLayer");
  const cl_icd_dispatch *mine;
  cl_uint n;
  cl_icd_dispatch next = {0};
  assert_int_equal(init(149, NULL, &n, &mine), CL_INVALID_VALUE);
  assert_int_equal(init(149, &next, NULL, &mine), CL_INVALID_VALUE);
  assert_int_equal(init(149, &next, &n, NULL), CL_INVALID_VALUE);
  assert_int_equal(init(0, &next, &n, &mine), CL_INVALID_VALUE);
}

static void test_init_with_properties(void **state) {
  init_props_fn init = (init_props_fn)dlsym(layer, "clInitLayerWithProperties");
  deinit_fn deinit = (deinit_fn)dlsym(layer, "clDeinitLayer");
  void *map;
  size_t map_size;
  cl_icd_dispatch *next = guarded_table(149, &map, &map_size);
  const cl_icd_dispatch *mine = NULL;
  cl_uint n = 0;
  assert_int_equal(init(149, next, &n, &mine, NULL), CL_SUCCESS);
  const test_layer_properties fn_deinit[] = {0x4242 /* CL_LAYER_DEINITIALIZATION */, 0x4244, 0};
  assert_int_equal(init(149, next, &n, &mine, fn_deinit), CL_SUCCESS);
  const test_layer_properties atexit_deinit[] = {0x4242, 0x4243, 0};
  assert_int_equal(init(149, next, &n, &mine, atexit_deinit), CL_SUCCESS);
  const test_layer_properties unknown[] = {0x1234, 1, 0};
  assert_int_equal(init(149, next, &n, &mine, unknown), CL_INVALID_PROPERTY);
  const test_layer_properties bad_value[] = {0x4242, 7, 0};
  assert_int_equal(init(149, next, &n, &mine, bad_value), CL_INVALID_PROPERTY);
  assert_int_equal(deinit(), CL_SUCCESS);
  munmap(map, map_size);
}

int main(int argc, char **argv) {
  if (argc < 2)
    return 2;
  layer_path = argv[1];
  layer = dlopen(layer_path, RTLD_NOW | RTLD_LOCAL);
  if (!layer) {
    fprintf(stderr, "dlopen %s: %s\n", layer_path, dlerror());
    return 1;
  }
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_exports),
      cmocka_unit_test(test_get_layer_info),
      cmocka_unit_test(test_init_149),
      cmocka_unit_test(test_init_150),
      cmocka_unit_test(test_init_short),
      cmocka_unit_test(test_init_errors),
      cmocka_unit_test(test_init_with_properties),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
