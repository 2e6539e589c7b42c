/*
 * layer_enqueue.c — launching kernels that allocate (spec 1.7): clEnqueueNDRangeKernel and
 * clEnqueueTask bind the heap of the queue's context and device to the kernel's hidden
 * argument, creating and initialising the heap first if it does not exist yet. The kernel's
 * mutex is held from setting the argument to the enqueue, which captures argument values, so
 * several host threads may enqueue one kernel object on different queues at once.
 * Kernels without a record (the common case) go straight down.
 *
 * Each launch holds its heap until the launch completed (layer_heap.c): the layer asks for
 * the launch's event where the application did not, and lets go of the hold from the event's
 * completion callback, so a context released while its launches still wait (for a user event,
 * say) keeps its heap's memory until they are done, and no thread of the application waits.
 *
 * Command buffers (cl_khr_command_buffer) are not intercepted: a recorded kernel keeps the
 * heap bound at its last enqueue (spec 4).
 *
 * Checked mode (CLDM_CHECK=1) and CLDM_OOM=report|abort (spec 2.4, 2.5) make such a launch
 * synchronous: the layer waits for the kernel, then has the heap's events reported
 * (cldm_heap_after_kernel). Watched launches are serialised by one lock, so each report holds
 * the events of its kernel alone. Otherwise a launch of a kernel whose work-items may stop at a
 * throwing operator new (spec 2.2) is watched without waiting (layer_new.c).
 */
#include <stdlib.h>

#include "cldm_layer.h"

static pthread_mutex_t cldm_enqueue_watch_lock = PTHREAD_MUTEX_INITIALIZER;

/* 1 if launches of kernels that take the heap are watched (checked mode or CLDM_OOM). */
static int cldm_enqueue_watched(void) {
  return cldm_config_check() || cldm_config_oom() != CLDM_OOM_NULL;
}

/* A watched launch, after its enqueue succeeded with event `ev`: waits for it and reports.
 * 1 if the launch has completed (successfully or not), 0 if that is not known. */
static int cldm_enqueue_after(cl_command_queue queue, cl_kernel kernel, cl_event ev) {
  cl_int err = cldm_next->clWaitForEvents(1, &ev);
  if (err == CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST)
    return 1; /* the kernel failed: the application sees it through its event */
  if (err != CL_SUCCESS)
    return 0;
  cl_context context;
  cl_device_id device;
  if (cldm_info_queue_target(queue, &context, &device) != CL_SUCCESS)
    return 1;
  char *name = NULL;
  size_t size = 0;
  if (cldm_info_fetch(cldm_info_kernel_query, kernel, CL_KERNEL_FUNCTION_NAME, (void **)&name,
                      &size) != CL_SUCCESS)
    name = NULL;
  err = cldm_heap_after_kernel(queue, context, device, name ? name : "?");
  if (err != CL_SUCCESS)
    cldm_log(CLDM_LOG_ERROR, "checked mode: cannot read the heap after kernel %s: error %d",
             name ? name : "?", err);
  free(name);
  return 1;
}

/* Binds the heap for `queue` to `rec`'s hidden argument, the heap held in *binding on success;
 * call with rec->lock held. */
static cl_int cldm_enqueue_bind(cl_command_queue queue, cl_kernel kernel, cldm_kernel *rec,
                                cldm_heap_binding *binding) {
  cl_context context;
  cl_device_id device;
  cl_int err = cldm_info_queue_target(queue, &context, &device);
  if (err != CL_SUCCESS)
    return err;
  err = cldm_heap_acquire(context, device, binding);
  if (err != CL_SUCCESS)
    return err;
  err = cldm_heap_bind(kernel, rec->heap_arg_index, binding);
  if (err != CL_SUCCESS)
    cldm_heap_let_go(binding);
  return err;
}

/* After the enqueue of a launch bound with `binding` (`err` its result, `ev` its event): the
 * report of a watched launch, and the heap's hold let go when the launch is over. */
static void cldm_enqueue_done(cl_command_queue queue, cl_kernel kernel, int watched, cl_int err,
                              cl_event ev, const cldm_heap_binding *binding) {
  if (err != CL_SUCCESS)
    cldm_heap_let_go(binding);
  else if (watched && cldm_enqueue_after(queue, kernel, ev))
    cldm_heap_let_go(binding);
  else
    cldm_heap_hold_until(binding, ev);
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
  int watched = cldm_enqueue_watched(), stops = !watched && rec->throwing_new;
  cl_event own = NULL, *ev = event ? event : &own;
  cldm_heap_binding binding;
  pthread_mutex_lock(&rec->lock);
  if (watched)
    pthread_mutex_lock(&cldm_enqueue_watch_lock);
  cl_int err = cldm_enqueue_bind(queue, kernel, rec, &binding);
  if (err == CL_SUCCESS) {
    err = cldm_next->clEnqueueNDRangeKernel(queue, kernel, work_dim, offset, global_size,
                                            local_size, num_events, wait_list, ev);
    if (stops && err == CL_SUCCESS)
      cldm_new_watch_launch(queue, *ev, rec->throwing_new);
    cldm_enqueue_done(queue, kernel, watched, err, err == CL_SUCCESS ? *ev : NULL, &binding);
  }
  if (watched)
    pthread_mutex_unlock(&cldm_enqueue_watch_lock);
  pthread_mutex_unlock(&rec->lock);
  if (own)
    cldm_next->clReleaseEvent(own);
  return err;
}

cl_int CL_API_CALL clEnqueueTask_wrap(cl_command_queue queue, cl_kernel kernel, cl_uint num_events,
                                      const cl_event *wait_list, cl_event *event) {
  cldm_kernel *rec = cldm_kernel_find(kernel);
  if (!rec)
    return cldm_next->clEnqueueTask(queue, kernel, num_events, wait_list, event);
  int watched = cldm_enqueue_watched(), stops = !watched && rec->throwing_new;
  cl_event own = NULL, *ev = event ? event : &own;
  cldm_heap_binding binding;
  pthread_mutex_lock(&rec->lock);
  if (watched)
    pthread_mutex_lock(&cldm_enqueue_watch_lock);
  cl_int err = cldm_enqueue_bind(queue, kernel, rec, &binding);
  if (err == CL_SUCCESS) {
    err = cldm_next->clEnqueueTask(queue, kernel, num_events, wait_list, ev);
    if (stops && err == CL_SUCCESS)
      cldm_new_watch_launch(queue, *ev, rec->throwing_new);
    cldm_enqueue_done(queue, kernel, watched, err, err == CL_SUCCESS ? *ev : NULL, &binding);
  }
  if (watched)
    pthread_mutex_unlock(&cldm_enqueue_watch_lock);
  pthread_mutex_unlock(&rec->lock);
  if (own)
    cldm_next->clReleaseEvent(own);
  return err;
}
