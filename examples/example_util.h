/*
 * example_util.h — the few helpers the examples share: error checks that print and exit,
 * building a program from OpenCL C source or from a SPIR-V file, finding a device with the
 * extension (both through support/: cldm_file.h, cldm_cl_device.h), and printing the heap
 * statistics of cl_ext_device_malloc through clGetDeviceHeapInfoEXT.
 */
#ifndef CLDM_EXAMPLE_UTIL_H
#define CLDM_EXAMPLE_UTIL_H

#define CL_TARGET_OPENCL_VERSION 300
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <CL/cl.h>
#include <CL/cl_ext_device_malloc.h>

#include "cldm_cl_device.h"
#include "cldm_file.h"

#define CHECK(call)                                                                                \
  do {                                                                                             \
    cl_int check_err_ = (call);                                                                    \
    if (check_err_ != CL_SUCCESS) {                                                                \
      fprintf(stderr, "%s:%d: %s failed: %d\n", __FILE__, __LINE__, #call, check_err_);            \
      exit(1);                                                                                     \
    }                                                                                              \
  } while (0)

static inline void *example_read(const char *path, size_t *size) {
  void *buf = cldm_file_read(path, size);
  if (!buf) {
    fprintf(stderr, "cannot read %s\n", path);
    exit(1);
  }
  return buf;
}

static inline void example_build(cl_program p, cl_device_id dev, const char *what) {
  if (clBuildProgram(p, 1, &dev, "", NULL, NULL) != CL_SUCCESS) {
    char log[16384] = "";
    clGetProgramBuildInfo(p, dev, CL_PROGRAM_BUILD_LOG, sizeof(log) - 1, log, NULL);
    fprintf(stderr, "build of %s failed:\n%s\n", what, log);
    exit(1);
  }
}

/* A program from OpenCL C source (`length` bytes), built: kernels call malloc and free with
 * no declaration (the layer declares them). */
static inline cl_program example_source_program(cl_context ctx, cl_device_id dev,
                                                const unsigned char *source, size_t length,
                                                const char *what) {
  const char *text = (const char *)source;
  cl_int err;
  cl_program p = clCreateProgramWithSource(ctx, 1, &text, &length, &err);
  CHECK(err);
  example_build(p, dev, what);
  return p;
}

/* A program from a SPIR-V file, built. */
static inline cl_program example_program(cl_context ctx, cl_device_id dev, const char *path) {
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
  example_build(p, dev, path);
  return p;
}

/* The first device that reports cl_ext_device_malloc, or exit. */
static inline cl_device_id example_device(cl_platform_id *platform) {
  cl_device_id d = cldm_cl_find_device(NULL, CL_EXT_DEVICE_MALLOC_EXTENSION_NAME, platform);
  if (d)
    return d;
  fprintf(stderr, "no device reports %s: enable the layer (OPENCL_LAYERS, see README)\n",
          CL_EXT_DEVICE_MALLOC_EXTENSION_NAME);
  exit(1);
}

/* One figure of the heap of q's context and device, through the extension's
 * clGetDeviceHeapInfoEXT (spec 1.3). */
static inline cl_ulong example_heap_info(cl_platform_id platform, cl_command_queue q,
                                         cl_device_heap_info_ext name) {
  clGetDeviceHeapInfoEXT_fn info =
      (clGetDeviceHeapInfoEXT_fn)clGetExtensionFunctionAddressForPlatform(platform,
                                                                          "clGetDeviceHeapInfoEXT");
  cl_ulong v = 0;
  CHECK(info(q, name, sizeof(v), &v, NULL));
  return v;
}

static inline void example_print_heap(cl_platform_id platform, cl_command_queue q,
                                      const char *when) {
  static const struct {
    cl_device_heap_info_ext name;
    const char *text;
  } fields[] = {
      {CL_DEVICE_HEAP_INFO_SIZE_EXT, "size"},
      {CL_DEVICE_HEAP_INFO_BYTES_IN_USE_EXT, "bytes in use"},
      {CL_DEVICE_HEAP_INFO_BYTES_HELD_EXT, "bytes held"},
      {CL_DEVICE_HEAP_INFO_PEAK_BYTES_HELD_EXT, "peak bytes held"},
      {CL_DEVICE_HEAP_INFO_LIVE_ALLOCATIONS_EXT, "live allocations"},
      {CL_DEVICE_HEAP_INFO_FAILED_ALLOCATIONS_EXT, "failed allocations"},
      {CL_DEVICE_HEAP_INFO_INVALID_FREES_EXT, "invalid frees"},
  };
  printf("heap %s:", when);
  for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++)
    printf(" %s=%llu", fields[i].text,
           (unsigned long long)example_heap_info(platform, q, fields[i].name));
  printf("\n");
}

#endif
