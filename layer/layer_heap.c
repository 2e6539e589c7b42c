/*
 * layer_heap.c — heaps per (context, device).
 *
 * This version has no allocating kernels yet, so no heap is ever created: statistics report
 * what spec 1.3 says for a (context, device) without a heap (the size a heap would get, all
 * counters 0), and a reset is an ordered no-op (a marker, spec 1.4).
 */
#include "cldm_layer.h"

cl_int cldm_heap_info(cl_command_queue queue, cl_context context, cl_device_id device,
                      cl_device_heap_info_ext name, cl_ulong *value)
{
  (void)context;
  /* "as of all commands enqueued before on that queue" */
  cl_int err = cldm_next->clFinish(queue);
  if (err != CL_SUCCESS)
    return err;
  *value = name == CL_DEVICE_HEAP_INFO_SIZE_EXT ? (cl_ulong)cldm_device_heap_size(device) : 0;
  return CL_SUCCESS;
}

cl_int cldm_heap_enqueue_reset(cl_command_queue queue, cl_context context, cl_device_id device,
                               cl_uint num_events, const cl_event *wait_list, cl_event *event)
{
  (void)context;
  (void)device;
  if (!CLDM_NEXT_HAS(clEnqueueMarkerWithWaitList))
    return CL_INVALID_OPERATION;
  return cldm_next->clEnqueueMarkerWithWaitList(queue, num_events, wait_list, event);
}
