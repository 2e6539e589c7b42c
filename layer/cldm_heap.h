/*
 * cldm_heap.h — a device heap as layer_heap.c keeps it, and the helpers layer_heap_read.c (the
 * host's reads of heaps) uses; the rest of the layer sees heaps through cldm_layer.h only.
 */
#ifndef CLDM_HEAP_H
#define CLDM_HEAP_H

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
  /* Holders of the heap's memory (under cldm_heaps_lock): commands enqueued with the heap bound
   * (launches, resets) that have not completed, and host reads of it in progress. */
  unsigned long holds;
  int retired;      /* unreachable while held: on cldm_heaps_retired, freed by the last let-go */
  int context_gone; /* the context was destroyed (destructor callback): its memory went with it */
} cldm_heap;

/* The geometry of a heap of a device created now: its heap-size setting rounded down to whole
 * pages, plus the allocator's metadata, but never more than one allocation may be
 * (CL_DEVICE_MAX_MEM_ALLOC_SIZE): there the metadata comes out of the usable size instead
 * (spec 1.2). 0, or -1 if that leaves less than the minimum heap. */
int cldm_heap_geometry_of(const cldm_device_state *st, cldm_heap_geometry *g);
/* A copy of the heap of (context, device) in *copy and a hold on it (let go with
 * cldm_heap_release), or NULL if there is none. */
cldm_heap *cldm_heap_get(cl_context context, cl_device_id device, cldm_heap *copy);
/* Lets go of a hold on heap h; the last hold of a retired heap frees it. `blocking`: the
 * caller may make blocking calls (it is not a driver's callback), which the checked-mode leak
 * report needs. */
void cldm_heap_release(cldm_heap *h, int blocking);
/* The binding of heap h (for a hold on it: cldm_heap_hold_until, cldm_heap_let_go). */
void cldm_heap_binding_of(cldm_heap *h, cldm_heap_binding *b);
/* Stores the counts of the last report of heap h (held). */
void cldm_heap_set_totals(cldm_heap *h, const cldm_check_totals *totals);
/* Blocking copy of `size` bytes at `offset` of heap h out of (write 0) or into (write 1) host
 * memory `host`, on `queue`: ordered after every command enqueued on it before. */
cl_int cldm_heap_copy(const cldm_heap *h, cl_command_queue queue, size_t offset, size_t size,
                      void *host, int write);
/* Reads heap h whole on `queue` and prints its inspection (checked mode), labelled `when`;
 * *damaged (if not NULL): its live blocks with damaged guard bytes. */
cl_int cldm_heap_inspect(const cldm_heap *h, cl_command_queue queue, const char *when,
                         uint64_t *damaged);

#endif /* CLDM_HEAP_H */
