/*
 * layer_enqueue.c — launching kernels that allocate (spec 1.7): clEnqueueNDRangeKernel and
 * clEnqueueTask bind the heap of the queue's context and device to the kernel's hidden
 * argument, creating and initialising the heap first if it does not exist yet. The kernel's
 * mutex is held from setting the argument to the enqueue, which captures argument values, so
 * several host threads may enqueue one kernel object on different queues at once.
 * Kernels without a record (the common case) go straight down.
 *
 * Command buffers (cl_khr_command_buffer) are not intercepted: a recorded kernel keeps the
 * heap bound at its last enqueue (spec 4).
 */
#include "cldm_layer.h"

/* Binds the heap for `queue` to `rec`'s hidden argument; call with rec->lock held. */
static cl_int cldm_enqueue_bind(cl_command_queue queue, cl_kernel kernel, cldm_kernel *rec) {
  cl_context context;
  cl_device_id device;
  cl_int err =
      cldm_next->clGetCommandQueueInfo(queue, CL_QUEUE_CONTEXT, sizeof(context), &context, NULL);
  if (err == CL_SUCCESS)
    err = cldm_next->clGetCommandQueueInfo(queue, CL_QUEUE_DEVICE, sizeof(device), &device, NULL);
  if (err != CL_SUCCESS)
    return CL_INVALID_COMMAND_QUEUE;
  cldm_heap_binding binding;
  err = cldm_heap_acquire(context, device, &binding);
  if (err != CL_SUCCESS)
    return err;
  return cldm_heap_bind(kernel, rec->heap_arg_index, &binding);
}

cl_int CL_API_CALL clEnqueueNDRangeKernel_wrap(cl_command_queue queue, cl_kernel kernel,
                                               cl_uint work_dim, const size_t *offset,
                                               const size_t *global_size, const size_t *local_size,
                                               cl_uint num_events, const cl_event *wait_list,
                                               cl_event *event) {
  cldm_kernel *rec = cldm_kernel_find(kernel);
  if (!rec)
    return cldm_next->clEnqueueNDRangeKernel(queue, kernel, work_dim, offset, global_size,
                                             local_size, num_events, wait_list, event);
  pthread_mutex_lock(&rec->lock);
  cl_int err = cldm_enqueue_bind(queue, kernel, rec);
  if (err == CL_SUCCESS)
    err = cldm_next->clEnqueueNDRangeKernel(queue, kernel, work_dim, offset, global_size,
                                            local_size, num_events, wait_list, event);
  pthread_mutex_unlock(&rec->lock);
  return err;
}

cl_int CL_API_CALL clEnqueueTask_wrap(cl_command_queue queue, cl_kernel kernel, cl_uint num_events,
                                      const cl_event *wait_list, cl_event *event) {
  cldm_kernel *rec = cldm_kernel_find(kernel);
  if (!rec)
    return cldm_next->clEnqueueTask(queue, kernel, num_events, wait_list, event);
  pthread_mutex_lock(&rec->lock);
  cl_int err = cldm_enqueue_bind(queue, kernel, rec);
  if (err == CL_SUCCESS)
    err = cldm_next->clEnqueueTask(queue, kernel, num_events, wait_list, event);
  pthread_mutex_unlock(&rec->lock);
  return err;
}
