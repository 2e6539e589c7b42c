/*
 * test_alloc_calloc_realloc.c — end-to-end tests of one allocator module: aligned_alloc,
 * calloc (zeroed memory, overflow) and realloc (contents kept, NULL and size 0, invalid
 * pointers).
 * Fixture, environment and skip rules: alloc_fixture.h.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc_fixture.h"

/* aligned_alloc(aligns[i], sizes[i]) for i < n: offsets into offs, absolute address mod the
 * alignment into mods. */
static void run_aligned(const cldm_dtest_heap *heap, const uint32_t *aligns, const uint32_t *sizes,
                        uint64_t *offs, uint32_t *mods, size_t n) {
  cl_mem ba = cldm_dtest_buffer(&g_env, n * 4, aligns),
         bs = cldm_dtest_buffer(&g_env, n * 4, sizes);
  cl_mem bo = cldm_dtest_buffer(&g_env, n * 8, NULL), bm = cldm_dtest_buffer(&g_env, n * 4, NULL);
  cldm_dtest_args(g_k[K_ALIGNED], sizeof(cl_mem), &heap->buf, sizeof(cl_mem), &ba, sizeof(cl_mem),
                  &bs, sizeof(cl_mem), &bo, sizeof(cl_mem), &bm, (size_t)0);
  cldm_dtest_run(&g_env, g_k[K_ALIGNED], n);
  cldm_dtest_read(&g_env, bo, n * 8, offs);
  cldm_dtest_read(&g_env, bm, n * 4, mods);
  clReleaseMemObject(ba);
  clReleaseMemObject(bs);
  clReleaseMemObject(bo);
  clReleaseMemObject(bm);
}

/* aligned_alloc for every power of two up to the page size, small and large sizes; invalid
 * alignments return NULL without counting a failure. */
static void test_aligned_alloc(void **state) {
  (void)state;
  require_module();
  static const uint32_t asizes[] = {1, 24, 100, 4096, 40000, 70000};
  enum { NA = 17 + 3, NS = sizeof asizes / sizeof asizes[0], N = NA * NS };
  uint32_t aligns[N], sizes[N], mods[N];
  uint64_t offs[N];
  for (size_t a = 0; a < NA; a++)
    for (size_t s = 0; s < NS; s++) {
      /* 1..65536, then invalid: 0, 3, 131072 */
      uint32_t al = a < 17 ? 1u << a : (a == 17 ? 0u : a == 18 ? 3u : 131072u);
      aligns[a * NS + s] = al;
      sizes[a * NS + s] = asizes[s];
    }
  cldm_dtest_heap heap = cldm_dtest_heap_create(&g_env, 16u << 20);
  run_aligned(&heap, aligns, sizes, offs, mods, N);
  size_t valid = 0;
  for (size_t i = 0; i < N; i++) {
    if (i / NS >= 17) {
      assert_true(offs[i] == CLDM_DTEST_NULL_OFF);
      continue;
    }
    assert_true(offs[i] != CLDM_DTEST_NULL_OFF);
    assert_int_equal(mods[i], 0); /* absolute device address is a multiple of the alignment */
    valid++;
  }
  assert_int_equal(check_disjoint(&heap, offs, sizes, N), valid);
  cldm_heap_stats s = cldm_dtest_heap_stats(&g_env, &heap);
  assert_int_equal(s.live_allocations, valid);
  assert_int_equal(s.failed_allocations, 0);
  assert_int_equal(run_check_free(&heap, sizes, offs, N, 1), 0);
  assert_stats(&heap, 0, 0, 0, 0);
  assert_whole_heap_free(&heap);
  cldm_dtest_heap_release(&heap);
}

/* Bytes of heap one aligned_alloc(align, size) may take (spec 2.1): the smallest size class
 * that holds `size` and is a multiple of `align`, or whole pages (align = page size, or sizes
 * above the largest class). */
static uint64_t aligned_cost(uint32_t align, uint32_t size) {
  uint32_t a = align < CLDM_GRANULE_BYTES ? CLDM_GRANULE_BYTES : align;
  if (a < CLDM_PAGE_BYTES && size <= CLDM_MAX_CLASS_BYTES) {
    uint32_t c = cldm_class_of(size > a ? size : a);
    while (cldm_class_bytes(c) % a)
      c++;
    return cldm_class_bytes(c);
  }
  return ((uint64_t)size + CLDM_PAGE_BYTES - 1) / CLDM_PAGE_BYTES * CLDM_PAGE_BYTES;
}

/* Capacity with aligned requests: for every power of two from 16 B to 64 KiB and a few sizes,
 * a 2 MiB heap filled with aligned_alloc until NULL holds exactly usable / aligned_cost
 * allocations, every one aligned in absolute address, disjoint, filled and checked; freeing
 * them gives the whole heap back. */
static void test_aligned_capacity(void **state) {
  (void)state;
  require_module();
  cldm_dtest_heap heap = cldm_dtest_heap_create(&g_env, 2u << 20);
  printf("aligned_alloc capacity (2 MiB heap, %s):\n", g_module);
  printf("  %-8s %-8s %10s %10s %14s\n", "align", "size", "allocs", "expected", "heap bytes/alloc");
  for (uint32_t align = 16; align <= CLDM_PAGE_BYTES; align *= 2) {
    /* 4 bytes (the worst case), half the alignment plus one, the alignment plus one */
    const uint32_t tries[] = {4, align / 2 + 1, align + 1};
    for (size_t t = 0; t < sizeof tries / sizeof tries[0]; t++) {
      uint32_t size = tries[t];
      uint64_t cost = aligned_cost(align, size);
      size_t cap = (size_t)(heap.usable_bytes / cost), n = cap + cap / 16 + 32;
      uint32_t *aligns = malloc(n * 4), *sizes = malloc(n * 4), *mods = malloc(n * 4);
      uint64_t *offs = malloc(n * 8);
      assert_true(aligns && sizes && mods && offs);
      for (size_t i = 0; i < n; i++) {
        aligns[i] = align;
        sizes[i] = size;
      }
      uint64_t failed0 = cldm_dtest_heap_stats(&g_env, &heap).failed_allocations;
      run_aligned(&heap, aligns, sizes, offs, mods, n);
      size_t got = check_disjoint(&heap, offs, sizes, n), misaligned = 0;
      for (size_t i = 0; i < n; i++)
        misaligned += offs[i] != CLDM_DTEST_NULL_OFF && mods[i] != 0;
      printf("  %-8u %-8u %10zu %10zu %14.0f\n", align, size, got, cap,
             got ? (double)heap.usable_bytes / (double)got : 0.0);
      assert_int_equal(misaligned, 0);
      assert_int_equal(got, cap); /* NULL only when every byte of the heap serves one */
      assert_stats(&heap, (uint64_t)got * cost, got, failed0 + (n - got), 0);
      assert_int_equal(run_check_free(&heap, sizes, offs, n, 1), 0);
      assert_stats(&heap, 0, 0, failed0 + (n - got), 0);
      assert_whole_heap_free(&heap);
      free(aligns);
      free(sizes);
      free(mods);
      free(offs);
    }
  }
  cldm_dtest_heap_release(&heap);
}

/* calloc returns zeroed memory even where the memory was dirty; overflowing products and
 * impossible sizes return NULL and count as failures. */
static void test_calloc_zeroes(void **state) {
  (void)state;
  require_module();
  enum { N = 512 };
  uint32_t sizes[N];
  uint64_t offs[N], counts[N], csizes[N];
  for (size_t i = 0; i < N; i++) {
    sizes[i] = (uint32_t)(16 + (i * 37) % 3000);
    if (i % 64 == 0)
      sizes[i] = 70000;
    counts[i] = 1 + i % 7;
    csizes[i] = (sizes[i] + counts[i] - 1) / counts[i];
  }
  cldm_dtest_heap heap = cldm_dtest_heap_create(&g_env, 8u << 20);
  /* dirty: allocate, fill with 0xFF, free */
  run_malloc(&heap, sizes, offs, N, 0);
  for (size_t i = 0; i < N; i++)
    assert_true(offs[i] != CLDM_DTEST_NULL_OFF);
  cl_mem bo = cldm_dtest_buffer(&g_env, sizeof offs, offs),
         bsz = cldm_dtest_buffer(&g_env, sizeof sizes, sizes);
  cldm_dtest_args(g_k[K_DIRTY], sizeof(cl_mem), &heap.buf, sizeof(cl_mem), &bo, sizeof(cl_mem),
                  &bsz, (size_t)0);
  cldm_dtest_run(&g_env, g_k[K_DIRTY], N);
  clReleaseMemObject(bsz);
  run_free_offs(&heap, offs, N);
  assert_stats(&heap, 0, 0, 0, 0);
  /* calloc the same byte counts */
  uint32_t nz0 = 0;
  cl_mem bc = cldm_dtest_buffer(&g_env, sizeof counts, counts);
  cl_mem bz = cldm_dtest_buffer(&g_env, sizeof csizes, csizes);
  cl_mem bn = cldm_dtest_buffer(&g_env, 4, &nz0);
  cldm_dtest_args(g_k[K_CALLOC], sizeof(cl_mem), &heap.buf, sizeof(cl_mem), &bc, sizeof(cl_mem),
                  &bz, sizeof(cl_mem), &bo, sizeof(cl_mem), &bn, (size_t)0);
  cldm_dtest_run(&g_env, g_k[K_CALLOC], N);
  cldm_dtest_read(&g_env, bo, sizeof offs, offs);
  assert_int_equal(cldm_dtest_read_u32(&g_env, bn), 0);
  uint64_t expect = 0;
  for (size_t i = 0; i < N; i++) {
    assert_true(offs[i] != CLDM_DTEST_NULL_OFF);
    expect += expected_bytes(counts[i] * csizes[i]);
  }
  assert_stats(&heap, expect, N, 0, 0);
  run_free_offs(&heap, offs, N);
  /* overflow and impossible sizes */
  uint64_t ov[4];
  cl_mem bov = cldm_dtest_buffer(&g_env, sizeof ov, NULL);
  cldm_dtest_args(g_k[K_CALLOC_OVERFLOW], sizeof(cl_mem), &heap.buf, sizeof(cl_mem), &bov,
                  (size_t)0);
  cldm_dtest_run(&g_env, g_k[K_CALLOC_OVERFLOW], 1);
  cldm_dtest_read(&g_env, bov, sizeof ov, ov);
  for (size_t i = 0; i < 4; i++)
    assert_true(ov[i] == CLDM_DTEST_NULL_OFF);
  assert_stats(&heap, 0, 0, 4, 0);
  assert_whole_heap_free(&heap);
  clReleaseMemObject(bo);
  clReleaseMemObject(bc);
  clReleaseMemObject(bz);
  clReleaseMemObject(bn);
  clReleaseMemObject(bov);
  cldm_dtest_heap_release(&heap);
}

static void run_realloc(const cldm_dtest_heap *heap, uint64_t *offs, const uint32_t *old_sizes,
                        const uint32_t *new_sizes, size_t n, uint32_t *errors) {
  uint32_t zero = 0;
  cl_mem bo = cldm_dtest_buffer(&g_env, n * 8, offs),
         bold = cldm_dtest_buffer(&g_env, n * 4, old_sizes);
  cl_mem bnew = cldm_dtest_buffer(&g_env, n * 4, new_sizes),
         be = cldm_dtest_buffer(&g_env, 4, &zero);
  cldm_dtest_args(g_k[K_REALLOC], sizeof(cl_mem), &heap->buf, sizeof(cl_mem), &bo, sizeof(cl_mem),
                  &bold, sizeof(cl_mem), &bnew, sizeof(cl_mem), &be, (size_t)0);
  cldm_dtest_run(&g_env, g_k[K_REALLOC], n);
  cldm_dtest_read(&g_env, bo, n * 8, offs);
  *errors = cldm_dtest_read_u32(&g_env, be);
  clReleaseMemObject(bo);
  clReleaseMemObject(bold);
  clReleaseMemObject(bnew);
  clReleaseMemObject(be);
}

/* realloc keeps min(old, new) bytes across classes and runs, in place or moved; NULL acts as
 * malloc; size 0 frees; an invalid pointer returns NULL and counts as an invalid free. */
static void test_realloc_keeps(void **state) {
  (void)state;
  require_module();
  static const uint32_t pairs[][2] = {
      {16, 16},        {16, 17},     {20, 32},       {100, 4000},    {4000, 100},
      {3000, 3001},    {256, 40000}, {40000, 256},   {70000, 70001}, {70000, 200000},
      {200000, 70000}, {1, 1 << 20}, {32768, 32769}, {32769, 32768}, {8, 8}};
  enum { N = sizeof pairs / sizeof pairs[0] };
  uint32_t olds[N], news[N], errors;
  uint64_t offs[N];
  for (size_t i = 0; i < N; i++) {
    olds[i] = pairs[i][0];
    news[i] = pairs[i][1];
  }
  cldm_dtest_heap heap = cldm_dtest_heap_create(&g_env, 8u << 20);
  run_malloc(&heap, olds, offs, N, 1);
  run_realloc(&heap, offs, olds, news, N, &errors);
  assert_int_equal(errors, 0);
  uint64_t bytes = 0;
  for (size_t i = 0; i < N; i++) {
    assert_true(offs[i] != CLDM_DTEST_NULL_OFF);
    bytes += expected_bytes(news[i]);
  }
  assert_int_equal(check_disjoint(&heap, offs, news, N), N);
  assert_stats(&heap, bytes, N, 0, 0);
  assert_int_equal(run_check_free(&heap, news, offs, N, 0), 0);
  /* size 0 frees and returns NULL */
  uint32_t zeros[N];
  memset(zeros, 0, sizeof zeros);
  run_realloc(&heap, offs, news, zeros, N, &errors);
  for (size_t i = 0; i < N; i++)
    assert_true(offs[i] == CLDM_DTEST_NULL_OFF);
  assert_stats(&heap, 0, 0, 0, 0);
  /* NULL acts as malloc */
  run_realloc(&heap, offs, zeros, news, N, &errors);
  assert_int_equal(errors, 0);
  assert_int_equal(check_disjoint(&heap, offs, news, N), N);
  assert_stats(&heap, bytes, N, 0, 0);
  /* invalid pointers: interior of a live allocation, a freed one */
  uint64_t bad[2] = {offs[3] + 16, offs[1]}; /* inside a 4 KiB slot; freed */
  uint32_t bad_old[2] = {0, 0}, bad_new[2] = {64, 64};
  run_free_offs(&heap, &offs[1], 1);
  run_realloc(&heap, bad, bad_old, bad_new, 2, &errors);
  assert_true(bad[0] == CLDM_DTEST_NULL_OFF && bad[1] == CLDM_DTEST_NULL_OFF);
  assert_stats(&heap, bytes - expected_bytes(news[1]), N - 1, 0, 2);
  /* realloc failing for lack of space leaves the old allocation valid */
  uint32_t huge_old[1] = {news[2]}, huge_new[1] = {(uint32_t)heap.usable_bytes};
  uint64_t keep[1] = {offs[2]};
  run_realloc(&heap, keep, huge_old, huge_new, 1, &errors);
  assert_true(keep[0] == CLDM_DTEST_NULL_OFF);
  uint64_t only2[N];
  for (size_t i = 0; i < N; i++)
    only2[i] = i == 2 ? offs[2] : CLDM_DTEST_NULL_OFF;
  assert_int_equal(run_check_free(&heap, news, only2, N, 0), 0); /* pattern intact */
  assert_stats(&heap, bytes - expected_bytes(news[1]), N - 1, 1, 2);
  offs[1] = CLDM_DTEST_NULL_OFF;
  run_free_offs(&heap, offs, N);
  assert_stats(&heap, 0, 0, 1, 2);
  assert_whole_heap_free(&heap);
  cldm_dtest_heap_release(&heap);
}

int main(int argc, char **argv) {
  int rc = alloc_fixture_args(argc, argv);
  if (rc)
    return rc;
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_aligned_alloc),
      cmocka_unit_test(test_aligned_capacity),
      cmocka_unit_test(test_calloc_zeroes),
      cmocka_unit_test(test_realloc_keeps),
  };
  return cmocka_run_group_tests_name(g_module, tests, alloc_group_setup, alloc_group_teardown);
}
