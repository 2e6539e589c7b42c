/*
 * example_util.h — the few helpers the examples share: error checks that print and exit,
 * loading a SPIR-V file, building a program, and printing the heap statistics of
 * cl_ext_device_malloc through clGetDeviceHeapInfoEXT.
 */
#ifndef CLDM_EXAMPLE_UTIL_H
#define CLDM_EXAMPLE_UTIL_H

#define CL_TARGET_OPENCL_VERSION 300
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <CL/cl.h>
#include <CL/cl_ext_device_malloc.h>

#define CHECK(call)                                                                        \
  do {                                                                                     \
    cl_int check_err_ = (call);                                                            \
    if (check_err_ != CL_SUCCESS) {                                                        \
      fprintf(stderr, "%s:%d: %s failed: %d\n", __FILE__, __LINE__, #call, check_err_);    \
      exit(1);                                                                             \
    }                                                                                      \
  } while (0)

static inline void *example_read(const char *path, size_t *size)
{
  FILE *f = fopen(path, "rb");
  if (!f) {
    fprintf(stderr, "cannot open %s\n", path);
    exit(1);
  }
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  void *buf = malloc((size_t)n);
  if (fread(buf, 1, (size_t)n, f) != (size_t)n)
    exit(1);
  fclose(f);
  *size = (size_t)n;
  return buf;
}

static inline cl_program example_program(cl_context ctx, cl_device_id dev, const char *path)
{
  size_t size;
  void *il = example_read(path, &size);
  cl_int err;
  cl_program p = clCreateProgramWithIL(ctx, il, size, &err);
  free(il);
  if (err != CL_SUCCESS) {
    fprintf(stderr, "clCreateProgramWithIL(%s) failed: %d%s\n", path, err,
            err == CL_INVALID_VALUE ? " (is the layer enabled? see OPENCL_LAYERS in README)" : "");
    exit(1);
  }
  if (clBuildProgram(p, 1, &dev, "", NULL, NULL) != CL_SUCCESS) {
    char log[16384] = "";
    clGetProgramBuildInfo(p, dev, CL_PROGRAM_BUILD_LOG, sizeof(log) - 1, log, NULL);
    fprintf(stderr, "build of %s failed:\n%s\n", path, log);
    exit(1);
  }
  return p;
}

/* The first device that reports cl_ext_device_malloc, or exit. */
static inline cl_device_id example_device(cl_platform_id *platform)
{
  cl_platform_id ps[8];
  cl_uint np = 0;
  clGetPlatformIDs(8, ps, &np);
  for (cl_uint i = 0; i < np && i < 8; i++) {
    cl_device_id ds[8];
    cl_uint nd = 0;
    if (clGetDeviceIDs(ps[i], CL_DEVICE_TYPE_ALL, 8, ds, &nd) != CL_SUCCESS)
      continue;
    for (cl_uint j = 0; j < nd && j < 8; j++) {
      char ext[8192] = "";
      clGetDeviceInfo(ds[j], CL_DEVICE_EXTENSIONS, sizeof(ext) - 1, ext, NULL);
      if (strstr(ext, CL_EXT_DEVICE_MALLOC_EXTENSION_NAME)) {
        *platform = ps[i];
        return ds[j];
      }
    }
  }
  fprintf(stderr, "no device reports %s: enable the layer (OPENCL_LAYERS, see README)\n",
          CL_EXT_DEVICE_MALLOC_EXTENSION_NAME);
  exit(1);
}

static inline void example_print_heap(cl_platform_id platform, cl_command_queue q, const char *when)
{
  clGetDeviceHeapInfoEXT_fn info = (clGetDeviceHeapInfoEXT_fn)
      clGetExtensionFunctionAddressForPlatform(platform, "clGetDeviceHeapInfoEXT");
  static const struct { cl_device_heap_info_ext name; const char *text; } fields[] = {
      {CL_DEVICE_HEAP_INFO_SIZE_EXT, "size"},
      {CL_DEVICE_HEAP_INFO_BYTES_IN_USE_EXT, "bytes in use"},
      {CL_DEVICE_HEAP_INFO_PEAK_BYTES_IN_USE_EXT, "peak bytes in use"},
      {CL_DEVICE_HEAP_INFO_LIVE_ALLOCATIONS_EXT, "live allocations"},
      {CL_DEVICE_HEAP_INFO_FAILED_ALLOCATIONS_EXT, "failed allocations"},
      {CL_DEVICE_HEAP_INFO_INVALID_FREES_EXT, "invalid frees"},
  };
  printf("heap %s:", when);
  for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
    cl_ulong v = 0;
    CHECK(info(q, fields[i].name, sizeof(v), &v, NULL));
    printf(" %s=%llu", fields[i].text, (unsigned long long)v);
  }
  printf("\n");
}

#endif
