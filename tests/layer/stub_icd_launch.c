/*
 * stub_icd_launch.c — queues, SVM allocations, events and launches of the stub ICD, enough for
 * the layer's heaps and launches (layer_heap.c, layer_enqueue.c), counted as NVIDIA's driver
 * counts: queues, SVM allocations and events hold their context out of
 * CL_CONTEXT_REFERENCE_COUNT (stub_context_hold). Nothing runs on a device: a launch "runs"
 * when the user event it waits for is set (at once if it waits for none), and then looks at
 * the SVM pointers among its arguments: one freed since it was set (the memory a kernel would
 * use) is counted (STUB_LAUNCH_STATS_FUNCTION). Copies happen at once, whatever their wait
 * lists. Entries that touch counts, the SVM list or pending launches hold the stub's one
 * lock (stub_lock): the layer frees heaps from a thread of its own.
 */
#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 300
#endif
#ifndef CL_USE_DEPRECATED_OPENCL_1_2_APIS
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#endif
#include <stdlib.h>
#include <string.h>

#include "stub_icd.h"
#include "stub_icd_launch.h"

struct _cl_command_queue {
  cl_icd_dispatch *dispatch;
  cl_context context;
  cl_device_id device;
  cl_uint refs;
};

#define STUB_EVENT_CALLBACKS 4

struct _cl_event {
  cl_icd_dispatch *dispatch;
  cl_context context;
  cl_command_queue queue; /* NULL for user events */
  cl_int status;
  cl_uint refs;
  struct {
    void(CL_CALLBACK *fn)(cl_event, cl_int, void *);
    void *data;
  } callbacks[STUB_EVENT_CALLBACKS];
  int num_callbacks;
  /* a launch: the SVM arguments it will use, the user event it waits for */
  const void *svm[STUB_KERNEL_SVM_ARGS];
  cl_event gate;
  cl_event next_pending;
};

typedef struct stub_svm {
  void *ptr;
  cl_context context;
  struct stub_svm *next;
} stub_svm;

static cl_icd_dispatch *stub_launch_dispatch;
static stub_svm *stub_svms;   /* allocations alive */
static cl_event stub_pending; /* launches waiting for a user event */
static cl_uint stub_runs, stub_runs_on_freed, stub_svm_count;

void stub_launch_stats(cl_uint stats[3]) {
  stub_lock();
  stats[0] = stub_runs;
  stats[1] = stub_runs_on_freed;
  stats[2] = stub_svm_count;
  stub_unlock();
}

/* ---- queues ----------------------------------------------------------------------------------- */

static cl_command_queue CL_API_CALL stub_CreateCommandQueueWithProperties(
    cl_context c, cl_device_id d, const cl_queue_properties *props, cl_int *err) {
  if (d != stub_context_device(c)) {
    if (err)
      *err = CL_INVALID_DEVICE;
    return NULL;
  }
  struct _cl_command_queue *q = calloc(1, sizeof(*q));
  q->dispatch = stub_launch_dispatch;
  q->context = c;
  q->device = d;
  q->refs = 1;
  stub_context_hold(c, 1);
  if (err)
    *err = CL_SUCCESS;
  return q;
}

static cl_command_queue CL_API_CALL stub_CreateCommandQueue(cl_context c, cl_device_id d,
                                                            cl_command_queue_properties props,
                                                            cl_int *err) {
  return stub_CreateCommandQueueWithProperties(c, d, NULL, err);
}

static cl_int CL_API_CALL stub_RetainCommandQueue(cl_command_queue q) {
  stub_lock();
  q->refs++;
  stub_unlock();
  return CL_SUCCESS;
}

static cl_int CL_API_CALL stub_ReleaseCommandQueue(cl_command_queue q) {
  stub_lock();
  if (--q->refs == 0) {
    cl_context c = q->context;
    free(q);
    stub_context_hold(c, -1);
  }
  stub_unlock();
  return CL_SUCCESS;
}

static cl_int CL_API_CALL stub_GetCommandQueueInfo(cl_command_queue q, cl_command_queue_info name,
                                                   size_t size, void *value, size_t *size_ret) {
  switch (name) {
  case CL_QUEUE_CONTEXT:
    return stub_return(&q->context, sizeof(q->context), size, value, size_ret);
  case CL_QUEUE_DEVICE:
    return stub_return(&q->device, sizeof(q->device), size, value, size_ret);
  case CL_QUEUE_REFERENCE_COUNT:
    return stub_return(&q->refs, sizeof(q->refs), size, value, size_ret);
  default:
    return CL_INVALID_VALUE;
  }
}

static cl_int CL_API_CALL stub_Flush(cl_command_queue q) { return CL_SUCCESS; }

/* ---- SVM ------------------------------------------------------------------------------------- */

static void *CL_API_CALL stub_SVMAlloc(cl_context c, cl_svm_mem_flags flags, size_t size,
                                       cl_uint alignment) {
  stub_svm *a = calloc(1, sizeof(*a));
  a->ptr = calloc(1, size ? size : 1);
  a->context = c;
  stub_lock();
  a->next = stub_svms;
  stub_svms = a;
  stub_svm_count++;
  stub_context_hold(c, 1);
  stub_unlock();
  return a->ptr;
}

static void CL_API_CALL stub_SVMFree(cl_context c, void *ptr) {
  stub_lock();
  for (stub_svm **pp = &stub_svms; *pp; pp = &(*pp)->next)
    if ((*pp)->ptr == ptr) {
      stub_svm *a = *pp;
      *pp = a->next;
      free(a->ptr);
      free(a);
      stub_svm_count--;
      stub_context_hold(c, -1);
      break;
    }
  stub_unlock();
}

static int stub_svm_alive(const void *ptr) {
  int alive = 0;
  stub_lock();
  for (stub_svm *a = stub_svms; a && !alive; a = a->next)
    alive = a->ptr == ptr;
  stub_unlock();
  return alive;
}

/* ---- events ---------------------------------------------------------------------------------- */

static cl_event stub_event_new(cl_context c, cl_command_queue q, cl_int status) {
  struct _cl_event *e = calloc(1, sizeof(*e));
  e->dispatch = stub_launch_dispatch;
  e->context = c;
  e->queue = q;
  e->status = status;
  e->refs = 1;
  stub_context_hold(c, 1);
  if (q)
    stub_RetainCommandQueue(q);
  return e;
}

static cl_int CL_API_CALL stub_RetainEvent(cl_event e) {
  stub_lock();
  e->refs++;
  stub_unlock();
  return CL_SUCCESS;
}

static cl_int CL_API_CALL stub_ReleaseEvent(cl_event e) {
  stub_lock();
  if (--e->refs == 0) {
    cl_context c = e->context;
    if (e->queue)
      stub_ReleaseCommandQueue(e->queue);
    free(e);
    stub_context_hold(c, -1);
  }
  stub_unlock();
  return CL_SUCCESS;
}

/* Sets e's status to `status` (CL_COMPLETE or an error) and calls its callbacks. */
static void stub_event_finish(cl_event e, cl_int status) {
  e->status = status;
  int n = e->num_callbacks;
  e->num_callbacks = 0;
  for (int i = 0; i < n; i++)
    e->callbacks[i].fn(e, status, e->callbacks[i].data);
}

static cl_event CL_API_CALL stub_CreateUserEvent(cl_context c, cl_int *err) {
  if (err)
    *err = CL_SUCCESS;
  return stub_event_new(c, NULL, CL_SUBMITTED);
}

static void stub_launch_run(cl_event e);

static cl_int CL_API_CALL stub_SetUserEventStatus(cl_event e, cl_int status) {
  if (e->queue || e->status <= CL_COMPLETE || status > CL_COMPLETE)
    return CL_INVALID_OPERATION;
  stub_lock();
  stub_RetainEvent(e);
  stub_event_finish(e, status);
  for (cl_event *pp = &stub_pending; *pp;) { /* the launches that waited for it */
    cl_event l = *pp;
    if (l->gate == e) {
      *pp = l->next_pending;
      stub_launch_run(l);
    } else
      pp = &l->next_pending;
  }
  stub_ReleaseEvent(e);
  stub_unlock();
  return CL_SUCCESS;
}

static cl_int CL_API_CALL stub_SetEventCallback(cl_event e, cl_int type,
                                                void(CL_CALLBACK *fn)(cl_event, cl_int, void *),
                                                void *data) {
  if (type != CL_COMPLETE || !fn)
    return CL_INVALID_VALUE;
  cl_int err = CL_SUCCESS;
  stub_lock();
  if (e->status <= CL_COMPLETE)
    fn(e, e->status, data);
  else if (e->num_callbacks == STUB_EVENT_CALLBACKS)
    err = CL_OUT_OF_RESOURCES;
  else {
    e->callbacks[e->num_callbacks].fn = fn;
    e->callbacks[e->num_callbacks++].data = data;
  }
  stub_unlock();
  return err;
}

static cl_int CL_API_CALL stub_GetEventInfo(cl_event e, cl_event_info name, size_t size,
                                            void *value, size_t *size_ret) {
  switch (name) {
  case CL_EVENT_CONTEXT:
    return stub_return(&e->context, sizeof(e->context), size, value, size_ret);
  case CL_EVENT_COMMAND_QUEUE:
    return stub_return(&e->queue, sizeof(e->queue), size, value, size_ret);
  case CL_EVENT_COMMAND_EXECUTION_STATUS:
    return stub_return(&e->status, sizeof(e->status), size, value, size_ret);
  case CL_EVENT_REFERENCE_COUNT:
    return stub_return(&e->refs, sizeof(e->refs), size, value, size_ret);
  default:
    return CL_INVALID_VALUE;
  }
}

/* Nothing would set a pending user event while the caller waits: refused instead of a hang. */
static cl_int CL_API_CALL stub_WaitForEvents(cl_uint n, const cl_event *list) {
  for (cl_uint i = 0; i < n; i++)
    if (list[i]->status > CL_COMPLETE)
      return CL_INVALID_OPERATION;
  return CL_SUCCESS;
}

static cl_int CL_API_CALL stub_Finish(cl_command_queue q) {
  cl_int err = CL_SUCCESS;
  stub_lock();
  for (cl_event e = stub_pending; e; e = e->next_pending)
    if (e->queue == q)
      err = CL_INVALID_OPERATION;
  stub_unlock();
  return err;
}

/* ---- commands -------------------------------------------------------------------------------- */

/* A command that is complete at once; its event (if asked for) too. */
static cl_int stub_done_at_once(cl_command_queue q, cl_event *ev) {
  if (ev)
    *ev = stub_event_new(q->context, q, CL_COMPLETE);
  return CL_SUCCESS;
}

static cl_int CL_API_CALL stub_EnqueueSVMMemcpy(cl_command_queue q, cl_bool blocking, void *dst,
                                                const void *src, size_t size, cl_uint n,
                                                const cl_event *wait_list, cl_event *ev) {
  memcpy(dst, src, size);
  return stub_done_at_once(q, ev);
}

static cl_int CL_API_CALL stub_EnqueueMarkerWithWaitList(cl_command_queue q, cl_uint n,
                                                         const cl_event *wait_list, cl_event *ev) {
  return stub_done_at_once(q, ev);
}

/* Runs launch e: counts an SVM argument freed since it was set, completes e. */
static void stub_launch_run(cl_event e) {
  stub_runs++;
  for (int i = 0; i < STUB_KERNEL_SVM_ARGS; i++)
    if (e->svm[i] && !stub_svm_alive(e->svm[i])) {
      stub_runs_on_freed++;
      break;
    }
  if (e->gate)
    stub_ReleaseEvent(e->gate);
  e->gate = NULL;
  stub_event_finish(e, CL_COMPLETE);
  stub_ReleaseEvent(e); /* the launch's own reference */
}

static cl_int CL_API_CALL stub_EnqueueNDRangeKernel(cl_command_queue q, cl_kernel k, cl_uint dims,
                                                    const size_t *offset, const size_t *global,
                                                    const size_t *local, cl_uint n,
                                                    const cl_event *wait_list, cl_event *ev) {
  if (stub_kernel_context(k) != q->context)
    return CL_INVALID_CONTEXT;
  stub_lock();
  cl_event e = stub_event_new(q->context, q, CL_QUEUED);
  const void *svm[STUB_KERNEL_SVM_ARGS];
  stub_kernel_svm_args(k, svm);
  for (int i = 0; i < STUB_KERNEL_SVM_ARGS; i++) /* only the stub's own allocations */
    e->svm[i] = svm[i] && stub_svm_alive(svm[i]) ? svm[i] : NULL;
  for (cl_uint i = 0; i < n && !e->gate; i++)
    if (wait_list[i]->status > CL_COMPLETE) {
      e->gate = wait_list[i];
      stub_RetainEvent(e->gate);
    }
  if (ev) {
    stub_RetainEvent(e);
    *ev = e;
  }
  if (e->gate) {
    e->next_pending = stub_pending;
    stub_pending = e;
  } else
    stub_launch_run(e);
  stub_unlock();
  return CL_SUCCESS;
}

static cl_int CL_API_CALL stub_EnqueueTask(cl_command_queue q, cl_kernel k, cl_uint n,
                                           const cl_event *wait_list, cl_event *ev) {
  size_t one = 1;
  return stub_EnqueueNDRangeKernel(q, k, 1, NULL, &one, NULL, n, wait_list, ev);
}

void stub_launch_fill_dispatch(cl_icd_dispatch *d) {
  stub_launch_dispatch = d;
  d->clCreateCommandQueueWithProperties = stub_CreateCommandQueueWithProperties;
  d->clCreateCommandQueue = stub_CreateCommandQueue;
  d->clRetainCommandQueue = stub_RetainCommandQueue;
  d->clReleaseCommandQueue = stub_ReleaseCommandQueue;
  d->clGetCommandQueueInfo = stub_GetCommandQueueInfo;
  d->clFlush = stub_Flush;
  d->clFinish = stub_Finish;
  d->clSVMAlloc = stub_SVMAlloc;
  d->clSVMFree = stub_SVMFree;
  d->clEnqueueSVMMemcpy = stub_EnqueueSVMMemcpy;
  d->clEnqueueMarkerWithWaitList = stub_EnqueueMarkerWithWaitList;
  d->clCreateUserEvent = stub_CreateUserEvent;
  d->clSetUserEventStatus = stub_SetUserEventStatus;
  d->clRetainEvent = stub_RetainEvent;
  d->clReleaseEvent = stub_ReleaseEvent;
  d->clGetEventInfo = stub_GetEventInfo;
  d->clSetEventCallback = stub_SetEventCallback;
  d->clWaitForEvents = stub_WaitForEvents;
  d->clEnqueueNDRangeKernel = stub_EnqueueNDRangeKernel;
  d->clEnqueueTask = stub_EnqueueTask;
}
