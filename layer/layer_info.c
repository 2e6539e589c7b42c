/*
 * layer_info.c — helpers for answering clGet*Info-style queries by the OpenCL rules:
 * a size query returns the size; a buffer smaller than the answer gives CL_INVALID_VALUE and
 * is left untouched; param_value_size_ret always receives the full size.
 */
#include <stdlib.h>
#include <string.h>

#include "cldm_layer.h"

cl_int cldm_info_return(const void *src, size_t size, size_t param_value_size, void *param_value,
                        size_t *param_value_size_ret) {
  if (param_value) {
    if (param_value_size < size)
      return CL_INVALID_VALUE;
    memcpy(param_value, src, size);
  }
  if (param_value_size_ret)
    *param_value_size_ret = size;
  return CL_SUCCESS;
}

cl_int cldm_info_fetch(cldm_info_query_fn query, const void *obj, cl_uint name, void **out,
                       size_t *out_size) {
  size_t size = 0;
  *out = NULL;
  *out_size = 0;
  cl_int err = query(obj, name, 0, NULL, &size);
  if (err != CL_SUCCESS)
    return err;
  /* One spare byte so string answers are always terminated, even from a sloppy driver. */
  char *buf = calloc(1, size + 1);
  if (!buf)
    return CL_OUT_OF_HOST_MEMORY;
  if (size) {
    err = query(obj, name, size, buf, NULL);
    if (err != CL_SUCCESS) {
      free(buf);
      return err;
    }
  }
  *out = buf;
  *out_size = size;
  return CL_SUCCESS;
}

cl_int cldm_info_context_query(const void *obj, cl_uint name, size_t size, void *value,
                               size_t *size_ret) {
  return cldm_next->clGetContextInfo((cl_context)obj, name, size, value, size_ret);
}

cl_int cldm_info_kernel_query(const void *obj, cl_uint name, size_t size, void *value,
                              size_t *size_ret) {
  return cldm_next->clGetKernelInfo((cl_kernel)obj, name, size, value, size_ret);
}

cl_platform_id cldm_info_context_platform(cl_context context) {
  void *devs = NULL;
  size_t size = 0;
  cl_platform_id platform = NULL;
  if (cldm_info_fetch(cldm_info_context_query, context, CL_CONTEXT_DEVICES, &devs, &size) ==
          CL_SUCCESS &&
      size >= sizeof(cl_device_id))
    cldm_next->clGetDeviceInfo(((cl_device_id *)devs)[0], CL_DEVICE_PLATFORM, sizeof(platform),
                               &platform, NULL);
  free(devs);
  return platform;
}

cl_int cldm_info_queue_target(cl_command_queue queue, cl_context *context, cl_device_id *device) {
  if (cldm_next->clGetCommandQueueInfo(queue, CL_QUEUE_CONTEXT, sizeof(*context), context, NULL) !=
          CL_SUCCESS ||
      cldm_next->clGetCommandQueueInfo(queue, CL_QUEUE_DEVICE, sizeof(*device), device, NULL) !=
          CL_SUCCESS)
    return CL_INVALID_COMMAND_QUEUE;
  return CL_SUCCESS;
}
