/*
 * cldm_check.c — host side of checked mode (cldm_device.h, spec 2.4): decoding the event log of
 * a checked heap's check area, the report line of an event, and the inspection of a whole heap
 * (its live allocations, and on checked heaps their guard bytes). Pure functions on bytes the
 * layer read from the device, so they are tested without one.
 */
#include "cldm_device.h"
#include "cldm_heap_layout.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

_Static_assert(sizeof(cldm_check_entry) == CLDM_CHECK_ENTRY_BYTES, "entry is 32 bytes");
_Static_assert(offsetof(cldm_heap_header, pad3) == 4 * CLDM_HDR_WORD_CHECK_OFFSET, "check offset");
_Static_assert(CLDM_HDR_WORD_CHECK_CAPACITY == CLDM_HDR_WORD_CHECK_OFFSET + 1, "check capacity");
_Static_assert(4 * (CLDM_CHECK_WORD_COUNTS + 2 * CLDM_CHECK_KINDS) <= CLDM_CHECK_AREA_HEADER_BYTES,
               "counters fit the area's header");

size_t cldm_check_area_bytes(const cldm_heap_geometry *g) {
  if (!g || !g->check_offset)
    return 0;
  return CLDM_CHECK_AREA_HEADER_BYTES + (size_t)CLDM_CHECK_ENTRY_BYTES * g->check_capacity;
}

static uint32_t cldm_check_u32(const unsigned char *p) {
  uint32_t v;
  memcpy(&v, p, 4);
  return v;
}

int cldm_check_log_decode(const void *area, size_t n, uint32_t capacity, cldm_check_log *log,
                          cldm_check_event *events, size_t max) {
  const unsigned char *a = area;
  if (!a || !log || (max && !events) ||
      n < CLDM_CHECK_AREA_HEADER_BYTES + (size_t)CLDM_CHECK_ENTRY_BYTES * capacity)
    return -1;
  memset(log, 0, sizeof *log);
  for (uint32_t k = 0; k < CLDM_CHECK_KINDS; k++) {
    const unsigned char *c = a + 4 * (CLDM_CHECK_WORD_COUNTS + 2 * k);
    log->counts[k] = (uint64_t)cldm_check_u32(c + 4) << 32 | cldm_check_u32(c);
    log->total += log->counts[k];
  }
  log->claimed = cldm_check_u32(a + 4 * CLDM_CHECK_WORD_NEXT);
  log->base = (uint64_t)cldm_check_u32(a + 4 * (CLDM_CHECK_WORD_BASE + 1)) << 32 |
              cldm_check_u32(a + 4 * CLDM_CHECK_WORD_BASE);
  uint32_t written = log->claimed < capacity ? log->claimed : capacity;
  for (uint32_t i = 0; i < written; i++) {
    cldm_check_entry e;
    memcpy(&e, a + CLDM_CHECK_AREA_HEADER_BYTES + (size_t)CLDM_CHECK_ENTRY_BYTES * i, sizeof e);
    if (e.kind == 0) /* claimed but never completed (a kernel that stopped): skipped */
      continue;
    if (log->logged < max) {
      cldm_check_event *out = &events[log->logged];
      out->kind = e.kind;
      out->address = e.address;
      out->offset = e.offset;
      out->size = e.size;
      out->block_bytes = e.block_bytes == 0xFFFFFFFFu ? UINT64_MAX : e.block_bytes;
    }
    log->logged++;
  }
  return 0;
}

const char *cldm_check_kind_name(uint32_t kind) {
  switch (kind) {
  case CLDM_CHECK_FREE_DOUBLE:
    return "double free";
  case CLDM_CHECK_FREE_INTERIOR:
    return "interior-pointer free";
  case CLDM_CHECK_FREE_OUTSIDE:
    return "free outside the heap";
  case CLDM_CHECK_FREE_UNALLOCATED:
    return "free of unallocated memory";
  case CLDM_CHECK_OVERFLOW:
    return "overflow";
  case CLDM_CHECK_ALLOC_FAILED:
    return "allocation failed";
  default:
    return "unknown";
  }
}

int cldm_check_format_event(char *buf, size_t n, const char *kernel, const cldm_check_event *e) {
  char details[128] = "";
  if (e->kind == CLDM_CHECK_OVERFLOW) {
    if (e->size == CLDM_CHECK_SIZE_UNKNOWN)
      snprintf(details, sizeof details, ", block of %" PRIu64 " bytes, size unknown",
               e->block_bytes);
    else
      snprintf(details, sizeof details, ", block of %" PRIu64 " bytes, %" PRIu64 " bytes requested",
               e->block_bytes, e->size);
  } else if (e->kind == CLDM_CHECK_ALLOC_FAILED) {
    if (e->size == CLDM_CHECK_SIZE_UNKNOWN)
      snprintf(details, sizeof details, ", size overflows size_t");
    else
      snprintf(details, sizeof details, ", %" PRIu64 " bytes requested", e->size);
  }
  if (e->kind == CLDM_CHECK_ALLOC_FAILED)
    return snprintf(buf, n, "cl_ext_device_malloc: kernel %s: %s%s", kernel ? kernel : "?",
                    cldm_check_kind_name(e->kind), details);
  return snprintf(
      buf, n, "cl_ext_device_malloc: kernel %s: %s at 0x%" PRIx64 " (heap+0x%" PRIx64 ")%s",
      kernel ? kernel : "?", cldm_check_kind_name(e->kind), e->address, e->offset, details);
}

/* Checks a live block of a checked heap at `off` (`bytes` long) in heap bytes `h`. */
static void cldm_check_block_verify(const unsigned char *h, uint64_t off, uint64_t bytes,
                                    cldm_check_block *b) {
  b->offset = off;
  b->bytes = bytes;
  b->damaged = 0;
  uint32_t tail = cldm_check_u32(h + off + bytes - CLDM_CHECK_TRAILER_BYTES);
  uint32_t seal = cldm_check_u32(h + off + bytes - CLDM_CHECK_TRAILER_BYTES + 4);
  if (bytes < CLDM_CHECK_EXTRA_BYTES || seal != cldm_check_seal(tail, off) ||
      tail < CLDM_CHECK_EXTRA_BYTES || tail > bytes) {
    b->size = bytes < CLDM_CHECK_EXTRA_BYTES ? 0 : bytes - CLDM_CHECK_EXTRA_BYTES;
    b->damaged = 1;
    return;
  }
  b->size = bytes - tail;
  uint64_t end = bytes - CLDM_CHECK_TRAILER_BYTES;
  if (end - b->size > CLDM_CHECK_GUARD_MAX_BYTES)
    end = b->size + CLDM_CHECK_GUARD_MAX_BYTES;
  for (uint64_t i = b->size; i < end; i++)
    if (h[off + i] != CLDM_CHECK_GUARD_BYTE) {
      b->damaged = 1;
      return;
    }
}

/* Counts live block b (found at `off`, `bytes` long) into the scan. */
static void cldm_check_scan_add(const unsigned char *h, int checked, uint64_t off, uint64_t bytes,
                                cldm_check_scan *out, cldm_check_block *blocks, size_t max_blocks,
                                cldm_check_block *damaged, size_t max_damaged) {
  cldm_check_block b = {off, bytes, bytes, 0};
  if (checked)
    cldm_check_block_verify(h, off, bytes, &b);
  if (out->live < max_blocks)
    blocks[out->live] = b;
  if (b.damaged) {
    if (out->damaged < max_damaged)
      damaged[out->damaged] = b;
    out->damaged++;
  }
  out->live++;
  out->live_bytes += b.size;
}

uint64_t cldm_check_heap_base(const void *heap, size_t n) {
  cldm_heap_header hd;
  cldm_check_log log;
  if (!heap || n < sizeof hd)
    return 0;
  memcpy(&hd, heap, sizeof hd);
  if (!cldm_hdr_check_offset(hd) || cldm_hdr_check_offset(hd) > n ||
      cldm_check_log_decode((const unsigned char *)heap + cldm_hdr_check_offset(hd),
                            n - cldm_hdr_check_offset(hd), cldm_hdr_check_capacity(hd), &log, NULL,
                            0) != 0)
    return 0;
  return log.base;
}

int cldm_check_heap_scan(const void *heap, size_t n, uint64_t base, cldm_check_scan *out,
                         cldm_check_block *blocks, size_t max_blocks, cldm_check_block *damaged,
                         size_t max_damaged) {
  const unsigned char *h = heap;
  cldm_heap_header hd;
  if (!h || !out || (max_blocks && !blocks) || (max_damaged && !damaged) || n < sizeof hd)
    return -1;
  memcpy(&hd, h, sizeof hd);
  if (hd.magic != CLDM_HEAP_MAGIC || hd.layout_version != CLDM_HEAP_LAYOUT_VERSION ||
      hd.num_pages > CLDM_HEAP_MAX_PAGES || hd.pages_offset > n ||
      (n - hd.pages_offset) / CLDM_PAGE_BYTES < hd.num_pages ||
      hd.descs_offset + 4ull * hd.num_pages > hd.pages_offset ||
      hd.bitmaps_offset + (uint64_t)CLDM_SLOT_BITMAP_BYTES * hd.num_pages > hd.pages_offset)
    return -1;
  /* page 0 where the device put it for the heap's device address (cldm_heap_pages_pad) */
  uint64_t first = hd.pages_offset + cldm_heap_pages_pad((uint32_t)(base + hd.pages_offset));
  if (first > n || (n - first) / CLDM_PAGE_BYTES < hd.num_pages)
    return -1;
  memset(out, 0, sizeof *out);
  int checked = cldm_hdr_check_offset(hd) != 0;
  for (uint32_t p = 0; p < hd.num_pages; p++) {
    uint32_t d = cldm_check_u32(h + hd.descs_offset + 4ull * p);
    uint32_t kind = d >> CLDM_DESC_KIND_SHIFT;
    const unsigned char *bm = h + hd.bitmaps_offset + (uint64_t)CLDM_SLOT_BITMAP_BYTES * p;
    uint64_t page_off = first + (uint64_t)p * CLDM_PAGE_BYTES;
    if (kind >= 1 && kind <= CLDM_NUM_CLASSES) {
      uint32_t c = kind - 1, bytes = cldm_class_bytes(c), slots = cldm_class_slots(c, hd.num_pages);
      if (p + cldm_class_span_pages(c, hd.num_pages) > hd.num_pages)
        continue; /* a descriptor a kernel overwrote: nothing to trust */
      for (uint32_t s = 0; s < slots; s++)
        if (cldm_check_u32(bm + 4 * (s >> 5)) >> (s & 31) & 1)
          cldm_check_scan_add(h, checked, page_off + (uint64_t)s * bytes, bytes, out, blocks,
                              max_blocks, damaged, max_damaged);
    } else if (kind == CLDM_DESC_KIND_LARGE_HEAD) {
      uint32_t pages = cldm_check_u32(bm), pad = cldm_check_u32(bm + 4) << CLDM_GRANULE_SHIFT;
      if (pages == 0 || pages > hd.num_pages - p || pad >= CLDM_PAGE_BYTES)
        continue;
      cldm_check_scan_add(h, checked, page_off + pad, (uint64_t)pages * CLDM_PAGE_BYTES - pad, out,
                          blocks, max_blocks, damaged, max_damaged);
    }
  }
  return 0;
}
