/*
 * session_multi.c — case 9's context of several devices (spec 1.2: one heap per (context,
 * device)): every device's heap size set before the context exists, one context of all the
 * devices, the suite's two programs created once and built for all of them, and one view per
 * device, a bs_session with the device's own profiling queue and kernel objects that shares the
 * context and the programs, so that session.c's helpers (buffers, launches, heap statistics and
 * reset) work on one device of the context, from a host thread of its own.
 */
#include <stdlib.h>
#include <string.h>

#include "suite.h"

void bs_multi_open(bs_multi *m, bs_dev *devs, int count, const bp_plan *plan,
                   const char *kernels_dir, uint64_t heap) {
  memset(m, 0, sizeof *m);
  m->count = count;
  m->dev = devs;
  cl_device_id ids[BS_MAX_DEVICES] = {0};
  for (int d = 0; d < count; d++) {
    ids[d] = devs[d].device;
    cl_int err = devs[d].set_heap(devs[d].device, (size_t)heap);
    if (err != CL_SUCCESS) {
      fprintf(stderr, "cldm-bench-suite: clSetDeviceHeapSizeEXT(device %d, %llu) failed: %d\n", d,
              (unsigned long long)heap, err);
      exit(2);
    }
  }
  cl_int err;
  m->ctx = clCreateContext(NULL, (cl_uint)count, ids, NULL, NULL, &err);
  BS_CHECK(err);
  m->alloc = bs_program_il(m->ctx, (cl_uint)count, ids, kernels_dir, "alloc.spv");
  m->base = bs_program_il(m->ctx, (cl_uint)count, ids, kernels_dir, "base.spv");
  cl_queue_properties prof[] = {CL_QUEUE_PROPERTIES, CL_QUEUE_PROFILING_ENABLE, 0};
  for (int d = 0; d < count; d++) {
    bs_session *v = &m->view[d];
    v->dev = &devs[d];
    v->plan = plan;
    v->ctx = m->ctx;
    v->alloc = m->alloc;
    v->base = m->base;
    v->heap_setting = heap;
    v->q = clCreateCommandQueueWithProperties(m->ctx, devs[d].device, prof, &err);
    BS_CHECK(err);
    v->heap_usable = bs_heap_info(v, CL_DEVICE_HEAP_INFO_SIZE_EXT);
  }
}

void bs_multi_close(bs_multi *m) {
  for (int d = 0; d < m->count; d++) {
    bs_session *v = &m->view[d];
    BS_CHECK(clFinish(v->q));
    for (int i = 0; i < v->nkernels; i++)
      clReleaseKernel(v->kernels[i].k);
    clReleaseCommandQueue(v->q);
  }
  clReleaseProgram(m->alloc);
  clReleaseProgram(m->base);
  bs_wait_context_quiet(m->ctx);
  clReleaseContext(m->ctx);
  memset(m, 0, sizeof *m);
}
