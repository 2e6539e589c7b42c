/*
 * cldm_heap.c — host side of the heap layout (cldm_device.h): the geometry of a heap (where
 * each metadata array lives for a given number of pages, the size of the buffer, of the
 * initial image and of the statistics span), computed in one place (cldm_heap_geometry_*);
 * writing the image (creation and reset are one host write of it) and decoding statistics.
 *
 * The device never recomputes the layout: it reads the offsets from the header this file
 * writes, so this file is the single source of truth for the geometry.
 */
#include "cldm_device.h"
#include "cldm_heap_layout.h"
#include "cldm_heap_span.h"

#include <stddef.h>
#include <string.h>

_Static_assert(sizeof(cldm_heap_header) == CLDM_HEADER_BYTES, "header is 256 bytes");
_Static_assert(offsetof(cldm_heap_header, held_pages) == 4 * CLDM_HDR_WORD_HELD_PAGES, "held");
_Static_assert(offsetof(cldm_heap_header, peak_pages) == 4 * CLDM_HDR_WORD_PEAK_PAGES, "peak");
_Static_assert(offsetof(cldm_heap_header, failed_lo) == 4 * CLDM_HDR_WORD_FAILED_LO, "failed");
_Static_assert(offsetof(cldm_heap_header, invalid_lo) == 4 * CLDM_HDR_WORD_INVALID_LO, "invalid");
_Static_assert(offsetof(cldm_heap_header, pages_offset) % 8 == 0, "u64 alignment");
_Static_assert(offsetof(cldm_heap_header, buffer_bytes) % 8 == 0, "u64 alignment");
_Static_assert(CLDM_HEADER_BYTES % 8 == 0, "W is u64-aligned");
_Static_assert(CLDM_ROOM_TOP_WORDS % 16u == 0u,
               "the room index is whole 64-byte lines (its rows are)");
_Static_assert((CLDM_HEAP_MAX_PAGES / 1024u + 1u + CLDM_W_POOL_FULL_WORDS - 1u) /
                       CLDM_W_POOL_FULL_WORDS <=
                   CLDM_SHARDS_MAX,
               "the shard rows hold the pool's summary");
_Static_assert(CLDM_W_POOL_FULL + CLDM_W_POOL_FULL_WORDS / 2u <= CLDM_W_GIVES &&
                   CLDM_W_GIVES < CLDM_W_DRY,
               "summary words, then the pool-give count's shards, then the shard's own words");

static uint64_t cldm_heap_align_up(uint64_t x, uint64_t a) { return (x + a - 1) / a * a; }

/* Geometry of a heap of `num_pages` pages in the smallest buffer that holds it; with a check
 * area (checked mode) if `checked`. */
static void cldm_heap_layout_for_pages(uint32_t num_pages, int checked, cldm_heap_geometry *g) {
  uint64_t off = CLDM_HEADER_BYTES;
  g->num_pages = num_pages;
  g->usable_bytes = (uint64_t)num_pages * CLDM_PAGE_BYTES;
  g->num_shards = cldm_heap_shards(num_pages);
  g->w_offset = (uint32_t)off;
  /* the shard rows, the class row (shard levels and room counts, 0 in the image), the stamp
   * rows (no stamps; change counts 0), the classes' change and refill counts (0), their dirty
   * words (0) */
  off = cldm_heap_align_up(off + 8ull * CLDM_W_ROW_WORDS * (g->num_shards + CLDM_W_EXTRA_ROWS),
                           CLDM_META_ALIGN);
  g->descs_offset = (uint32_t)off;
  off = cldm_heap_align_up(off + 4ull * num_pages, CLDM_META_ALIGN);
  g->pool_offset = (uint32_t)off;
  g->pool_words = (num_pages + 31u) / 32u;
  /* the room index (0 in the image: no slab has room yet), as the device finds it (whole
   * 64-byte lines) */
  off += cldm_room_after_pool_bytes(g->pool_words) + cldm_room_bytes(g->pool_words);
  g->bitmaps_offset = (uint32_t)off;
  off += (uint64_t)CLDM_SLOT_BITMAP_BYTES * num_pages;
  g->check_offset = g->check_capacity = 0;
  if (checked) { /* the check area: counters and event log, cleared by the image */
    off = cldm_heap_align_up(off, CLDM_META_ALIGN);
    g->check_offset = (uint32_t)off;
    g->check_capacity = CLDM_CHECK_LOG_ENTRIES;
    off += CLDM_CHECK_AREA_HEADER_BYTES + (uint64_t)CLDM_CHECK_ENTRY_BYTES * g->check_capacity;
  }
  g->image_bytes = (size_t)off; /* every bitmap starts clear: claiming a page costs no init */
  /* statistics need the header, the current-page words and the page descriptors (live
   * allocations are counted from the last two) */
  g->stats_span = g->descs_offset + 4u * (size_t)num_pages;
  /* page 0 lies up to CLDM_PAGES_SLACK_BYTES further, where the device address is page-aligned */
  g->pages_offset = cldm_heap_align_up(off, CLDM_BASE_ALIGN_MIN);
  g->buffer_bytes = g->pages_offset + CLDM_PAGES_SLACK_BYTES + g->usable_bytes;
}

/* Pages of the largest heap fitting in `buffer_bytes`; 0 if below the minimum. */
static uint32_t cldm_heap_pages_for_buffer(uint64_t buffer_bytes, int checked) {
  cldm_heap_geometry l;
  /* metadata per page: descriptor + pool bit + room index (72 classes: 9 bytes and their
   * summaries) + slot bitmap + W share (< 40 bytes) < 580 (the slack
   * only makes this estimate larger than the answer) */
  uint64_t n = buffer_bytes / (CLDM_PAGE_BYTES + 580u);
  if (n > CLDM_HEAP_MAX_PAGES)
    n = CLDM_HEAP_MAX_PAGES;
  for (;;) { /* grow while the next size still fits (a few steps at most) */
    if (n >= CLDM_HEAP_MAX_PAGES)
      break;
    cldm_heap_layout_for_pages((uint32_t)n + 1, checked, &l);
    if (l.buffer_bytes > buffer_bytes)
      break;
    n++;
  }
  while (n >= CLDM_HEAP_MIN_PAGES) {
    cldm_heap_layout_for_pages((uint32_t)n, checked, &l);
    if (l.buffer_bytes <= buffer_bytes)
      break;
    n--;
  }
  return n >= CLDM_HEAP_MIN_PAGES ? (uint32_t)n : 0u;
}

uint64_t cldm_heap_first_page(const cldm_heap_geometry *g, uint64_t base_address) {
  return g->pages_offset + cldm_heap_pages_pad((uint32_t)(base_address + g->pages_offset));
}

uint64_t cldm_heap_min_size(void) { return CLDM_HEAP_MIN_BYTES; }

uint64_t cldm_heap_max_size(void) { return (uint64_t)CLDM_HEAP_MAX_PAGES * CLDM_PAGE_BYTES; }

uint64_t cldm_heap_usable_size(uint64_t requested) {
  uint64_t n = requested / CLDM_PAGE_BYTES;
  if (n < CLDM_HEAP_MIN_PAGES)
    n = CLDM_HEAP_MIN_PAGES;
  if (n > CLDM_HEAP_MAX_PAGES)
    n = CLDM_HEAP_MAX_PAGES;
  return n * CLDM_PAGE_BYTES;
}

static int cldm_heap_geometry_buffer(uint64_t buffer_bytes, int checked, cldm_heap_geometry *g) {
  uint32_t n = cldm_heap_pages_for_buffer(buffer_bytes, checked);
  memset(g, 0, sizeof *g);
  g->buffer_bytes = buffer_bytes;
  if (n == 0)
    return -1;
  cldm_heap_layout_for_pages(n, checked, g);
  g->buffer_bytes = buffer_bytes; /* the pages may leave some of it unused */
  return 0;
}

int cldm_heap_geometry_for_buffer(uint64_t buffer_bytes, cldm_heap_geometry *g) {
  return cldm_heap_geometry_buffer(buffer_bytes, 0, g);
}

static int cldm_heap_geometry_request(uint64_t requested, uint64_t max_buffer_bytes, int checked,
                                      cldm_heap_geometry *g) {
  cldm_heap_layout_for_pages((uint32_t)(cldm_heap_usable_size(requested) / CLDM_PAGE_BYTES),
                             checked, g);
  uint64_t buffer_bytes = g->buffer_bytes;
  if (max_buffer_bytes && buffer_bytes > max_buffer_bytes)
    buffer_bytes = max_buffer_bytes; /* the metadata comes out of the usable size */
  return cldm_heap_geometry_buffer(buffer_bytes, checked, g);
}

int cldm_heap_geometry_for_request(uint64_t requested, uint64_t max_buffer_bytes,
                                   cldm_heap_geometry *g) {
  return cldm_heap_geometry_request(requested, max_buffer_bytes, 0, g);
}

int cldm_heap_geometry_for_request_checked(uint64_t requested, uint64_t max_buffer_bytes,
                                           cldm_heap_geometry *g) {
  return cldm_heap_geometry_request(requested, max_buffer_bytes, 1, g);
}

uint64_t cldm_heap_buffer_size(uint64_t requested) {
  cldm_heap_geometry g;
  cldm_heap_layout_for_pages((uint32_t)(cldm_heap_usable_size(requested) / CLDM_PAGE_BYTES), 0, &g);
  return g.buffer_bytes;
}

size_t cldm_heap_image_size(uint64_t buffer_bytes) {
  cldm_heap_geometry g;
  return cldm_heap_geometry_for_buffer(buffer_bytes, &g) == 0 ? g.image_bytes : 0;
}

int cldm_heap_image_fill(const cldm_heap_geometry *g, void *dst, size_t dst_size) {
  cldm_heap_header h;
  uint32_t n = g ? g->num_pages : 0;
  if (n < CLDM_HEAP_MIN_PAGES || n > CLDM_HEAP_MAX_PAGES || dst == NULL ||
      dst_size < g->image_bytes)
    return -1;
  memset(dst, 0, g->image_bytes);    /* counters 0, pages free, bitmaps clear */
  uint64_t no_slab = CLDM_W_NO_PAGE; /* no current slab, no ticket issued, cursor unset */
  for (size_t i = 0; i < (size_t)g->num_shards * CLDM_W_ROW_WORDS; i++) /* (the pool's */
    if ((i % CLDM_W_ROW_WORDS < CLDM_W_POOL_FULL ||                     /* summary and */
         i % CLDM_W_ROW_WORDS >= CLDM_W_POOL_FULL + CLDM_W_POOL_FULL_WORDS / 2u) && /* the */
        i % CLDM_W_ROW_WORDS != CLDM_W_CLEARING) /* clears in progress: 0) */
      memcpy((unsigned char *)dst + g->w_offset + 8 * i, &no_slab, 8);
  uint64_t no_stamp = CLDM_STAMP_NONE; /* the stamp row, after the class row */
  for (size_t i = 0; i < CLDM_W_ROW_WORDS; i++)
    memcpy((unsigned char *)dst + g->w_offset +
               8 * ((size_t)(g->num_shards + 1u) * CLDM_W_ROW_WORDS + i),
           &no_stamp, 8);
  memset(&h, 0, sizeof h);
  h.magic = CLDM_HEAP_MAGIC;
  h.layout_version = CLDM_HEAP_LAYOUT_VERSION;
  h.page_bytes = CLDM_PAGE_BYTES;
  h.num_pages = n;
  h.num_classes = CLDM_NUM_CLASSES;
  h.num_shards = g->num_shards;
  h.w_offset = g->w_offset;
  h.descs_offset = g->descs_offset;
  h.pool_offset = g->pool_offset;
  h.pool_words = g->pool_words;
  h.bitmaps_offset = g->bitmaps_offset;
  h.image_bytes = (uint32_t)g->image_bytes;
  h.pages_offset = g->pages_offset;
  h.usable_bytes = g->usable_bytes;
  h.buffer_bytes = g->buffer_bytes;
  cldm_hdr_check_offset(h) = g->check_offset;
  cldm_hdr_check_capacity(h) = g->check_capacity;
  memcpy(dst, &h, sizeof h);
  if (n % 32u) { /* pool bits past the last page read as taken */
    uint32_t *pool = (uint32_t *)((unsigned char *)dst + g->pool_offset);
    pool[g->pool_words - 1] = ~0u << (n % 32u);
  }
  return 0;
}

int cldm_heap_image_write(uint64_t buffer_bytes, void *dst, size_t dst_size) {
  cldm_heap_geometry g;
  if (cldm_heap_geometry_for_buffer(buffer_bytes, &g) != 0)
    return -1;
  return cldm_heap_image_fill(&g, dst, dst_size);
}

size_t cldm_heap_stats_span(uint64_t buffer_bytes) {
  cldm_heap_geometry g;
  return cldm_heap_geometry_for_buffer(buffer_bytes, &g) == 0 ? g.stats_span : CLDM_HEADER_BYTES;
}

int cldm_heap_stats_decode(const void *src, size_t span, cldm_heap_stats *out) {
  cldm_heap_header h;
  if (out == NULL || cldm_heap_span_header(src, span, &h) != 0)
    return -1;
  out->size = h.usable_bytes;
  /* the device raises the peak at every take (cldm_stats.clh); the max only guards a header
   * read while kernels run */
  out->bytes_held = (uint64_t)h.held_pages * CLDM_PAGE_BYTES;
  out->peak_bytes_held =
      (uint64_t)(h.peak_pages > h.held_pages ? h.peak_pages : h.held_pages) * CLDM_PAGE_BYTES;
  /* live allocations and bytes in use: a slab head's units (of its class's size), less the
   * tickets its current-page word has not issued yet (searches' pins are gone once the kernels
   * completed); one allocation per run head, a page per run page */
  uint64_t live = 0, bytes = 0;
  for (uint32_t p = 0; p < h.num_pages; p++) {
    uint32_t d = cldm_heap_span_desc(src, &h, p);
    uint32_t kind = d >> CLDM_DESC_KIND_SHIFT;
    if (kind >= 1 && kind <= CLDM_NUM_CLASSES) {
      live += d & CLDM_DESC_COUNT_MASK;
      bytes += (uint64_t)(d & CLDM_DESC_COUNT_MASK) * cldm_class_bytes(kind - 1);
    } else if (kind == CLDM_DESC_KIND_LARGE_HEAD || kind == CLDM_DESC_KIND_LARGE_TAIL) {
      live += kind == CLDM_DESC_KIND_LARGE_HEAD;
      bytes += CLDM_PAGE_BYTES;
    }
  }
  for (uint32_t s = 0; s < h.num_shards; s++)
    for (uint32_t c = 0; c < CLDM_NUM_CLASSES; c++) {
      uint32_t n = cldm_heap_span_unissued(src, &h, c, cldm_heap_span_w(src, &h, s, c));
      live -= n;
      bytes -= (uint64_t)n * cldm_class_bytes(c);
    }
  out->live_allocations = live;
  out->bytes_in_use = bytes;
  out->failed_allocations = ((uint64_t)h.failed_hi << 32) | h.failed_lo;
  out->invalid_frees = ((uint64_t)h.invalid_hi << 32) | h.invalid_lo;
  return 0;
}
