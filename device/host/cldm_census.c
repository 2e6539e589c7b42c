/*
 * cldm_census.c — where a heap's memory is, decoded on the host from the statistics span
 * (cldm_device.h, cldm_heap_census_decode): pages free (and the aligned spans of 2, 4, 8 pages
 * among them, which slabs of larger classes need) and in runs, and per size class its
 * slabs, their slots, the slots allocated and the free slots that current slabs hold for their
 * tickets to come. A malloc that returned NULL on a heap with free bytes found them all in
 * slabs of other classes (spec 2.1: a request is served from its class or, by borrowing, a
 * class up to twice its size); the census shows which.
 */
#include "cldm_device.h"
#include "cldm_heap_layout.h"
#include "cldm_heap_span.h"

#include <string.h>

_Static_assert(CLDM_CENSUS_CLASSES == CLDM_NUM_CLASSES, "a census entry per class");

int cldm_heap_census_decode(const void *src, size_t span, cldm_heap_census *out) {
  cldm_heap_header h;
  if (out == NULL || cldm_heap_span_header(src, span, &h) != 0)
    return -1;
  memset(out, 0, sizeof *out);
  out->size = h.usable_bytes;
  for (uint32_t c = 0; c < CLDM_NUM_CLASSES; c++)
    out->classes[c].class_bytes = cldm_class_bytes(c);
  for (uint32_t p = 0; p < h.num_pages; p++) {
    uint32_t d = cldm_heap_span_desc(src, &h, p), kind = d >> CLDM_DESC_KIND_SHIFT;
    if (kind >= 1 && kind <= CLDM_NUM_CLASSES) {
      cldm_heap_census_class *k = &out->classes[kind - 1];
      k->slabs++;
      k->pages += cldm_class_span_pages(kind - 1, h.num_pages);
      k->slots += cldm_class_slots(kind - 1, h.num_pages);
      k->live += d & CLDM_DESC_COUNT_MASK; /* less the unissued tickets, below */
    } else if (kind == CLDM_DESC_KIND_LARGE_HEAD || kind == CLDM_DESC_KIND_LARGE_TAIL) {
      out->run_pages++;
    } else if (kind == CLDM_DESC_KIND_FREE) {
      out->free_pages++;
    }
  }
  for (uint32_t i = 0, k = 2; i < 3; i++, k *= 2) /* aligned spans of k pages wholly free */
    for (uint32_t p = 0; p + k <= h.num_pages; p += k) {
      uint32_t q = p;
      while (q < p + k && (cldm_heap_span_desc(src, &h, q) >> CLDM_DESC_KIND_SHIFT) == 0)
        q++;
      out->free_spans[i] += q == p + k;
    }
  for (uint32_t s = 0; s < h.num_shards; s++)
    for (uint32_t c = 0; c < CLDM_NUM_CLASSES; c++) {
      uint32_t n = cldm_heap_span_unissued(src, &h, c, cldm_heap_span_w(src, &h, s, c));
      cldm_heap_census_class *k = &out->classes[c];
      n = n < k->live ? n : (uint32_t)k->live; /* (a damaged image: never below 0) */
      k->live -= n;
      k->unissued += n;
    }
  return 0;
}
