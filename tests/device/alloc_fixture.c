/*
 * alloc_fixture.c — see alloc_fixture.h.
 */
#include "alloc_fixture.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *g_module;
cldm_dtest_env g_env;
cl_kernel g_k[K_COUNT];
static cl_int g_open_err;      /* non-zero: the device rejected the module */
static unsigned g_module_bits; /* 32 or 64 */

static const char *const k_names[K_COUNT] = {
    "k_malloc", "k_check_free", "k_free_offs",       "k_free_foreign", "k_aligned",
    "k_dirty",  "k_calloc",     "k_calloc_overflow", "k_realloc",      "k_random_alloc",
    "k_stress", "k_churn",      "k_heap_addr"};

int alloc_fixture_args(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s <module name, e.g. cldm_alloc.cl20.spir64>\n", argv[0]);
    return 2;
  }
  g_module = argv[1];
  if (getenv("CLDM_TEST_FILTER")) /* e.g. CLDM_TEST_FILTER=test_stress */
    cmocka_set_test_filter(getenv("CLDM_TEST_FILTER"));
  return 0;
}

/* ---- host-side expectations --------------------------------------------------------------- */

uint64_t first_page_offset(const cldm_dtest_heap *heap) {
  cldm_heap_geometry g;
  uint64_t addr = 0;
  assert_int_equal(cldm_heap_geometry_for_buffer(heap->buffer_bytes, &g), 0);
  cl_mem ba = cldm_dtest_buffer(&g_env, sizeof addr, &addr);
  cldm_dtest_args(g_k[K_HEAP_ADDR], sizeof(cl_mem), &heap->buf, sizeof(cl_mem), &ba, (size_t)0);
  cldm_dtest_run(&g_env, g_k[K_HEAP_ADDR], 1);
  cldm_dtest_read(&g_env, ba, sizeof addr, &addr);
  clReleaseMemObject(ba);
  return cldm_heap_first_page(&g, addr);
}

uint64_t expected_bytes(uint64_t size) {
  if (size == 0)
    return 0;
  if (size <= CLDM_MAX_CLASS_BYTES)
    return cldm_class_bytes(cldm_class_of((uint32_t)size));
  return (size + CLDM_PAGE_BYTES - 1) / CLDM_PAGE_BYTES * CLDM_PAGE_BYTES;
}

uint64_t held_bytes(const cldm_dtest_heap *heap, const uint32_t *sizes, const uint64_t *offs,
                    size_t n) {
  cldm_heap_header hd;
  cldm_dtest_read(&g_env, heap->buf, sizeof hd, &hd);
  unsigned char *img = malloc(hd.image_bytes);
  cldm_dtest_read(&g_env, heap->buf, hd.image_bytes, img);
  const uint32_t *descs = (const uint32_t *)(img + hd.descs_offset);
  uint64_t base = first_page_offset(heap), bytes = 0;
  for (size_t i = 0; i < n; i++) {
    if (offs[i] == CLDM_DTEST_NULL_OFF || sizes[i] == 0)
      continue;
    if (sizes[i] > CLDM_MAX_CLASS_BYTES) { /* a run of its own */
      bytes += expected_bytes(sizes[i]);
      continue;
    }
    uint32_t page = (uint32_t)((offs[i] - base) / CLDM_PAGE_BYTES), kind = descs[page] >> 24;
    if (kind > CLDM_DESC_KIND_SPAN_TAIL0 && kind < CLDM_DESC_KIND_SPAN_TAIL0 + 8u)
      kind = descs[page - (kind - CLDM_DESC_KIND_SPAN_TAIL0)] >> 24;
    assert_true(kind >= 1 && kind <= CLDM_NUM_CLASSES);
    assert_true(cldm_class_bytes(kind - 1) >= sizes[i]);
    bytes += cldm_class_bytes(kind - 1);
  }
  free(img);
  return bytes;
}

uint64_t expected_held(const cldm_dtest_heap *heap, const uint32_t *sizes, const uint64_t *offs,
                       size_t n, uint64_t *kept) {
  uint32_t num_pages = (uint32_t)(heap->usable_bytes / CLDM_PAGE_BYTES);
  uint64_t first = first_page_offset(heap), pages = 0;
  uint32_t *blocks = calloc(num_pages, sizeof *blocks); /* blocks in the span from this page */
  uint32_t *cls = calloc(num_pages, sizeof *cls);       /* and its class */
  assert_true(blocks && cls);
  for (size_t i = 0; i < n; i++) {
    if (offs[i] == CLDM_DTEST_NULL_OFF || sizes[i] == 0)
      continue;
    uint32_t page = (uint32_t)((offs[i] - first) / CLDM_PAGE_BYTES);
    if (sizes[i] > CLDM_MAX_CLASS_BYTES) { /* a run of its own */
      pages += expected_bytes(sizes[i]) / CLDM_PAGE_BYTES;
      continue;
    }
    uint32_t c = cldm_class_of(sizes[i]), k = cldm_class_span_pages(c, num_pages);
    page &= ~(k - 1u); /* spans are aligned to their length (device/cl/cldm_pool_span.clh) */
    assert_true(page < num_pages);
    if (!blocks[page]++)
      pages += k;
    cls[page] = c;
  }
  *kept = 0;
  for (uint32_t p = 0; p < num_pages; p++) /* tickets left to draw: the slab stays current */
    if (blocks[p] && blocks[p] < cldm_class_slots(cls[p], num_pages))
      *kept += (uint64_t)cldm_class_span_pages(cls[p], num_pages) * CLDM_PAGE_BYTES;
  free(blocks);
  free(cls);
  return pages * CLDM_PAGE_BYTES;
}

typedef struct span {
  uint64_t off, len;
} span;

static int span_cmp(const void *a, const void *b) {
  const span *x = a, *y = b;
  return x->off < y->off ? -1 : x->off > y->off;
}

size_t check_disjoint(const cldm_dtest_heap *heap, const uint64_t *offs, const uint32_t *lens,
                      size_t n) {
  uint64_t first = first_page_offset(heap), end = first + heap->usable_bytes;
  span *s = malloc(n * sizeof *s);
  size_t m = 0;
  assert_non_null(s);
  for (size_t i = 0; i < n; i++)
    if (offs[i] != CLDM_DTEST_NULL_OFF)
      s[m++] = (span){offs[i], lens[i] ? lens[i] : 1};
  qsort(s, m, sizeof *s, span_cmp);
  for (size_t i = 0; i < m; i++) {
    if (s[i].off < first || s[i].off + s[i].len > end || s[i].off % 16 != 0) {
      fprintf(stderr, "allocation at offset %llu (+%llu) outside pages [%llu, %llu) or unaligned\n",
              (unsigned long long)s[i].off, (unsigned long long)s[i].len, (unsigned long long)first,
              (unsigned long long)end);
      fail();
    }
    if (i + 1 < m && s[i].off + s[i].len > s[i + 1].off) {
      fprintf(stderr, "allocations overlap: [%llu, +%llu) and [%llu, ...)\n",
              (unsigned long long)s[i].off, (unsigned long long)s[i].len,
              (unsigned long long)s[i + 1].off);
      fail();
    }
  }
  free(s);
  return m;
}

void assert_index_exact(const cldm_dtest_heap *heap) {
  cldm_heap_header hd;
  cldm_dtest_read(&g_env, heap->buf, sizeof hd, &hd);
  unsigned char *img = malloc(hd.image_bytes);
  cldm_dtest_read(&g_env, heap->buf, hd.image_bytes, img);
  const uint32_t *descs = (const uint32_t *)(img + hd.descs_offset);
  uint32_t wrong = 0;
  /* the room index, exact for the last resort (device/cl/cldm_room.clh): every slab with a free
   * slot has its mark, the mark's summary bit and its class's bit, and no refill or clear is
   * counted as still under way (a class's refills in progress, the high half of word c of W's
   * row num_shards + 3; the clears of marks, word CLDM_W_CLEARING of the shard rows) */
  const uint32_t *room =
      (const uint32_t *)(img + hd.pool_offset + cldm_room_after_pool_bytes(hd.pool_words));
  uint32_t ns = cldm_room_summary_words(hd.pool_words), rw = cldm_room_row_words(hd.pool_words);
  for (uint32_t p = 0; p < hd.num_pages; p++) {
    uint32_t kind = descs[p] >> CLDM_DESC_KIND_SHIFT, count = descs[p] & CLDM_DESC_COUNT_MASK;
    if (kind < 1 || kind > CLDM_NUM_CLASSES || count >= cldm_class_slots(kind - 1, hd.num_pages))
      continue;
    const uint32_t *row = room + CLDM_ROOM_TOP_WORDS + (size_t)(kind - 1) * rw;
    uint32_t w = p / 32, marked = row[ns + w] >> (p % 32) & 1u;
    uint32_t summed = row[w / 32] >> (w % 32) & 1u, top = room[(kind - 1) / 32] >> (kind - 1) % 32;
    if (!(marked && summed && (top & 1u)) && wrong++ < 8)
      fprintf(stderr, "room index: class %u page %u (count %u) mark %u summary %u class %u\n",
              kind - 1, p, count, marked, summed, top & 1u);
  }
  for (uint32_t c = 0; c < CLDM_NUM_CLASSES; c++) {
    uint32_t busy;
    memcpy(&busy, img + hd.w_offset + 8 * ((size_t)(hd.num_shards + 3) * CLDM_W_ROW_WORDS + c) + 4,
           4);
    if (busy != 0 && wrong++ < 8)
      fprintf(stderr, "class %u: %u refills still counted\n", c, busy);
  }
  for (uint32_t r = 0; r < hd.num_shards; r++) { /* clears of marks (word CLDM_W_CLEARING) */
    uint32_t busy;
    memcpy(&busy, img + hd.w_offset + 8 * ((size_t)r * CLDM_W_ROW_WORDS + CLDM_W_CLEARING), 4);
    if (busy != 0 && wrong++ < 8)
      fprintf(stderr, "shard row %u: %u clears of room marks still counted\n", r, busy);
  }
  free(img);
  assert_int_equal(wrong, 0);
}

void assert_stats(const cldm_dtest_heap *heap, uint64_t bytes, uint64_t live, uint64_t failed,
                  uint64_t invalid) {
  assert_index_exact(heap);
  cldm_heap_stats s = cldm_dtest_heap_stats(&g_env, heap);
  if (s.bytes_in_use != bytes || s.live_allocations != live || s.failed_allocations != failed ||
      s.invalid_frees != invalid)
    fprintf(stderr,
            "stats: bytes %llu live %llu failed %llu invalid %llu; expected %llu %llu %llu %llu\n",
            (unsigned long long)s.bytes_in_use, (unsigned long long)s.live_allocations,
            (unsigned long long)s.failed_allocations, (unsigned long long)s.invalid_frees,
            (unsigned long long)bytes, (unsigned long long)live, (unsigned long long)failed,
            (unsigned long long)invalid);
  assert_int_equal(s.size, heap->usable_bytes);
  assert_int_equal(s.bytes_in_use, bytes);
  assert_int_equal(s.live_allocations, live);
  assert_int_equal(s.failed_allocations, failed);
  assert_int_equal(s.invalid_frees, invalid);
  /* every live block lies in a held page; pages are held whole */
  assert_true(s.bytes_held >= s.bytes_in_use);
  assert_int_equal(s.bytes_held % CLDM_PAGE_BYTES, 0);
  assert_true(s.peak_bytes_held >= s.bytes_held);
  assert_true(s.peak_bytes_held <= s.size);
}

/* ---- kernel drivers ------------------------------------------------------------------------ */

void run_malloc(const cldm_dtest_heap *heap, const uint32_t *sizes, uint64_t *offs, size_t n,
                int do_fill) {
  cl_mem bs = cldm_dtest_buffer(&g_env, n * 4, sizes), bo = cldm_dtest_buffer(&g_env, n * 8, NULL);
  cl_uint fill = (cl_uint)do_fill;
  cldm_dtest_args(g_k[K_MALLOC], sizeof(cl_mem), &heap->buf, sizeof(cl_mem), &bs, sizeof(cl_mem),
                  &bo, sizeof fill, &fill, (size_t)0);
  cldm_dtest_run(&g_env, g_k[K_MALLOC], n);
  cldm_dtest_read(&g_env, bo, n * 8, offs);
  clReleaseMemObject(bs);
  clReleaseMemObject(bo);
}

uint32_t run_check_free(const cldm_dtest_heap *heap, const uint32_t *sizes, const uint64_t *offs,
                        size_t n, int do_free) {
  uint32_t zero = 0;
  cl_mem bs = cldm_dtest_buffer(&g_env, n * 4, sizes), bo = cldm_dtest_buffer(&g_env, n * 8, offs);
  cl_mem be = cldm_dtest_buffer(&g_env, 4, &zero);
  cl_uint f = (cl_uint)do_free;
  cldm_dtest_args(g_k[K_CHECK_FREE], sizeof(cl_mem), &heap->buf, sizeof(cl_mem), &bs,
                  sizeof(cl_mem), &bo, sizeof(cl_mem), &be, sizeof f, &f, (size_t)0);
  cldm_dtest_run(&g_env, g_k[K_CHECK_FREE], n);
  uint32_t errors = cldm_dtest_read_u32(&g_env, be);
  clReleaseMemObject(bs);
  clReleaseMemObject(bo);
  clReleaseMemObject(be);
  return errors;
}

void run_free_offs(const cldm_dtest_heap *heap, const uint64_t *offs, size_t n) {
  cl_mem bo = cldm_dtest_buffer(&g_env, n * 8, offs);
  cldm_dtest_args(g_k[K_FREE_OFFS], sizeof(cl_mem), &heap->buf, sizeof(cl_mem), &bo, (size_t)0);
  cldm_dtest_run(&g_env, g_k[K_FREE_OFFS], n);
  clReleaseMemObject(bo);
}

uint64_t malloc_one(const cldm_dtest_heap *heap, uint32_t size) {
  uint64_t off;
  run_malloc(heap, &size, &off, 1, 0);
  return off;
}

void assert_whole_heap_free(const cldm_dtest_heap *heap) {
  assert_index_exact(heap);
  cldm_heap_stats before = cldm_dtest_heap_stats(&g_env, heap);
  uint64_t off = malloc_one(heap, (uint32_t)heap->usable_bytes);
  assert_true(off != CLDM_DTEST_NULL_OFF);
  run_free_offs(heap, &off, 1);
  cldm_heap_stats after = cldm_dtest_heap_stats(&g_env, heap);
  assert_int_equal(after.bytes_in_use, 0);
  assert_int_equal(after.live_allocations, 0);
  /* the run held every page, and gave them all back: whatever took and returned pages
   * before, concurrently or not, counted them exactly */
  assert_int_equal(after.bytes_held, 0);
  assert_int_equal(after.peak_bytes_held, heap->usable_bytes);
  assert_int_equal(after.failed_allocations, before.failed_allocations);
  assert_int_equal(after.invalid_frees, before.invalid_frees);
}

/* ---- fixtures ------------------------------------------------------------------------------ */

int alloc_group_setup(void **state) {
  (void)state;
  char file[256];
  snprintf(file, sizeof file, "alloc_test.%s.spv", g_module);
  g_module_bits = strstr(g_module, ".spir64") ? 64 : 32;
  g_open_err = cldm_dtest_open(&g_env, cldm_dtest_data_path(file), g_module_bits);
  if (g_open_err != CL_SUCCESS) {
    printf("NOTE: %s: device \"%s\" (%u-bit) rejected the module: error %d\n", g_module,
           g_env.device_name, g_env.device_address_bits, g_open_err);
    return 0;
  }
  for (int i = 0; i < K_COUNT; i++)
    g_k[i] = cldm_dtest_kernel(&g_env, k_names[i]);
  printf("%s on %s\n", g_module, g_env.device_name);
  return 0;
}

int alloc_group_teardown(void **state) {
  (void)state;
  for (int i = 0; i < K_COUNT; i++)
    if (g_k[i])
      clReleaseKernel(g_k[i]);
  cldm_dtest_close(&g_env);
  return 0;
}

void require_module(void) {
  if (g_open_err == CL_SUCCESS)
    return;
  if (g_env.device_address_bits != g_module_bits)
    skip();
  fail_msg("device rejected %s (error %d)", g_module, g_open_err);
}
