/*
 * cldm_heap_span.h — the host decoders' shared check of the statistics span (the header, the
 * current-page words and the page descriptors, read at offset 0 of a heap buffer): that a
 * header of this layout version describes arrays that lie inside the bytes read.
 */
#ifndef CLDM_HEAP_SPAN_H
#define CLDM_HEAP_SPAN_H

#include "cldm_heap_layout.h"

#include <stddef.h>
#include <string.h>

/* Copies the header out of `src` (`span` bytes) into *h; returns 0 if it is a heap of this
 * layout version whose current-page rows and page descriptors lie within the span, else -1. */
static inline int cldm_heap_span_header(const void *src, size_t span, cldm_heap_header *h) {
  if (src == NULL || span < sizeof *h)
    return -1;
  memcpy(h, src, sizeof *h);
  if (h->magic != CLDM_HEAP_MAGIC || h->layout_version != CLDM_HEAP_LAYOUT_VERSION)
    return -1;
  if (h->num_pages > CLDM_HEAP_MAX_PAGES || h->descs_offset < CLDM_HEADER_BYTES ||
      span < h->descs_offset || (span - h->descs_offset) / 4 < h->num_pages || h->num_shards == 0 ||
      h->num_shards > CLDM_SHARDS_MAX || h->w_offset < CLDM_HEADER_BYTES ||
      h->w_offset + 8ull * CLDM_W_ROW_WORDS * h->num_shards > h->descs_offset)
    return -1;
  return 0;
}

/* Page p's descriptor and the current-page word of shard s, class c, from a checked span. */
static inline uint32_t cldm_heap_span_desc(const void *src, const cldm_heap_header *h, uint32_t p) {
  uint32_t d;
  memcpy(&d, (const unsigned char *)src + h->descs_offset + 4 * (size_t)p, 4);
  return d;
}
static inline uint64_t cldm_heap_span_w(const void *src, const cldm_heap_header *h, uint32_t s,
                                        uint32_t c) {
  uint64_t w;
  memcpy(&w, (const unsigned char *)src + h->w_offset + 8 * ((size_t)s * CLDM_W_ROW_WORDS + c), 8);
  return w;
}

/* The tickets that the current-page word w of class c has not issued yet: slots of its slab
 * that are free but held for the tickets to come (the slab's units count them), 0 if w names
 * no slab of class c. */
static inline uint32_t cldm_heap_span_unissued(const void *src, const cldm_heap_header *h,
                                               uint32_t c, uint64_t w) {
  uint32_t page = (uint32_t)w & ~CLDM_W_SEARCH, tick = (uint32_t)(w >> 32);
  uint32_t slots = cldm_class_slots(c, h->num_pages);
  if (page >= h->num_pages ||
      (cldm_heap_span_desc(src, h, page) >> CLDM_DESC_KIND_SHIFT) != c + 1 || tick >= slots)
    return 0;
  return slots - tick;
}

#endif /* CLDM_HEAP_SPAN_H */
