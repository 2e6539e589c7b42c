/*
 * consumer.c — an application of the installed tree (tests/install): it includes the installed
 * <CL/cl_ext_device_malloc.h>, links libOpenCL through the installed CMake package or cldm.pc,
 * and runs with the installed layer enabled however the test enables it (OPENCL_LAYERS, the
 * manifest, cldm-run). On the first device reporting cl_ext_device_malloc it sets the heap size
 * (or, given EXPECTED_HEAP_SIZE, checks the one cldm-run set), builds the IL program, checks
 * that the heap argument is hidden, runs a kernel that mallocs and one that sums and frees,
 * checks results and heap statistics, and resets the heap.
 *   consumer KERNEL.spv [EXPECTED_HEAP_SIZE]     exit status 0 only if every check passed
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <CL/cl.h>
#include <CL/cl_ext_device_malloc.h>
#ifdef CONSUMER_CHECK_LOADER
#include "cldm_test_util.h"
#endif

#define ITEMS 1024
#define MAX_LEN 16

#define CHECK(call)                                                                                \
  do {                                                                                             \
    cl_int err_ = (call);                                                                          \
    if (err_ != CL_SUCCESS) {                                                                      \
      fprintf(stderr, "consumer: %s failed: %d\n", #call, err_);                                   \
      exit(1);                                                                                     \
    }                                                                                              \
  } while (0)

static int fail(const char *what) {
  fprintf(stderr, "consumer: %s\n", what);
  return 1;
}

static void *read_file(const char *path, size_t *size) {
  FILE *f = fopen(path, "rb");
  void *buf = NULL;
  long n = -1;
  if (f && fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) > 0 && fseek(f, 0, SEEK_SET) == 0 &&
      (buf = malloc((size_t)n)) && fread(buf, 1, (size_t)n, f) != (size_t)n) {
    free(buf);
    buf = NULL;
  }
  if (f)
    fclose(f);
  *size = n > 0 ? (size_t)n : 0;
  return buf;
}

/* The first device whose extension list names cl_ext_device_malloc. */
static int find_device(cl_platform_id *platform, cl_device_id *device) {
  cl_platform_id ps[16];
  cl_uint np = 0;
  if (clGetPlatformIDs(16, ps, &np) != CL_SUCCESS)
    return 0;
  for (cl_uint i = 0; i < np && i < 16; i++) {
    cl_device_id ds[16];
    cl_uint nd = 0;
    if (clGetDeviceIDs(ps[i], CL_DEVICE_TYPE_ALL, 16, ds, &nd) != CL_SUCCESS)
      continue;
    for (cl_uint j = 0; j < nd && j < 16; j++) {
      char ext[8192] = "";
      clGetDeviceInfo(ds[j], CL_DEVICE_EXTENSIONS, sizeof(ext) - 1, ext, NULL);
      if (strstr(ext, CL_EXT_DEVICE_MALLOC_EXTENSION_NAME)) {
        *platform = ps[i];
        *device = ds[j];
        return 1;
      }
    }
  }
  return 0;
}

static cl_ulong heap_stat(clGetDeviceHeapInfoEXT_fn info, cl_command_queue q,
                          cl_device_heap_info_ext name) {
  cl_ulong v = ~(cl_ulong)0;
  CHECK(info(q, name, sizeof(v), &v, NULL));
  return v;
}

int main(int argc, char **argv) {
  if (argc < 2)
    return fail("usage: consumer KERNEL.spv [EXPECTED_HEAP_SIZE]");
#ifdef CONSUMER_CHECK_LOADER
  char why[4400];
#endif
  cl_platform_id platform;
  cl_device_id dev;
  if (!find_device(&platform, &dev))
    return fail("no device reports cl_ext_device_malloc (is the layer enabled?)");
#ifdef CONSUMER_CHECK_LOADER
  if (!cldm_test_loader_matches(why, sizeof(why)))
    return fail(why);
#endif

  clSetDeviceHeapSizeEXT_fn set_heap =
      (clSetDeviceHeapSizeEXT_fn)clGetExtensionFunctionAddressForPlatform(platform,
                                                                          "clSetDeviceHeapSizeEXT");
  clGetDeviceHeapInfoEXT_fn heap_info =
      (clGetDeviceHeapInfoEXT_fn)clGetExtensionFunctionAddressForPlatform(platform,
                                                                          "clGetDeviceHeapInfoEXT");
  clEnqueueResetDeviceHeapEXT_fn reset =
      (clEnqueueResetDeviceHeapEXT_fn)clGetExtensionFunctionAddressForPlatform(
          platform, "clEnqueueResetDeviceHeapEXT");
  if (!set_heap || !heap_info || !reset)
    return fail("an entry point of cl_ext_device_malloc is missing");
  size_t want_heap = (size_t)16 << 20, heap = 0;
  if (argc > 2)
    want_heap = (size_t)strtoull(argv[2], NULL, 0); /* set by cldm-run --heap-size */
  else
    CHECK(set_heap(dev, want_heap));
  CHECK(clGetDeviceInfo(dev, CL_DEVICE_HEAP_SIZE_EXT, sizeof(heap), &heap, NULL));
  if (heap != want_heap) {
    fprintf(stderr, "consumer: heap size %zu, want %zu\n", heap, want_heap);
    return 1;
  }

  cl_int err;
  cl_context ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
  CHECK(err);
  cl_command_queue q = clCreateCommandQueueWithProperties(ctx, dev, NULL, &err);
  CHECK(err);
  size_t size;
  void *il = read_file(argv[1], &size);
  if (!il)
    return fail("cannot read the kernel module");
  cl_program prog = clCreateProgramWithIL(ctx, il, size, &err);
  free(il);
  CHECK(err);
  CHECK(clBuildProgram(prog, 1, &dev, "", NULL, NULL));
  cl_kernel fill = clCreateKernel(prog, "fill", &err);
  CHECK(err);
  cl_kernel sum = clCreateKernel(prog, "sum_and_free", &err);
  CHECK(err);
  cl_uint nargs = 0;
  CHECK(clGetKernelInfo(fill, CL_KERNEL_NUM_ARGS, sizeof(nargs), &nargs, NULL));
  if (nargs != 2)
    return fail("fill: CL_KERNEL_NUM_ARGS counts the hidden heap argument");

  cl_mem ptrs = clCreateBuffer(ctx, CL_MEM_READ_WRITE, ITEMS * sizeof(cl_ulong), NULL, &err);
  CHECK(err);
  cl_mem sums = clCreateBuffer(ctx, CL_MEM_READ_WRITE, ITEMS * sizeof(cl_ulong), NULL, &err);
  CHECK(err);
  cl_uint n = MAX_LEN;
  size_t global = ITEMS;
  CHECK(clSetKernelArg(fill, 0, sizeof(cl_mem), &ptrs));
  CHECK(clSetKernelArg(fill, 1, sizeof(n), &n));
  CHECK(clSetKernelArg(sum, 0, sizeof(cl_mem), &ptrs));
  CHECK(clSetKernelArg(sum, 1, sizeof(n), &n));
  CHECK(clSetKernelArg(sum, 2, sizeof(cl_mem), &sums));
  CHECK(clEnqueueNDRangeKernel(q, fill, 1, NULL, &global, NULL, 0, NULL, NULL));
  CHECK(clFinish(q));
  if (heap_stat(heap_info, q, CL_DEVICE_HEAP_INFO_LIVE_ALLOCATIONS_EXT) != ITEMS)
    return fail("live allocations after fill are not one per work-item");
  CHECK(clEnqueueNDRangeKernel(q, sum, 1, NULL, &global, NULL, 0, NULL, NULL));
  cl_ulong s[ITEMS];
  CHECK(clEnqueueReadBuffer(q, sums, CL_TRUE, 0, sizeof(s), s, 0, NULL, NULL));
  for (cl_ulong i = 0; i < ITEMS; i++) {
    cl_ulong len = 1 + i % MAX_LEN;
    if (s[i] != len * i + len * (len - 1) / 2) {
      fprintf(stderr, "consumer: work-item %llu summed %llu\n", (unsigned long long)i,
              (unsigned long long)s[i]);
      return 1;
    }
  }
  if (heap_stat(heap_info, q, CL_DEVICE_HEAP_INFO_LIVE_ALLOCATIONS_EXT) != 0 ||
      heap_stat(heap_info, q, CL_DEVICE_HEAP_INFO_INVALID_FREES_EXT) != 0)
    return fail("allocations left, or invalid frees, after sum_and_free");

  /* allocations left alive go with a heap reset */
  CHECK(clEnqueueNDRangeKernel(q, fill, 1, NULL, &global, NULL, 0, NULL, NULL));
  CHECK(reset(q, 0, NULL, NULL));
  CHECK(clFinish(q));
  if (heap_stat(heap_info, q, CL_DEVICE_HEAP_INFO_LIVE_ALLOCATIONS_EXT) != 0)
    return fail("allocations left after clEnqueueResetDeviceHeapEXT");

  clReleaseMemObject(ptrs);
  clReleaseMemObject(sums);
  clReleaseKernel(fill);
  clReleaseKernel(sum);
  clReleaseProgram(prog);
  clReleaseCommandQueue(q);
  clReleaseContext(ctx);
  printf("consumer: %d work-items allocated, summed and freed; heap %zu bytes; all checks passed\n",
         ITEMS, heap);
  return 0;
}
