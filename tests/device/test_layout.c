/*
 * test_layout.c — host-only tests of the heap layout helpers (cldm_device.h) and of the
 * size-class arithmetic shared with the device (cldm_heap_layout.h).
 */
#include <setjmp.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cldm_device.h"
#include "cldm_heap_layout.h"

#define MiB (1ull << 20)

/* The classes' dirty words fit their rows: word c of a row for class c (a class's words before
 * the pool summary's), two 32-bit words in each, the watched count after the row bits. */
_Static_assert(CLDM_NUM_CLASSES <= CLDM_W_POOL_FULL, "a dirty row holds every class's word");
_Static_assert(2u * CLDM_W_DIRTY_ROWS > CLDM_DIRTY_WATCHED, "the dirty rows hold every word");
/* The dirty classes and the heap's watched count for them sit in pad2[7 ..] of the header
 * (pad2 is header words 36-47; [0]-[6] are taken). */
_Static_assert(32u * CLDM_DIRTY_CLASS_WORDS >= CLDM_NUM_CLASSES, "a bit for every class");
_Static_assert(CLDM_HDR_WORD_DIRTY_CLASSES >= CLDM_HDR_WORD_DRY_SPANS + CLDM_DRY_SPANS,
               "the dirty classes after the dry stamps");
_Static_assert(CLDM_HDR_WORD_DIRTY_CLASSES + CLDM_DIRTY_CLASS_WORDS <= CLDM_HDR_WORD_DIRTY_ALL,
               "the dirty classes before the watched count");
_Static_assert(CLDM_HDR_WORD_DIRTY_ALL < CLDM_HDR_WORD_INVALID_LO, "within pad2");
_Static_assert(offsetof(cldm_heap_header, pad2) == 4u * 36u, "pad2 is words 36-47");

/* The image of a fresh heap in a buffer of `buf` bytes (the caller frees it); its statistics
 * span in *span. */
static unsigned char *image_of(uint64_t buf, size_t *span) {
  size_t n = cldm_heap_image_size(buf);
  unsigned char *img = malloc(n);
  assert_non_null(img);
  assert_int_equal(cldm_heap_image_write(buf, img, n), 0);
  *span = cldm_heap_stats_span(buf);
  return img;
}

/* The header of a fresh image for a buffer of `buf` bytes (static storage). */
static const void *img_probe(uint64_t buf) {
  static unsigned char hdr_copy[CLDM_HEADER_BYTES];
  size_t span;
  unsigned char *img = image_of(buf, &span);
  memcpy(hdr_copy, img, sizeof hdr_copy);
  free(img);
  return hdr_copy;
}
#define GiB (1ull << 30)

/* Classes: strictly increasing multiples of 16 from 16 to 32 KiB; class_of picks the smallest
 * class that holds the size, for every size; at most 1/8 of a class is rounding (above 128 B). */
static void test_classes(void **state) {
  (void)state;
  assert_int_equal(cldm_class_bytes(0), 16);
  assert_int_equal(cldm_class_bytes(CLDM_NUM_CLASSES - 1), CLDM_MAX_CLASS_BYTES);
  for (uint32_t c = 1; c < CLDM_NUM_CLASSES; c++) {
    assert_true(cldm_class_bytes(c) > cldm_class_bytes(c - 1));
    assert_int_equal(cldm_class_bytes(c) % 16, 0);
    if (cldm_class_bytes(c - 1) >= 128) /* step <= 1/8 of the class below */
      assert_true(cldm_class_bytes(c) - cldm_class_bytes(c - 1) <= cldm_class_bytes(c - 1) / 8);
  }
  for (uint32_t size = 1; size <= CLDM_MAX_CLASS_BYTES; size++) {
    uint32_t c = cldm_class_of(size);
    assert_true(c < CLDM_NUM_CLASSES);
    assert_true(cldm_class_bytes(c) >= size);
    if (c > 0)
      assert_true(cldm_class_bytes(c - 1) < size);
  }
  for (uint32_t c = 0; c < CLDM_NUM_CLASSES; c++) {
    uint32_t slots = cldm_class_slots(c, 128); /* an 8 MiB heap */
    assert_true(slots >= 2 && slots <= CLDM_SLOTS_PER_PAGE_MAX);
    assert_true((uint64_t)slots * cldm_class_bytes(c) <=
                (uint64_t)cldm_class_span_pages(c, 128) * CLDM_PAGE_BYTES);
    /* slab pages of classes up to 4 KiB waste < 4 % of the page */
    if (cldm_class_bytes(c) <= 4096)
      assert_true((uint64_t)slots * cldm_class_bytes(c) * 100 >= 96ull * CLDM_PAGE_BYTES);
  }
  for (uint32_t x = 1; x < 100000; x++) { /* the shared log2 */
    uint32_t l = cldm_log2_floor(x);
    assert_true((1u << l) <= x && (l == 31 || x < (2u << l)));
  }
}

/* Sizes: usable = requested rounded down to pages, clamped; buffer = usable + metadata. */
static void test_sizes(void **state) {
  (void)state;
  assert_int_equal(cldm_heap_min_size(), MiB);
  assert_int_equal(cldm_heap_usable_size(8 * MiB), 8 * MiB);
  assert_int_equal(cldm_heap_usable_size(8 * MiB + 65535), 8 * MiB);
  assert_int_equal(cldm_heap_usable_size(8 * MiB + 65536), 8 * MiB + 65536);
  assert_int_equal(cldm_heap_usable_size(1000), MiB);
  assert_int_equal(cldm_heap_usable_size(1ull << 40), cldm_heap_max_size());
  assert_int_equal(cldm_heap_max_size(), 64 * GiB - 65536);
  uint64_t prev = 0;
  for (uint64_t req = MiB; req <= 16 * GiB; req = req * 3 / 2 + 4096) {
    uint64_t usable = cldm_heap_usable_size(req), buf = cldm_heap_buffer_size(req);
    assert_true(buf > usable);
    /* metadata about 0.8 % + 16 KiB, and the slack for aligning the pages */
    assert_true(buf - usable <= usable / 100 + 32768 + CLDM_PAGES_SLACK_BYTES);
    assert_true(buf >= prev);
    prev = buf;
    size_t image = cldm_heap_image_size(buf);
    assert_true(image >= CLDM_HEADER_BYTES && image < buf - usable);
    /* the buffer size maps back to the same heap */
    unsigned char *img = malloc(image);
    assert_non_null(img);
    assert_int_equal(cldm_heap_image_write(buf, img, image), 0);
    cldm_heap_header h;
    memcpy(&h, img, sizeof h);
    assert_int_equal(h.usable_bytes, usable);
    assert_int_equal(h.num_pages, usable / CLDM_PAGE_BYTES);
    assert_int_equal(h.pages_offset % CLDM_BASE_ALIGN_MIN, 0);
    assert_true(h.pages_offset + CLDM_PAGES_SLACK_BYTES + usable <= buf);
    assert_true(h.bitmaps_offset + (uint64_t)h.num_pages * CLDM_SLOT_BITMAP_BYTES <=
                h.pages_offset);
    assert_true(h.pool_offset + 4ull * h.pool_words <= h.image_bytes);
    /* the room index between the pool and the slot bitmaps, in the image, a row per class */
    assert_true(h.pool_offset + cldm_room_after_pool_bytes(h.pool_words) +
                    4ull * (CLDM_ROOM_TOP_WORDS +
                            CLDM_NUM_CLASSES * (uint64_t)cldm_room_row_words(h.pool_words)) <=
                h.bitmaps_offset);
    assert_true(CLDM_ROOM_TOP_WORDS * 32u >= CLDM_NUM_CLASSES);
    assert_true(cldm_room_row_words(h.pool_words) >=
                cldm_room_summary_words(h.pool_words) + h.pool_words);
    assert_true(h.descs_offset + 4ull * h.num_pages <= h.pool_offset);
    assert_true(h.w_offset >= CLDM_HEADER_BYTES && h.w_offset % 8 == 0);
    /* the shard rows, the class row, the stamp rows, the classes' change and refill counts,
     * their dirty words (word c of their rows, a bit for each of the heap's shard rows) */
    assert_true(h.w_offset + 8ull * CLDM_W_ROW_WORDS * (h.num_shards + CLDM_W_EXTRA_ROWS) <=
                h.descs_offset);
    assert_true(32u * CLDM_DIRTY_ROW_WORDS >= h.num_shards);
    assert_int_equal(h.num_shards, cldm_heap_shards(h.num_pages));
    assert_int_equal(h.image_bytes, image);
    free(img);
  }
  /* a buffer too small for the minimum heap */
  assert_int_equal(cldm_heap_image_size(cldm_heap_buffer_size(MiB) - 1), 0);
  assert_int_equal(cldm_heap_image_size(MiB), 0);
}

/* Shards: one per 4 pages, a power of two, 1..256; classes' spans fill them >= 95 % and hold
 * at least CLDM_SLAB_SLOTS_MIN slots where 8 pages do; the shards of one class. */
static void test_shards_and_spans(void **state) {
  (void)state;
  assert_int_equal(cldm_heap_shards(4), 1);
  assert_int_equal(cldm_heap_shards(16), 4);
  assert_int_equal(cldm_heap_shards(31), 4);
  assert_int_equal(cldm_heap_shards(128), 32); /* 8 MiB */
  assert_int_equal(cldm_heap_shards(133), 32);
  assert_int_equal(cldm_heap_shards(1024), 256);
  assert_int_equal(cldm_heap_shards(4096), 256);
  assert_int_equal(cldm_heap_shards(CLDM_HEAP_MAX_PAGES), 256);
  /* small heaps: the fewest pages filled >= 95 %; large heaps: and >= CLDM_SLAB_SLOTS_MIN
   * slots where 8 pages hold them */
  static const uint32_t span_heaps[] = {16, 128, CLDM_BIG_SLABS_PAGES - 1, CLDM_BIG_SLABS_PAGES,
                                        CLDM_HEAP_MAX_PAGES};
  for (size_t i = 0; i < sizeof span_heaps / sizeof span_heaps[0]; i++)
    for (uint32_t c = 0; c < CLDM_NUM_CLASSES; c++) {
      uint32_t pages = span_heaps[i], bytes = cldm_class_bytes(c);
      uint32_t k = cldm_class_span_pages(c, pages), n = cldm_class_slots(c, pages);
      uint32_t min = pages >= CLDM_BIG_SLABS_PAGES ? CLDM_SLAB_SLOTS_MIN : 1;
      assert_true(k == 1 || k == 2 || k == 4 || k == 8);
      assert_true(n >= 1 && n <= CLDM_SLOTS_PER_PAGE_MAX);
      assert_true((uint64_t)n * bytes * 100 >= 95ull * k * CLDM_PAGE_BYTES);
      assert_true((uint64_t)n * bytes <= (uint64_t)k * CLDM_PAGE_BYTES);
      assert_true(n >= min || k == CLDM_SPAN_PAGES_MAX);
      if (k > 1) { /* half as many pages would not do */
        uint64_t half = (uint64_t)(k / 2) * CLDM_PAGE_BYTES, m = half / bytes;
        assert_true(m < min || m * bytes * 100 < 95 * half);
      }
      if (bytes <= 512)
        assert_int_equal(k, 1);
    }
  assert_int_equal(cldm_class_span_pages(cldm_class_of(4096), 128), 1);
  assert_int_equal(cldm_class_span_pages(cldm_class_of(4096), CLDM_BIG_SLABS_PAGES), 8);
  assert_int_equal(cldm_class_slots(cldm_class_of(4096), CLDM_BIG_SLABS_PAGES), 128);
  assert_int_equal(cldm_class_span_pages(cldm_class_of(1024), CLDM_BIG_SLABS_PAGES), 2);
  /* shards a class uses: a power of two within the heap's, current slabs of one class at most
   * 1/16 of the pages (at least one slab) */
  static const uint32_t heaps[] = {16, 128, 4096, 16384, 524288, CLDM_HEAP_MAX_PAGES};
  for (size_t i = 0; i < sizeof heaps / sizeof heaps[0]; i++)
    for (uint32_t c = 0; c < CLDM_NUM_CLASSES; c++) {
      uint32_t pages = heaps[i], shards = cldm_heap_shards(pages);
      uint32_t n = cldm_class_shards(shards, pages, c), k = cldm_class_span_pages(c, pages);
      assert_true(n >= 1 && n <= shards && (n & (n - 1)) == 0);
      assert_true(n == 1 || (uint64_t)n * k * CLDM_CLASS_HOARD_DIV <= pages);
      assert_true(n == shards || (uint64_t)2 * n * k * CLDM_CLASS_HOARD_DIV > pages);
    }
  assert_int_equal(cldm_class_shards(32, 128, 0), 8);        /* 8 MiB: 8 current slabs */
  assert_int_equal(cldm_class_shards(32, 128, 47), 8);       /* 8 MiB, 4 KiB */
  assert_int_equal(cldm_class_shards(256, 16384, 0), 256);   /* 1 GiB, 16 B */
  assert_int_equal(cldm_class_shards(256, 16384, 65), 128);  /* 1 GiB, 20 KiB: spans of 8 */
  assert_int_equal(cldm_class_shards(256, 524288, 71), 256); /* 32 GiB */
  /* shards in use at a level: the floor (1/256 of the heap), 2^level above it, the cap */
  for (size_t i = 0; i < sizeof heaps / sizeof heaps[0]; i++)
    for (uint32_t c = 0; c < CLDM_NUM_CLASSES; c++) {
      uint32_t pages = heaps[i], shards = cldm_heap_shards(pages);
      uint32_t cap = cldm_class_shards(shards, pages, c), k = cldm_class_span_pages(c, pages);
      uint32_t floor = cldm_class_used(shards, pages, c, 0), prev = floor;
      assert_true(floor >= 1 && floor <= cap && (floor & (floor - 1)) == 0);
      assert_true(floor == 1 || (uint64_t)floor * k * CLDM_CLASS_FLOOR_DIV <= pages);
      for (uint32_t level = 0; level <= 9; level++) {
        uint32_t n = cldm_class_used(shards, pages, c, level);
        assert_true(n >= prev && n <= cap && (n & (n - 1)) == 0);
        assert_int_equal(n, (1u << level) < floor ? floor
                            : (1u << level) < cap ? 1u << level
                                                  : cap);
        prev = n;
      }
      assert_int_equal(cldm_class_used(shards, pages, c, 31), cap);
    }
  assert_int_equal(cldm_class_used(32, 128, 0, 0), 1);       /* 8 MiB: one until contention */
  assert_int_equal(cldm_class_used(32, 128, 0, 3), 8);       /* then up to 1/16 */
  assert_int_equal(cldm_class_used(256, 16384, 0, 0), 64);   /* 1 GiB, 16 B: 1/256 */
  assert_int_equal(cldm_class_used(256, 131072, 0, 0), 256); /* 8 GiB, 16 B */
}

/* The spans packed into immediates (CLDM_CLASS_SPAN_BITS, read by device/cl/cldm_geom.clh)
 * and the shift and clamp forms of the shard counts equal the layout's functions for every
 * class and heap; the class list names every class once. */
#define COUNT_ENTRY(c, arg) +1
#define SUM_ENTRY(c, arg) +(c)
static uint32_t span_log2_packed(uint32_t c, uint32_t big) {
  uint64_t w[2][3] = {
      {CLDM_CLASS_SPAN_BITS(0u, 1u), CLDM_CLASS_SPAN_BITS(1u, 1u), CLDM_CLASS_SPAN_BITS(2u, 1u)},
      {CLDM_CLASS_SPAN_BITS(0u, CLDM_SLAB_SLOTS_MIN), CLDM_CLASS_SPAN_BITS(1u, CLDM_SLAB_SLOTS_MIN),
       CLDM_CLASS_SPAN_BITS(2u, CLDM_SLAB_SLOTS_MIN)}};
  return (uint32_t)(w[big][c >> 5] >> (2u * (c & 31u))) & 3u;
}
static void test_class_spans_packed(void **state) {
  (void)state;
  for (uint32_t x = 0; x < (1u << 20); x++)
    assert_int_equal(cldm_pow2_floor_clz(x), cldm_pow2_floor_log2(x));
  for (uint32_t b = 20; b < 32; b++)
    assert_int_equal(cldm_pow2_floor_clz((1u << b) + b), 1u << b);
  assert_int_equal(0 CLDM_CLASS_LIST(COUNT_ENTRY, 0), CLDM_NUM_CLASSES);
  assert_int_equal(0 CLDM_CLASS_LIST(SUM_ENTRY, 0), CLDM_NUM_CLASSES * (CLDM_NUM_CLASSES - 1) / 2);
  static const uint32_t heaps[] = {16,
                                   17,
                                   128,
                                   1000,
                                   4096,
                                   CLDM_BIG_SLABS_PAGES - 1,
                                   CLDM_BIG_SLABS_PAGES,
                                   16385,
                                   524288,
                                   CLDM_HEAP_MAX_PAGES};
  for (size_t i = 0; i < sizeof heaps / sizeof heaps[0]; i++)
    for (uint32_t c = 0; c < CLDM_NUM_CLASSES; c++) {
      uint32_t pages = heaps[i], log2 = span_log2_packed(c, pages >= CLDM_BIG_SLABS_PAGES);
      assert_int_equal(CLDM_CLASS_BYTES_CONST(c), cldm_class_bytes(c));
      assert_int_equal(1u << log2, cldm_class_span_pages(c, pages));
      for (uint32_t shards = 1; shards <= CLDM_SHARDS_MAX; shards *= 2) {
        assert_int_equal(cldm_class_shards_by_span(shards, pages, log2),
                         cldm_class_shards(shards, pages, c));
        uint32_t floor = cldm_class_used(shards, pages, c, 0);
        assert_int_equal(cldm_class_floor_by_span(pages, log2, cldm_class_shards(shards, pages, c)),
                         floor);
        for (uint32_t level = 0; level <= 32; level++) {
          assert_int_equal(cldm_class_used_by_span(shards, pages, log2, level),
                           cldm_class_used(shards, pages, c, level));
          assert_int_equal(cldm_class_used_clamp(floor, cldm_class_shards(shards, pages, c), level),
                           cldm_class_used(shards, pages, c, level));
        }
      }
    }
}

/* The image: header fields, current-page words "no slab", everything else zero except pool
 * bits past the last page. */
static void test_image(void **state) {
  (void)state;
  uint64_t buf = cldm_heap_buffer_size(8 * MiB + 5 * 65536); /* 133 pages: a partial pool word */
  size_t n = cldm_heap_image_size(buf);
  unsigned char *img = malloc(n + 64);
  assert_non_null(img);
  memset(img, 0xAB, n + 64);
  assert_int_equal(cldm_heap_image_write(buf, img, n - 1), -1); /* dst too small */
  assert_int_equal(cldm_heap_image_write(MiB, img, n), -1);     /* below the minimum */
  assert_int_equal(cldm_heap_image_write(buf, NULL, n), -1);
  assert_int_equal(cldm_heap_image_write(buf, img, n), 0);
  assert_int_equal(img[n], 0xAB); /* nothing written past the image */
  cldm_heap_header h;
  memcpy(&h, img, sizeof h);
  assert_int_equal(h.magic, CLDM_HEAP_MAGIC);
  assert_int_equal(h.layout_version, CLDM_HEAP_LAYOUT_VERSION);
  assert_int_equal(h.page_bytes, CLDM_PAGE_BYTES);
  assert_int_equal(h.num_pages, 133);
  assert_int_equal(h.num_classes, CLDM_NUM_CLASSES);
  assert_int_equal(h.num_shards, 32);
  assert_int_equal(h.buffer_bytes, buf);
  assert_int_equal(h.pool_words, 5);
  assert_int_equal(h.held_pages, 0);
  assert_int_equal(h.failed_lo | h.failed_hi | h.invalid_lo | h.invalid_hi | h.peak_pages, 0);
  for (size_t i = CLDM_HEADER_BYTES; i < n; i++) {
    if (i >= h.pool_offset + 16 && i < h.pool_offset + 20) /* last pool word: pages 128..159 */
      continue;
    if (i >= h.w_offset && i < h.w_offset + 8ull * CLDM_W_ROW_WORDS * h.num_shards) {
      /* every current-page word: no page (low half all ones), no ticket (high half 0); the
       * pool's summary: no pool word seen full; no clear of room marks in progress */
      uint64_t word = (i - h.w_offset) / 8 % CLDM_W_ROW_WORDS;
      bool zero =
          (word >= CLDM_W_POOL_FULL && word < CLDM_W_POOL_FULL + 4u) || word == CLDM_W_CLEARING;
      assert_int_equal(img[i], !zero && (i - h.w_offset) % 8 < 4 ? 0xFF : 0);
      continue;
    }
    uint64_t stamps = h.w_offset + 8ull * CLDM_W_ROW_WORDS * (h.num_shards + 1u);
    if (i >= stamps && i < stamps + 8ull * CLDM_W_ROW_WORDS) {
      /* the stamp row: no stamp (low half CLDM_STAMP_NONE), pool-give count 0 */
      assert_int_equal(img[i], (i - stamps) % 8 < 4 ? 0xFF : 0);
      continue;
    }
    assert_int_equal(img[i], 0);
  }
  uint32_t last;
  memcpy(&last, img + h.pool_offset + 16, 4);
  assert_int_equal(last, ~0u << 5); /* pages 133.. do not exist: taken */
  free(img);
}

/* Statistics decode: counters in bytes, 64-bit counters from (lo, hi), live allocations and
 * bytes in use from the page descriptors less the tickets current slabs have not issued, pages
 * held from the header, their peak as max(recorded, current), bad headers refused. */
static void test_stats_decode(void **state) {
  (void)state;
  uint64_t buf = cldm_heap_buffer_size(8 * MiB);
  size_t span;
  unsigned char *img = image_of(buf, &span);
  assert_true(span >= sizeof(cldm_heap_header) && span <= cldm_heap_image_size(buf));
  assert_int_equal(span, ((cldm_heap_header *)img_probe(buf))->descs_offset + 4 * 128);
  cldm_heap_stats s;
  assert_int_equal(cldm_heap_stats_decode(img, span, &s), 0);
  assert_int_equal(s.size, 8 * MiB);
  assert_int_equal(s.bytes_in_use | s.bytes_held | s.peak_bytes_held | s.live_allocations |
                       s.failed_allocations | s.invalid_frees,
                   0);
  cldm_heap_header h;
  memcpy(&h, img, sizeof h);
  h.held_pages = 100;
  h.peak_pages = 0xFFFFFu;
  h.failed_lo = 5;
  h.failed_hi = 2;
  h.invalid_lo = 0xFFFFFFFFu;
  h.invalid_hi = 0;
  memcpy(img, &h, sizeof h);
  uint32_t descs[6] = {
      (3u << CLDM_DESC_KIND_SHIFT) | 5u,                        /* slab, 5 live slots */
      (CLDM_DESC_KIND_LARGE_HEAD << CLDM_DESC_KIND_SHIFT),      /* a run */
      (CLDM_DESC_KIND_LARGE_TAIL << CLDM_DESC_KIND_SHIFT) | 1u, /* its tail: a page in use */
      0u,                                                       /* free */
      (CLDM_NUM_CLASSES << CLDM_DESC_KIND_SHIFT) | 2u,          /* last class, 2 slots */
      (1u << CLDM_DESC_KIND_SHIFT) | 4096u, /* class 0 (4096 slots), current: 4000 unissued */
  };
  memcpy(img + h.descs_offset + 4 * 120, descs, sizeof descs); /* pages 120..125 */
  uint64_t w = (96ull << 32) | 125u; /* shard 3, class 0: slab 125, 96 tickets issued */
  memcpy(img + h.w_offset + 8 * (3 * CLDM_W_ROW_WORDS + 0), &w, 8);
  w = (7ull << 32) | 124u; /* a word naming a slab of another class: no ticket of class 5 */
  memcpy(img + h.w_offset + 8 * (1 * CLDM_W_ROW_WORDS + 5), &w, 8);
  assert_int_equal(cldm_heap_stats_decode(img, span, &s), 0);
  assert_int_equal(s.bytes_in_use, 5 * cldm_class_bytes(2) + 2 * CLDM_PAGE_BYTES +
                                       2 * cldm_class_bytes(CLDM_NUM_CLASSES - 1) +
                                       96 * cldm_class_bytes(0));
  assert_int_equal(s.live_allocations, 5 + 1 + 2 + 96);
  assert_int_equal(s.bytes_held, 100ull * CLDM_PAGE_BYTES);
  assert_int_equal(s.peak_bytes_held, 0xFFFFFull * CLDM_PAGE_BYTES);
  assert_int_equal(s.failed_allocations, (2ull << 32) + 5);
  assert_int_equal(s.invalid_frees, 0xFFFFFFFFull);
  h.peak_pages = 50; /* below the pages held (a header read while kernels run): those */
  memcpy(img, &h, sizeof h);
  assert_int_equal(cldm_heap_stats_decode(img, span, &s), 0);
  assert_int_equal(s.peak_bytes_held, 100ull * CLDM_PAGE_BYTES);
  assert_int_equal(cldm_heap_stats_decode(img, span - 1, &s), -1); /* descriptors cut off */
  assert_int_equal(cldm_heap_stats_decode(img, CLDM_HEADER_BYTES, &s), -1);
  assert_int_equal(cldm_heap_stats_decode(NULL, span, &s), -1);
  h.layout_version++;
  memcpy(img, &h, sizeof h);
  assert_int_equal(cldm_heap_stats_decode(img, span, &s), -1);
  h.layout_version--;
  h.magic ^= 1;
  memcpy(img, &h, sizeof h);
  assert_int_equal(cldm_heap_stats_decode(img, span, &s), -1);
  free(img);
}

/* The census (cldm_heap_census_decode): per class its slabs, their pages and slots, the slots
 * allocated (units less the unissued tickets of current slabs) and the unissued tickets; pages
 * free (descriptor kind 0), the aligned spans of 2, 4, 8 wholly free pages, pages in runs; span
 * tails counted with their heads; bad spans refused. */
static void test_census_decode(void **state) {
  (void)state;
  size_t span;
  unsigned char *img = image_of(cldm_heap_buffer_size(1 * GiB), &span); /* slabs of 1-8 pages */
  cldm_heap_census cs;
  assert_int_equal(cldm_heap_census_decode(img, span, &cs), 0);
  assert_int_equal(cs.size, 1 * GiB);
  assert_int_equal(cs.free_pages, 16384);
  assert_int_equal(cs.free_spans[0], 8192);
  assert_int_equal(cs.free_spans[2], 2048);
  assert_int_equal(cs.run_pages, 0);
  for (uint32_t c = 0; c < CLDM_NUM_CLASSES; c++) {
    assert_int_equal(cs.classes[c].class_bytes, cldm_class_bytes(c));
    assert_int_equal(cs.classes[c].slabs | cs.classes[c].slots | cs.classes[c].live, 0);
  }
  cldm_heap_header h;
  memcpy(&h, img, sizeof h);
  uint32_t big = 31; /* 1024 B: a span of 2 pages in a 1 GiB heap */
  assert_int_equal(cldm_class_bytes(big), 1024);
  assert_int_equal(cldm_class_span_pages(big, h.num_pages), 2);
  uint32_t descs[7] = {
      (3u << CLDM_DESC_KIND_SHIFT) | 5u,                           /* class 2, 5 live slots */
      (CLDM_DESC_KIND_LARGE_HEAD << CLDM_DESC_KIND_SHIFT),         /* a run */
      (CLDM_DESC_KIND_LARGE_TAIL << CLDM_DESC_KIND_SHIFT) | 1u,    /* its tail */
      ((big + 1u) << CLDM_DESC_KIND_SHIFT) | CLDM_DESC_WATCH | 1u, /* watched: 1 live */
      ((CLDM_DESC_KIND_SPAN_TAIL0 + 1u) << CLDM_DESC_KIND_SHIFT),  /* its span's tail */
      (1u << CLDM_DESC_KIND_SHIFT) | 4096u, /* class 0, current: 4000 unissued */
      (3u << CLDM_DESC_KIND_SHIFT) | 7u,    /* class 2 again, current in search mode */
  };
  memcpy(img + h.descs_offset + 4 * 120, descs, sizeof descs); /* pages 120..126 */
  uint64_t w = (96ull << 32) | 125u; /* shard 3, class 0: slab 125, 96 tickets issued */
  memcpy(img + h.w_offset + 8 * (3 * CLDM_W_ROW_WORDS + 0), &w, 8);
  uint32_t s2 = cldm_class_slots(2, h.num_pages);
  w = ((uint64_t)(s2 - 3u) << 32) | CLDM_W_SEARCH | 126u; /* 3 reservations not drawn yet */
  memcpy(img + h.w_offset + 8 * (1 * CLDM_W_ROW_WORDS + 2), &w, 8);
  w = (7ull << 32) | 120u; /* a word of class 5 naming a slab of class 2: not counted */
  memcpy(img + h.w_offset + 8 * (2 * CLDM_W_ROW_WORDS + 5), &w, 8);
  assert_int_equal(cldm_heap_census_decode(img, span, &cs), 0);
  assert_int_equal(cs.free_pages, 16384 - 7);
  /* pages 120..126 taken, 127 free: the pairs from 120 to 126, the quads from 120 and 124 and
   * the span of 8 from 120 are not wholly free */
  assert_int_equal(cs.free_spans[0], 8192 - 4);
  assert_int_equal(cs.free_spans[1], 4096 - 2);
  assert_int_equal(cs.free_spans[2], 2048 - 1);
  assert_int_equal(cs.run_pages, 2);
  const cldm_heap_census_class *c0 = &cs.classes[0], *c2 = &cs.classes[2], *cb = &cs.classes[big];
  assert_int_equal(c0->slabs, 1);
  assert_int_equal(c0->pages, 1);
  assert_int_equal(c0->slots, 4096);
  assert_int_equal(c0->live, 96);
  assert_int_equal(c0->unissued, 4000);
  assert_int_equal(c2->slabs, 2);
  assert_int_equal(c2->pages, 2);
  assert_int_equal(c2->slots, 2 * s2);
  assert_int_equal(c2->live, 5 + 7 - 3);
  assert_int_equal(c2->unissued, 3);
  assert_int_equal(cb->slabs, 1);
  assert_int_equal(cb->pages, 2);
  assert_int_equal(cb->slots, cldm_class_slots(big, h.num_pages));
  assert_int_equal(cb->live, 1);
  assert_int_equal(cs.classes[5].slabs | cs.classes[5].unissued, 0);
  /* the statistics agree: bytes in use are the census's slots allocated */
  cldm_heap_stats st;
  assert_int_equal(cldm_heap_stats_decode(img, span, &st), 0);
  assert_int_equal(st.bytes_in_use, 96 * cldm_class_bytes(0) + 9 * cldm_class_bytes(2) +
                                        cldm_class_bytes(big) + 2 * CLDM_PAGE_BYTES);
  assert_int_equal(cldm_heap_census_decode(img, span - 1, &cs), -1); /* descriptors cut off */
  assert_int_equal(cldm_heap_census_decode(NULL, span, &cs), -1);
  assert_int_equal(cldm_heap_census_decode(img, span, NULL), -1);
  h.layout_version++;
  memcpy(img, &h, sizeof h);
  assert_int_equal(cldm_heap_census_decode(img, span, &cs), -1);
  free(img);
}

/* Page 0: for a heap base of any alignment from CLDM_BASE_ALIGN_MIN up, it is page-aligned in
 * device address, at or after the page area's start, and the pages end inside the buffer; for
 * a base less aligned than that, the pages still end inside the buffer. */
static void test_first_page(void **state) {
  (void)state;
  static const uint64_t reqs[] = {MiB, 8 * MiB + 3 * 65536, 1 * GiB};
  for (size_t r = 0; r < sizeof reqs / sizeof reqs[0]; r++) {
    cldm_heap_geometry g;
    assert_int_equal(cldm_heap_geometry_for_request(reqs[r], 0, &g), 0);
    for (uint64_t align = 16; align <= 2 * MiB; align *= 2)
      for (uint64_t k = 1; k < 64; k += 7) { /* bases aligned to exactly `align` */
        uint64_t base = (0x7f0000000000ull + (2 * k + 1) * align) & ~(align - 1);
        uint64_t first = cldm_heap_first_page(&g, base);
        assert_true(first >= g.pages_offset);
        assert_true(first - g.pages_offset <= CLDM_PAGES_SLACK_BYTES);
        assert_true(first + g.usable_bytes <= g.buffer_bytes);
        if (align >= CLDM_BASE_ALIGN_MIN)
          assert_int_equal((base + first) % CLDM_PAGE_BYTES, 0);
        else
          assert_int_equal((base + first) % align, 0);
      }
  }
}

/* The geometry: the sizes above are its fields; a request whose buffer would exceed a maximum
 * gets exactly that buffer, with the metadata taken from the usable size; the image written
 * from a geometry is the one written from its buffer size. */
static void test_geometry(void **state) {
  (void)state;
  for (uint64_t req = MiB; req <= 16 * GiB; req = req * 3 / 2 + 4096) {
    cldm_heap_geometry g;
    assert_int_equal(cldm_heap_geometry_for_request(req, 0, &g), 0);
    assert_int_equal(g.buffer_bytes, cldm_heap_buffer_size(req));
    assert_int_equal(g.usable_bytes, cldm_heap_usable_size(req));
    assert_int_equal(g.num_pages, g.usable_bytes / CLDM_PAGE_BYTES);
    assert_int_equal(g.image_bytes, cldm_heap_image_size(g.buffer_bytes));
    assert_int_equal(g.stats_span, cldm_heap_stats_span(g.buffer_bytes));
    assert_int_equal(g.pages_offset + CLDM_PAGES_SLACK_BYTES + g.usable_bytes, g.buffer_bytes);
    cldm_heap_geometry b;
    assert_int_equal(cldm_heap_geometry_for_buffer(g.buffer_bytes, &b), 0);
    assert_memory_equal(&b, &g, sizeof g);
    /* a maximum below the buffer: the buffer is the maximum, the pages fewer (none left below
     * the minimum) */
    uint64_t max = g.buffer_bytes - 1;
    int fits = g.num_pages > CLDM_HEAP_MIN_PAGES;
    assert_int_equal(cldm_heap_geometry_for_request(req, max, &b), fits ? 0 : -1);
    assert_int_equal(b.buffer_bytes, max);
    assert_int_equal(b.num_pages, fits ? g.num_pages - 1 : 0);
    assert_true(b.pages_offset + CLDM_PAGES_SLACK_BYTES + b.usable_bytes <= max);
    /* a maximum above it changes nothing */
    assert_int_equal(cldm_heap_geometry_for_request(req, g.buffer_bytes, &b), 0);
    assert_memory_equal(&b, &g, sizeof g);
  }
  cldm_heap_geometry g;
  assert_int_equal(cldm_heap_geometry_for_buffer(MiB, &g), -1); /* below the minimum */
  assert_int_equal(g.buffer_bytes, MiB);
  assert_int_equal(g.num_pages, 0);
  assert_int_equal(cldm_heap_geometry_for_request(8 * MiB, MiB, &g), -1);
  assert_int_equal(g.buffer_bytes, MiB);
  assert_int_equal(cldm_heap_image_fill(&g, NULL, 0), -1);
  /* fill and write give the same bytes */
  assert_int_equal(cldm_heap_geometry_for_request(8 * MiB + 5 * 65536, 0, &g), 0);
  unsigned char *a = malloc(g.image_bytes), *b = malloc(g.image_bytes);
  assert_non_null(a);
  assert_non_null(b);
  memset(a, 0xAB, g.image_bytes);
  memset(b, 0xCD, g.image_bytes);
  assert_int_equal(cldm_heap_image_fill(&g, a, g.image_bytes - 1), -1); /* dst too small */
  assert_int_equal(cldm_heap_image_fill(&g, a, g.image_bytes), 0);
  assert_int_equal(cldm_heap_image_write(g.buffer_bytes, b, g.image_bytes), 0);
  assert_memory_equal(a, b, g.image_bytes);
  free(a);
  free(b);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_classes),
      cmocka_unit_test(test_sizes),
      cmocka_unit_test(test_shards_and_spans),
      cmocka_unit_test(test_class_spans_packed),
      cmocka_unit_test(test_image),
      cmocka_unit_test(test_geometry),
      cmocka_unit_test(test_first_page),
      cmocka_unit_test(test_stats_decode),
      cmocka_unit_test(test_census_decode),
  };
  return cmocka_run_group_tests_name("device_layout", tests, NULL, NULL);
}
