/*
 * demo.c — the README demo: lists OpenCL devices, shows which report cl_ext_device_malloc
 * (the layer adds it to devices that accept SPIR-V), and uses the extension's host API
 * through clGetExtensionFunctionAddressForPlatform: clSetDeviceHeapSizeEXT, then
 * CL_DEVICE_HEAP_SIZE_EXT. Exit status 0 only if at least one device supports the extension
 * and the calls behave as spec 1.2 says.
 */
#define CL_TARGET_OPENCL_VERSION 300
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <CL/cl.h>
#include <CL/cl_ext_device_malloc.h>

static char *device_string(cl_device_id d, cl_device_info name)
{
  size_t n = 0;
  if (clGetDeviceInfo(d, name, 0, NULL, &n) != CL_SUCCESS)
    return strdup("");
  char *s = calloc(1, n + 1);
  clGetDeviceInfo(d, name, n, s, NULL);
  return s;
}

static int has_word(const char *list, const char *word)
{
  size_t n = strlen(word);
  for (const char *p = list; (p = strstr(p, word)); p += n)
    if ((p == list || p[-1] == ' ') && (p[n] == 0 || p[n] == ' '))
      return 1;
  return 0;
}

int main(void)
{
  cl_platform_id platforms[8];
  cl_uint np = 0;
  if (clGetPlatformIDs(8, platforms, &np) != CL_SUCCESS || np == 0) {
    fprintf(stderr, "demo: no OpenCL platform (is OCL_ICD_VENDORS set?)\n");
    return 1;
  }
  int supported = 0, ok = 1;
  for (cl_uint p = 0; p < np && p < 8; p++) {
    cl_device_id devs[8];
    cl_uint nd = 0;
    if (clGetDeviceIDs(platforms[p], CL_DEVICE_TYPE_ALL, 8, devs, &nd) != CL_SUCCESS)
      continue;
    for (cl_uint i = 0; i < nd && i < 8; i++) {
      char *name = device_string(devs[i], CL_DEVICE_NAME);
      char *il = device_string(devs[i], CL_DEVICE_IL_VERSION);
      char *ext = device_string(devs[i], CL_DEVICE_EXTENSIONS);
      int has = has_word(ext, CL_EXT_DEVICE_MALLOC_EXTENSION_NAME);
      printf("device: %s\n  IL: %s\n  %s: %s\n", name, *il ? il : "(none)",
             CL_EXT_DEVICE_MALLOC_EXTENSION_NAME, has ? "yes" : "no");
      if (has) {
        supported++;
        clSetDeviceHeapSizeEXT_fn set_heap_size = (clSetDeviceHeapSizeEXT_fn)
            clGetExtensionFunctionAddressForPlatform(platforms[p], "clSetDeviceHeapSizeEXT");
        size_t before = 0, after = 0;
        clGetDeviceInfo(devs[i], CL_DEVICE_HEAP_SIZE_EXT, sizeof(before), &before, NULL);
        cl_int err = set_heap_size ? set_heap_size(devs[i], 32u << 20) : CL_INVALID_OPERATION;
        clGetDeviceInfo(devs[i], CL_DEVICE_HEAP_SIZE_EXT, sizeof(after), &after, NULL);
        printf("  heap size: %zu bytes; clSetDeviceHeapSizeEXT(32 MiB) -> %d; now %zu bytes\n",
               before, err, after);
        cl_int too_small = set_heap_size ? set_heap_size(devs[i], 1000) : CL_SUCCESS;
        printf("  clSetDeviceHeapSizeEXT(1000 bytes) -> %d (CL_INVALID_VALUE expected)\n", too_small);
        ok &= err == CL_SUCCESS && after == (32u << 20) && too_small == CL_INVALID_VALUE;
      }
      free(name);
      free(il);
      free(ext);
    }
  }
  if (!supported)
    fprintf(stderr, "demo: no device reports %s: is the layer enabled (OPENCL_LAYERS)?\n",
            CL_EXT_DEVICE_MALLOC_EXTENSION_NAME);
  return supported && ok ? 0 : 1;
}
