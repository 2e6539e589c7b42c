/*
 * cldm_alloc.cl — the device allocator of cl_ext_device_malloc (spec 2.1, 3.2): lock-free
 * malloc / free / calloc / realloc / aligned_alloc for OpenCL C, compiled to SPIR-V modules
 * that export cldm_malloc(heap, size), cldm_free(heap, ptr), cldm_calloc(heap, count, size),
 * cldm_realloc(heap, ptr, size) and cldm_aligned_alloc(heap, align, size). The heap is one
 * global buffer passed by the caller; the module has no kernels and no program-scope
 * variables. Host side: device/include/cldm_device.h; shared layout: cldm_heap_layout.h.
 *
 * HEAP LAYOUT (offsets from the heap base; every metadata word is an offset or an index,
 * never a pointer, so the heap works wherever the buffer is mapped):
 *
 *   0          +--------------------------------------------------------------+
 *              | header, 256 B: magic, layout version, geometry (offsets      |  \
 *              | below), counters on their own 64-byte lines: granules in use |   |
 *              | and peak, failed allocations, invalid frees                  |   |
 *   256        +--------------------------------------------------------------+   |
 *              | hints  u32[72 classes][16]   page index + 1 (0: none)        |   | image:
 *              +--------------------------------------------------------------+   | written by
 *              | descs  u32[num_pages]  kind:8 | count:24, owns the page    |   | the host to
 *              +--------------------------------------------------------------+   | create or
 *              | pool   u32[ceil(num_pages/32)]  index, bit set = taken     |   | reset (all
 *              +--------------------------------------------------------------+   | zero but
 *              | slot bitmaps u32[num_pages][128]  4096 bits per page, clear  |   | the header)
 *              | while the page is in the pool                                |  /
 *   pages_off  +--------------------------------------------------------------+  (4 KiB-aligned)
 *              | page 0 | page 1 | ...                     | page num_pages-1 |  64 KiB each,
 *              +--------------------------------------------------------------+  no init
 *
 *   a slab page of class c:  | slot 0 | slot 1 | ... | slot n-1 | (tail < one slot) |
 *                            n = min(65536 / bytes(c), 4096); slot i = bit i of its bitmap
 *   a run of k pages:        | head (LARGE_HEAD) | tail (LARGE_TAIL) | ... |
 *                            bitmap words 0, 1 of the head: k, pointer offset / 16
 *
 * ALGORITHM
 * - Sizes up to 32 KiB are rounded to one of 72 classes (16-byte steps to 128 B, then eight
 *   steps per power of two; cldm_heap_layout.h). Each class allocates from slab pages it
 *   claims from the pool on demand; a page returns to the pool when its last slot is freed
 *   (an empty page still named by a class hint stays with the class until the pool runs dry,
 *   when any class takes it over, or a large request sweeps it back). Larger requests take
 *   runs of whole pages from the pool, slabs from the bottom, runs from the top (cldm_pool.clh,
 *   cldm_large.clh).
 * - Slab allocation reserves a slot by a CAS on the page descriptor's count, then sets
 *   a bit of the page's slot bitmap with an atomic or, starting at the bit named by the count it
 *   saw (its "ticket": concurrent reservers hold distinct tickets, so they go to distinct bits)
 *   (cldm_slab.clh). Per class, 16 hint slots name pages to try first; callers start at a
 *   hashed slot, so concurrent callers spread over pages.
 * - Lock-free without forward-progress assumptions: every loop either makes progress itself or
 *   retries because another work-item's atomic succeeded; nothing waits for a state another
 *   work-item must finish (work-items of a pocl work-group run one after another on one thread,
 *   GPU lanes get no independent progress). No locks, no spinning on a flag. A page belongs to
 *   whoever moves its descriptor out of FREE in one CAS (as a slab already holding its taker's
 *   reservations, or as part of a run), and no reservation is taken back once others could see
 *   it, so a search never misses room that exists: NULL means full, also under contention
 *   (checked on 16 cores).
 * - Free checks the pointer (inside the pages, at a slot or run start, slot bit set / head
 *   kind) and atomically clears what marks it live; anything else is counted as an invalid free
 *   and changes nothing. Double frees lose the atomic and are counted.
 * - Statistics (cldm_stats.clh): one relaxed counter update per call (per sub-group in the
 *   sub-group variant), after success; live allocations are counted by the host from the page
 *   descriptors; exact after the kernels complete.
 * - Memory order (CL 2.0 variants; CL 1.2 uses fences around atomic_*): taking a slot or page
 *   is an acquire, freeing one a release, descriptor updates acq_rel, hints and counters relaxed.
 *   Each atomic's order and scope (device) is written at its call.
 *
 * Variants (device/CMakeLists.txt): CLDM_ATOMICS_CL20=1 uses OpenCL C 2.0 atomics with explicit
 * order and device scope; CLDM_ATOMICS_CL20=0 only OpenCL C 1.2 32-bit atomics.
 * CLDM_SUBGROUPS=1 (with CL20) aggregates per sub-group: lane 0 reserves slots for the lanes
 * that ask for its class, and the counters are updated once per sub-group; every call must
 * then be made by the whole sub-group (uniform control flow).
 */
#include "cldm_heap_layout.h"

#include "cldm_atomic.clh"
#include "cldm_heap.clh"
#include "cldm_stats.clh"
#include "cldm_pool.clh"
#include "cldm_slab.clh"
#include "cldm_large.clh"

/* ---- allocation and free, without statistics ----------------------------------------- */

#define CLDM_CLASS_LARGE 0xFFFFu    /* request served by a run of pages */
#define CLDM_CLASS_NONE 0xFFFFFFFFu /* no request (size 0) */

/* Start positions for one call: mixes the request with the heap's use counter, which changes
 * with every allocation and free (work-items of a pocl work-group, run one after another,
 * see different values; slot positions are further spread by reservation tickets). */
static inline uint cldm_seed(const cldm_heap *h, size_t size, uint align) {
  uint use = cldm_load_relaxed(h->hdr + CLDM_HDR_WORD_USE_UNITS); /* relaxed: a seed only */
  return cldm_hash(use ^ ((uint)size * 0x9E3779B9u) ^ (align << 24));
}

/* The class serving `size` > 0 bytes aligned to `align` (power of two, 16 <= align <= page
 * size), or CLDM_CLASS_LARGE. A class serves an alignment if its size is a multiple of it and
 * the pages start aligned (absolute address: the heap base's alignment counts). */
static inline uint cldm_class_for(const cldm_heap *h, size_t size, uint align) {
  bool pages_aligned = ((uint)(size_t)h->pages & (align - 1u)) == 0u;
  if (size > CLDM_MAX_CLASS_BYTES || align > CLDM_MAX_CLASS_BYTES || !pages_aligned)
    return CLDM_CLASS_LARGE;
  uint c = cldm_class_of((uint)size > align ? (uint)size : align);
  while (cldm_class_bytes(c) & (align - 1u)) /* ends at a power-of-two class */
    c++;
  return c;
}

/* Allocates `size` > 0 bytes aligned to `align`; *units = granules held (0 with NULL). */
static inline global void *cldm_alloc_raw(const cldm_heap *h, size_t size, uint align,
                                          uint *units) {
  uint c = cldm_class_for(h, size, align);
  global void *p = 0;
  *units = 0u;
  if (c != CLDM_CLASS_LARGE) {
    p = cldm_slab_alloc(h, c, cldm_seed(h, size, align));
    if (p)
      *units = cldm_class_bytes(c) >> CLDM_GRANULE_SHIFT;
    return p;
  }
  ulong limit = (ulong)h->num_pages << CLDM_PAGE_SHIFT;
  ulong need = (ulong)size + (align > CLDM_GRANULE_BYTES ? align - CLDM_GRANULE_BYTES : 0u);
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
  uint page;  /* page holding the pointer (slab page or run head) */
  uint desc;  /* its descriptor as read */
  uint slot;  /* slab slot; unused for runs */
  uint bytes; /* bytes of the allocation from the pointer on */
} cldm_block;

static inline bool cldm_block_find(const cldm_heap *h, global void *ptr, cldm_block *b) {
  ulong off = (ulong)((size_t)ptr - (size_t)h->pages); /* below the pages: wraps to huge */
  b->desc = 0u;
  if (off >= ((ulong)h->num_pages << CLDM_PAGE_SHIFT))
    return false;
  uint in_page = (uint)off & (CLDM_PAGE_BYTES - 1u);
  b->page = (uint)(off >> CLDM_PAGE_SHIFT);
  b->desc = cldm_load_relaxed(h->descs + b->page); /* relaxed: the RMW that frees decides */
  uint kind = cldm_desc_kind(b->desc);
  if (cldm_kind_is_slab(kind)) {
    uint bytes = cldm_class_bytes(kind - 1u);
    b->slot = in_page / bytes;
    b->bytes = bytes;
    return b->slot * bytes == in_page && b->slot < cldm_class_slots(kind - 1u);
  }
  if (kind == CLDM_DESC_KIND_LARGE_HEAD) {
    b->slot = 0u;
    b->bytes = (cldm_large_pages(h, b->page) << CLDM_PAGE_SHIFT) - in_page;
    return in_page == cldm_large_offset(h, b->page);
  }
  return false;
}

/* Frees ptr != NULL; returns the granules freed, 0 if ptr was not a live allocation. */
static inline uint cldm_free_raw(const cldm_heap *h, global void *ptr) {
  cldm_block b;
  if (!cldm_block_find(h, ptr, &b))
    return 0u;
  uint kind = cldm_desc_kind(b.desc);
  if (kind == CLDM_DESC_KIND_LARGE_HEAD)
    return cldm_large_free(h, b.page, b.desc);
  return cldm_slab_free(h, b.page, kind - 1u, b.slot) ? b.bytes >> CLDM_GRANULE_SHIFT : 0u;
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

/* ---- statistics and sub-group aggregation ------------------------------------------------ */

#if CLDM_SUBGROUPS
/* Sub-group variant: every exported function must be called by all work-items of the
 * sub-group together (uniform control flow), as cl_khr_subgroups functions require. Lanes are
 * numbered with a scan (no built-in variables in the module). */
static inline uint cldm_lane(void) { return sub_group_scan_exclusive_add(1u); }
#endif

/* Applies one call's effect on the counters: granules allocated and freed, a failed
 * allocation, an invalid free. The sub-group variant adds up the sub-group's calls and updates
 * each counter once per sub-group. */
static inline void cldm_account(const cldm_heap *h, uint alloc_units, uint free_units, uint failed,
                                uint invalid) {
#if CLDM_SUBGROUPS
  alloc_units = sub_group_reduce_add(alloc_units);
  free_units = sub_group_reduce_add(free_units);
  failed = sub_group_reduce_add(failed);
  invalid = sub_group_reduce_add(invalid);
  if (cldm_lane() != 0u)
    return;
#endif
  if (alloc_units)
    cldm_stats_alloc(h, alloc_units);
  if (free_units)
    cldm_stats_free(h, free_units);
  if (failed)
    cldm_stats_failed(h, failed);
  if (invalid)
    cldm_stats_invalid_free(h, invalid);
}

#if CLDM_SUBGROUPS
/* One round of serving same-class lanes together: lane 0 reserves slots for the `want` lanes
 * still needing one (one atomic on one descriptor), the first `granted` of them take theirs.
 * Straight-line group operations only: pocl 6.0 mis-executes sub-group functions reached
 * under a branch or in a loop with an early exit, so rounds are repeated, not looped. */
static inline void cldm_sg_round(const cldm_heap *h, uint lane, uint c0, uint seed, uint *need,
                                 global void **served) {
  uint want = sub_group_reduce_add(*need);
  uint rank = sub_group_scan_exclusive_add(*need);
  uint page = CLDM_NO_PAGE, ticket = 0u, granted = 0u;
  if (lane == 0u && want > 1u) { /* a lone request takes the per-work-item path */
    cldm_grant g = cldm_slab_acquire(h, c0, want, seed);
    page = g.page;
    ticket = g.ticket;
    granted = g.count;
  }
  page = sub_group_broadcast(page, 0u);
  ticket = sub_group_broadcast(ticket, 0u);
  granted = sub_group_broadcast(granted, 0u);
  if (*need && rank < granted) {
    /* acquire: pairs with the release that published the page (lane 0's, or its claimer's),
     * so the cleared bitmap is visible here before this lane sets its bit */
    cldm_load_acquire(h->descs + page);
    *served = cldm_slab_take(h, page, c0, ticket + rank); /* NULL only if corrupted */
    *need = 0u;
  }
}
#endif

/* malloc without statistics. In the sub-group variant, the lanes asking for the same class as
 * lane 0 are served together, in up to four rounds (a page of a large class may have fewer free
 * slots than lanes); lanes still unserved and lanes of other classes take the per-work-item
 * path. */
static inline global void *cldm_malloc_raw(const cldm_heap *h, size_t size, uint *units) {
  *units = 0u;
#if CLDM_SUBGROUPS
  uint c = size == 0u ? CLDM_CLASS_NONE : cldm_class_for(h, size, CLDM_GRANULE_BYTES);
  uint lane = cldm_lane();
  uint c0 = sub_group_broadcast(c, 0u);
  uint seed = sub_group_broadcast(cldm_seed(h, size, CLDM_GRANULE_BYTES), 0u);
  uint need = c == c0 && c < CLDM_NUM_CLASSES;
  global void *served = 0;
  cldm_sg_round(h, lane, c0, seed, &need, &served);
  cldm_sg_round(h, lane, c0, cldm_hash(seed + 1u), &need, &served);
  cldm_sg_round(h, lane, c0, cldm_hash(seed + 2u), &need, &served);
  cldm_sg_round(h, lane, c0, cldm_hash(seed + 3u), &need, &served);
  if (served) {
    *units = cldm_class_bytes(c0) >> CLDM_GRANULE_SHIFT;
    return served;
  }
#endif
  return size == 0u ? 0 : cldm_alloc_raw(h, size, CLDM_GRANULE_BYTES, units);
}

/* ---- exported functions (LinkageAttributes Export) --------------------------------------- */
/* Each computes its result without touching the counters, then calls cldm_account once (in
 * the sub-group variant every work-item reaches it). */

global void *cldm_malloc(global void *heap, size_t size) {
  cldm_heap h = cldm_heap_open(heap);
  uint units;
  global void *p = cldm_malloc_raw(&h, size, &units);
  cldm_account(&h, units, 0u, size != 0u && !p, 0u);
  return p;
}

void cldm_free(global void *heap, global void *ptr) {
  cldm_heap h = cldm_heap_open(heap);
  uint units = ptr ? cldm_free_raw(&h, ptr) : 0u; /* free(NULL): nothing */
  cldm_account(&h, 0u, units, 0u, ptr && !units);
}

global void *cldm_calloc(global void *heap, size_t count, size_t size) {
  cldm_heap h = cldm_heap_open(heap);
  bool overflow = mul_hi(count, size) != 0u; /* count * size: no heap can hold it */
  size_t bytes = overflow ? 0u : count * size;
  uint units;
  global void *p = cldm_malloc_raw(&h, bytes, &units);
  if (p)
    cldm_zero(p, bytes);
  cldm_account(&h, units, 0u, (overflow || bytes != 0u) && !p, 0u);
  return p;
}

global void *cldm_realloc(global void *heap, global void *ptr, size_t size) {
  cldm_heap h = cldm_heap_open(heap);
  global void *q = 0;
  uint alloc_units = 0u, free_units = 0u, failed = 0u, invalid = 0u;
  cldm_block b;
  if (!ptr) { /* realloc(NULL, size) is malloc(size) */
    if (size != 0u) {
      q = cldm_alloc_raw(&h, size, CLDM_GRANULE_BYTES, &alloc_units);
      failed = !q;
    }
  } else if (size == 0u) { /* frees ptr, returns NULL */
    free_units = cldm_free_raw(&h, ptr);
    invalid = !free_units;
  } else if (!cldm_block_find(&h, ptr, &b) ||
             (cldm_desc_kind(b.desc) != CLDM_DESC_KIND_LARGE_HEAD &&
              !((cldm_load_relaxed(cldm_page_bitmap(&h, b.page) + (b.slot >> 5)) /* relaxed */
                 >> (b.slot & 31u)) &
                1u))) {
    invalid = 1u; /* not a live allocation: NULL */
  } else if (cldm_desc_kind(b.desc) != CLDM_DESC_KIND_LARGE_HEAD
                 ? size <= CLDM_MAX_CLASS_BYTES &&
                       cldm_class_of((uint)size) == cldm_desc_kind(b.desc) - 1u
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
  cldm_account(&h, alloc_units, free_units, failed, invalid);
  return q;
}

global void *cldm_aligned_alloc(global void *heap, size_t align, size_t size) {
  cldm_heap h = cldm_heap_open(heap);
  /* a zero size or an alignment that is not a power of two up to the page size is not a
   * valid request (spec 2.1): NULL, not counted as a failure */
  bool valid =
      size != 0u && align != 0u && (align & (align - 1u)) == 0u && align <= CLDM_PAGE_BYTES;
  uint units = 0u;
  global void *p = 0;
  if (valid)
    p = cldm_alloc_raw(&h, size, align < CLDM_GRANULE_BYTES ? CLDM_GRANULE_BYTES : (uint)align,
                       &units);
  cldm_account(&h, units, 0u, valid && !p, 0u);
  return p;
}
