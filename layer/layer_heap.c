/*
 * layer_heap.c — one device heap per (context, device) (spec 1.2-1.4, 1.7).
 *
 * A heap is created at the first enqueue of an allocating kernel on a queue of its context
 * and device, with the device's heap-size setting. Memory: coarse-grained SVM where the
 * device has it (the device address stays fixed for the heap's life, so pointers kept in
 * user buffers stay valid across launches), else a buffer (CLDM_HEAP_MEMORY=svm|buffer
 * forces one). The allocator's layout needs one host write of its "image" (header and
 * metadata, cldm_device.h) to create or reset a heap: creation writes it with a blocking
 * command on the launching queue (so no other queue can run a kernel on an uninitialised
 * heap), and a device-side copy of the image ("pristine") lets clEnqueueResetDeviceHeapEXT
 * be an ordinary non-blocking copy command.
 *
 * Lifetime: the heap's memory objects and its internal queue hold references on the context
 * (drivers retain it), so the context can only die once they are gone; and drivers such as
 * pocl keep each memory object's last command event, which holds the queue that ran it, which
 * holds the context. The layer therefore watches the application: once it has released every
 * handle to the context it created (layer_lifetime.c counts them), each release of an object
 * of that context "detaches" the heaps (a tiny blocking read of each heap object on the heap's
 * internal queue, so their last events belong to that queue, not to the application's queues)
 * and compares the context's reference count with the references the heaps hold. When they
 * are equal, nothing of the application's can reach the context any more: the heaps are
 * freed, and the driver destroys the context as usual. The driver's own references (commands
 * still running at the last release) get a moment at the release of the context and are
 * looked at again by later sweeps (layer_lifetime.c).
 *
 * Commands that use the heap: every launch bound to it and every reset holds the heap
 * (cldm_heap.holds) from its enqueue until its event's completion callback lets go
 * (cldm_heap_hold_until), so the heap's memory is never freed under a command that has not
 * completed, whatever the driver's reference counts say (NVIDIA's count, for one, leaves out
 * the objects that hold the context, so a context whose last handle the application released
 * looks free while a launch of it still waits for a user event). A heap found unreachable while
 * held is retired: unlinked (no new command can bind it) and freed once the callback of its last
 * command let go, never by a thread of the application waiting for it. The callback only hands
 * the heap to the reaper, a thread of the layer's own that frees it: a driver's callback thread
 * must not release queues and memory (the OpenCL specification leaves blocking calls undefined
 * in a callback; NVIDIA's driver crashed or hung when the callback freed the heap itself).
 *
 * Checked mode (CLDM_CHECK=1, spec 2.4): heaps are made with a check area (the checked
 * modules' event log), and a heap freed at context release is first read whole and inspected
 * for leaks and damaged blocks (cldm_heap_inspect; layer_heap_read.c has the other reads of a
 * heap by the host). Throwing operator new (spec 2.2): the count of those that failed, as last
 * reported, is kept with the heap (cldm_heap_new_failed_seen).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cldm_device.h"
#include "cldm_heap.h"
#include "cldm_heap_layout.h"
#include "cldm_layer.h"

/* Locks. cldm_heaps_lock guards the lists and the heaps' holds, retired and context_gone flags and
 * totals, and is never held across a call into the driver: drivers call back into the layer while
 * holding locks of their own that their other entry points take too (pocl 6.0 runs context
 * destructor callbacks, cldm_heap_context_destroyed, under its global context lock, which any
 * release of an event or memory object may take), so a driver call under it could deadlock against
 * such a callback. cldm_heaps_driver_lock serialises what calls the driver while the list must
 * stay as it saw it: creating a heap (one per (context, device)) and reaping; callbacks never take
 * it (a command's completion callback that frees a retired heap calls the driver with no lock of
 * ours held). Order: driver lock, then the driver's locks or the list lock. */
static pthread_mutex_t cldm_heaps_driver_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t cldm_heaps_lock = PTHREAD_MUTEX_INITIALIZER;
static cldm_heap *cldm_heaps;         /* heaps the application can reach */
static cldm_heap *cldm_heaps_retired; /* unreachable, waiting for their commands */
static int cldm_heaps_alive;          /* both lists; read without the lock on release fast paths */

int cldm_heap_any(void) { return __atomic_load_n(&cldm_heaps_alive, __ATOMIC_RELAXED) != 0; }

/* The reaper (see the top): retired heaps whose last hold a callback let go wait on
 * cldm_reaper_list until the reaper thread frees them. cldm_reaper_lock guards the list and the
 * context_gone flags of the heaps on it; it is taken after cldm_heaps_lock, never before. */
static pthread_mutex_t cldm_reaper_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cldm_reaper_wake = PTHREAD_COND_INITIALIZER;
static cldm_heap *cldm_reaper_list;
static pthread_once_t cldm_reaper_once = PTHREAD_ONCE_INIT;
static int cldm_reaper_running; /* set once by cldm_reaper_start, read after its pthread_once */

static cldm_heap *cldm_heap_find(cl_context context, cl_device_id device) {
  for (cldm_heap *h = cldm_heaps; h; h = h->next)
    if (h->context == context && h->device == device)
      return h;
  return NULL;
}

/* The driver's reference count of `context`. */
static cl_uint cldm_heap_context_refcount(cl_context context) {
  cl_uint refs = 0;
  cldm_next->clGetContextInfo(context, CL_CONTEXT_REFERENCE_COUNT, sizeof(refs), &refs, NULL);
  return refs;
}

/* Which memory the heap uses: CLDM_HEAP_MEMORY=svm|buffer, else SVM when available. */
static int cldm_heap_use_svm(const cldm_device_state *st) {
  int have = st->svm_coarse && CLDM_NEXT_HAS(clSVMAlloc) && CLDM_NEXT_HAS(clSVMFree) &&
             CLDM_NEXT_HAS(clEnqueueSVMMemcpy) && CLDM_NEXT_HAS(clSetKernelArgSVMPointer);
  const char *force = cldm_config_heap_memory();
  if (force && !strcmp(force, "buffer"))
    return 0;
  if (force && !strcmp(force, "svm") && !have)
    cldm_log(CLDM_LOG_WARN,
             "CLDM_HEAP_MEMORY=svm but the device has no coarse-grained SVM; using a buffer");
  return have;
}

static void cldm_heap_free_memory(cldm_heap *h) {
  if (h->svm) {
    if (h->svm_ptr)
      cldm_next->clSVMFree(h->context, h->svm_ptr);
    if (h->svm_pristine)
      cldm_next->clSVMFree(h->context, h->svm_pristine);
  } else {
    if (h->buf)
      cldm_next->clReleaseMemObject(h->buf);
    if (h->pristine)
      cldm_next->clReleaseMemObject(h->pristine);
  }
  if (h->queue)
    cldm_next->clReleaseCommandQueue(h->queue);
}

/* Allocates the heap's memory objects (the pristine image is filled at creation for
 * buffers). */
static cl_int cldm_heap_alloc_memory(cldm_heap *h, const void *image) {
  cl_int err = CL_SUCCESS;
  h->queue = CLDM_NEXT_HAS(clCreateCommandQueueWithProperties)
                 ? cldm_next->clCreateCommandQueueWithProperties(h->context, h->device, NULL, &err)
                 : cldm_next->clCreateCommandQueue(h->context, h->device, 0, &err);
  if (err != CL_SUCCESS)
    return err;
  if (h->svm) {
    h->svm_ptr = cldm_next->clSVMAlloc(h->context, CL_MEM_READ_WRITE, h->geom.buffer_bytes, 0);
    h->svm_pristine = cldm_next->clSVMAlloc(h->context, CL_MEM_READ_WRITE, h->geom.image_bytes, 0);
    return h->svm_ptr && h->svm_pristine ? CL_SUCCESS : CL_MEM_OBJECT_ALLOCATION_FAILURE;
  }
  h->buf =
      cldm_next->clCreateBuffer(h->context, CL_MEM_READ_WRITE, h->geom.buffer_bytes, NULL, &err);
  if (err == CL_SUCCESS)
    h->pristine = cldm_next->clCreateBuffer(h->context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                                            h->geom.image_bytes, (void *)image, &err);
  return err;
}

/* Writes the image into the heap (and the SVM pristine copy) with blocking commands on the
 * heap's internal queue: no kernel anywhere can see the heap before it is initialised. */
static cl_int cldm_heap_write_image(cldm_heap *h, const void *image) {
  cl_command_queue queue = h->queue;
  if (!h->svm)
    return cldm_next->clEnqueueWriteBuffer(queue, h->buf, CL_TRUE, 0, h->geom.image_bytes, image, 0,
                                           NULL, NULL);
  cl_int err = cldm_next->clEnqueueSVMMemcpy(queue, CL_TRUE, h->svm_pristine, image,
                                             h->geom.image_bytes, 0, NULL, NULL);
  if (err == CL_SUCCESS)
    err = cldm_next->clEnqueueSVMMemcpy(queue, CL_TRUE, h->svm_ptr, image, h->geom.image_bytes, 0,
                                        NULL, NULL);
  return err;
}

static void CL_CALLBACK cldm_heap_context_destroyed(cl_context context, void *user_data);
static void cldm_reaper_start(void);

int cldm_heap_geometry_of(const cldm_device_state *st, cldm_heap_geometry *g) {
  if (cldm_config_check()) /* checked mode: with the check area the checked modules use */
    return cldm_heap_geometry_for_request_checked(st->heap_size, st->max_alloc, g);
  return cldm_heap_geometry_for_request(st->heap_size, st->max_alloc, g);
}

/* Creates the heap of (context, device) and links it; caller holds cldm_heaps_driver_lock (not
 * the list lock). */
static cl_int cldm_heap_create(cl_context context, cl_device_id device, cldm_heap **out) {
  cldm_heap *h = calloc(1, sizeof(*h));
  if (!h)
    return CL_OUT_OF_HOST_MEMORY;
  cldm_device_state st;
  cldm_device_snapshot(device, &st); /* an unknown device gets the defaults */
  h->context = context;
  h->device = device;
  h->svm = cldm_heap_use_svm(&st);
  int valid = cldm_heap_geometry_of(&st, &h->geom) == 0;
  void *image = valid ? malloc(h->geom.image_bytes) : NULL;
  cl_int err = CL_OUT_OF_HOST_MEMORY;
  if (image && cldm_heap_image_fill(&h->geom, image, h->geom.image_bytes) == 0) {
    /* count exactly the references the memory objects take (nothing else runs meanwhile) */
    cl_uint before = cldm_heap_context_refcount(context);
    err = cldm_heap_alloc_memory(h, image);
    h->context_refs = cldm_heap_context_refcount(context) - before;
    if (err == CL_SUCCESS)
      err = cldm_heap_write_image(h, image);
  }
  free(image);
  if (err != CL_SUCCESS) {
    cldm_log(CLDM_LOG_ERROR,
             "cannot create the device heap (%llu bytes, %s) for context %p, device %p: error %d",
             (unsigned long long)h->geom.buffer_bytes, h->svm ? "SVM" : "buffer", (void *)context,
             (void *)device, err);
    cldm_heap_free_memory(h);
    free(h);
    return CL_OUT_OF_RESOURCES;
  }
  /* Safety net for drivers whose objects do not hold the context: forget the heap when the
   * context dies (its memory went with it). */
  if (CLDM_NEXT_HAS(clSetContextDestructorCallback))
    cldm_next->clSetContextDestructorCallback(context, cldm_heap_context_destroyed, NULL);
  pthread_once(&cldm_reaper_once, cldm_reaper_start); /* from an application's thread */
  cldm_device_heap_created(device);
  h->holds = 1; /* the caller's launch */
  pthread_mutex_lock(&cldm_heaps_lock);
  h->next = cldm_heaps;
  cldm_heaps = h;
  __atomic_add_fetch(&cldm_heaps_alive, 1, __ATOMIC_RELAXED);
  pthread_mutex_unlock(&cldm_heaps_lock);
  cldm_log(CLDM_LOG_INFO, "created a %llu-byte device heap (%s) for context %p, device %p",
           (unsigned long long)h->geom.buffer_bytes, h->svm ? "SVM" : "buffer", (void *)context,
           (void *)device);
  *out = h;
  return CL_SUCCESS;
}

void cldm_heap_binding_of(cldm_heap *h, cldm_heap_binding *b) {
  b->svm = h->svm;
  b->svm_ptr = h->svm_ptr;
  b->buf = h->buf;
  b->heap = h;
}

/* The binding of the heap of (context, device) if there is one, with a hold taken on it; 1 if
 * found. */
static int cldm_heap_lookup(cl_context context, cl_device_id device, cldm_heap_binding *binding) {
  pthread_mutex_lock(&cldm_heaps_lock);
  cldm_heap *h = cldm_heap_find(context, device);
  if (h) {
    h->holds++;
    cldm_heap_binding_of(h, binding);
  }
  pthread_mutex_unlock(&cldm_heaps_lock);
  return h != NULL;
}

cldm_heap *cldm_heap_get(cl_context context, cl_device_id device, cldm_heap *copy) {
  pthread_mutex_lock(&cldm_heaps_lock);
  cldm_heap *h = cldm_heap_find(context, device);
  if (h) {
    h->holds++;
    *copy = *h;
  }
  pthread_mutex_unlock(&cldm_heaps_lock);
  return h;
}

uint64_t cldm_heap_new_failed_seen(cl_context context, cl_device_id device, uint64_t count,
                                   uint64_t *heap_size) {
  uint64_t stopped = 0;
  *heap_size = 0;
  pthread_mutex_lock(&cldm_heaps_lock);
  cldm_heap *h = cldm_heap_find(context, device);
  if (h) {
    /* counts only grow, except through a reset of the heap, which restarts them at 0 */
    stopped = count >= h->totals.new_failed ? count - h->totals.new_failed : count;
    h->totals.new_failed = count;
    *heap_size = h->geom.usable_bytes;
  }
  pthread_mutex_unlock(&cldm_heaps_lock);
  return stopped;
}

void cldm_heap_set_totals(cldm_heap *h, const cldm_check_totals *totals) {
  pthread_mutex_lock(&cldm_heaps_lock);
  h->totals = *totals;
  pthread_mutex_unlock(&cldm_heaps_lock);
}

cl_int cldm_heap_copy(const cldm_heap *h, cl_command_queue queue, size_t offset, size_t size,
                      void *host, int write) {
  if (h->svm) {
    unsigned char *dev = (unsigned char *)h->svm_ptr + offset;
    return cldm_next->clEnqueueSVMMemcpy(queue, CL_TRUE, write ? (void *)dev : host,
                                         write ? host : (void *)dev, size, 0, NULL, NULL);
  }
  if (write)
    return cldm_next->clEnqueueWriteBuffer(queue, h->buf, CL_TRUE, offset, size, host, 0, NULL,
                                           NULL);
  return cldm_next->clEnqueueReadBuffer(queue, h->buf, CL_TRUE, offset, size, host, 0, NULL, NULL);
}

cl_int cldm_heap_inspect(const cldm_heap *h, cl_command_queue queue, const char *when,
                         uint64_t *damaged) {
  void *bytes = malloc(h->geom.buffer_bytes);
  if (!bytes)
    return CL_OUT_OF_HOST_MEMORY;
  cl_int err = cldm_heap_copy(h, queue, 0, h->geom.buffer_bytes, bytes, 0);
  uint64_t base = h->svm ? (uint64_t)(uintptr_t)h->svm_ptr : 0;
  if (err == CL_SUCCESS && !base) /* a buffer: the address the checked modules stored */
    base = cldm_check_heap_base(bytes, h->geom.buffer_bytes);
  if (err == CL_SUCCESS &&
      cldm_check_report_heap(when, bytes, h->geom.buffer_bytes, base, damaged) != 0)
    err = CL_OUT_OF_RESOURCES;
  free(bytes);
  return err;
}

cl_int cldm_heap_acquire(cl_context context, cl_device_id device, cldm_heap_binding *binding) {
  if (cldm_heap_lookup(context, device, binding))
    return CL_SUCCESS;
  pthread_mutex_lock(&cldm_heaps_driver_lock);
  cl_int err = CL_SUCCESS;
  if (!cldm_heap_lookup(context, device, binding)) { /* another thread may have created it */
    cldm_heap *h;
    err = cldm_heap_create(context, device, &h);
    if (err == CL_SUCCESS) /* created with the caller's hold */
      cldm_heap_binding_of(h, binding);
  }
  pthread_mutex_unlock(&cldm_heaps_driver_lock);
  return err;
}

cl_int cldm_heap_bind(cl_kernel kernel, cl_uint index, const cldm_heap_binding *b) {
  if (b->svm)
    return cldm_next->clSetKernelArgSVMPointer(kernel, index, b->svm_ptr);
  return cldm_next->clSetKernelArg(kernel, index, sizeof(cl_mem), &b->buf);
}

cl_int cldm_heap_enqueue_reset(cl_command_queue queue, cl_context context, cl_device_id device,
                               cl_uint num_events, const cl_event *wait_list, cl_event *event) {
  pthread_mutex_lock(&cldm_heaps_lock);
  cldm_heap *h = cldm_heap_find(context, device);
  cldm_heap copy;
  if (h) {
    memset(&h->totals, 0, sizeof h->totals); /* the counters restart at 0 */
    h->holds++;                              /* the reset's, until it completed */
    copy = *h;
  }
  pthread_mutex_unlock(&cldm_heaps_lock);
  if (!h) /* nothing to reset; still an ordered command (spec 1.4) */
    return cldm_next->clEnqueueMarkerWithWaitList(queue, num_events, wait_list, event);
  cl_event own = NULL, *ev = event ? event : &own;
  cl_int err =
      copy.svm ? cldm_next->clEnqueueSVMMemcpy(queue, CL_FALSE, copy.svm_ptr, copy.svm_pristine,
                                               copy.geom.image_bytes, num_events, wait_list, ev)
               : cldm_next->clEnqueueCopyBuffer(queue, copy.pristine, copy.buf, 0, 0,
                                                copy.geom.image_bytes, num_events, wait_list, ev);
  cldm_heap_binding b;
  cldm_heap_binding_of(h, &b);
  if (err == CL_SUCCESS)
    cldm_heap_hold_until(&b, *ev);
  else
    cldm_heap_let_go(&b);
  if (own)
    cldm_next->clReleaseEvent(own);
  return err;
}

/* Takes every heap of `context` off the list of reachable heaps: into *out those that nothing
 * holds, onto the retired list those still held (marked context_gone if `gone`); caller holds
 * the list lock. Returns how many were retired. */
static int cldm_heap_unlink_context(cl_context context, cldm_heap **out, int gone) {
  int retired = 0;
  for (cldm_heap **pp = &cldm_heaps; *pp;) {
    cldm_heap *h = *pp;
    if (h->context == context) {
      *pp = h->next;
      if (h->holds) {
        h->retired = 1;
        h->next = cldm_heaps_retired;
        cldm_heaps_retired = h;
        retired++;
      } else {
        h->next = *out;
        *out = h;
      }
    } else
      pp = &h->next;
  }
  for (cldm_heap *h = cldm_heaps_retired; gone && h; h = h->next)
    if (h->context == context)
      h->context_gone = 1;
  return retired;
}

/* References the heaps of `context` hold on it, and in *held whether any of them is held;
 * caller holds the list lock. */
static cl_uint cldm_heap_refs_held(cl_context context, int *held) {
  cl_uint refs = 0;
  *held = 0;
  for (cldm_heap *h = cldm_heaps; h; h = h->next)
    if (h->context == context) {
      refs += h->context_refs;
      *held |= h->holds != 0;
    }
  return refs;
}

/* Frees (with `free_memory`: the context is alive) and forgets the heaps of `list`, which
 * nothing holds any more. `blocking`: the caller may make blocking calls (not a callback), which
 * the checked-mode leak report needs. */
static void cldm_heap_destroy_list(cldm_heap *list, int free_memory, int blocking) {
  while (list) {
    cldm_heap *next = list->next;
    if (free_memory && list->geom.check_offset && blocking) /* checked mode: the leak report */
      cldm_heap_inspect(list, list->queue, "context release", NULL);
    else if (free_memory && list->geom.check_offset)
      cldm_log(CLDM_LOG_WARN,
               "the device heap of context %p, device %p is freed after its last command "
               "completed, from the driver's callback, which cannot read it: no leak report",
               (void *)list->context, (void *)list->device);
    if (free_memory)
      cldm_heap_free_memory(list);
    cldm_device_heap_released(list->device);
    __atomic_sub_fetch(&cldm_heaps_alive, 1, __ATOMIC_RELAXED);
    cldm_log(CLDM_LOG_INFO, "released the device heap of context %p, device %p",
             (void *)list->context, (void *)list->device);
    free(list);
    list = next;
  }
}

void cldm_heap_release(cldm_heap *h, int blocking) {
  pthread_mutex_lock(&cldm_heaps_lock);
  int last = --h->holds == 0 && h->retired;
  int gone = h->context_gone;
  if (last)
    for (cldm_heap **pp = &cldm_heaps_retired; *pp; pp = &(*pp)->next)
      if (*pp == h) {
        *pp = h->next;
        break;
      }
  int reap = last && !blocking && cldm_reaper_running; /* a driver's callback: the reaper frees */
  if (reap) { /* onto the reaper's list before the lock goes: a context destroyed from here on
                 finds it there (cldm_heap_context_destroyed) */
    pthread_mutex_lock(&cldm_reaper_lock);
    h->next = cldm_reaper_list;
    cldm_reaper_list = h;
    pthread_cond_signal(&cldm_reaper_wake);
    pthread_mutex_unlock(&cldm_reaper_lock);
  }
  pthread_mutex_unlock(&cldm_heaps_lock);
  if (!last || reap)
    return;
  h->next = NULL;
  /* a layer de-initialised at the process's exit has no driver to call any more */
  cldm_heap_destroy_list(h, !gone && cldm_next, blocking);
}

/* The reaper thread: frees the heaps handed to it, one at a time, as an application's thread
 * would (blocking calls allowed: checked mode's leak report reads the heap). */
static void *cldm_reaper_main(void *arg) {
  (void)arg;
  for (;;) {
    pthread_mutex_lock(&cldm_reaper_lock);
    while (!cldm_reaper_list)
      pthread_cond_wait(&cldm_reaper_wake, &cldm_reaper_lock);
    cldm_heap *h = cldm_reaper_list;
    cldm_reaper_list = h->next;
    int gone = h->context_gone;
    pthread_mutex_unlock(&cldm_reaper_lock);
    h->next = NULL;
    cldm_heap_destroy_list(h, !gone && cldm_next, 1);
  }
  return NULL;
}

/* Starts the reaper (detached: it waits for work until the process ends). Without it, heaps
 * are freed where their last hold is let go, as before. */
static void cldm_reaper_start(void) {
  pthread_t t;
  pthread_attr_t attr;
  if (pthread_attr_init(&attr) != 0)
    return;
  pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  if (pthread_create(&t, &attr, cldm_reaper_main, NULL) == 0)
    cldm_reaper_running = 1;
  else
    cldm_log(CLDM_LOG_WARN, "no thread to free device heaps: callbacks free them");
  pthread_attr_destroy(&attr);
}

void cldm_heap_let_go(const cldm_heap_binding *binding) { cldm_heap_release(binding->heap, 1); }

static void CL_CALLBACK cldm_heap_command_done(cl_event event, cl_int status, void *heap) {
  (void)event;
  (void)status; /* CL_COMPLETE or an error: either way the command is over */
  cldm_heap_release(heap, 0);
}

void cldm_heap_hold_until(const cldm_heap_binding *binding, cl_event event) {
  if (CLDM_NEXT_HAS(clSetEventCallback) &&
      cldm_next->clSetEventCallback(event, CL_COMPLETE, cldm_heap_command_done, binding->heap) ==
          CL_SUCCESS)
    return;
  /* The command's end cannot be seen: the heap stays held, so its memory lives until the
   * process ends rather than being freed under the command. */
  cldm_log(CLDM_LOG_ERROR,
           "cannot watch a command that uses the device heap %p: it is kept until the process ends",
           (void *)binding->heap);
}

/* Copies of the heaps of `context` (n of them) into a new array, or NULL if it has none or
 * memory is short (then this reap does nothing; a later release tries again); caller holds
 * the list lock. */
static cldm_heap *cldm_heap_copies(cl_context context, size_t *n) {
  size_t count = 0, i = 0;
  for (cldm_heap *h = cldm_heaps; h; h = h->next)
    count += h->context == context;
  cldm_heap *copies = count ? malloc(count * sizeof(*copies)) : NULL;
  for (cldm_heap *h = cldm_heaps; copies && h; h = h->next)
    if (h->context == context)
      copies[i++] = *h;
  *n = copies ? count : 0;
  return copies;
}

/* Makes the last command event of each heap object one of the heap's internal queue (see the
 * header): a blocking 16-byte read of each. Caller holds the driver lock (the objects stay
 * alive: only reaping takes reachable heaps off the list), not the list lock. */
static void cldm_heap_detach(const cldm_heap *heaps, size_t n) {
  unsigned char scratch[16];
  for (const cldm_heap *h = heaps; h < heaps + n; h++) {
    if (h->svm) {
      cldm_next->clEnqueueSVMMemcpy(h->queue, CL_TRUE, scratch, h->svm_ptr, sizeof(scratch), 0,
                                    NULL, NULL);
      cldm_next->clEnqueueSVMMemcpy(h->queue, CL_TRUE, scratch, h->svm_pristine, sizeof(scratch), 0,
                                    NULL, NULL);
    } else {
      cldm_next->clEnqueueReadBuffer(h->queue, h->buf, CL_TRUE, 0, sizeof(scratch), scratch, 0,
                                     NULL, NULL);
      cldm_next->clEnqueueReadBuffer(h->queue, h->pristine, CL_TRUE, 0, sizeof(scratch), scratch, 0,
                                     NULL, NULL);
    }
  }
}

/* At the application's last release the driver may still hold references of its own on the
 * context: pocl, for instance, keeps a released queue alive until its commands are done and
 * releases a completed command's event in a worker thread. The heaps would then hold the
 * context for good (nothing of the application's is left to release), so a reap that may wait
 * polls the count for up to this long, unless a command that uses a heap of the context has
 * not completed (its completion is the application's business: a launch may wait for a user
 * event that the application sets only later); a later sweep (cldm_lifetime_sweep) catches
 * contexts held longer. */
#define CLDM_REAP_WAIT_MS 200

void cldm_heap_reap(cl_context context, cl_uint pending, int wait) {
  if (!cldm_heap_any())
    return;
  cldm_heap *dead = NULL;
  size_t n = 0;
  int held = 0;
  pthread_mutex_lock(&cldm_heaps_driver_lock); /* no heap is created or reaped meanwhile */
  pthread_mutex_lock(&cldm_heaps_lock);
  /* A driver whose objects take no counted reference on their context gives ours == 0: the
   * count then holds the application's references alone. */
  cl_uint ours = cldm_heap_refs_held(context, &held);
  cldm_heap *heaps = cldm_heap_copies(context, &n);
  pthread_mutex_unlock(&cldm_heaps_lock);
  if (n) {
    /* while commands that use a heap are pending, a blocking read of it could wait for them
     * (on a driver that orders commands on one memory object across queues), and their own
     * events hold the context anyway */
    if (!held)
      cldm_heap_detach(heaps, n);
    cl_uint refs = cldm_heap_context_refcount(context);
    struct timespec ms = {0, 1000000};
    for (int i = 0; wait && !held && i < CLDM_REAP_WAIT_MS && refs > ours + pending; i++) {
      nanosleep(&ms, NULL);
      refs = cldm_heap_context_refcount(context);
    }
    cldm_log(CLDM_LOG_DEBUG, "context %p: %u references, %u held by heaps, %u being released%s",
             (void *)context, refs, ours, pending,
             held ? ", commands using its heaps pending" : "");
    if (refs == ours + pending) {
      pthread_mutex_lock(&cldm_heaps_lock);
      int retired = cldm_heap_unlink_context(context, &dead, 0);
      pthread_mutex_unlock(&cldm_heaps_lock);
      if (retired)
        cldm_log(CLDM_LOG_DEBUG,
                 "context %p released: %d heaps go once the commands that use them completed",
                 (void *)context, retired);
    }
  }
  pthread_mutex_unlock(&cldm_heaps_driver_lock);
  free(heaps);
  cldm_heap_destroy_list(dead, 1, 1);
}

cl_context *cldm_heap_contexts(cl_device_id device, size_t *n) {
  size_t count = 0;
  pthread_mutex_lock(&cldm_heaps_lock);
  for (cldm_heap *h = cldm_heaps; h; h = h->next)
    count++;
  cl_context *out = count ? malloc(count * sizeof(*out)) : NULL;
  count = 0;
  for (cldm_heap *h = cldm_heaps; out && h; h = h->next) {
    size_t i = 0;
    while (i < count && out[i] != h->context)
      i++;
    if (i == count && (!device || h->device == device))
      out[count++] = h->context;
  }
  pthread_mutex_unlock(&cldm_heaps_lock);
  *n = count;
  return out;
}

static void CL_CALLBACK cldm_heap_context_destroyed(cl_context context, void *user_data) {
  (void)user_data;
  cldm_heap *dead = NULL;
  pthread_mutex_lock(&cldm_heaps_lock);
  cldm_heap_unlink_context(context, &dead, 1);
  pthread_mutex_lock(&cldm_reaper_lock); /* handed to the reaper, not freed yet */
  for (cldm_heap *h = cldm_reaper_list; h; h = h->next)
    if (h->context == context)
      h->context_gone = 1;
  pthread_mutex_unlock(&cldm_reaper_lock);
  pthread_mutex_unlock(&cldm_heaps_lock);
  cldm_heap_destroy_list(dead, 0, 0); /* the context took the memory with it */
}
