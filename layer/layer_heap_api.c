/*
 * layer_heap_api.c — the extension's host entry points (spec 1.2-1.4), reached through
 * clGetExtensionFunctionAddress* (layer_extfn.c). clSetDeviceHeapSizeEXT applies the rules of
 * layer_device.c (cldm_device_set_heap_size) and logs a refusal; clGetDeviceHeapInfoEXT and
 * clEnqueueResetDeviceHeapEXT check their queue (whose device must support the extension) and
 * their other arguments here, and leave the heap work to layer_heap.c.
 */
#include "cldm_layer.h"

cl_int CL_API_CALL cldm_clSetDeviceHeapSizeEXT(cl_device_id device, size_t size) {
  cl_int err = cldm_device_set_heap_size(device, size);
  if (err == CL_INVALID_OPERATION) { /* heaps of released contexts whose commands ran late */
    cldm_lifetime_sweep(device, 1);
    err = cldm_device_set_heap_size(device, size);
  }
  if (err != CL_SUCCESS)
    cldm_log(CLDM_LOG_INFO, "clSetDeviceHeapSizeEXT(%zu) -> %d", size, err);
  return err;
}

/* Validates the queue and returns its device and context; CL_INVALID_DEVICE if the device
 * does not support the extension. */
static cl_int cldm_heap_api_queue_target(cl_command_queue queue, cl_device_id *device,
                                         cl_context *context) {
  if (!queue || !CLDM_NEXT_HAS(clGetCommandQueueInfo))
    return CL_INVALID_COMMAND_QUEUE;
  if (cldm_info_queue_target(queue, context, device) != CL_SUCCESS)
    return CL_INVALID_COMMAND_QUEUE;
  cldm_device_state st;
  return cldm_device_snapshot(*device, &st) == CL_SUCCESS && st.supported ? CL_SUCCESS
                                                                          : CL_INVALID_DEVICE;
}

cl_int CL_API_CALL cldm_clGetDeviceHeapInfoEXT(cl_command_queue queue,
                                               cl_device_heap_info_ext param_name,
                                               size_t param_value_size, void *param_value,
                                               size_t *param_value_size_ret) {
  cl_device_id device;
  cl_context context;
  cl_int err = cldm_heap_api_queue_target(queue, &device, &context);
  if (err != CL_SUCCESS)
    return err;
  if (param_name < CL_DEVICE_HEAP_INFO_SIZE_EXT || param_name > CL_DEVICE_HEAP_INFO_BAD_ALLOCS_EXT)
    return CL_INVALID_VALUE;
  if (param_value && param_value_size < sizeof(cl_ulong))
    return CL_INVALID_VALUE;
  cl_ulong value = 0;
  err = cldm_heap_info(queue, context, device, param_name, &value);
  if (err != CL_SUCCESS)
    return err;
  return cldm_info_return(&value, sizeof(value), param_value_size, param_value,
                          param_value_size_ret);
}

cl_int CL_API_CALL cldm_clEnqueueResetDeviceHeapEXT(cl_command_queue queue, cl_uint num_events,
                                                    const cl_event *wait_list, cl_event *event) {
  cl_device_id device;
  cl_context context;
  cl_int err = cldm_heap_api_queue_target(queue, &device, &context);
  if (err != CL_SUCCESS)
    return err;
  if ((num_events == 0) != (wait_list == NULL))
    return CL_INVALID_EVENT_WAIT_LIST;
  return cldm_heap_enqueue_reset(queue, context, device, num_events, wait_list, event);
}
