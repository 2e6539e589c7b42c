/*
 * test_alloc_stress.c — end-to-end tests of one allocator module: the random stress test
 * (CLDM_TEST_STRESS_SCALE scales it), on a heap that holds it and on one it keeps full, and
 * contention of many work-items for a few slots.
 * Fixture, environment and skip rules: alloc_fixture.h.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc_fixture.h"

/* Every work-item allocates, fills, checks and frees random sizes (16 B..8 KiB, 1 in 64 large)
 * with up to 4 live at a time, over several launches, on a heap of `heap_bytes`; with `prefill`,
 * on a heap first filled with blocks of that size and every other one of them freed (the blocks
 * left stay through the launches); returns the NULLs of the last launch. */
static uint32_t stress_rounds(size_t heap_bytes, uint32_t prefill) {
  const char *scale_env = getenv("CLDM_TEST_STRESS_SCALE");
  size_t scale = scale_env ? (size_t)strtoul(scale_env, NULL, 10) : 1;
  if (scale == 0)
    scale = 1;
  size_t items = ((size_t)1 << 13) * scale;
  cl_uint steps = 16, large_one_in = 64;
  uint32_t zero = 0, nulls = 0;
  cldm_dtest_heap heap = cldm_dtest_heap_create(&g_env, heap_bytes);
  size_t kept = 0, asked = prefill ? heap.usable_bytes / prefill + 64 : 0;
  uint64_t *offs = malloc((asked ? asked : 1) * 8), *gone = malloc((asked ? asked : 1) * 8);
  uint32_t *sizes = malloc((asked ? asked : 1) * 4);
  if (prefill) { /* full, then holes in every slab */
    for (size_t i = 0; i < asked; i++)
      sizes[i] = prefill;
    run_malloc(&heap, sizes, offs, asked, 1);
    size_t n = 0;
    for (size_t i = 0; i < asked; i++)
      if (offs[i] != CLDM_DTEST_NULL_OFF && (offs[i] / prefill) % 2) {
        gone[n++] = offs[i];
        offs[i] = CLDM_DTEST_NULL_OFF;
      }
    run_free_offs(&heap, gone, n);
    kept = check_disjoint(&heap, offs, sizes, asked);
  }
  uint64_t failed_fill = cldm_dtest_heap_stats(&g_env, &heap).failed_allocations;
  cl_mem be = cldm_dtest_buffer(&g_env, 4, &zero), bn = cldm_dtest_buffer(&g_env, 4, &zero);
  for (cl_uint round = 0; round < 3; round++) {
    cl_uint seed = 0xC0FFEEu + round;
    cldm_dtest_write(&g_env, be, 4, &zero);
    cldm_dtest_write(&g_env, bn, 4, &zero);
    uint64_t failed0 = cldm_dtest_heap_stats(&g_env, &heap).failed_allocations;
    cldm_dtest_args(g_k[K_STRESS], sizeof(cl_mem), &heap.buf, sizeof seed, &seed, sizeof steps,
                    &steps, sizeof large_one_in, &large_one_in, sizeof(cl_mem), &be, sizeof(cl_mem),
                    &bn, (size_t)0);
    double t = cldm_dtest_run(&g_env, g_k[K_STRESS], items);
    uint32_t errors = cldm_dtest_read_u32(&g_env, be);
    nulls = cldm_dtest_read_u32(&g_env, bn);
    printf("stress round %u (%zu MiB heap): %zu work-items x %u allocations in %.3f s, %u NULL\n",
           round, heap_bytes >> 20, items, steps, t, nulls);
    assert_int_equal(errors, 0);
    cldm_heap_stats s = cldm_dtest_heap_stats(&g_env, &heap);
    assert_int_equal(s.failed_allocations - failed0, nulls);
    assert_stats(&heap, kept * expected_bytes(prefill), kept, failed0 + nulls, 0);
  }
  if (prefill) {
    assert_int_equal(run_check_free(&heap, sizes, offs, asked, 1), 0); /* intact, then freed */
    assert_true(cldm_dtest_heap_stats(&g_env, &heap).failed_allocations > failed_fill);
  }
  assert_whole_heap_free(&heap);
  free(offs);
  free(gone);
  free(sizes);
  clReleaseMemObject(be);
  clReleaseMemObject(bn);
  cldm_dtest_heap_release(&heap);
  return nulls;
}

static void test_stress(void **state) {
  (void)state;
  require_module();
  stress_rounds(64u << 20, 0u);
}

/* The same on a heap full of 64 B blocks with every other one freed (no free page, holes of
 * one class): most calls find their class full while other work-items free, so the last
 * resort's searches, flushes, stamps and borrows (cldm_slab_final.clh, cldm_slab_borrow.clh) run against concurrent frees,
 * refills of the 64 B holes and retires; the blocks' patterns (the stress's and the fill's), the
 * statistics, the room index and the whole heap at the end must come out intact. */
static void test_stress_full(void **state) {
  (void)state;
  require_module();
  stress_rounds(4u << 20, 64u);
}

/* Prints, for diagnosis, every page whose descriptor count differs from the number of bits set
 * in its slot bitmap, or whose slab has free slots, and the pool words. */
static void dump_pages(const cldm_dtest_heap *heap) {
  size_t n = (size_t)cldm_dtest_heap_pages_offset(&g_env, heap);
  unsigned char *meta = malloc(n);
  cldm_heap_header h;
  DT_CHECK(clEnqueueReadBuffer(g_env.queue, heap->buf, CL_TRUE, 0, n, meta, 0, NULL, NULL));
  memcpy(&h, meta, sizeof h);
  for (uint32_t p = 0; p < h.num_pages; p++) {
    uint32_t d, bits = 0, w;
    memcpy(&d, meta + h.descs_offset + 4 * p, 4);
    for (uint32_t k = 0; k < CLDM_SLOT_BITMAP_WORDS; k++) {
      memcpy(&w, meta + h.bitmaps_offset + (size_t)p * CLDM_SLOT_BITMAP_BYTES + 4 * k, 4);
      bits += (uint32_t)__builtin_popcount(w);
    }
    uint32_t kind = d >> CLDM_DESC_KIND_SHIFT, count = d & CLDM_DESC_COUNT_MASK;
    uint32_t slots =
        kind >= 1 && kind <= CLDM_NUM_CLASSES ? cldm_class_slots(kind - 1, h.num_pages) : 0;
    if (slots && (count != bits || count != slots))
      fprintf(stderr, "page %u: class %u count %u bits %u slots %u\n", p, kind - 1, count, bits,
              slots);
  }
  for (uint32_t k = 0; k < h.pool_words; k++) {
    uint32_t w;
    memcpy(&w, meta + h.pool_offset + 4 * k, 4);
    fprintf(stderr, "pool word %u: %08x\n", k, w);
  }
  free(meta);
}

/* Contention: a 1 MiB heap full of 16-byte allocations but for four slots far apart in one
 * page, then every work-item allocates, tags, checks and frees a slot 32 times. All reservations
 * land on that page with tickets in its last word, so concurrent work-items scan to the same
 * free bit and race for it: a slot handed out twice changes a tag or makes a free invalid. */
static void test_contention(void **state) {
  (void)state;
  require_module();
  enum { ITEMS = 1 << 13 };
  static const uint32_t free_slots[] = {100, 1100, 2100, 3100};
  cldm_dtest_heap heap = cldm_dtest_heap_create(&g_env, 1u << 20);
  uint64_t pages = first_page_offset(&heap);
  size_t cap = heap.usable_bytes / 16, n = cap;
  uint32_t *sizes = malloc(n * 4);
  uint64_t *offs = malloc(n * 8), holes[4];
  for (size_t i = 0; i < n; i++)
    sizes[i] = 16;
  run_malloc(&heap, sizes, offs, n, 1);
  size_t got = check_disjoint(&heap, offs, sizes, n);
  if (got != n)
    dump_pages(&heap);
  assert_int_equal(got, n);
  for (size_t k = 0; k < 4; k++) { /* page 3, slots far apart */
    holes[k] = pages + 3 * (uint64_t)CLDM_PAGE_BYTES + 16ull * free_slots[k];
    for (size_t i = 0; i < n; i++)
      if (offs[i] == holes[k])
        offs[i] = CLDM_DTEST_NULL_OFF; /* no longer ours */
  }
  run_free_offs(&heap, holes, 4);
  assert_stats(&heap, (cap - 4) * 16, cap - 4, 0, 0);
  for (cl_uint size = 16; size <= 64; size += 48) { /* 64: no page for another class */
    uint32_t zero = 0;
    cl_mem be = cldm_dtest_buffer(&g_env, 4, &zero), bn = cldm_dtest_buffer(&g_env, 4, &zero);
    cl_uint rounds = 32;
    uint64_t failed0 = cldm_dtest_heap_stats(&g_env, &heap).failed_allocations;
    cldm_dtest_args(g_k[K_CHURN], sizeof(cl_mem), &heap.buf, sizeof size, &size, sizeof rounds,
                    &rounds, sizeof(cl_mem), &be, sizeof(cl_mem), &bn, (size_t)0);
    cldm_dtest_run(&g_env, g_k[K_CHURN], ITEMS);
    uint32_t errors = cldm_dtest_read_u32(&g_env, be), nulls = cldm_dtest_read_u32(&g_env, bn);
    cldm_heap_stats s = cldm_dtest_heap_stats(&g_env, &heap);
    printf("contention, %u-byte requests: %u tags overwritten, %llu invalid frees, %u NULL\n", size,
           errors, (unsigned long long)s.invalid_frees, nulls);
    assert_int_equal(errors, 0);
    assert_int_equal(s.invalid_frees, 0);
    assert_int_equal(s.live_allocations, cap - 4);
    assert_int_equal(s.bytes_in_use, (cap - 4) * 16);
    assert_int_equal(s.failed_allocations - failed0, nulls);
    if (size == 64) /* every page is a 16-byte slab in use: every request fails */
      assert_int_equal(nulls, (uint32_t)ITEMS * rounds);
    clReleaseMemObject(be);
    clReleaseMemObject(bn);
  }
  assert_int_equal(run_check_free(&heap, sizes, offs, n, 1), 0);
  assert_int_equal(cldm_dtest_heap_stats(&g_env, &heap).live_allocations, 0);
  assert_whole_heap_free(&heap);
  cldm_dtest_heap_release(&heap);
  free(sizes);
  free(offs);
}

int main(int argc, char **argv) {
  int rc = alloc_fixture_args(argc, argv);
  if (rc)
    return rc;
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_stress),
      cmocka_unit_test(test_stress_full),
      cmocka_unit_test(test_contention),
  };
  return cmocka_run_group_tests_name(g_module, tests, alloc_group_setup, alloc_group_teardown);
}
