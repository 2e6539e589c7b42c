/*
 * layer_lifetime.c — release interception that lets heaps die with their context
 * (layer_heap.c explains why the layer must watch releases). After the application releases
 * any object that holds a reference on a context that has heaps (context, queue, memory
 * object, sampler, event; programs and kernels in their own modules), the layer checks
 * whether only the heaps' references remain and frees them if so. When no heap exists
 * anywhere, every wrapper here is one relaxed load away from the driver's function.
 *
 * It also counts the handles to each context the application holds (clCreateContext,
 * clCreateContextFromType, clRetainContext, clReleaseContext): heaps are only considered for
 * freeing once that count is 0.
 */
#include <stdint.h>

#include "cldm_layer.h"

static cldm_map cldm_contexts = CLDM_MAP_INIT; /* context -> application handle count */

/* Adds `delta` to the application's count for `context`; returns the new count. */
static cl_uint cldm_context_app_add(cl_context context, int delta)
{
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

cl_uint cldm_context_app_refs(cl_context context)
{
  pthread_mutex_lock(&cldm_contexts.lock);
  void *v = cldm_map_get(&cldm_contexts, context);
  pthread_mutex_unlock(&cldm_contexts.lock);
  return (cl_uint)(uintptr_t)v;
}

static cl_context CL_API_CALL clCreateContext_wrap(
    const cl_context_properties *properties, cl_uint num_devices, const cl_device_id *devices,
    void(CL_CALLBACK *pfn_notify)(const char *, const void *, size_t, void *), void *user_data,
    cl_int *errcode_ret)
{
  cl_context c = cldm_next->clCreateContext(properties, num_devices, devices, pfn_notify,
                                            user_data, errcode_ret);
  if (c)
    cldm_context_app_add(c, 1);
  return c;
}

static cl_context CL_API_CALL clCreateContextFromType_wrap(
    const cl_context_properties *properties, cl_device_type type,
    void(CL_CALLBACK *pfn_notify)(const char *, const void *, size_t, void *), void *user_data,
    cl_int *errcode_ret)
{
  cl_context c = cldm_next->clCreateContextFromType(properties, type, pfn_notify, user_data,
                                                    errcode_ret);
  if (c)
    cldm_context_app_add(c, 1);
  return c;
}

static cl_int CL_API_CALL clRetainContext_wrap(cl_context context)
{
  cl_int err = cldm_next->clRetainContext(context);
  if (err == CL_SUCCESS)
    cldm_context_app_add(context, 1);
  return err;
}

static cl_int CL_API_CALL clReleaseContext_wrap(cl_context context)
{
  if (cldm_heaps_exist())
    cldm_heap_reap_before_context_release(context);
  cl_int err = cldm_next->clReleaseContext(context);
  if (err == CL_SUCCESS)
    cldm_context_app_add(context, -1);
  return err;
}

static cl_int CL_API_CALL clReleaseCommandQueue_wrap(cl_command_queue queue)
{
  cl_context context = NULL;
  if (cldm_heaps_exist())
    cldm_next->clGetCommandQueueInfo(queue, CL_QUEUE_CONTEXT, sizeof(context), &context, NULL);
  cl_int err = cldm_next->clReleaseCommandQueue(queue);
  if (err == CL_SUCCESS && context)
    cldm_heap_reap(context);
  return err;
}

static cl_int CL_API_CALL clReleaseMemObject_wrap(cl_mem mem)
{
  cl_context context = NULL;
  if (cldm_heaps_exist())
    cldm_next->clGetMemObjectInfo(mem, CL_MEM_CONTEXT, sizeof(context), &context, NULL);
  cl_int err = cldm_next->clReleaseMemObject(mem);
  if (err == CL_SUCCESS && context)
    cldm_heap_reap(context);
  return err;
}

static cl_int CL_API_CALL clReleaseSampler_wrap(cl_sampler sampler)
{
  cl_context context = NULL;
  if (cldm_heaps_exist())
    cldm_next->clGetSamplerInfo(sampler, CL_SAMPLER_CONTEXT, sizeof(context), &context, NULL);
  cl_int err = cldm_next->clReleaseSampler(sampler);
  if (err == CL_SUCCESS && context)
    cldm_heap_reap(context);
  return err;
}

static cl_int CL_API_CALL clReleaseEvent_wrap(cl_event event)
{
  cl_context context = NULL;
  if (cldm_heaps_exist())
    cldm_next->clGetEventInfo(event, CL_EVENT_CONTEXT, sizeof(context), &context, NULL);
  cl_int err = cldm_next->clReleaseEvent(event);
  if (err == CL_SUCCESS && context)
    cldm_heap_reap(context);
  return err;
}

void cldm_dispatch_fill_lifetime(cl_icd_dispatch *d)
{
  d->clCreateContext = clCreateContext_wrap;
  d->clCreateContextFromType = clCreateContextFromType_wrap;
  d->clRetainContext = clRetainContext_wrap;
  d->clReleaseContext = clReleaseContext_wrap;
  d->clReleaseCommandQueue = clReleaseCommandQueue_wrap;
  d->clReleaseMemObject = clReleaseMemObject_wrap;
  d->clReleaseSampler = clReleaseSampler_wrap;
  d->clReleaseEvent = clReleaseEvent_wrap;
}
