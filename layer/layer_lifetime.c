/*
 * layer_lifetime.c — release interception that lets heaps die with their context
 * (layer_heap.c explains why the layer must watch releases). After the application releases
 * any object that holds a reference on a context that has heaps (context, queue, memory
 * object, sampler, event; programs and kernels in their own modules), the layer checks
 * whether only the heaps' references remain and frees them if so. When no heap exists
 * anywhere, every wrapper here is one relaxed load away from the driver's function.
 */
#include "cldm_layer.h"

static cl_int CL_API_CALL clReleaseContext_wrap(cl_context context)
{
  if (cldm_heaps_exist())
    cldm_heap_reap_before_context_release(context);
  return cldm_next->clReleaseContext(context);
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
  d->clReleaseContext = clReleaseContext_wrap;
  d->clReleaseCommandQueue = clReleaseCommandQueue_wrap;
  d->clReleaseMemObject = clReleaseMemObject_wrap;
  d->clReleaseSampler = clReleaseSampler_wrap;
  d->clReleaseEvent = clReleaseEvent_wrap;
}
