/*
 * test_check.c — host-only tests of checked mode's host side (cldm_device.h, "checked mode"):
 * the checked geometry (a check area inside the image, the header naming it, the other heaps
 * unchanged), decoding the event log (counts, complete and incomplete entries, a full log),
 * the report lines of every kind, and the inspection of a heap image: live slab slots and runs
 * found, guard bytes and trailers checked, damaged blocks reported, damaged metadata refused.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cldm_device.h"
#include "cldm_heap_layout.h"

#define MiB (1ull << 20)

static void test_checked_geometry(void **state) {
  (void)state;
  cldm_heap_geometry plain, checked;
  assert_int_equal(cldm_heap_geometry_for_request(8 * MiB, 0, &plain), 0);
  assert_int_equal(cldm_heap_geometry_for_request_checked(8 * MiB, 0, &checked), 0);
  assert_int_equal(plain.check_offset, 0);
  assert_int_equal(plain.check_capacity, 0);
  assert_int_equal(cldm_check_area_bytes(&plain), 0);
  assert_int_equal(checked.usable_bytes, plain.usable_bytes);
  assert_int_equal(checked.check_capacity, CLDM_CHECK_LOG_ENTRIES);
  assert_true(checked.check_offset >=
              checked.bitmaps_offset + CLDM_SLOT_BITMAP_BYTES * (uint64_t)checked.num_pages);
  assert_int_equal(checked.check_offset % CLDM_META_ALIGN, 0);
  assert_int_equal(cldm_check_area_bytes(&checked),
                   CLDM_CHECK_AREA_HEADER_BYTES + CLDM_CHECK_ENTRY_BYTES * CLDM_CHECK_LOG_ENTRIES);
  assert_int_equal(checked.image_bytes, checked.check_offset + cldm_check_area_bytes(&checked));
  assert_true(checked.pages_offset >= checked.image_bytes);
  /* the image names the area; a plain image leaves the words 0 */
  unsigned char *img = calloc(1, checked.image_bytes);
  assert_non_null(img);
  memset(img, 0xAB, checked.image_bytes);
  assert_int_equal(cldm_heap_image_fill(&checked, img, checked.image_bytes), 0);
  cldm_heap_header h;
  memcpy(&h, img, sizeof h);
  assert_int_equal(cldm_hdr_check_offset(h), checked.check_offset);
  assert_int_equal(cldm_hdr_check_capacity(h), CLDM_CHECK_LOG_ENTRIES);
  for (size_t i = 0; i < cldm_check_area_bytes(&checked); i++)
    assert_int_equal(img[checked.check_offset + i], 0); /* creation and reset clear it */
  assert_int_equal(cldm_heap_image_fill(&plain, img, plain.image_bytes), 0);
  memcpy(&h, img, sizeof h);
  assert_int_equal(cldm_hdr_check_offset(h), 0);
  assert_int_equal(cldm_hdr_check_capacity(h), 0);
  free(img);
}

/* An area of `cap` entries with the given counts and claim counter. */
static unsigned char *area_new(uint32_t cap, uint32_t claimed) {
  unsigned char *a = calloc(1, CLDM_CHECK_AREA_HEADER_BYTES + CLDM_CHECK_ENTRY_BYTES * cap);
  assert_non_null(a);
  memcpy(a + 4 * CLDM_CHECK_WORD_NEXT, &claimed, 4);
  return a;
}

static void area_count(unsigned char *a, uint32_t kind, uint64_t n) {
  uint32_t lo = (uint32_t)n, hi = (uint32_t)(n >> 32);
  memcpy(a + 4 * (CLDM_CHECK_WORD_COUNTS + 2 * kind), &lo, 4);
  memcpy(a + 4 * (CLDM_CHECK_WORD_COUNTS + 2 * kind + 1), &hi, 4);
}

static void area_entry(unsigned char *a, uint32_t i, uint32_t kind, uint64_t addr, uint64_t off,
                       uint64_t size, uint32_t block) {
  cldm_check_entry e = {kind, block, addr, off, size};
  memcpy(a + CLDM_CHECK_AREA_HEADER_BYTES + CLDM_CHECK_ENTRY_BYTES * i, &e, sizeof e);
}

static void test_log_decode(void **state) {
  (void)state;
  unsigned char *a = area_new(4, 3);
  area_count(a, CLDM_CHECK_FREE_DOUBLE, 1);
  area_count(a, CLDM_CHECK_OVERFLOW, (1ull << 32) + 1); /* the hi word counts */
  uint64_t base = 0x7f0000000000ull;
  area_entry(a, 0, CLDM_CHECK_FREE_DOUBLE, base + 0x5000, 0x5000, 0, 0);
  area_entry(a, 1, 0, 0, 0, 0, 0); /* claimed, never completed: skipped */
  area_entry(a, 2, CLDM_CHECK_OVERFLOW, base + 0x6000, 0x6000, 20, 48);
  uint32_t lo = (uint32_t)base, hi = (uint32_t)(base >> 32);
  memcpy(a + 4 * CLDM_CHECK_WORD_BASE, &lo, 4);
  memcpy(a + 4 * CLDM_CHECK_WORD_BASE + 4, &hi, 4);
  size_t n = CLDM_CHECK_AREA_HEADER_BYTES + CLDM_CHECK_ENTRY_BYTES * 4;
  cldm_check_log log;
  cldm_check_event ev[4];
  assert_int_equal(cldm_check_log_decode(a, n, 4, &log, ev, 4), 0);
  assert_int_equal(log.counts[CLDM_CHECK_FREE_DOUBLE], 1);
  assert_int_equal(log.counts[CLDM_CHECK_OVERFLOW], (1ull << 32) + 1);
  assert_int_equal(log.total, (1ull << 32) + 2);
  assert_int_equal(log.claimed, 3);
  assert_int_equal(log.logged, 2);
  assert_int_equal(log.base, base);
  assert_int_equal(ev[0].kind, CLDM_CHECK_FREE_DOUBLE);
  assert_int_equal(ev[0].address, base + 0x5000);
  assert_int_equal(ev[1].kind, CLDM_CHECK_OVERFLOW);
  assert_int_equal(ev[1].size, 20);
  assert_int_equal(ev[1].block_bytes, 48);
  /* fewer slots than entries: the first ones, all counted */
  assert_int_equal(cldm_check_log_decode(a, n, 4, &log, ev, 1), 0);
  assert_int_equal(log.logged, 2);
  assert_int_equal(ev[0].kind, CLDM_CHECK_FREE_DOUBLE);
  /* a claim counter past the capacity reads only the capacity's entries */
  uint32_t many = 1000;
  memcpy(a, &many, 4);
  area_entry(a, 1, CLDM_CHECK_FREE_OUTSIDE, 0x10, 0x10 - base, 0, 0);
  area_entry(a, 3, CLDM_CHECK_ALLOC_FAILED, 0, (uint64_t)0 - base, 4096, 0);
  assert_int_equal(cldm_check_log_decode(a, n, 4, &log, ev, 4), 0);
  assert_int_equal(log.claimed, 1000);
  assert_int_equal(log.logged, 4);
  assert_int_equal(ev[3].kind, CLDM_CHECK_ALLOC_FAILED);
  /* too short, NULL */
  assert_int_equal(cldm_check_log_decode(a, n - 1, 4, &log, ev, 4), -1);
  assert_int_equal(cldm_check_log_decode(NULL, n, 4, &log, ev, 4), -1);
  assert_int_equal(cldm_check_log_decode(a, n, 4, NULL, ev, 4), -1);
  assert_int_equal(cldm_check_log_decode(a, n, 4, &log, NULL, 4), -1);
  free(a);
}

static void test_format(void **state) {
  (void)state;
  char line[256];
  cldm_check_event e = {CLDM_CHECK_FREE_DOUBLE, 0x7f0000005000ull, 0x5000, 0, 0};
  cldm_check_format_event(line, sizeof line, "k", &e);
  assert_string_equal(line, "cl_ext_device_malloc: kernel k: double free at 0x7f0000005000 "
                            "(heap+0x5000)");
  e.kind = CLDM_CHECK_FREE_INTERIOR;
  cldm_check_format_event(line, sizeof line, "k", &e);
  assert_string_equal(line, "cl_ext_device_malloc: kernel k: interior-pointer free at "
                            "0x7f0000005000 (heap+0x5000)");
  e.kind = CLDM_CHECK_FREE_OUTSIDE;
  cldm_check_format_event(line, sizeof line, "k", &e);
  assert_string_equal(line, "cl_ext_device_malloc: kernel k: free outside the heap at "
                            "0x7f0000005000 (heap+0x5000)");
  e.kind = CLDM_CHECK_FREE_UNALLOCATED;
  cldm_check_format_event(line, sizeof line, "k", &e);
  assert_string_equal(line, "cl_ext_device_malloc: kernel k: free of unallocated memory at "
                            "0x7f0000005000 (heap+0x5000)");
  e.kind = CLDM_CHECK_OVERFLOW;
  e.size = 20;
  e.block_bytes = 48;
  cldm_check_format_event(line, sizeof line, "k", &e);
  assert_string_equal(line, "cl_ext_device_malloc: kernel k: overflow at 0x7f0000005000 "
                            "(heap+0x5000), block of 48 bytes, 20 bytes requested");
  e.size = CLDM_CHECK_SIZE_UNKNOWN;
  cldm_check_format_event(line, sizeof line, "k", &e);
  assert_string_equal(line, "cl_ext_device_malloc: kernel k: overflow at 0x7f0000005000 "
                            "(heap+0x5000), block of 48 bytes, size unknown");
  cldm_check_event f = {CLDM_CHECK_ALLOC_FAILED, 0, 0, 4096, 0};
  cldm_check_format_event(line, sizeof line, "grab", &f);
  assert_string_equal(line, "cl_ext_device_malloc: kernel grab: allocation failed, 4096 bytes "
                            "requested");
  assert_string_equal(cldm_check_kind_name(0), "unknown");
  assert_string_equal(cldm_check_kind_name(7), "unknown");
  /* truncation follows snprintf */
  char tiny[8];
  assert_true(cldm_check_format_event(tiny, sizeof tiny, "k", &e) > (int)sizeof tiny);
  assert_int_equal(strlen(tiny), sizeof tiny - 1);
}

/* A checked heap image of 1 MiB plus its pages, for the scans. */
typedef struct heap_img {
  cldm_heap_geometry g;
  unsigned char *bytes;
} heap_img;

static heap_img img_new(int checked) {
  heap_img m;
  assert_int_equal(checked ? cldm_heap_geometry_for_request_checked(MiB, 0, &m.g)
                           : cldm_heap_geometry_for_request(MiB, 0, &m.g),
                   0);
  m.bytes = calloc(1, m.g.buffer_bytes);
  assert_non_null(m.bytes);
  assert_int_equal(cldm_heap_image_fill(&m.g, m.bytes, m.g.buffer_bytes), 0);
  return m;
}

static void img_desc(heap_img *m, uint32_t page, uint32_t kind, uint32_t count) {
  uint32_t d = kind << CLDM_DESC_KIND_SHIFT | count;
  memcpy(m->bytes + m->g.descs_offset + 4 * page, &d, 4);
}

static void img_bitmap_word(heap_img *m, uint32_t page, uint32_t word, uint32_t v) {
  memcpy(m->bytes + m->g.bitmaps_offset + CLDM_SLOT_BITMAP_BYTES * page + 4 * word, &v, 4);
}

/* Writes a checked block's guard bytes and trailer as the device does. */
static void img_arm(heap_img *m, uint64_t off, uint64_t bytes, uint64_t size) {
  uint64_t end = bytes - CLDM_CHECK_TRAILER_BYTES;
  if (end - size > CLDM_CHECK_GUARD_MAX_BYTES)
    end = size + CLDM_CHECK_GUARD_MAX_BYTES;
  memset(m->bytes + off + size, CLDM_CHECK_GUARD_BYTE, end - size);
  uint32_t tail = (uint32_t)(bytes - size), seal = cldm_check_seal(tail, off);
  memcpy(m->bytes + off + bytes - 8, &tail, 4);
  memcpy(m->bytes + off + bytes - 4, &seal, 4);
}

static void test_scan(void **state) {
  (void)state;
  heap_img m = img_new(1);
  uint64_t pages = cldm_heap_first_page(&m.g, 0); /* no heap address recorded: as for 0 */
  /* page 0: slab of class 2 (48-byte slots), slots 0, 1 and 33 live */
  img_desc(&m, 0, 3, 3);
  img_bitmap_word(&m, 0, 0, 0x3);
  img_bitmap_word(&m, 0, 1, 0x2);
  img_arm(&m, pages, 48, 20);
  img_arm(&m, pages + 48, 48, 32);
  img_arm(&m, pages + 33 * 48, 48, 1);
  /* pages 2-3: a run of 2 pages, pointer at offset 256 in it, 70000 bytes requested */
  img_desc(&m, 2, CLDM_DESC_KIND_LARGE_HEAD, 0);
  img_desc(&m, 3, CLDM_DESC_KIND_LARGE_TAIL, 0);
  img_bitmap_word(&m, 2, 0, 2);
  img_bitmap_word(&m, 2, 1, 256 >> 4);
  uint64_t run = pages + 2 * (uint64_t)CLDM_PAGE_BYTES + 256;
  img_arm(&m, run, 2 * CLDM_PAGE_BYTES - 256, 70000);
  cldm_check_scan s;
  cldm_check_block blocks[8], damaged[8];
  assert_int_equal(cldm_check_heap_scan(m.bytes, m.g.buffer_bytes, 0, &s, blocks, 8, damaged, 8),
                   0);
  assert_int_equal(s.live, 4);
  assert_int_equal(s.live_bytes, 20 + 32 + 1 + 70000);
  assert_int_equal(s.damaged, 0);
  assert_int_equal(blocks[0].offset, pages);
  assert_int_equal(blocks[1].offset, pages + 48);
  assert_int_equal(blocks[2].offset, pages + 33 * 48);
  assert_int_equal(blocks[3].offset, run);
  assert_int_equal(blocks[3].bytes, 2 * CLDM_PAGE_BYTES - 256);
  assert_int_equal(blocks[3].size, 70000);
  /* a write one byte past block 0, the trailer of block 2 overwritten, a guard byte of the
   * run's last checked guard byte */
  m.bytes[pages + 20] = 0;
  m.bytes[pages + 33 * 48 + 44] ^= 1;
  m.bytes[run + 70000 + CLDM_CHECK_GUARD_MAX_BYTES - 1] = 0;
  m.bytes[run + 70000 + CLDM_CHECK_GUARD_MAX_BYTES] = 0; /* past the checked guard: not seen */
  assert_int_equal(cldm_check_heap_scan(m.bytes, m.g.buffer_bytes, 0, &s, blocks, 1, damaged, 8),
                   0);
  assert_int_equal(s.live, 4);
  assert_int_equal(s.damaged, 3);
  assert_int_equal(damaged[0].offset, pages);
  assert_int_equal(damaged[0].size, 20);
  assert_int_equal(damaged[1].offset, pages + 33 * 48);
  assert_int_equal(damaged[1].size, 48 - CLDM_CHECK_EXTRA_BYTES); /* trailer gone */
  assert_int_equal(damaged[2].offset, run);
  /* a descriptor a kernel overwrote: a slab past the heap's end, a run too long: skipped */
  img_desc(&m, m.g.num_pages - 1, 65, 1); /* class 64 (18432 B) spans two pages */
  img_bitmap_word(&m, m.g.num_pages - 1, 0, 1);
  img_bitmap_word(&m, 2, 0, m.g.num_pages);
  assert_int_equal(cldm_check_heap_scan(m.bytes, m.g.buffer_bytes, 0, &s, NULL, 0, NULL, 0), 0);
  assert_int_equal(s.live, 3);
  /* a damaged header, a short read */
  assert_int_equal(cldm_check_heap_scan(m.bytes, m.g.pages_offset, 0, &s, NULL, 0, NULL, 0), -1);
  m.bytes[0] ^= 1;
  assert_int_equal(cldm_check_heap_scan(m.bytes, m.g.buffer_bytes, 0, &s, NULL, 0, NULL, 0), -1);
  free(m.bytes);
}

/* a heap that is not checked: live blocks are found, sizes are the blocks', nothing damaged */
static void test_scan_unchecked(void **state) {
  (void)state;
  heap_img m = img_new(0);
  uint64_t pages = cldm_heap_first_page(&m.g, 0);
  img_desc(&m, 1, 1, 2); /* class 0: 16-byte slots */
  img_bitmap_word(&m, 1, 127, 0x80000001u);
  memset(m.bytes + pages + CLDM_PAGE_BYTES, 0x11, CLDM_PAGE_BYTES); /* no guards */
  cldm_check_scan s;
  cldm_check_block blocks[4];
  assert_int_equal(cldm_check_heap_scan(m.bytes, m.g.buffer_bytes, 0, &s, blocks, 4, NULL, 0), 0);
  assert_int_equal(s.live, 2);
  assert_int_equal(s.live_bytes, 32);
  assert_int_equal(s.damaged, 0);
  assert_int_equal(blocks[0].offset, pages + CLDM_PAGE_BYTES + 16 * 4064);
  assert_int_equal(blocks[1].offset, pages + CLDM_PAGE_BYTES + 16 * 4095);
  assert_int_equal(cldm_check_heap_base(m.bytes, m.g.buffer_bytes), 0);
  free(m.bytes);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_checked_geometry), cmocka_unit_test(test_log_decode),
      cmocka_unit_test(test_format),           cmocka_unit_test(test_scan),
      cmocka_unit_test(test_scan_unchecked),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
