/*
 * layer_lifetime.c — release interception that lets heaps die with their context
 * (layer_heap.c explains why the layer must watch releases). After the application releases
 * any object that holds a reference on a context that has heaps (context, queue, memory
 * object, sampler, event, program, kernel), the layer checks whether only the heaps'
 * references remain and frees them if so: every such release goes through
 * cldm_lifetime_release (programs and kernels call it from their own wrappers, which also
 * keep their records). When no heap exists anywhere, the check is one relaxed load.
 *
 * It also counts the handles to each context the application holds (clCreateContext,
 * clCreateContextFromType, clRetainContext, clReleaseContext): heaps are only considered for
 * freeing once that count is 0. A context the driver still held at the application's last
 * release (its commands still running) is looked at again by sweeps: at each context creation
 * and when clSetDeviceHeapSizeEXT would refuse because of a live heap.
 */
#include <stdint.h>
#include <stdlib.h>

#include "cldm_layer.h"

static cldm_map cldm_contexts = CLDM_MAP_INIT; /* context -> application handle count */

/* Adds `delta` to the application's count for `context`; returns the new count. */
static cl_uint cldm_lifetime_app_add(cl_context context, int delta) {
  pthread_mutex_lock(&cldm_contexts.lock);
  uintptr_t n = (uintptr_t)cldm_map_get(&cldm_contexts, context) + (uintptr_t)(intptr_t)delta;
  if ((intptr_t)n <= 0) {
    cldm_map_remove(&cldm_contexts, context);
    n = 0;
  } else if (cldm_map_put(&cldm_contexts, context, (void *)n) != 0)
    cldm_log(CLDM_LOG_ERROR, "out of host memory tracking context %p", (void *)context);
  pthread_mutex_unlock(&cldm_contexts.lock);
  return (cl_uint)n;
}

/* Handles to `context` the application holds (created + retained - released through the
 * layer; every context is created through it, since loaders initialise layers first). */
static cl_uint cldm_lifetime_app_refs(cl_context context) {
  pthread_mutex_lock(&cldm_contexts.lock);
  void *v = cldm_map_get(&cldm_contexts, context);
  pthread_mutex_unlock(&cldm_contexts.lock);
  return (cl_uint)(uintptr_t)v;
}

/* Frees the heaps of `context` if the application holds no handle to it any more and, after
 * `pending` more releases of it by the caller, only the heaps' own references would remain;
 * with `wait`, after a moment for the driver's own references (a queue whose commands still
 * run, an event its worker thread still holds): the application's last release of the context
 * itself waits, and so does the sweep of a refused clSetDeviceHeapSizeEXT. */
static void cldm_lifetime_reap(cl_context context, cl_uint pending, int wait) {
  if (cldm_heap_any() && cldm_lifetime_app_refs(context) <= pending)
    cldm_heap_reap(context, pending, wait);
}

void cldm_lifetime_sweep(cl_device_id device, int wait) {
  if (!cldm_heap_any())
    return;
  size_t n = 0;
  cl_context *contexts = cldm_heap_contexts(device, &n);
  for (size_t i = 0; i < n; i++)
    cldm_lifetime_reap(contexts[i], 0, wait);
  free(contexts);
}

/* clGet<Object>Info of the next table for an object of `kind`. */
static cl_int cldm_lifetime_info(cldm_object_kind kind, void *object, cl_uint name, size_t size,
                                 void *value) {
  switch (kind) {
  case CLDM_OBJECT_QUEUE:
    return cldm_next->clGetCommandQueueInfo(object, name, size, value, NULL);
  case CLDM_OBJECT_MEM:
    return cldm_next->clGetMemObjectInfo(object, name, size, value, NULL);
  case CLDM_OBJECT_SAMPLER:
    return cldm_next->clGetSamplerInfo(object, name, size, value, NULL);
  case CLDM_OBJECT_EVENT:
    return cldm_next->clGetEventInfo(object, name, size, value, NULL);
  case CLDM_OBJECT_PROGRAM:
    return cldm_next->clGetProgramInfo(object, name, size, value, NULL);
  default:
    return cldm_next->clGetKernelInfo(object, name, size, value, NULL);
  }
}

/* clRelease<Object> of the next table. */
static cl_int cldm_lifetime_release_next(cldm_object_kind kind, void *object) {
  switch (kind) {
  case CLDM_OBJECT_QUEUE:
    return cldm_next->clReleaseCommandQueue(object);
  case CLDM_OBJECT_MEM:
    return cldm_next->clReleaseMemObject(object);
  case CLDM_OBJECT_SAMPLER:
    return cldm_next->clReleaseSampler(object);
  case CLDM_OBJECT_EVENT:
    return cldm_next->clReleaseEvent(object);
  case CLDM_OBJECT_PROGRAM:
    return cldm_next->clReleaseProgram(object);
  default:
    return cldm_next->clReleaseKernel(object);
  }
}

/* The <OBJECT>_CONTEXT queries, by cldm_object_kind. */
static const cl_uint cldm_lifetime_context_param[] = {CL_QUEUE_CONTEXT,   CL_MEM_CONTEXT,
                                                      CL_SAMPLER_CONTEXT, CL_EVENT_CONTEXT,
                                                      CL_PROGRAM_CONTEXT, CL_KERNEL_CONTEXT};

cl_int cldm_lifetime_release(cldm_object_kind kind, void *object) {
  cl_context context = NULL;
  if (cldm_heap_any())
    cldm_lifetime_info(kind, object, cldm_lifetime_context_param[kind], sizeof(context), &context);
  cl_int err = cldm_lifetime_release_next(kind, object);
  if (err == CL_SUCCESS && context)
    cldm_lifetime_reap(context, 0, 0);
  return err;
}

cl_context CL_API_CALL clCreateContext_wrap(
    const cl_context_properties *properties, cl_uint num_devices, const cl_device_id *devices,
    void(CL_CALLBACK *pfn_notify)(const char *, const void *, size_t, void *), void *user_data,
    cl_int *errcode_ret) {
  cldm_lifetime_sweep(NULL, 0); /* heaps whose contexts' last commands have completed since */
  cl_context c = cldm_next->clCreateContext(properties, num_devices, devices, pfn_notify, user_data,
                                            errcode_ret);
  if (c)
    cldm_lifetime_app_add(c, 1);
  return c;
}

cl_context CL_API_CALL clCreateContextFromType_wrap(
    const cl_context_properties *properties, cl_device_type type,
    void(CL_CALLBACK *pfn_notify)(const char *, const void *, size_t, void *), void *user_data,
    cl_int *errcode_ret) {
  cldm_lifetime_sweep(NULL, 0);
  cl_context c =
      cldm_next->clCreateContextFromType(properties, type, pfn_notify, user_data, errcode_ret);
  if (c)
    cldm_lifetime_app_add(c, 1);
  return c;
}

cl_int CL_API_CALL clRetainContext_wrap(cl_context context) {
  cl_int err = cldm_next->clRetainContext(context);
  if (err == CL_SUCCESS)
    cldm_lifetime_app_add(context, 1);
  return err;
}

cl_int CL_API_CALL clReleaseContext_wrap(cl_context context) {
  cldm_new_settle_context(context);  /* a throwing new's failure is reported first (spec 2.2) */
  cldm_lifetime_reap(context, 1, 1); /* counting the release that follows */
  cl_int err = cldm_next->clReleaseContext(context);
  if (err == CL_SUCCESS)
    cldm_lifetime_app_add(context, -1);
  return err;
}

cl_int CL_API_CALL clReleaseCommandQueue_wrap(cl_command_queue queue) {
  return cldm_lifetime_release(CLDM_OBJECT_QUEUE, queue);
}

cl_int CL_API_CALL clReleaseMemObject_wrap(cl_mem mem) {
  return cldm_lifetime_release(CLDM_OBJECT_MEM, mem);
}

cl_int CL_API_CALL clReleaseSampler_wrap(cl_sampler sampler) {
  return cldm_lifetime_release(CLDM_OBJECT_SAMPLER, sampler);
}

cl_int CL_API_CALL clReleaseEvent_wrap(cl_event event) {
  return cldm_lifetime_release(CLDM_OBJECT_EVENT, event);
}
