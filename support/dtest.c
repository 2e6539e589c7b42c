/*
 * dtest.c — see dtest.h.
 */
#include "dtest.h"
#include "cldm_cl_device.h"
#include "cldm_file.h"
#include "cldm_heap_layout.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

void cldm_dtest_check(cl_int err, const char *what) {
  if (err != CL_SUCCESS) {
    fprintf(stderr, "dtest: %s failed: %d\n", what, err);
    abort();
  }
}

double cldm_dtest_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

const char *cldm_dtest_data_path(const char *file) {
  static char path[4096];
  const char *dir = getenv("CLDM_TEST_DATA_DIR");
  snprintf(path, sizeof path, "%s/%s", dir ? dir : ".", file);
  return path;
}

static void *cldm_dtest_slurp(const char *path, size_t *size) {
  void *data = cldm_file_read(path, size);
  if (!data) {
    fprintf(stderr, "dtest: cannot read %s\n", path);
    abort();
  }
  return data;
}

cl_int cldm_dtest_open(cldm_dtest_env *env, const char *spv_path, unsigned module_bits) {
  cl_int err;
  memset(env, 0, sizeof *env);
  env->device = cldm_cl_find_device(NULL, NULL, &env->platform);
  if (!env->device) {
    fprintf(stderr, "dtest: no OpenCL device\n");
    abort();
  }
  DT_CHECK(clGetDeviceInfo(env->device, CL_DEVICE_ADDRESS_BITS, sizeof env->device_address_bits,
                           &env->device_address_bits, NULL));
  DT_CHECK(clGetDeviceInfo(env->device, CL_DEVICE_NAME, sizeof env->device_name, env->device_name,
                           NULL));
  env->ctx = clCreateContext(NULL, 1, &env->device, NULL, NULL, &err);
  DT_CHECK(err);
  env->queue = clCreateCommandQueueWithProperties(env->ctx, env->device, NULL, &err);
  DT_CHECK(err);
  if (module_bits != env->device_address_bits)
    return CL_INVALID_DEVICE;
  size_t size;
  void *il = cldm_dtest_slurp(spv_path, &size);
  env->program = clCreateProgramWithIL(env->ctx, il, size, &err);
  free(il);
  if (err != CL_SUCCESS)
    return err;
  err = clBuildProgram(env->program, 1, &env->device, "", NULL, NULL);
  if (err != CL_SUCCESS) {
    char log[8192] = "";
    clGetProgramBuildInfo(env->program, env->device, CL_PROGRAM_BUILD_LOG, sizeof log - 1, log,
                          NULL);
    fprintf(stderr, "dtest: build of %s failed (%d):\n%s\n", spv_path, err, log);
  }
  return err;
}

void cldm_dtest_close(cldm_dtest_env *env) {
  if (env->program)
    clReleaseProgram(env->program);
  if (env->queue)
    clReleaseCommandQueue(env->queue);
  if (env->ctx)
    clReleaseContext(env->ctx);
  memset(env, 0, sizeof *env);
}

cl_kernel cldm_dtest_kernel(cldm_dtest_env *env, const char *name) {
  cl_int err;
  cl_kernel k = clCreateKernel(env->program, name, &err);
  cldm_dtest_check(err, name);
  return k;
}

cl_mem cldm_dtest_buffer(cldm_dtest_env *env, size_t bytes, const void *init) {
  cl_int err;
  cl_mem m = clCreateBuffer(env->ctx, CL_MEM_READ_WRITE | (init ? CL_MEM_COPY_HOST_PTR : 0), bytes,
                            (void *)init, &err);
  DT_CHECK(err);
  return m;
}

void cldm_dtest_read(cldm_dtest_env *env, cl_mem buf, size_t bytes, void *dst) {
  DT_CHECK(clEnqueueReadBuffer(env->queue, buf, CL_TRUE, 0, bytes, dst, 0, NULL, NULL));
}

void cldm_dtest_write(cldm_dtest_env *env, cl_mem buf, size_t bytes, const void *src) {
  DT_CHECK(clEnqueueWriteBuffer(env->queue, buf, CL_TRUE, 0, bytes, src, 0, NULL, NULL));
}

uint32_t cldm_dtest_read_u32(cldm_dtest_env *env, cl_mem buf) {
  uint32_t v;
  cldm_dtest_read(env, buf, sizeof v, &v);
  return v;
}

cldm_dtest_heap cldm_dtest_heap_create(cldm_dtest_env *env, uint64_t requested) {
  cldm_dtest_heap h;
  h.buffer_bytes = cldm_heap_buffer_size(requested);
  h.usable_bytes = cldm_heap_usable_size(requested);
  h.buf = cldm_dtest_buffer(env, (size_t)h.buffer_bytes, NULL);
  cldm_dtest_heap_reset(env, &h);
  return h;
}

void cldm_dtest_heap_reset(cldm_dtest_env *env, const cldm_dtest_heap *heap) {
  size_t n = cldm_heap_image_size(heap->buffer_bytes);
  void *image = malloc(n);
  if (!image || cldm_heap_image_write(heap->buffer_bytes, image, n) != 0)
    abort();
  DT_CHECK(clEnqueueWriteBuffer(env->queue, heap->buf, CL_TRUE, 0, n, image, 0, NULL, NULL));
  free(image);
}

void cldm_dtest_heap_release(cldm_dtest_heap *heap) {
  if (heap->buf)
    clReleaseMemObject(heap->buf);
  heap->buf = NULL;
}

cldm_heap_stats cldm_dtest_heap_stats(cldm_dtest_env *env, const cldm_dtest_heap *heap) {
  size_t span = cldm_heap_stats_span(heap->buffer_bytes);
  unsigned char *bytes = malloc(span);
  cldm_heap_stats s;
  DT_CHECK(clEnqueueReadBuffer(env->queue, heap->buf, CL_TRUE, 0, span, bytes, 0, NULL, NULL));
  if (cldm_heap_stats_decode(bytes, span, &s) != 0) {
    fprintf(stderr, "dtest: heap header does not decode\n");
    abort();
  }
  free(bytes);
  return s;
}

uint64_t cldm_dtest_heap_pages_offset(cldm_dtest_env *env, const cldm_dtest_heap *heap) {
  uint64_t off;
  DT_CHECK(clEnqueueReadBuffer(env->queue, heap->buf, CL_TRUE,
                               offsetof(cldm_heap_header, pages_offset), sizeof off, &off, 0, NULL,
                               NULL));
  return off;
}

void cldm_dtest_args(cl_kernel k, ...) {
  va_list ap;
  va_start(ap, k);
  for (cl_uint i = 0;; i++) {
    size_t size = va_arg(ap, size_t);
    if (size == 0)
      break;
    const void *value = va_arg(ap, const void *);
    char what[64];
    snprintf(what, sizeof what, "clSetKernelArg(%u)", i);
    cldm_dtest_check(clSetKernelArg(k, i, size, value), what);
  }
  va_end(ap);
}

double cldm_dtest_run(cldm_dtest_env *env, cl_kernel k, size_t n) {
  cl_uint nargs, count = (cl_uint)n;
  DT_CHECK(clGetKernelInfo(k, CL_KERNEL_NUM_ARGS, sizeof nargs, &nargs, NULL));
  DT_CHECK(clSetKernelArg(k, nargs - 1, sizeof count, &count));
  size_t local = DT_LOCAL_SIZE, global = (n + local - 1) / local * local;
  double t0 = cldm_dtest_now();
  DT_CHECK(clEnqueueNDRangeKernel(env->queue, k, 1, NULL, &global, &local, 0, NULL, NULL));
  DT_CHECK(clFinish(env->queue));
  return cldm_dtest_now() - t0;
}
