/*
 * cldm_heap_layout.h — heap layout shared by the device allocator (OpenCL C, device/cl/) and
 * the host helpers (C, device/host/). Included by both languages: only fixed-width fields,
 * explicit padding, and `static inline` arithmetic that both compilers accept.
 *
 * The layout (diagram), the algorithm and the terms are described in docs/allocator.md.
 * Everything here is in bytes unless the name says otherwise (_units = 16-byte granules,
 * _words = 32-bit words, _pages = CLDM_PAGE_BYTES pages).
 *
 * Byte order: the host writes the image and decodes statistics in its own byte order; device
 * and host must share it (every OpenCL device we target is little-endian). 64-bit counters are
 * two 32-bit words (lo, hi), updated with 32-bit atomics.
 */
#ifndef CLDM_HEAP_LAYOUT_H
#define CLDM_HEAP_LAYOUT_H

#ifdef __OPENCL_C_VERSION__
typedef uint cldm_u32;
typedef ulong cldm_u64;
#else
#include <stdint.h>
typedef uint32_t cldm_u32;
typedef uint64_t cldm_u64;
#endif

/* ---- identification ---------------------------------------------------------------------- */
#define CLDM_HEAP_MAGIC 0x4D444C43u /* "CLDM" in little-endian bytes */
#define CLDM_HEAP_LAYOUT_VERSION 17u

/* ---- granularity ------------------------------------------------------------------------- */
#define CLDM_GRANULE_SHIFT 4u /* every allocation is a multiple of 16 bytes */
#define CLDM_GRANULE_BYTES 16u
#define CLDM_PAGE_SHIFT 16u
#define CLDM_PAGE_BYTES 65536u /* 64 KiB: unit of the page pool (spec 1.2) */
#define CLDM_PAGE_UNITS (CLDM_PAGE_BYTES >> CLDM_GRANULE_SHIFT) /* 4096 granules per page */

/* ---- size classes ------------------------------------------------------------------------ */
/* Classes 0..7: 16..128 bytes in 16-byte steps. Classes 8..71: eight steps per power of two,
 * octave o (0..7) covering (128 << o, 256 << o] in steps of (16 << o) bytes:
 * 144..256 by 16, 288..512 by 32, ..., 18432..32768 by 2048. Worst rounding loss 1/9 (11 %).
 * A slab of a class is a span of 1, 2, 4 or 8 aligned pages (cldm_class_span_pages): the
 * fewest that the class's slots fill to at least 95 % and, in heaps of at least
 * CLDM_BIG_SLABS_PAGES, that hold at least CLDM_SLAB_SLOTS_MIN slots (8 pages where fewer do).
 * A slab is what one refill of a current slab hands out, so there the larger classes' refills
 * come up to 8 times rarer (at 4 KiB: one per 128 allocations rather than per 16, which a warp
 * of 32 callers would use up twice). Smaller heaps keep small slabs: one slab of every class
 * takes 150 pages with them, 328 with large ones, more than an 8 MiB heap has, and in a heap of
 * a few hundred MiB filled with mixed sizes partly used large slabs hold blocks that no other
 * class can use. */
#define CLDM_NUM_CLASSES 72u
#define CLDM_MAX_CLASS_BYTES 32768u   /* larger requests take runs of whole pages */
#define CLDM_SLOTS_PER_PAGE_MAX 4096u /* 16-byte class: 65536 / 16 */
#define CLDM_SLOT_BITMAP_WORDS 128u   /* 4096 bits: one bitmap per page (used by span heads) */
#define CLDM_SLOT_BITMAP_BYTES (CLDM_SLOT_BITMAP_WORDS * 4u)
#define CLDM_SPAN_PAGES_MAX 8u
#define CLDM_SLAB_SLOTS_MIN 128u    /* slots a slab of a large heap holds, where 8 pages allow */
#define CLDM_BIG_SLABS_PAGES 16384u /* large heap: at least 1 GiB of pages */

/* ---- page descriptor (one 32-bit word per page) ------------------------------------------ */
/* bits 31..24: kind; bit 23: watch; bits 22..0: count.
 *   kind 0            free page (its pool bit is clear, or about to be)
 *   kind 1..72        head of a slab (span) of class kind-1; count = units held: one per set
 *                     slot bit, one per ticket not yet issued while the slab is a current page
 *                     (see cldm_slab_units.clh), one per search that pinned it for a moment; watch
 *                     (CLDM_DESC_WATCH, 0 in the image): a flush of the last resort kept the
 *                     slab current because it held an allocation (or a refill made a partly
 *                     used slab current again), and the next free from it counts
 *                     (CLDM_HDR_WORD_WATCHED) and clears the bit (a flush that raced with
 *                     the slab's end may leave the bit on any kind: every reader masks it)
 *   kind 0xF1..0xF7   later page of a span, at distance kind-0xF0 from its head; count 0
 *   kind LARGE_HEAD   first page of a run (large allocation)
 *   kind LARGE_TAIL   later page of a run
 * Kinds change only by adding or subtracting the kind byte (or by a CAS of the whole word), so
 * a count that a search added and takes back a moment later never loses a kind change. */
#define CLDM_DESC_KIND_SHIFT 24u
#define CLDM_DESC_COUNT_MASK 0x007FFFFFu
#define CLDM_DESC_WATCH 0x00800000u
#define CLDM_DESC_KIND_FREE 0u
#define CLDM_DESC_KIND_SPAN_TAIL0 0xF0u /* + distance to the head, 1..7 */
#define CLDM_DESC_KIND_LARGE_TAIL 0xFEu
#define CLDM_DESC_KIND_LARGE_HEAD 0xFFu

/* ---- current pages: one 64-bit word per (shard, class) ----------------------------------- */
/* bits 30..0: the slab's head page (CLDM_W_NO_PAGE: none yet); bit 31: CLDM_W_SEARCH; bits
 * 63..32: tickets issued. A fresh slab's ticket t < slots names slot t; a partly used slab
 * made current again by the final path (CLDM_W_SEARCH set) issues tickets slots - n .. slots - 1
 * for the n slots it had free, each a reservation of any clear slot (cldm_slab_reinstall.clh).
 * Rows of CLDM_W_ROW_WORDS words (640 bytes: shards share no 64-byte line); word CLDM_W_CURSOR of a
 * row holds the shard's pool cursor.
 * After the num_shards rows, one more row, the class row: word c's low 32 bits are class c's
 * shard level L (0 in the image): its calls use the first min(2^L, cldm_class_shards()) rows
 * (device/cl/cldm_slab_refill.clh, cldm_class_grow); its high 32 bits are class c's room count (0
 * in the image): how often a slab of class c went from full (count >= slots) to not full. Then the
 * stamp row: word c is the stamp of the last search of class c's last resort that found
 * nothing, low 32 bits the room count and high 32 bits the header's pool-give count it started
 * from (CLDM_STAMP_NONE in the low half, as in the image: no stamp; device/cl/cldm_slab_final.clh,
 * cldm_slab_final; the pool-give count is the sum of its shards, CLDM_W_GIVES below); in the
 * row after it, word c's low 32 bits are the header's install count
 * (CLDM_HDR_WORD_INSTALLS) plus its count of frees of watched slabs (CLDM_HDR_WORD_WATCHED) that
 * search saw (0 in the image), its high 32 bits class c's drawn stamp (0 in the image: none):
 * its change count + 1 when a borrower last drew from every current slab of it and found no
 * ticket (device/cl/cldm_slab_borrow.clh, cldm_slab_borrow); in the row after that, word c is
 * class c's change count (low 32 bits: slabs of the class installed, units given back) and its
 * refills in progress (high 32 bits), both 0 in the image: what the class's last resort watches,
 * so that events of other classes do not send its search round again. */
#define CLDM_W_ROW_WORDS 80u
#define CLDM_W_CURSOR 79u
/* After that row, CLDM_W_DIRTY_ROWS rows of the classes' dirty words (0 in the image): class
 * c's word i is word c of the i / 2-th of them, its low 32 bits for an even i, its high 32 bits
 * for an odd one (device/cl/cldm_heap.clh, cldm_class_dirty). Words 0 .. CLDM_DIRTY_ROW_WORDS - 1
 * hold a bit per shard row (bit s % 32 of word s / 32 set: a slab that no flush has looked at
 * since was made current in row s, device/cl/cldm_slab_refill.clh, cldm_slab_counted), word
 * CLDM_DIRTY_WATCHED the header's count of frees of watched slabs for which a flush last took
 * every row of the class (cldm_slab_flush). A flush reads the rows whose bit it cleared, and
 * every row when it moved that word to a newer count. */
#define CLDM_W_DIRTY_ROW 4u                          /* its first row, after the shard rows */
#define CLDM_DIRTY_ROW_WORDS (CLDM_SHARDS_MAX / 32u) /* its bits: one per shard row */
#define CLDM_DIRTY_WATCHED CLDM_DIRTY_ROW_WORDS
#define CLDM_W_DIRTY_ROWS ((CLDM_DIRTY_WATCHED + 2u) / 2u) /* two 32-bit words a class a row */
#define CLDM_W_EXTRA_ROWS (CLDM_W_DIRTY_ROW + CLDM_W_DIRTY_ROWS) /* rows after the shard rows */
/* Row s's word CLDM_W_DRY, low 32 bits: CLDM_W_DRY_SET if shard s found the pool without a
 * span at its last refill (a hint; anything else: not). Row r's word CLDM_W_CLEARING, low 32
 * bits: the clears of room marks in progress of the classes c with c mod num_shards = r
 * (device/cl/cldm_room.clh), 0 in the image. */
#define CLDM_W_DRY 77u
#define CLDM_W_CLEARING 78u
/* The pool-give count (returns of pages to the pool, which the last resort's stamps compare:
 * device/cl/cldm_pool.clh, cldm_pool_given) in shards: the high half of word CLDM_W_GIVES of
 * the first min(num_shards, CLDM_GIVE_SHARDS_MAX) rows (0 in the image), a give counted in the
 * shard of its pool word, so that the gives of the slabs that frees retire (2^20 frees of 4 KiB
 * blocks retire 8192 slabs) do not all update one word. (The held pages' count, which the
 * exact peak needs, stays one word.) */
#define CLDM_W_GIVES 76u
#define CLDM_GIVE_SHARDS_MAX 32u
/* Words CLDM_W_POOL_FULL .. + 3 of the shard rows (0 in the image) hold the pool's summary, 8
 * 32-bit words a row: summary word i (row i / 8, 32-bit word i % 8 from there) has bit j set if
 * pool word 32 i + j was seen with every page taken, a hint that lets searches of the pool skip
 * 32 taken words with one load (device/cl/cldm_pool.clh). A heap of n pages has ceil(n / 1024)
 * summary words, which its rows always hold (cldm_heap_shards: one row per 8 pages at least up
 * to 256 rows, and CLDM_HEAP_MAX_PAGES / 1024 / 8 < CLDM_SHARDS_MAX). */
#define CLDM_W_POOL_FULL 72u
#define CLDM_W_POOL_FULL_WORDS 8u /* 32-bit summary words a row holds */
#define CLDM_W_DRY_SET 1u
#define CLDM_W_NO_PAGE 0xFFFFFFFFu
#define CLDM_STAMP_NONE 0xFFFFFFFFu      /* stamp row: no stamp */
#define CLDM_STAMP_SEARCHING 0xFFFFFFFEu /* ... a search in progress (CLDM_SLAB_FINAL_WAIT) */
#define CLDM_W_SEARCH 0x80000000u        /* in the page field: tickets reserve any clear slot */
#define CLDM_SHARDS_MAX 256u
#define CLDM_PAGES_PER_SHARD 4u /* one shard per 4 pages of the heap, a power of two */
/* The current slabs of one class (one per shard it uses) hold at most 1/16 of the pages, and
 * at least one slab. Pages in current slabs are lost to other classes and to large
 * allocations only until the pool runs dry: then the final path ends the epochs of the other
 * classes' current slabs (cldm_slab_flush), so the limit trades that path's work against
 * contention: each shard's current slab is one word that all its callers add to, and a class
 * with few shards makes 10^5 work-items queue on few words and refill them one after another. */
#define CLDM_CLASS_HOARD_DIV 16u
/* Shards a class uses before any contention (cldm_class_used): as many as hold 1/256 of the
 * pages, which costs little even with every class in use (72/256 of the heap at most). Fewer
 * (a larger divisor) lose less of a nearly full heap to current slabs but make a fresh heap's
 * first launch queue on few W words until contention spreads the classes. */
#define CLDM_CLASS_FLOOR_DIV 256u

/* ---- limits ------------------------------------------------------------------------------ */
#define CLDM_HEAP_MIN_BYTES (1u << 20) /* 1 MiB usable (CL_DEVICE_HEAP_SIZE_MIN_EXT) */
#define CLDM_HEAP_MIN_PAGES (CLDM_HEAP_MIN_BYTES / CLDM_PAGE_BYTES)
/* Bytes in use are counted in 32-bit granule units: the usable heap stays below 64 GiB. */
#define CLDM_HEAP_MAX_PAGES ((1u << 20) - 1u) /* 64 GiB - 64 KiB usable */
#define CLDM_HEADER_BYTES 256u
#define CLDM_META_ALIGN 64u /* metadata arrays start on 64-byte lines */

/* ---- the room index (device/cl/cldm_room.clh) --------------------------------------------- */
/* After the pool's words, at the next 64-byte line (0 in the image): the classes' mask, one
 * line of CLDM_ROOM_TOP_WORDS words (bit c % 32 of word c / 32 set: class c's row may have a
 * bit set), then one row per class, CLDM_NUM_CLASSES rows of cldm_room_row_words() words. A row
 * is its summary, ceil(pool_words / 32) words (bit j of word i set: index word 32 i + j may have
 * a bit set), then its index, pool_words words with a bit per page (bit set: the page may be
 * the head of a slab of the class with a free slot nobody holds). Every
 * such slab has its bit, its summary bit and its class's bit between launches (the last resort
 * relies on it while a launch runs, cldm_room.clh); a bit may also be set where the slab has
 * none (the head's descriptor decides). */
#define CLDM_ROOM_TOP_WORDS 16u /* the classes' mask: 3 words used, a line of its own */

/* Words of a row's summary, for a pool of `pool_words` words. */
static inline cldm_u32 cldm_room_summary_words(cldm_u32 pool_words) {
  return (pool_words + 31u) / 32u;
}
/* Words of one class's row (summary and index), a multiple of 16 (rows on their own lines). */
static inline cldm_u32 cldm_room_row_words(cldm_u32 pool_words) {
  return (cldm_room_summary_words(pool_words) + pool_words + 15u) & ~15u;
}
/* Bytes from the pool's first word to the room index's (the pool starts on a 64-byte line). */
static inline cldm_u32 cldm_room_after_pool_bytes(cldm_u32 pool_words) {
  return (4u * pool_words + CLDM_META_ALIGN - 1u) & ~(CLDM_META_ALIGN - 1u);
}
/* Bytes of the whole room index: the classes' mask and every class's row. */
static inline cldm_u32 cldm_room_bytes(cldm_u32 pool_words) {
  return 4u * (CLDM_ROOM_TOP_WORDS + CLDM_NUM_CLASSES * cldm_room_row_words(pool_words));
}

/* ---- the page area ----------------------------------------------------------------------- */
/* Page 0 starts at the first CLDM_PAGE_BYTES-aligned device address at or after base +
 * pages_offset, so that every page is aligned to its size in absolute address and every slot of
 * a class whose size is a multiple of a power of two a <= CLDM_MAX_CLASS_BYTES is a-aligned
 * (aligned_alloc, spec 2.1). Where that is depends on the buffer's device address, which the
 * host may not know (a cl_mem buffer's), so the device computes it at each call
 * (cldm_heap_pages_pad on the address's low bits) and the buffer holds CLDM_PAGES_SLACK_BYTES
 * for it: the most that the pad can be for a base aligned to CLDM_BASE_ALIGN_MIN bytes, which
 * OpenCL guarantees (CL_DEVICE_MEM_BASE_ADDR_ALIGN is at least the size of the largest built-in
 * type, int16 or long16, and so is clSVMAlloc's default alignment). The pad never exceeds the
 * slack: a base less aligned than that gets pages aligned only as far as its own alignment
 * allows, and the allocator then serves larger alignments with padding inside whole pages. */
#define CLDM_BASE_ALIGN_MIN 64u /* bytes: the least heap base alignment the layout assumes */
#define CLDM_PAGES_SLACK_BYTES (CLDM_PAGE_BYTES - CLDM_BASE_ALIGN_MIN)

/* Bytes from base + pages_offset to page 0, given the low 32 bits of that address. */
static inline cldm_u32 cldm_heap_pages_pad(cldm_u32 first_addr_lo) {
  return (0u - first_addr_lo) & (CLDM_PAGE_BYTES - 1u) & ~(CLDM_BASE_ALIGN_MIN - 1u);
}

/* ---- header at offset 0 ------------------------------------------------------------------ */
/* Counters sit on their own 64-byte lines. Every counter update is a relaxed atomic; values
 * are exact once the kernels that changed them have completed (spec 1.3). */
typedef struct cldm_heap_header {
  /* line 0: geometry, written by the host image, read-only on the device */
  cldm_u32 magic;          /*  0 CLDM_HEAP_MAGIC */
  cldm_u32 layout_version; /*  4 CLDM_HEAP_LAYOUT_VERSION */
  cldm_u32 page_bytes;     /*  8 CLDM_PAGE_BYTES */
  cldm_u32 num_pages;      /* 12 pages in the pool */
  cldm_u32 num_classes;    /* 16 CLDM_NUM_CLASSES */
  cldm_u32 num_shards;     /* 20 rows of W, a power of two (cldm_heap_shards) */
  cldm_u32 w_offset;       /* 24 bytes from the heap base: u64[num_shards][CLDM_W_ROW_WORDS] */
  cldm_u32 descs_offset;   /* 28 u32[num_pages] page descriptors */
  cldm_u32 pool_offset;    /* 32 u32[pool_words] bit set = page taken (the truth: a page is
                                  taken by the atomic or that sets its bit) */
  cldm_u32 pool_words;     /* 36 */
  cldm_u32 bitmaps_offset; /* 40 u32[num_pages][CLDM_SLOT_BITMAP_WORDS] slot bitmaps */
  cldm_u32 image_bytes;    /* 44 bytes the host writes to create/reset the heap: header and
                                  all metadata up to the first page */
  cldm_u64 pages_offset;   /* 48 start of the page area, a multiple of CLDM_BASE_ALIGN_MIN;
                                  page 0 is the first page-aligned address from there
                                  (cldm_heap_pages_pad) */
  cldm_u64 usable_bytes;   /* 56 num_pages * CLDM_PAGE_BYTES */
  /* line 1: use */
  cldm_u32 held_pages; /* 64 pages taken from the pool for slabs and runs (bytes in use and
                               live allocations are counted from the descriptors) */
  cldm_u32 reserved68; /* 68 (live allocations are counted from the descriptors) */
  cldm_u32 peak_pages; /* 72 largest held_pages since creation or reset */
  cldm_u32 pad1[13];   /* 76 [0], [1]: CLDM_HDR_WORD_SPREAD, _SPREAD_PAGES; [2..12]: probe
                               builds' path counters (CLDM_HDR_WORD_PROBE) */
  /* line 2 */
  cldm_u32 failed_lo; /* 128 failed allocations, 64-bit as (lo, hi) */
  cldm_u32 failed_hi; /* 132 */
  cldm_u32 changes;   /* 136 slabs installed and units given back: a hint the allocator's
                               last resort reads, with the pool-give count below, to see that
                               the heap changed during its search (device/cl/cldm_slab_final.clh) */
  cldm_u32 refilling; /* 140 slab refills in progress (pool searched, slab not yet installed or
                               given back): a hint for the same search */
  cldm_u32 pad2[12];  /* 144 [0]: unused (the pool-give count was here; it is in the rows of
                               W now, CLDM_W_GIVES); [1]: slabs made current that no flush
                               has watched, fresh spans among them (CLDM_HDR_WORD_INSTALLS);
                               [2]: frees of watched slabs
                               (CLDM_HDR_WORD_WATCHED); [3..6]: the pool's dry stamps for spans
                               of 1, 2, 4, 8 pages (CLDM_HDR_WORD_DRY_SPANS); [7..10]: the
                               dirty classes and the count for them
                               (CLDM_HDR_WORD_DIRTY_CLASSES, CLDM_HDR_WORD_DIRTY_ALL) */
  /* line 3 */
  cldm_u32 invalid_lo;   /* 192 invalid frees, 64-bit as (lo, hi) */
  cldm_u32 invalid_hi;   /* 196 */
  cldm_u64 buffer_bytes; /* 200 size of the whole buffer (header + metadata + slack +
                                 pages) */
  cldm_u32 pad3[12];     /* 208 [0]: checked heaps' check area (below), bytes from the heap
                                  base, 0 if the heap is not checked; [1]: its event-log
                                  entries; [2], [3]: throwing operator new calls that failed
                                  (CLDM_HDR_WORD_*: the words are named there, not as
                                  fields, so the type the other modules see is unchanged) */
} cldm_heap_header;      /* 256 bytes = CLDM_HEADER_BYTES */

/* Header field offsets, in 32-bit words (the device addresses counters by word index). */
#define CLDM_HDR_WORD_HELD_PAGES 16u
#define CLDM_HDR_WORD_PEAK_PAGES 18u
#define CLDM_HDR_WORD_FAILED_LO 32u
#define CLDM_HDR_WORD_CHANGES 34u
#define CLDM_HDR_WORD_REFILLING 35u
#define CLDM_HDR_WORD_INSTALLS 37u /* pad2[1]: slabs made current unwatched (a flush may end) */
#define CLDM_HDR_WORD_WATCHED 38u  /* pad2[2]: frees of watched slabs (CLDM_DESC_WATCH) */
/* pad2[3 + log2 k]: the pool-give count + 1 as read before an exact read of the pool that found
 * no free span of k pages (0 in the image: none; device/cl/cldm_pool_span.clh,
 * cldm_pool_has_span) */
#define CLDM_HDR_WORD_DRY_SPANS 39u
#define CLDM_DRY_SPANS 4u /* spans of 1, 2, 4, 8 pages */
/* pad2[7 ..]: the dirty classes (0 in the image), word j with bit c % 32 set for class
 * c = 32 j + c % 32 after a row bit of the class's dirty words was set
 * (device/cl/cldm_slab_refill.clh, cldm_slab_counted), so that a flush reads the dirty words of
 * those classes alone; pad2[10]: the count of frees of watched slabs for which a flush went
 * through every class's word CLDM_DIRTY_WATCHED (cldm_slab_flush). In the header, not in W's
 * rows: its base is at hand where a slab is installed (an address in W's rows would cost the PTX
 * route's kernels that allocate registers). */
#define CLDM_HDR_WORD_DIRTY_CLASSES 43u
#define CLDM_DIRTY_CLASS_WORDS ((CLDM_NUM_CLASSES + 31u) / 32u) /* a bit a class */
#define CLDM_HDR_WORD_DIRTY_ALL 46u
#define CLDM_HDR_WORD_INVALID_LO 48u
#define CLDM_HDR_WORD_CHECK_OFFSET 52u   /* pad3[0] */
#define CLDM_HDR_WORD_CHECK_CAPACITY 53u /* pad3[1] */
#define CLDM_HDR_WORD_SPREAD 19u         /* pad1[0]: calls of the cl20spread test variant */
#define CLDM_HDR_WORD_SPREAD_PAGES 20u   /* pad1[1]: pages the classes' spread may hold */
#define CLDM_HDR_WORD_PROBE 21u  /* pad1[2..12]: path counters of probe builds (cldm_probe.clh) */
#define CLDM_HDR_PROBE_WORDS 11u /* ... that many */
/* The current slabs that classes add by spreading over more shards (device/cl/cldm_slab_refill.clh,
 * cldm_class_spread) may hold at most 1/CLDM_SPREAD_BUDGET_DIV of the pages, all classes
 * together (each class's first shard is not counted). */
#define CLDM_SPREAD_BUDGET_DIV 8u
#define cldm_hdr_check_offset(hd) ((hd).pad3[0])
#define cldm_hdr_check_capacity(hd) ((hd).pad3[1])
/* pad3[2], [3]: calls of a throwing operator new that got NULL and stopped their work-item
 * (spec 2.2), 64-bit as (lo, hi), 0 in the image (device/cl/cldm_alloc.cl, cldm_new_failed) */
#define CLDM_HDR_WORD_NEW_FAILED_LO 54u
#define cldm_hdr_new_failed(hd) (((cldm_u64)(hd).pad3[3] << 32) | (hd).pad3[2])

/* ---- checked mode (device/cl/cldm_check.clh; built with CLDM_CHECKED=1) ----------------- */
/* A checked heap has a check area after the slot bitmaps, inside the image (creation and reset
 * clear it), 64-byte aligned:
 *   line 0   u32 next: event-log entries claimed (fetch-and-add; claims past the capacity are
 *            not written: the event is only counted); u32 base (lo, hi): the heap's device
 *            address, stored by the first checked allocations (the host names addresses of
 *            buffer heaps with it); the other words are zero
 *   line 1   u32[CLDM_CHECK_KINDS][2] events per kind, 64-bit as (lo, hi), since creation or
 *            reset (kind 0 unused)
 *   entries  cldm_check_entry[check_capacity], 32 bytes each
 * An entry's kind is written last, with release order: 0 means not (yet) written. */
#define CLDM_CHECK_FREE_DOUBLE 1u      /* free of a block already freed (its freed mark) */
#define CLDM_CHECK_FREE_INTERIOR 2u    /* free of a pointer inside an allocation, not its start */
#define CLDM_CHECK_FREE_OUTSIDE 3u     /* free of a pointer outside the heap's pages */
#define CLDM_CHECK_FREE_UNALLOCATED 4u /* free of a block start that was never allocated */
#define CLDM_CHECK_OVERFLOW 5u         /* guard bytes after an allocation were overwritten */
#define CLDM_CHECK_ALLOC_FAILED 6u     /* an allocation returned NULL (heap full) */
#define CLDM_CHECK_KINDS 8u            /* kinds 1..6 used, room for two more */
#define CLDM_CHECK_AREA_HEADER_BYTES 128u
#define CLDM_CHECK_WORD_NEXT 0u    /* word index in the check area */
#define CLDM_CHECK_WORD_BASE 2u    /* (lo, hi) */
#define CLDM_CHECK_WORD_COUNTS 16u /* + 2 * kind: (lo, hi) */
#define CLDM_CHECK_ENTRY_BYTES 32u
#define CLDM_CHECK_LOG_ENTRIES 256u /* entries of a checked heap's event log (8 KiB) */

typedef struct cldm_check_entry {
  cldm_u32 kind;        /*  0 CLDM_CHECK_*, written last; 0: no event */
  cldm_u32 block_bytes; /*  4 overflow: bytes of the block (0xFFFFFFFF: 4 GiB or more); else 0 */
  cldm_u64 address;     /*  8 the pointer freed, or the block overflowed (device address);
                                 allocation failure: 0 */
  cldm_u64 offset;      /* 16 address - heap base (wraps below the base) */
  cldm_u64 size;        /* 24 overflow: requested size (CLDM_CHECK_SIZE_UNKNOWN if the trailer
                                 was overwritten too); allocation failure: requested size;
                                 frees: 0 */
} cldm_check_entry;
#define CLDM_CHECK_SIZE_UNKNOWN 0xFFFFFFFFFFFFFFFFul

/* A checked allocation of `size` bytes takes a block of at least size + CLDM_CHECK_EXTRA_BYTES:
 *   | user bytes (size) | guard: CLDM_CHECK_GUARD_BYTE ... | trailer (8 bytes) |   block end
 * The guard runs from size to the trailer, at least CLDM_CHECK_GUARD_MIN_BYTES, and is written
 * and checked up to CLDM_CHECK_GUARD_MAX_BYTES (large blocks: the rest is not checked). The
 * trailer is u32 tail = block bytes - size, u32 seal = CLDM_CHECK_TRAILER_MAGIC ^ tail ^
 * (block offset from the heap base / 16). A freed block's first 8 bytes become u32
 * CLDM_CHECK_FREED_MAGIC, u32 (block offset / 16): the freed mark that tells a double free from
 * a free of a never-allocated block. */
#define CLDM_CHECK_TRAILER_BYTES 8u
#define CLDM_CHECK_GUARD_MIN_BYTES 8u
#define CLDM_CHECK_EXTRA_BYTES (CLDM_CHECK_TRAILER_BYTES + CLDM_CHECK_GUARD_MIN_BYTES)
#define CLDM_CHECK_GUARD_MAX_BYTES 256u
#define CLDM_CHECK_GUARD_BYTE 0xCBu
#define CLDM_CHECK_TRAILER_MAGIC 0x4B434843u /* "CHCK" */
#define CLDM_CHECK_FREED_MAGIC 0x45455246u   /* "FREE" */

/* The trailer's seal for a block at `block_offset` bytes from the heap base. */
static inline cldm_u32 cldm_check_seal(cldm_u32 tail, cldm_u64 block_offset) {
  return CLDM_CHECK_TRAILER_MAGIC ^ tail ^ (cldm_u32)(block_offset >> 4);
}

/* ---- size-class arithmetic (identical on host and device) -------------------------------- */

/* Bytes of class `c` (c < CLDM_NUM_CLASSES). */
static inline cldm_u32 cldm_class_bytes(cldm_u32 c) {
  if (c < 8u)
    return (c + 1u) << CLDM_GRANULE_SHIFT;
  cldm_u32 k = c - 8u, octave = k >> 3, step = k & 7u;
  return (9u + step) << (CLDM_GRANULE_SHIFT + octave);
}

/* Index of the floor of log2(x), x > 0, without builtins (shared by C and OpenCL C). */
static inline cldm_u32 cldm_log2_floor(cldm_u32 x) {
  cldm_u32 r = 0u;
  if (x >> 16) {
    x >>= 16;
    r += 16u;
  }
  if (x >> 8) {
    x >>= 8;
    r += 8u;
  }
  if (x >> 4) {
    x >>= 4;
    r += 4u;
  }
  if (x >> 2) {
    x >>= 2;
    r += 2u;
  }
  if (x >> 1) {
    r += 1u;
  }
  return r;
}

/* Smallest class holding `bytes` (1..CLDM_MAX_CLASS_BYTES). */
static inline cldm_u32 cldm_class_of(cldm_u32 bytes) {
  cldm_u32 g = (bytes + CLDM_GRANULE_BYTES - 1u) >> CLDM_GRANULE_SHIFT; /* granules, 1..2048 */
  if (g <= 8u)
    return g - 1u;
  cldm_u32 octave = cldm_log2_floor(g - 1u) - 3u;       /* g in (8 << octave, 16 << octave] */
  cldm_u32 steps = (g + (1u << octave) - 1u) >> octave; /* ceil(g / step), 9..16 */
  return 8u + (octave << 3) + (steps - 9u);
}

/* Pages of a slab of class `c` in a heap of `num_pages` pages: the fewest of 1, 2, 4, 8 whose
 * slots fill >= 95 % of them and, in a large heap, number at least CLDM_SLAB_SLOTS_MIN (8 if
 * fewer do). */
static inline cldm_u32 cldm_class_span_pages(cldm_u32 c, cldm_u32 num_pages) {
  cldm_u32 bytes = cldm_class_bytes(c), k = 1u;
  cldm_u32 slots_min = num_pages >= CLDM_BIG_SLABS_PAGES ? CLDM_SLAB_SLOTS_MIN : 1u;
  while (k < CLDM_SPAN_PAGES_MAX &&
         (((k << CLDM_PAGE_SHIFT) / bytes) * bytes * 20u < (k << CLDM_PAGE_SHIFT) * 19u ||
          (k << CLDM_PAGE_SHIFT) / bytes < slots_min))
    k <<= 1;
  return k;
}

/* The span as a constant expression of a class index known at compile time: `min` is the
 * slots a slab must hold (1, or CLDM_SLAB_SLOTS_MIN in a heap of at least CLDM_BIG_SLABS_PAGES).
 * CLDM_CLASS_SPAN_BITS(j, min) packs the log2 of the spans of classes 32j .. 32j + 31 into one
 * 64-bit constant, two bits a class, so that the device reads a class's span from an immediate
 * (device/cl/cldm_geom.clh: no table, no division). tests/device/test_layout.c checks them
 * against cldm_class_span_pages() for every class. */
#define CLDM_CLASS_BYTES_CONST(c)                                                                  \
  ((c) < 8u ? ((c) + 1u) << CLDM_GRANULE_SHIFT                                                     \
            : (9u + (((c)-8u) & 7u)) << (CLDM_GRANULE_SHIFT + (((c)-8u) >> 3)))
#define CLDM_CLASS_SLOTS_IN_CONST(c, k) (((k) << CLDM_PAGE_SHIFT) / CLDM_CLASS_BYTES_CONST(c))
#define CLDM_CLASS_SPAN_FITS_CONST(c, k, min)                                                      \
  (CLDM_CLASS_SLOTS_IN_CONST(c, k) * CLDM_CLASS_BYTES_CONST(c) * 20u >=                            \
       ((k) << CLDM_PAGE_SHIFT) * 19u &&                                                           \
   CLDM_CLASS_SLOTS_IN_CONST(c, k) >= (min))
#define CLDM_CLASS_SPAN_LOG2_CONST(c, min)                                                         \
  (CLDM_CLASS_SPAN_FITS_CONST(c, 1u, min)   ? 0u                                                   \
   : CLDM_CLASS_SPAN_FITS_CONST(c, 2u, min) ? 1u                                                   \
   : CLDM_CLASS_SPAN_FITS_CONST(c, 4u, min) ? 2u                                                   \
                                            : 3u)
/* X(c, arg) for every class c */
/* clang-format off */
#define CLDM_CLASS_LIST(X, arg) \
  X(0u, arg) X(1u, arg) X(2u, arg) X(3u, arg) X(4u, arg) X(5u, arg) X(6u, arg) X(7u, arg)         \
  X(8u, arg) X(9u, arg) X(10u, arg) X(11u, arg) X(12u, arg) X(13u, arg) X(14u, arg) X(15u, arg)   \
  X(16u, arg) X(17u, arg) X(18u, arg) X(19u, arg) X(20u, arg) X(21u, arg) X(22u, arg) X(23u, arg) \
  X(24u, arg) X(25u, arg) X(26u, arg) X(27u, arg) X(28u, arg) X(29u, arg) X(30u, arg) X(31u, arg) \
  X(32u, arg) X(33u, arg) X(34u, arg) X(35u, arg) X(36u, arg) X(37u, arg) X(38u, arg) X(39u, arg) \
  X(40u, arg) X(41u, arg) X(42u, arg) X(43u, arg) X(44u, arg) X(45u, arg) X(46u, arg) X(47u, arg) \
  X(48u, arg) X(49u, arg) X(50u, arg) X(51u, arg) X(52u, arg) X(53u, arg) X(54u, arg) X(55u, arg) \
  X(56u, arg) X(57u, arg) X(58u, arg) X(59u, arg) X(60u, arg) X(61u, arg) X(62u, arg) X(63u, arg) \
  X(64u, arg) X(65u, arg) X(66u, arg) X(67u, arg) X(68u, arg) X(69u, arg) X(70u, arg) X(71u, arg)
/* clang-format on */
#define CLDM_ARG1(a, b) a
#define CLDM_ARG2(a, b) b
#define CLDM_CLASS_SPAN_BITS_ENTRY(c, jm)                                                          \
  (((cldm_u64)CLDM_CLASS_SPAN_LOG2_CONST(c, CLDM_ARG2 jm) << (2u * ((c)&31u))) *                   \
   (cldm_u64)(((c) >> 5) == CLDM_ARG1 jm)) |
#define CLDM_CLASS_SPAN_BITS(j, min) (CLDM_CLASS_LIST(CLDM_CLASS_SPAN_BITS_ENTRY, (j, min)) 0u)

/* Slots of a slab of class `c` in a heap of `num_pages` pages. */
static inline cldm_u32 cldm_class_slots(cldm_u32 c, cldm_u32 num_pages) {
  cldm_u32 n = (cldm_class_span_pages(c, num_pages) << CLDM_PAGE_SHIFT) / cldm_class_bytes(c);
  return n < CLDM_SLOTS_PER_PAGE_MAX ? n : CLDM_SLOTS_PER_PAGE_MAX;
}

/* Shards (rows of W) of a heap of `num_pages` pages: one per CLDM_PAGES_PER_SHARD pages,
 * rounded down to a power of two, 1..CLDM_SHARDS_MAX. */
static inline cldm_u32 cldm_heap_shards(cldm_u32 num_pages) {
  cldm_u32 want = num_pages / CLDM_PAGES_PER_SHARD, n = 1u;
  while (n * 2u <= want && n * 2u <= CLDM_SHARDS_MAX)
    n *= 2u;
  return n;
}

/* The most shards class `c` uses (its current slabs): the first cldm_class_shards() rows of W,
 * a power of two, 1..num_shards, so that they hold at most num_pages / CLDM_CLASS_HOARD_DIV
 * pages. How many of them it uses at a time: cldm_class_used(). */
static inline cldm_u32 cldm_class_shards(cldm_u32 num_shards, cldm_u32 num_pages, cldm_u32 c) {
  cldm_u32 want = num_pages / (CLDM_CLASS_HOARD_DIV * cldm_class_span_pages(c, num_pages)), n = 1u;
  while (n * 2u <= want && n * 2u <= num_shards)
    n *= 2u;
  return n;
}

/* Shards class `c` uses at shard level `level` (device/cl/cldm_slab_refill.clh, cldm_class_spread):
 * 2^level, at least as many as hold num_pages / CLDM_CLASS_FLOOR_DIV pages, at most
 * cldm_class_shards(); a power of two. */
static inline cldm_u32 cldm_class_used(cldm_u32 num_shards, cldm_u32 num_pages, cldm_u32 c,
                                       cldm_u32 level) {
  cldm_u32 cap = cldm_class_shards(num_shards, num_pages, c);
  cldm_u32 want = num_pages / (CLDM_CLASS_FLOOR_DIV * cldm_class_span_pages(c, num_pages)), n = 1u;
  while (n * 2u <= want && n * 2u <= cap)
    n *= 2u;
  if (level >= 31u || (1u << level) > n)
    n = level < 31u && (1u << level) < cap ? 1u << level : cap;
  return n;
}

/* The largest power of two <= x (1 for 0): by the count of leading zeros (a builtin of each
 * language), or by cldm_log2_floor's branches where CLDM_NV is set: the PTX route keeps the form
 * its tuning was measured with, while on a CPU device (pocl) the branches cost a large share of
 * a malloc. */
static inline cldm_u32 cldm_pow2_floor_log2(cldm_u32 x) {
  return x ? 1u << cldm_log2_floor(x) : 1u;
}
static inline cldm_u32 cldm_pow2_floor_clz(cldm_u32 x) {
#ifdef __OPENCL_C_VERSION__
  return x ? 1u << (31u - clz(x)) : 1u;
#else
  return x ? 1u << (31u - (cldm_u32)__builtin_clz(x)) : 1u;
#endif
}
static inline cldm_u32 cldm_pow2_floor(cldm_u32 x) {
#if defined(__OPENCL_C_VERSION__) && CLDM_NV
  return cldm_pow2_floor_log2(x);
#else
  return cldm_pow2_floor_clz(x);
#endif
}

/* cldm_class_shards() and cldm_class_used() of a class whose span is 2^span_log2 pages, with
 * shifts instead of divisions and loops (the pages per shard and both divisors are powers of
 * two): the cap, the floor (the rows at level 0) and the rows at a level, 2^level within
 * [floor, cap]. tests/device/test_layout.c checks them against those for every class, heap size
 * and level. */
static inline cldm_u32 cldm_class_shards_by_span(cldm_u32 num_shards, cldm_u32 num_pages,
                                                 cldm_u32 span_log2) {
  cldm_u32 n = cldm_pow2_floor(num_pages >> (cldm_log2_floor(CLDM_CLASS_HOARD_DIV) + span_log2));
  return n < num_shards ? n : num_shards;
}
static inline cldm_u32 cldm_class_floor_by_span(cldm_u32 num_pages, cldm_u32 span_log2,
                                                cldm_u32 cap) {
  cldm_u32 n = cldm_pow2_floor(num_pages >> (cldm_log2_floor(CLDM_CLASS_FLOOR_DIV) + span_log2));
  return n < cap ? n : cap;
}
static inline cldm_u32 cldm_class_used_clamp(cldm_u32 floor, cldm_u32 cap, cldm_u32 level) {
  cldm_u32 n = level < 31u ? 1u << level : cap;
  return n < floor ? floor : n < cap ? n : cap;
}
/* (the PTX route's form, see cldm_pow2_floor: the same as cldm_class_used_clamp of the floor and
 * the cap) */
static inline cldm_u32 cldm_class_used_by_span(cldm_u32 num_shards, cldm_u32 num_pages,
                                               cldm_u32 span_log2, cldm_u32 level) {
  cldm_u32 cap = cldm_class_shards_by_span(num_shards, num_pages, span_log2);
  cldm_u32 n = cldm_pow2_floor(num_pages >> (cldm_log2_floor(CLDM_CLASS_FLOOR_DIV) + span_log2));
  n = n < cap ? n : cap;
  if (level >= 31u || (1u << level) > n)
    n = level < 31u && (1u << level) < cap ? 1u << level : cap;
  return n;
}

#endif /* CLDM_HEAP_LAYOUT_H */
