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
 * Checked mode (CLDM_CHECK=1, spec 2.4): heaps are made with a check area (the checked
 * modules' event log); after each kernel that used the heap (cldm_heap_after_kernel) the layer
 * reads the check area, has layer_check.c print its events and empties the log; a heap freed
 * at context release is first read whole and inspected for leaks and damaged blocks.
 * CLDM_OOM (spec 2.5) reads the header's failed-allocation count after each such kernel.
 * Throwing operator new (spec 2.2): the header's count of those that failed is read after each
 * kernel that may have one, here with the reports above, else by layer_new.c's watches.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cldm_device.h"
#include "cldm_heap_layout.h"
#include "cldm_layer.h"

typedef struct cldm_heap {
  struct cldm_heap *next;
  cl_context context;
  cl_device_id device;
  int svm; /* memory kind: 1 SVM, 0 buffer */
  void *svm_ptr, *svm_pristine;
  cl_mem buf, pristine;
  cl_command_queue queue;   /* internal queue: initialisation and detaching */
  cldm_heap_geometry geom;  /* buffer size, initial image (its prefix), statistics span */
  cl_uint context_refs;     /* references the heap's objects (memory, queue) hold on the context */
  cldm_check_totals totals; /* checked mode and CLDM_OOM: counts at the last report */
} cldm_heap;

/* Locks. cldm_heaps_lock guards the list and is never held across a call into the driver:
 * drivers call back into the layer while holding locks of their own that their other entry
 * points take too (pocl 6.0 runs context destructor callbacks, cldm_heap_context_destroyed,
 * under its global context lock, which any release of an event or memory object may take), so
 * a driver call under it could deadlock against such a callback. cldm_heaps_driver_lock
 * serialises what calls the driver while the list must stay as it saw it: creating a heap
 * (one per (context, device)) and reaping; callbacks never take it. Order: driver lock, then
 * the driver's locks or the list lock. */
static pthread_mutex_t cldm_heaps_driver_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t cldm_heaps_lock = PTHREAD_MUTEX_INITIALIZER;
static cldm_heap *cldm_heaps;
static int cldm_heaps_alive; /* read without the lock on release fast paths */

int cldm_heap_any(void) { return __atomic_load_n(&cldm_heaps_alive, __ATOMIC_RELAXED) != 0; }

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

/* The geometry of a heap of a device created now: its heap-size setting rounded down to whole
 * pages, plus the allocator's metadata, but never more than one allocation may be
 * (CL_DEVICE_MAX_MEM_ALLOC_SIZE): there the metadata comes out of the usable size instead
 * (spec 1.2). 0, or -1 if that leaves less than the minimum heap. */
static int cldm_heap_geometry_of(const cldm_device_state *st, cldm_heap_geometry *g) {
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
  cldm_device_heap_created(device);
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

static void cldm_heap_binding_of(const cldm_heap *h, cldm_heap_binding *b) {
  b->svm = h->svm;
  b->svm_ptr = h->svm_ptr;
  b->buf = h->buf;
}

/* The binding of the heap of (context, device) if there is one; 1 if found. */
static int cldm_heap_lookup(cl_context context, cl_device_id device, cldm_heap_binding *binding) {
  pthread_mutex_lock(&cldm_heaps_lock);
  cldm_heap *h = cldm_heap_find(context, device);
  if (h)
    cldm_heap_binding_of(h, binding);
  pthread_mutex_unlock(&cldm_heaps_lock);
  return h != NULL;
}

cl_int cldm_heap_acquire(cl_context context, cl_device_id device, cldm_heap_binding *binding) {
  if (cldm_heap_lookup(context, device, binding))
    return CL_SUCCESS;
  pthread_mutex_lock(&cldm_heaps_driver_lock);
  cl_int err = CL_SUCCESS;
  if (!cldm_heap_lookup(context, device, binding)) { /* another thread may have created it */
    cldm_heap *h;
    err = cldm_heap_create(context, device, &h);
    if (err == CL_SUCCESS) /* only reaping frees it, which waits for the driver lock */
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

/* Usable size a heap created now for `device` would have (spec 1.3, no heap yet). */
static cl_int cldm_heap_prospective_size(cl_device_id device, cl_ulong *value) {
  cldm_device_state st;
  cldm_device_snapshot(device, &st);
  cldm_heap_geometry g;
  if (cldm_heap_geometry_of(&st, &g) != 0)
    return CL_OUT_OF_HOST_MEMORY; /* as the heap's creation would fail */
  *value = g.usable_bytes;
  return CL_SUCCESS;
}

/* Blocking copy of `size` bytes at `offset` of heap h out of (write 0) or into (write 1) host
 * memory `host`, on `queue`: ordered after every command enqueued on it before. */
static cl_int cldm_heap_copy(const cldm_heap *h, cl_command_queue queue, size_t offset, size_t size,
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

/* Reads heap h whole and prints its inspection (checked mode), labelled `when`. */
static cl_int cldm_heap_inspect(const cldm_heap *h, cl_command_queue queue, const char *when,
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

/* CLDM_PROBE_COUNTERS=1: the path counters (device/cl/cldm_probe.clh) that the launch of
 * `kernel` added to the header's, whose values at the last report are in `last` (a count below
 * its last value: the heap was reset, and the launch added the count itself), one line to stderr
 * unless it added none (every launch of a build without the counters: nothing printed). */
static void cldm_heap_probe_report(const char *kernel, const cldm_heap_header *hdr,
                                   uint32_t *last) {
  static const char *const names[] = {"flushes",   "pool_reads",  "flush_rows", "searches",
                                      "finals",    "late_rounds", "stamped",    "again",
                                      "exhausted", "borrows",     "refills"};
  _Static_assert(sizeof names / sizeof names[0] == CLDM_HDR_PROBE_WORDS, "a name per counter");
  _Static_assert(sizeof((cldm_check_totals *)0)->probe == 4 * CLDM_HDR_PROBE_WORDS, "a count each");
  const cldm_u32 *words = (const cldm_u32 *)hdr;
  uint32_t added[CLDM_HDR_PROBE_WORDS], any = 0;
  for (unsigned i = 0; i < CLDM_HDR_PROBE_WORDS; i++) {
    uint32_t now = words[CLDM_HDR_WORD_PROBE + i];
    added[i] = now >= last[i] ? now - last[i] : now;
    last[i] = now;
    any |= added[i];
  }
  if (!any)
    return;
  fprintf(stderr, "cl_ext_device_malloc: probe %s", kernel);
  for (unsigned i = 0; i < CLDM_HDR_PROBE_WORDS; i++)
    fprintf(stderr, " %s=%u", names[i], (unsigned)added[i]);
  fprintf(stderr, "\n");
}

cl_int cldm_heap_after_kernel(cl_command_queue queue, cl_context context, cl_device_id device,
                              const char *kernel) {
  pthread_mutex_lock(&cldm_heaps_lock);
  cldm_heap *h = cldm_heap_find(context, device);
  cldm_heap copy;
  if (h)
    copy = *h;
  pthread_mutex_unlock(&cldm_heaps_lock);
  if (!h)
    return CL_SUCCESS;
  cldm_heap_header hdr;
  cl_int err = cldm_heap_copy(&copy, queue, 0, sizeof hdr, &hdr, 0);
  if (err != CL_SUCCESS)
    return err;
  if (hdr.magic != CLDM_HEAP_MAGIC || hdr.layout_version != CLDM_HEAP_LAYOUT_VERSION) {
    fprintf(stderr, "cl_ext_device_malloc: kernel %s: the heap's header is damaged\n", kernel);
    return CL_SUCCESS;
  }
  uint64_t failed = ((uint64_t)hdr.failed_hi << 32) | hdr.failed_lo;
  uint64_t new_failed = cldm_hdr_new_failed(hdr);
  cldm_check_totals totals = copy.totals;
  if (cldm_config_probe())
    cldm_heap_probe_report(kernel, &hdr, totals.probe);
  /* a reset restarts the count at 0 */
  uint64_t new_failed_allocs = failed >= totals.failed ? failed - totals.failed : failed;
  totals.failed = failed;
  uint64_t stopped = new_failed >= totals.new_failed ? new_failed - totals.new_failed : new_failed;
  totals.new_failed = new_failed;
  size_t area_bytes = cldm_check_area_bytes(&copy.geom);
  void *area = NULL;
  if (area_bytes && cldm_hdr_check_offset(hdr) == copy.geom.check_offset) {
    area = malloc(area_bytes);
    if (!area)
      return CL_OUT_OF_HOST_MEMORY;
    err = cldm_heap_copy(&copy, queue, copy.geom.check_offset, area_bytes, area, 0);
    if (err == CL_SUCCESS) {
      cldm_check_report_kernel(kernel, area, area_bytes, copy.geom.check_capacity, &totals);
      uint32_t claimed;
      memcpy(&claimed, area, sizeof claimed);
      if (claimed) { /* empty the log: the claim counter, then the entries written */
        size_t used = (size_t)CLDM_CHECK_ENTRY_BYTES *
                      (claimed < copy.geom.check_capacity ? claimed : copy.geom.check_capacity);
        memset(area, 0, area_bytes);
        err = cldm_heap_copy(&copy, queue, copy.geom.check_offset, 4, area, 1);
        if (err == CL_SUCCESS)
          err = cldm_heap_copy(&copy, queue, copy.geom.check_offset + CLDM_CHECK_AREA_HEADER_BYTES,
                               used, area, 1);
      }
    }
    free(area);
  }
  pthread_mutex_lock(&cldm_heaps_lock);
  h = cldm_heap_find(context, device);
  if (h)
    h->totals = totals;
  pthread_mutex_unlock(&cldm_heaps_lock);
  cldm_heap_census *census = NULL; /* CLDM_OOM: where the heap's memory is, after a NULL */
  if (new_failed_allocs && cldm_config_oom() != CLDM_OOM_NULL) {
    void *span = malloc(copy.geom.stats_span);
    census = malloc(sizeof *census);
    if (!span || !census ||
        cldm_heap_copy(&copy, queue, 0, copy.geom.stats_span, span, 0) != CL_SUCCESS ||
        cldm_heap_census_decode(span, copy.geom.stats_span, census) != 0) {
      free(census);
      census = NULL;
    }
    free(span);
  }
  cldm_check_report_oom(kernel, new_failed_allocs, copy.geom.usable_bytes, census); /* may abort */
  free(census);
  cldm_check_report_bad_alloc(kernel, stopped, copy.geom.usable_bytes); /* may abort */
  return err;
}

cl_int cldm_heap_enqueue_new_failed_read(cl_context context, cl_device_id device, cl_event after,
                                         uint32_t dst[2], cl_event *ev) {
  pthread_mutex_lock(&cldm_heaps_lock);
  cldm_heap *h = cldm_heap_find(context, device);
  cldm_heap copy;
  if (h)
    copy = *h; /* alive while `after`'s command runs: that command holds the context */
  pthread_mutex_unlock(&cldm_heaps_lock);
  if (!h)
    return CL_INVALID_CONTEXT;
  size_t offset = 4u * CLDM_HDR_WORD_NEW_FAILED_LO;
  if (copy.svm)
    return cldm_next->clEnqueueSVMMemcpy(copy.queue, CL_FALSE, dst,
                                         (unsigned char *)copy.svm_ptr + offset, 8, 1, &after, ev);
  return cldm_next->clEnqueueReadBuffer(copy.queue, copy.buf, CL_FALSE, offset, 8, dst, 1, &after,
                                        ev);
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

/* The checked-mode queries (spec 2.4) of heap h. */
static cl_int cldm_heap_check_info(cl_command_queue queue, const cldm_heap *h,
                                   cl_device_heap_info_ext name, cl_ulong *value) {
  *value = 0;
  if (name == CL_DEVICE_HEAP_INFO_CHECKED_EXT) {
    *value = h->geom.check_offset != 0;
    return cldm_next->clFinish(queue);
  }
  if (!h->geom.check_offset)
    return cldm_next->clFinish(queue); /* not checked: no such events */
  if (name == CL_DEVICE_HEAP_INFO_DAMAGED_BLOCKS_EXT)
    return cldm_heap_inspect(h, queue, "inspection", value);
  size_t area_bytes = cldm_check_area_bytes(&h->geom);
  void *area = malloc(area_bytes);
  if (!area)
    return CL_OUT_OF_HOST_MEMORY;
  cl_int err = cldm_heap_copy(h, queue, h->geom.check_offset, area_bytes, area, 0);
  cldm_check_log log;
  if (err == CL_SUCCESS &&
      cldm_check_log_decode(area, area_bytes, h->geom.check_capacity, &log, NULL, 0) == 0) {
    switch (name) {
    case CL_DEVICE_HEAP_INFO_DOUBLE_FREES_EXT:
      *value = log.counts[CLDM_CHECK_FREE_DOUBLE];
      break;
    case CL_DEVICE_HEAP_INFO_INTERIOR_FREES_EXT:
      *value = log.counts[CLDM_CHECK_FREE_INTERIOR];
      break;
    case CL_DEVICE_HEAP_INFO_OUTSIDE_FREES_EXT:
      *value = log.counts[CLDM_CHECK_FREE_OUTSIDE];
      break;
    case CL_DEVICE_HEAP_INFO_UNALLOCATED_FREES_EXT:
      *value = log.counts[CLDM_CHECK_FREE_UNALLOCATED];
      break;
    case CL_DEVICE_HEAP_INFO_OVERFLOWS_EXT:
      *value = log.counts[CLDM_CHECK_OVERFLOW];
      break;
    default: /* CL_DEVICE_HEAP_INFO_LOST_EVENTS_EXT: counted, not logged, as reported */
      *value = h->totals.lost;
      break;
    }
  }
  free(area);
  return err;
}

cl_int cldm_heap_info(cl_command_queue queue, cl_context context, cl_device_id device,
                      cl_device_heap_info_ext name, cl_ulong *value) {
  pthread_mutex_lock(&cldm_heaps_lock);
  cldm_heap *h = cldm_heap_find(context, device);
  cldm_heap copy;
  if (h)
    copy = *h; /* the heap outlives this call: the caller's queue keeps its context alive */
  pthread_mutex_unlock(&cldm_heaps_lock);
  if (!h) {
    cl_int err = cldm_next->clFinish(queue); /* "as of all commands enqueued before" */
    if (err != CL_SUCCESS)
      return err;
    *value = name == CL_DEVICE_HEAP_INFO_CHECKED_EXT ? (cl_ulong)cldm_config_check() : 0;
    return name == CL_DEVICE_HEAP_INFO_SIZE_EXT ? cldm_heap_prospective_size(device, value)
                                                : CL_SUCCESS;
  }
  if (name >= CL_DEVICE_HEAP_INFO_CHECKED_EXT && name <= CL_DEVICE_HEAP_INFO_DAMAGED_BLOCKS_EXT)
    return cldm_heap_check_info(queue, &copy, name, value);
  size_t span = copy.geom.stats_span;
  void *bytes = malloc(span);
  if (!bytes)
    return CL_OUT_OF_HOST_MEMORY;
  /* blocking reads on the caller's queue: ordered after every command enqueued before */
  cl_int err =
      copy.svm
          ? cldm_next->clEnqueueSVMMemcpy(queue, CL_TRUE, bytes, copy.svm_ptr, span, 0, NULL, NULL)
          : cldm_next->clEnqueueReadBuffer(queue, copy.buf, CL_TRUE, 0, span, bytes, 0, NULL, NULL);
  cldm_heap_stats stats;
  if (err == CL_SUCCESS && cldm_heap_stats_decode(bytes, span, &stats) != 0) {
    cldm_log(CLDM_LOG_ERROR, "the device heap's header is damaged (bad magic or version)");
    err = CL_OUT_OF_RESOURCES;
  }
  cldm_heap_header hdr;
  memcpy(&hdr, bytes, sizeof hdr); /* the span starts with the header */
  free(bytes);
  if (err != CL_SUCCESS)
    return err;
  switch (name) {
  case CL_DEVICE_HEAP_INFO_SIZE_EXT:
    *value = stats.size;
    break;
  case CL_DEVICE_HEAP_INFO_BYTES_IN_USE_EXT:
    *value = stats.bytes_in_use;
    break;
  case CL_DEVICE_HEAP_INFO_BYTES_HELD_EXT:
    *value = stats.bytes_held;
    break;
  case CL_DEVICE_HEAP_INFO_PEAK_BYTES_HELD_EXT:
    *value = stats.peak_bytes_held;
    break;
  case CL_DEVICE_HEAP_INFO_LIVE_ALLOCATIONS_EXT:
    *value = stats.live_allocations;
    break;
  case CL_DEVICE_HEAP_INFO_FAILED_ALLOCATIONS_EXT:
    *value = stats.failed_allocations;
    break;
  case CL_DEVICE_HEAP_INFO_BAD_ALLOCS_EXT:
    *value = cldm_hdr_new_failed(hdr);
    break;
  default:
    *value = stats.invalid_frees;
    break;
  }
  return CL_SUCCESS;
}

cl_int cldm_heap_enqueue_reset(cl_command_queue queue, cl_context context, cl_device_id device,
                               cl_uint num_events, const cl_event *wait_list, cl_event *event) {
  pthread_mutex_lock(&cldm_heaps_lock);
  cldm_heap *h = cldm_heap_find(context, device);
  cldm_heap copy;
  if (h) {
    memset(&h->totals, 0, sizeof h->totals); /* the counters restart at 0 */
    copy = *h;
  }
  pthread_mutex_unlock(&cldm_heaps_lock);
  if (!h) /* nothing to reset; still an ordered command (spec 1.4) */
    return cldm_next->clEnqueueMarkerWithWaitList(queue, num_events, wait_list, event);
  if (copy.svm)
    return cldm_next->clEnqueueSVMMemcpy(queue, CL_FALSE, copy.svm_ptr, copy.svm_pristine,
                                         copy.geom.image_bytes, num_events, wait_list, event);
  return cldm_next->clEnqueueCopyBuffer(queue, copy.pristine, copy.buf, 0, 0, copy.geom.image_bytes,
                                        num_events, wait_list, event);
}

/* Unlinks every heap of `context` into *out; caller holds the list lock. Returns the references
 * those heaps hold on the context. */
static cl_uint cldm_heap_unlink_context(cl_context context, cldm_heap **out) {
  cl_uint refs = 0;
  for (cldm_heap **pp = &cldm_heaps; *pp;) {
    cldm_heap *h = *pp;
    if (h->context == context) {
      *pp = h->next;
      h->next = *out;
      *out = h;
      refs += h->context_refs;
    } else
      pp = &h->next;
  }
  return refs;
}

/* References the heaps of `context` hold on it; caller holds the list lock. */
static cl_uint cldm_heap_refs_held(cl_context context) {
  cl_uint refs = 0;
  for (cldm_heap *h = cldm_heaps; h; h = h->next)
    if (h->context == context)
      refs += h->context_refs;
  return refs;
}

static void cldm_heap_destroy_list(cldm_heap *list, int free_memory) {
  while (list) {
    cldm_heap *next = list->next;
    if (free_memory && list->geom.check_offset) /* checked mode: the leak report */
      cldm_heap_inspect(list, list->queue, "context release", NULL);
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
 * alive: only reaping releases them), not the list lock. */
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
 * polls the count for up to this long; a later sweep (cldm_lifetime_sweep) catches commands
 * that run longer. */
#define CLDM_REAP_WAIT_MS 200

void cldm_heap_reap(cl_context context, cl_uint pending, int wait) {
  if (!cldm_heap_any())
    return;
  cldm_heap *dead = NULL;
  size_t n = 0;
  pthread_mutex_lock(&cldm_heaps_driver_lock); /* no heap is created or reaped meanwhile */
  pthread_mutex_lock(&cldm_heaps_lock);
  /* A driver whose objects take no counted reference on their context gives ours == 0: the
   * count then holds the application's references alone. */
  cl_uint ours = cldm_heap_refs_held(context);
  cldm_heap *heaps = cldm_heap_copies(context, &n);
  pthread_mutex_unlock(&cldm_heaps_lock);
  if (n) {
    cldm_heap_detach(heaps, n);
    cl_uint refs = cldm_heap_context_refcount(context);
    struct timespec ms = {0, 1000000};
    for (int i = 0; wait && i < CLDM_REAP_WAIT_MS && refs > ours + pending; i++) {
      nanosleep(&ms, NULL);
      refs = cldm_heap_context_refcount(context);
    }
    cldm_log(CLDM_LOG_DEBUG, "context %p: %u references, %u held by heaps, %u being released",
             (void *)context, refs, ours, pending);
    if (refs == ours + pending) {
      pthread_mutex_lock(&cldm_heaps_lock);
      cldm_heap_unlink_context(context, &dead);
      pthread_mutex_unlock(&cldm_heaps_lock);
    }
  }
  pthread_mutex_unlock(&cldm_heaps_driver_lock);
  free(heaps);
  cldm_heap_destroy_list(dead, 1);
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
  cldm_heap_unlink_context(context, &dead);
  pthread_mutex_unlock(&cldm_heaps_lock);
  cldm_heap_destroy_list(dead, 0); /* the context took the memory with it */
}
