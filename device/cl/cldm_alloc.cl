/*
 * cldm_alloc.cl — the device allocator of cl_ext_device_malloc (spec 2.1, 3.2): lock-free
 * malloc / free / calloc / realloc / aligned_alloc for OpenCL C. Built as SPIR-V modules that
 * export cldm_malloc(heap, size), cldm_free(heap, ptr), cldm_calloc(heap, count, size),
 * cldm_realloc(heap, ptr, size), cldm_aligned_alloc(heap, align, size) and
 * cldm_new_failed(heap) (a throwing operator new got NULL, spec 2.2), and (CLDM_NV) as
 * LLVM bitcode for NVPTX that exports the same functions as cldm_target_* for the PTX route.
 * The heap is one global buffer passed by the caller; the module has no kernels and no
 * program-scope variables. Host side: device/include/cldm_device.h.
 *
 * docs/allocator.md explains the algorithm and the heap layout and defines the words the files
 * use (shard, W, ticket, slab, span, pool, room index, stamp, last resort, ...). In short:
 * - LAYOUT: a 256-byte header, W (per shard and class the current slab and its tickets), a
 *   descriptor per page, the pool (a bit per page), the room index, a slot bitmap per page, then
 *   64 KiB pages aligned to their size in device address (cldm_heap_layout.h). Metadata holds
 *   offsets, indexes and counts, never pointers.
 * - SMALL SIZES (up to 32 KiB, 72 classes): a call draws a ticket from its shard's current slab
 *   of its class with one fetch-and-add on W, and ticket t is slot t (cldm_slab.clh). A used-up
 *   slab is replaced by a span from the pool, or a partly used slab from the room index; when
 *   neither is left the last resort searches exactly, then borrows from a larger class, before
 *   NULL (spec 2.1).
 * - LARGE SIZES take runs of whole pages from the pool (cldm_large.clh).
 * - FREE checks the pointer and clears what marks it live with one atomic; anything else is an
 *   invalid free, counted, and changes nothing.
 * - Lock-free without forward-progress assumptions: no work-item waits for a state another
 *   work-item must produce.
 * Variants and tuning constants: cldm_config.clh (CLDM_ATOMICS_CL20, CLDM_NV, CLDM_CHECKED, ...).
 * This file: the exported functions, the class a request takes, what a freed pointer is.
 */
#include "cldm_config.clh"
#include "cldm_heap_layout.h"

#include "cldm_atomic.clh"
#include "cldm_heap.clh"
#include "cldm_geom.clh"
#include "cldm_group.clh"
#include "cldm_probe.clh"
#include "cldm_stats.clh"
#include "cldm_pool.clh"
#include "cldm_pool_span.clh"
#include "cldm_pool_run.clh"
#include "cldm_room.clh"
#include "cldm_slab_units.clh"
#include "cldm_slab_refill.clh"
#include "cldm_slab_flush.clh"
#include "cldm_slab_reinstall.clh"
#include "cldm_slab_final.clh"
#include "cldm_slab_borrow.clh"
#include "cldm_slab.clh"
#include "cldm_large.clh"

#if CLDM_NV /* the PTX backend links these into modules whose cldm_* call them */
#define CLDM_EXPORT(name) cldm_target_##name
#else
#define CLDM_EXPORT(name) cldm_##name
#endif

/* ---- allocation and free, without statistics ----------------------------------------- */

#define CLDM_CLASS_LARGE 0xFFFFu /* request served by a run of pages */

/* 1 if the pages start `align`-aligned in device address (a power of two <= page size): always,
 * as the heap places them (cldm_heap_pages_pad), unless the heap base is less aligned than
 * OpenCL guarantees. */
static inline bool cldm_pages_aligned(const cldm_heap *h, uint align) {
  return ((uint)(size_t)h->pages & (align - 1u)) == 0u;
}

/* The class serving `size` > 0 bytes aligned to `align` (power of two, 16 <= align <= page
 * size), or CLDM_CLASS_LARGE. A class serves an alignment if its size is a multiple of it and
 * the pages are aligned to it (`pages_aligned`; every slot then is): the smallest such class
 * holding `size`, which is the size rounded up to the class steps and to a multiple of `align`
 * (spec 2.1). Alignments above the largest class (the page size) take whole pages. */
static inline uint cldm_class_for(size_t size, uint align, bool pages_aligned) {
  if (!pages_aligned || size > CLDM_MAX_CLASS_BYTES || align > CLDM_MAX_CLASS_BYTES)
    return CLDM_CLASS_LARGE;
  uint c = cldm_class_of((uint)size > align ? (uint)size : align);
  while (cldm_class_bytes(c) & (align - 1u)) /* ends at a power-of-two class */
    c++;
  return c;
}

/* Allocates `size` > 0 bytes aligned to `align`; *units = granules held (0 with NULL). */
static inline global void *cldm_alloc_raw(const cldm_heap *h, size_t size, uint align,
                                          uint *units) {
  /* first: tested after the sizes, opt-15 speculates the load and freezes it, and
   * llvm-spirv-15 cannot translate a freeze */
  bool pages_aligned = cldm_pages_aligned(h, align);
  uint c = cldm_class_for(size, align, pages_aligned);
  global void *p = 0;
  *units = 0u;
  if (c != CLDM_CLASS_LARGE) {
    uint used;
    p = cldm_slab_alloc(h, c, align, &used);
    if (p)
      *units = cldm_class_bytes(used) >> CLDM_GRANULE_SHIFT;
    return p;
  }
  ulong limit = (ulong)h->num_pages << CLDM_PAGE_SHIFT;
  /* runs start on pages: padding only where the pages are less aligned than asked */
  ulong pad_max = pages_aligned ? 0u : align - CLDM_GRANULE_BYTES;
  ulong need = (ulong)size + pad_max;
  if ((ulong)size > limit || need > limit)
    return 0;
  uint pages = (uint)((need + CLDM_PAGE_BYTES - 1u) >> CLDM_PAGE_SHIFT);
  p = cldm_large_alloc(h, pages, align);
  if (p)
    *units = pages << (CLDM_PAGE_SHIFT - CLDM_GRANULE_SHIFT);
  return p;
}

/* What a pointer handed to free/realloc is, if it can be the start of an allocation. */
typedef struct cldm_block {
  uint page;  /* slab head or run head page */
  uint kind;  /* its descriptor's kind as read */
  uint slot;  /* slab slot; unused for runs */
  uint bytes; /* bytes of the allocation from the pointer on */
} cldm_block;

static inline bool cldm_block_find(const cldm_heap *h, global void *ptr, cldm_block *b) {
  ulong off = (ulong)((size_t)ptr - (size_t)h->pages); /* below the pages: wraps to huge */
  b->kind = CLDM_DESC_KIND_FREE;
  if (off >= ((ulong)h->num_pages << CLDM_PAGE_SHIFT))
    return false;
  b->page = (uint)(off >> CLDM_PAGE_SHIFT);
  uint kind = cldm_desc_kind(cldm_load_relaxed(h->descs + b->page)); /* relaxed: the RMW */
  if (kind > CLDM_DESC_KIND_SPAN_TAIL0 && kind < CLDM_DESC_KIND_SPAN_TAIL0 + CLDM_SPAN_PAGES_MAX &&
      b->page >= kind - CLDM_DESC_KIND_SPAN_TAIL0) { /* a later page of a span: its head */
    b->page -= kind - CLDM_DESC_KIND_SPAN_TAIL0;
    kind = cldm_desc_kind(cldm_load_relaxed(h->descs + b->page)); /* that frees decides */
  }
  b->kind = kind;
  uint in_span = (uint)(off - ((ulong)b->page << CLDM_PAGE_SHIFT));
  if (cldm_kind_is_slab(kind)) {
    uint bytes = cldm_class_bytes(kind - 1u);
    b->slot = in_span / bytes;
    b->bytes = bytes;
    if (b->slot >= cldm_geom_slots(h, kind - 1u))
      return false;
    return b->slot * bytes == in_span;
  }
  if (kind == CLDM_DESC_KIND_LARGE_HEAD) {
    b->slot = 0u;
    b->bytes = (cldm_large_pages(h, b->page) << CLDM_PAGE_SHIFT) - in_span;
    return in_span == cldm_large_offset(h, b->page);
  }
  return false;
}

/* Frees ptr != NULL; returns the granules freed, 0 if ptr was not a live allocation. */
static inline uint cldm_free_raw(const cldm_heap *h, global void *ptr) {
  cldm_block b;
  if (!cldm_block_find(h, ptr, &b))
    return 0u;
  if (b.kind == CLDM_DESC_KIND_LARGE_HEAD)
    return cldm_large_free(h, b.page);
  return cldm_slab_free(h, b.page, b.kind - 1u, b.slot) ? b.bytes >> CLDM_GRANULE_SHIFT : 0u;
}

/* 1 if slab slot or run b is live now (for realloc). */
static inline bool cldm_block_live(const cldm_heap *h, const cldm_block *b) {
  if (b->kind == CLDM_DESC_KIND_LARGE_HEAD)
    return true;
  uint word = cldm_load_relaxed(cldm_page_bitmap(h, b->page) + (b->slot >> 5)); /* relaxed */
  return (word >> (b->slot & 31u)) & 1u;
}

static inline void cldm_zero(global void *p, size_t bytes) {
  global uint4 *q = (global uint4 *)p;
  for (size_t i = 0; i < (bytes + 15u) >> 4; i++)
    q[i] = (uint4)(0u);
}

static inline void cldm_copy(global void *dst, const global void *src, size_t bytes) {
  global uint4 *d = (global uint4 *)dst;
  const global uint4 *s = (const global uint4 *)src;
  for (size_t i = 0; i < (bytes + 15u) >> 4; i++)
    d[i] = s[i];
}

/* ---- checked mode: the hooks (cldm_check.clh) ------------------------------------------- */

#if CLDM_CHECKED
#include "cldm_check.clh"
#define CLDM_ALLOC(h, size, align, units) cldm_check_alloc(h, size, align, units)
#define CLDM_FREE(h, ptr) cldm_check_free(h, ptr)
#define CLDM_ZERO(p, bytes) cldm_check_zero(p, bytes)
#else
#define CLDM_ALLOC(h, size, align, units) cldm_alloc_raw(h, size, align, units)
#define CLDM_FREE(h, ptr) cldm_free_raw(h, ptr)
#define CLDM_ZERO(p, bytes) cldm_zero(p, bytes)
#endif

/* ---- exported functions ----------------------------------------------------------------- */
/* Each computes its result, then calls cldm_account once (failures and invalid frees). */

global void *CLDM_EXPORT(malloc)(global void *heap, size_t size) {
  cldm_heap h = cldm_heap_open(heap);
  uint units = 0u;
  global void *p = size ? CLDM_ALLOC(&h, size, CLDM_GRANULE_BYTES, &units) : 0;
  cldm_account(&h, size != 0u && !p, 0u);
  return p;
}

void CLDM_EXPORT(free)(global void *heap, global void *ptr) {
  cldm_heap h = cldm_heap_open(heap);
  uint units = ptr ? CLDM_FREE(&h, ptr) : 0u; /* free(NULL): nothing */
  cldm_account(&h, 0u, ptr && !units);
}

global void *CLDM_EXPORT(calloc)(global void *heap, size_t count, size_t size) {
  cldm_heap h = cldm_heap_open(heap);
  bool overflow = mul_hi(count, size) != 0u; /* count * size: no heap can hold it */
  size_t bytes = overflow ? 0u : count * size;
  uint units = 0u;
  global void *p = bytes ? CLDM_ALLOC(&h, bytes, CLDM_GRANULE_BYTES, &units) : 0;
  if (p)
    CLDM_ZERO(p, bytes);
#if CLDM_CHECKED
  if (overflow)
    cldm_check_event(&h, CLDM_CHECK_ALLOC_FAILED, 0, CLDM_CHECK_SIZE_UNKNOWN, 0u);
#endif
  cldm_account(&h, (overflow || bytes != 0u) && !p, 0u);
  return p;
}

global void *CLDM_EXPORT(realloc)(global void *heap, global void *ptr, size_t size) {
  cldm_heap h = cldm_heap_open(heap);
  global void *q = 0;
  uint alloc_units = 0u, free_units = 0u, failed = 0u, invalid = 0u;
#if CLDM_CHECKED
  q = cldm_check_realloc(&h, ptr, size, &alloc_units, &free_units, &failed, &invalid);
#else
  cldm_block b;
  if (!ptr) { /* realloc(NULL, size) is malloc(size) */
    if (size != 0u) {
      q = cldm_alloc_raw(&h, size, CLDM_GRANULE_BYTES, &alloc_units);
      failed = !q;
    }
  } else if (size == 0u) { /* frees ptr, returns NULL */
    free_units = cldm_free_raw(&h, ptr);
    invalid = !free_units;
  } else if (!cldm_block_find(&h, ptr, &b) || !cldm_block_live(&h, &b)) {
    invalid = 1u; /* not a live allocation: NULL */
  } else if (b.kind != CLDM_DESC_KIND_LARGE_HEAD
                 ? size <= CLDM_MAX_CLASS_BYTES && cldm_class_of((uint)size) == b.kind - 1u
                 : size > CLDM_MAX_CLASS_BYTES && (ulong)size <= b.bytes &&
                       (ulong)size + CLDM_PAGE_BYTES > b.bytes) {
    q = ptr; /* same class, or still large with the same number of pages: stays */
  } else {
    q = cldm_alloc_raw(&h, size, CLDM_GRANULE_BYTES, &alloc_units);
    if (!q) {
      failed = 1u; /* ptr stays valid */
    } else {
      cldm_copy(q, ptr, (ulong)size < b.bytes ? size : (size_t)b.bytes);
      free_units = cldm_free_raw(&h, ptr);
      invalid = !free_units; /* freed by someone else meanwhile */
    }
  }
#endif
  cldm_account(&h, failed, invalid);
  return q;
}

global void *CLDM_EXPORT(aligned_alloc)(global void *heap, size_t align, size_t size) {
  cldm_heap h = cldm_heap_open(heap);
  /* a zero size or an alignment that is not a power of two up to the page size is not a
   * valid request (spec 2.1): NULL, not counted as a failure */
  bool valid =
      size != 0u && align != 0u && (align & (align - 1u)) == 0u && align <= CLDM_PAGE_BYTES;
  uint units = 0u;
  global void *p = 0;
  if (valid)
    p = CLDM_ALLOC(&h, size, align < CLDM_GRANULE_BYTES ? CLDM_GRANULE_BYTES : (uint)align, &units);
  cldm_account(&h, valid && !p, 0u);
  return p;
}

/* A throwing operator new got NULL (spec 2.2): the lowered module calls this before the
 * work-item stops, and the layer reports the kernel once it has completed. Rare: the count
 * needs no combining of lanes. */
void CLDM_EXPORT(new_failed)(global void *heap) {
  cldm_heap h = cldm_heap_open(heap);
  cldm_stats_count(&h, CLDM_HDR_WORD_NEW_FAILED_LO, 1u);
}
