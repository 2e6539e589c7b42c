/*
 * session.c — one context of the suite with one heap size: clSetDeviceHeapSizeEXT before the
 * first allocating launch, two in-order queues (profiling for kernel times, plain for host
 * latencies), the suite's two programs created from SPIR-V with clCreateProgramWithIL, and the
 * launch, buffer and heap helpers every case uses.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cldm_file.h"
#include "suite.h"

void bs_check_cl(cl_int err, const char *what, const char *file, int line) {
  if (err == CL_SUCCESS)
    return;
  fprintf(stderr, "cldm-bench-suite: %s:%d: %s failed: %d\n", file, line, what, err);
  exit(2);
}

cl_program bs_program_il(cl_context ctx, cl_uint ndev, const cl_device_id *devs,
                         const char *kernels_dir, const char *file) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", kernels_dir, file);
  size_t size = 0;
  void *il = cldm_file_read(path, &size);
  if (!il) {
    fprintf(stderr, "cldm-bench-suite: cannot read %s (--kernels DIR)\n", path);
    exit(2);
  }
  cl_int err;
  cl_program p = clCreateProgramWithIL(ctx, il, size, &err);
  free(il);
  if (err != CL_SUCCESS) {
    fprintf(stderr, "cldm-bench-suite: clCreateProgramWithIL(%s) failed: %d\n", path, err);
    exit(2);
  }
  if (clBuildProgram(p, ndev, devs, "", NULL, NULL) != CL_SUCCESS) {
    fprintf(stderr, "cldm-bench-suite: building %s failed:\n", path);
    for (cl_uint i = 0; i < ndev; i++) {
      char log[16384] = "";
      clGetProgramBuildInfo(p, devs[i], CL_PROGRAM_BUILD_LOG, sizeof log - 1, log, NULL);
      fprintf(stderr, "%s%s\n", ndev > 1 ? "(device) " : "", log);
    }
    exit(2);
  }
  return p;
}

void bs_session_open(bs_session *s, bs_dev *d, const bp_plan *plan, const char *kernels_dir,
                     uint64_t heap) {
  memset(s, 0, sizeof *s);
  s->dev = d;
  s->plan = plan;
  s->heap_setting = heap;
  cl_int err = d->set_heap(d->device, (size_t)heap);
  if (err != CL_SUCCESS) {
    fprintf(stderr, "cldm-bench-suite: clSetDeviceHeapSizeEXT(%llu) failed: %d%s\n",
            (unsigned long long)heap, err,
            err == CL_INVALID_OPERATION ? " (the previous context's heap was not freed when it "
                                          "was released: the driver still held a reference)"
                                        : "");
    exit(2);
  }
  s->ctx = clCreateContext(NULL, 1, &d->device, NULL, NULL, &err);
  BS_CHECK(err);
  cl_queue_properties prof[] = {CL_QUEUE_PROPERTIES, CL_QUEUE_PROFILING_ENABLE, 0};
  s->q = clCreateCommandQueueWithProperties(s->ctx, d->device, prof, &err);
  BS_CHECK(err);
  s->plain = clCreateCommandQueueWithProperties(s->ctx, d->device, NULL, &err);
  BS_CHECK(err);
  s->alloc = bs_program_il(s->ctx, 1, &d->device, kernels_dir, "alloc.spv");
  s->base = bs_program_il(s->ctx, 1, &d->device, kernels_dir, "base.spv");
  s->heap_usable = bs_heap_info(s, CL_DEVICE_HEAP_INFO_SIZE_EXT);
}

/* Waits (up to about a second) until the context's reference count has stopped falling: a
 * driver may drop the references of finished commands and released queues some time after
 * the calls return (pocl does, from its worker threads), and the layer frees a heap only if,
 * when the application releases the context, nothing but the heap holds it. */
void bs_wait_context_quiet(cl_context ctx) {
  cl_uint prev = 0, refs = 0;
  int stable = 0;
  for (int i = 0; i < 1000 && stable < 20; i++) {
    if (clGetContextInfo(ctx, CL_CONTEXT_REFERENCE_COUNT, sizeof refs, &refs, NULL) != CL_SUCCESS)
      return;
    stable = i && refs == prev ? stable + 1 : 0;
    prev = refs;
    usleep(1000);
  }
}

void bs_session_close(bs_session *s) {
  BS_CHECK(clFinish(s->q));
  BS_CHECK(clFinish(s->plain));
  for (int i = 0; i < s->nkernels; i++)
    clReleaseKernel(s->kernels[i].k);
  clReleaseProgram(s->alloc);
  clReleaseProgram(s->base);
  clReleaseCommandQueue(s->q);
  clReleaseCommandQueue(s->plain);
  bs_wait_context_quiet(s->ctx);
  clReleaseContext(s->ctx);
  memset(s, 0, sizeof *s);
}

/* Index of the kernel in the session's table, created on first use. */
static int kernel_index(bs_session *s, const char *name) {
  for (int i = 0; i < s->nkernels; i++)
    if (!strcmp(s->kernels[i].name, name))
      return i;
  if (s->nkernels == BS_MAX_KERNELS) {
    fprintf(stderr, "cldm-bench-suite: too many kernels\n");
    exit(2);
  }
  cl_int err;
  cl_kernel k = clCreateKernel(s->alloc, name, &err);
  if (err == CL_INVALID_KERNEL_NAME)
    k = clCreateKernel(s->base, name, &err);
  BS_CHECK(err);
  size_t wg = 0;
  BS_CHECK(
      clGetKernelWorkGroupInfo(k, s->dev->device, CL_KERNEL_WORK_GROUP_SIZE, sizeof wg, &wg, NULL));
  int i = s->nkernels++;
  s->kernels[i].name = name;
  s->kernels[i].k = k;
  s->kernels[i].wg = wg;
  return i;
}

cl_kernel bs_kernel(bs_session *s, const char *name) { return s->kernels[kernel_index(s, name)].k; }

/* CLDM_SUITE_TRACE=1: launches, buffers and fills are printed as they happen (bs_launch) */
int bs_trace(void) {
  static int trace = -1;
  if (trace < 0)
    trace = getenv("CLDM_SUITE_TRACE") && atoi(getenv("CLDM_SUITE_TRACE")) > 0;
  return trace;
}

cl_mem bs_buffer(bs_session *s, size_t bytes) {
  cl_int err;
  double t0 = bs_now_us();
  cl_mem m = clCreateBuffer(s->ctx, CL_MEM_READ_WRITE, bytes ? bytes : 16, NULL, &err);
  if (bs_trace())
    fprintf(stderr, "[trace] buffer of %zu B: %.3f ms\n", bytes, (bs_now_us() - t0) / 1e3);
  BS_CHECK(err);
  bs_fill_zero(s, m, bytes ? bytes : 16);
  return m;
}

void bs_read(bs_session *s, cl_mem m, size_t bytes, void *dst) {
  if (!bytes) /* a launch over no work-item (run_cold's primer) wrote nothing */
    return;
  BS_CHECK(clEnqueueReadBuffer(s->q, m, CL_TRUE, 0, bytes, dst, 0, NULL, NULL));
}

#define BS_FILL_PIECE_BYTES ((size_t)1 << 30) /* 1 GiB per clEnqueueFillBuffer */

void bs_fill_zero(bs_session *s, cl_mem m, size_t bytes) {
  cl_uint zero = 0;
  double t0 = bs_now_us();
  /* in pieces of at most BS_FILL_PIECE_BYTES: on the H200 (driver 580) one fill of a buffer of
   * 8 GiB, enqueued after kernels of the suite had run, never ended */
  for (size_t at = 0; at < bytes; at += BS_FILL_PIECE_BYTES) {
    size_t piece = bytes - at < BS_FILL_PIECE_BYTES ? bytes - at : BS_FILL_PIECE_BYTES;
    BS_CHECK(clEnqueueFillBuffer(s->q, m, &zero, sizeof zero, at, piece, 0, NULL, NULL));
  }
  BS_CHECK(clFinish(s->q));
  if (bs_trace())
    fprintf(stderr, "[trace] fill of %zu B: %.3f ms\n", bytes, (bs_now_us() - t0) / 1e3);
}

uint32_t bs_read_u32(bs_session *s, cl_mem m) {
  uint32_t v = 0;
  bs_read(s, m, sizeof v, &v);
  return v;
}

void bs_args(cl_kernel k, ...) {
  va_list ap;
  va_start(ap, k);
  for (cl_uint i = 0;; i++) {
    size_t size = va_arg(ap, size_t);
    if (!size)
      break;
    const void *value = va_arg(ap, const void *);
    /* a NULL value sets a local-memory argument of `size` bytes */
    BS_CHECK(clSetKernelArg(k, i, size, value));
  }
  va_end(ap);
}

double bs_launch(bs_session *s, cl_kernel k, size_t n, size_t local) {
  size_t wg = 0;
  for (int i = 0; i < s->nkernels; i++)
    if (s->kernels[i].k == k)
      wg = s->kernels[i].wg;
  if (!local) {
    local = s->plan->local;
    if (wg && local > wg)
      local = wg;
    if (s->dev->max_wg && local > s->dev->max_wg)
      local = s->dev->max_wg;
  }
  size_t global = (n + local - 1) / local * local;
  if (!global)
    global = local;
  /* CLDM_SUITE_TRACE=1: every launch before it is enqueued and when it ended, with the heap's
   * statistics, so that a launch that never ends shows which it is and what the heap held */
  int trace = bs_trace();
  char name[64] = "?";
  if (trace) {
    clGetKernelInfo(k, CL_KERNEL_FUNCTION_NAME, sizeof name - 1, name, NULL);
    fprintf(stderr, "[trace] %s global %zu local %zu: enqueued\n", name, global, local);
  }
  cl_event ev;
  BS_CHECK(clEnqueueNDRangeKernel(s->q, k, 1, NULL, &global, &local, 0, NULL, &ev));
  double ms = bs_event_ms(ev);
  clReleaseEvent(ev);
  if (trace)
    fprintf(stderr, "[trace] %s: %.3f ms; heap %llu B in %llu blocks, %llu failed\n", name, ms,
            (unsigned long long)bs_heap_info(s, CL_DEVICE_HEAP_INFO_BYTES_IN_USE_EXT),
            (unsigned long long)bs_heap_info(s, CL_DEVICE_HEAP_INFO_LIVE_ALLOCATIONS_EXT),
            (unsigned long long)bs_heap_info(s, CL_DEVICE_HEAP_INFO_FAILED_ALLOCATIONS_EXT));
  return ms;
}

cl_ulong bs_heap_info(bs_session *s, cl_device_heap_info_ext what) {
  cl_ulong v = 0;
  BS_CHECK(s->dev->heap_info(s->q, what, sizeof v, &v, NULL));
  return v;
}

void bs_heap_reset(bs_session *s) {
  BS_CHECK(s->dev->reset_heap(s->q, 0, NULL, NULL));
  BS_CHECK(clFinish(s->q));
}
