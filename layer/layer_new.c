/*
 * layer_new.c — launches of kernels whose work-items may stop at a throwing operator new that
 * found no room (spec 2.2). The heap counts such stops (the lowered module calls the
 * allocator's cldm_new_failed before the work-item returns); the layer reads the count after
 * each such launch and reports a count that grew, naming the kernel, then ends the process as
 * C++'s std::terminate would (abort(); CLDM_BAD_ALLOC=report only reports).
 *
 * A launch is not made to wait for that. Right after the kernel's enqueue, a read of the count
 * (8 bytes) is enqueued on the heap's internal queue, waiting for the kernel's event, and a
 * callback is set on the read: the watch. It is settled, once, by whichever claims it first:
 *   - the read's callback (a driver thread), which reports;
 *   - clFinish of the kernel's queue, clWaitForEvents of the kernel's event, or clReleaseContext
 *     of its context, which wait for the read after the driver's call returned and report in
 *     the application's thread (or wait for the callback that claimed it to finish), so that a
 *     program that waits for its kernels sees the report (and the abort) before it goes on, as
 *     it would see an exception's.
 * Checked mode and CLDM_OOM make launches synchronous and read the count with their own
 * reports (layer_heap.c, cldm_heap_after_kernel): they need no watch.
 *
 * The count is the heap's: where launches of several such kernels on one heap overlap, the
 * report names the kernel whose watch saw the count grow first.
 */
#include <stdlib.h>
#include <string.h>

#include "cldm_layer.h"

typedef struct cldm_new_watch {
  struct cldm_new_watch *next;
  int claimed;            /* someone reads and reports it: it leaves the list when done */
  cl_command_queue queue; /* the launch's queue and event: compared, not held */
  cl_event kernel_event;
  cl_context context;
  cl_device_id device;
  cl_event read;     /* the read of the count, released with the watch */
  uint32_t count[2]; /* where the read puts the count: (lo, hi) */
  char *kernel;      /* the kernel's name */
  int refs;          /* the list's (until settled) and the callback's */
} cldm_new_watch;

static pthread_mutex_t cldm_new_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cldm_new_done = PTHREAD_COND_INITIALIZER; /* a claimed watch left */
static cldm_new_watch *cldm_new_watches;
static int cldm_new_pending; /* read without the lock on the fast paths */

static void cldm_new_drop(cldm_new_watch *w) {
  if (__atomic_sub_fetch(&w->refs, 1, __ATOMIC_ACQ_REL) != 0)
    return;
  cldm_next->clReleaseEvent(w->read);
  free(w->kernel);
  free(w);
}

/* The count of a watch whose read completed: reported if it grew (may abort). */
static void cldm_new_report(const cldm_new_watch *w) {
  uint64_t count = (uint64_t)w->count[1] << 32 | w->count[0], heap_size;
  uint64_t stopped = cldm_heap_new_failed_seen(w->context, w->device, count, &heap_size);
  cldm_check_report_bad_alloc(w->kernel, stopped, heap_size);
}

/* Unlinks w (caller holds the lock) and wakes those who wait for claimed watches. */
static void cldm_new_unlink(cldm_new_watch *w) {
  for (cldm_new_watch **pp = &cldm_new_watches; *pp; pp = &(*pp)->next)
    if (*pp == w) {
      *pp = w->next;
      __atomic_sub_fetch(&cldm_new_pending, 1, __ATOMIC_RELAXED);
      break;
    }
  pthread_cond_broadcast(&cldm_new_done);
}

/* Reports a watch its caller claimed, then lets it go. */
static void cldm_new_finish(cldm_new_watch *w, int completed) {
  if (completed)
    cldm_new_report(w);
  pthread_mutex_lock(&cldm_new_lock);
  cldm_new_unlink(w);
  pthread_mutex_unlock(&cldm_new_lock);
  cldm_new_drop(w); /* the list's reference */
}

static void CL_CALLBACK cldm_new_read_done(cl_event ev, cl_int status, void *user_data) {
  (void)ev;
  cldm_new_watch *w = user_data;
  pthread_mutex_lock(&cldm_new_lock);
  int mine = !w->claimed;
  w->claimed = 1;
  pthread_mutex_unlock(&cldm_new_lock);
  if (mine)
    cldm_new_finish(w, status == CL_COMPLETE);
  cldm_new_drop(w); /* the callback's */
}

void cldm_new_watch_launch(cl_command_queue queue, cl_event kernel_event, const char *kernel) {
  cl_context context;
  cl_device_id device;
  if (cldm_info_queue_target(queue, &context, &device) != CL_SUCCESS)
    return;
  cldm_new_watch *w = calloc(1, sizeof(*w));
  if (!w || !(w->kernel = strdup(kernel))) {
    free(w);
    cldm_log(CLDM_LOG_ERROR, "out of host memory: kernel %s is not watched for operator new",
             kernel);
    return;
  }
  w->queue = queue;
  w->kernel_event = kernel_event;
  w->context = context;
  w->device = device;
  w->refs = 2;
  /* the read waits on the launch from the heap's own queue: the launch's queue is flushed first,
   * as a wait across queues requires (OpenCL 3.0, clFlush) */
  cldm_next->clFlush(queue);
  cl_int err = cldm_heap_enqueue_new_failed_read(context, device, kernel_event, w->count, &w->read);
  if (err == CL_SUCCESS) {
    pthread_mutex_lock(&cldm_new_lock);
    w->next = cldm_new_watches;
    cldm_new_watches = w;
    __atomic_add_fetch(&cldm_new_pending, 1, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&cldm_new_lock);
    if (cldm_next->clSetEventCallback(w->read, CL_COMPLETE, cldm_new_read_done, w) != CL_SUCCESS)
      cldm_new_drop(w); /* no callback: a settle reports it */
    return;
  }
  cldm_log(CLDM_LOG_ERROR, "cannot watch kernel %s for operator new: error %d", kernel, err);
  free(w->kernel);
  free(w);
}

/* Settles the listed watches that `match` selects: claims those nobody claimed, waits for
 * their reads and reports them, and waits until the callbacks that claimed the others have
 * reported theirs. */
static void cldm_new_settle(int (*match)(const cldm_new_watch *, const void *, cl_uint),
                            const void *what, cl_uint n) {
  if (!__atomic_load_n(&cldm_new_pending, __ATOMIC_RELAXED))
    return;
  for (;;) {
    cldm_new_watch *mine = NULL;
    int others = 0;
    pthread_mutex_lock(&cldm_new_lock);
    for (cldm_new_watch *w = cldm_new_watches; w; w = w->next) {
      if (!match(w, what, n))
        continue;
      if (!w->claimed && !mine) {
        w->claimed = 1;
        mine = w;
      } else if (w->claimed) {
        others = 1;
      }
    }
    if (!mine && others)
      pthread_cond_wait(&cldm_new_done, &cldm_new_lock);
    pthread_mutex_unlock(&cldm_new_lock);
    if (mine)
      cldm_new_finish(mine, cldm_next->clWaitForEvents(1, &mine->read) == CL_SUCCESS);
    else if (!others)
      return;
  }
}

static int cldm_new_of_queue(const cldm_new_watch *w, const void *queue, cl_uint n) {
  (void)n;
  return w->queue == queue;
}

static int cldm_new_of_events(const cldm_new_watch *w, const void *events, cl_uint n) {
  const cl_event *list = events;
  for (cl_uint i = 0; i < n; i++)
    if (list[i] == w->kernel_event)
      return 1;
  return 0;
}

static int cldm_new_of_context(const cldm_new_watch *w, const void *context, cl_uint n) {
  (void)n;
  return w->context == context;
}

void cldm_new_settle_context(cl_context context) {
  cldm_new_settle(cldm_new_of_context, context, 0);
}

cl_int CL_API_CALL clFinish_wrap(cl_command_queue queue) {
  cl_int err = cldm_next->clFinish(queue);
  if (err == CL_SUCCESS)
    cldm_new_settle(cldm_new_of_queue, queue, 0);
  return err;
}

cl_int CL_API_CALL clWaitForEvents_wrap(cl_uint num_events, const cl_event *event_list) {
  cl_int err = cldm_next->clWaitForEvents(num_events, event_list);
  if (event_list)
    cldm_new_settle(cldm_new_of_events, event_list, num_events);
  return err;
}
