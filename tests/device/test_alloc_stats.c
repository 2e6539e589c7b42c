/*
 * test_alloc_stats.c — end-to-end tests of one allocator module: statistics of invalid and double
 * frees, and reset by rewriting the heap image.
 * Fixture, environment and skip rules: alloc_fixture.h.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc_fixture.h"

/* Frees of pointers that are not live allocations are counted and change nothing. */
static void test_invalid_frees(void **state) {
  (void)state;
  require_module();
  static const uint32_t sizes[] = {64, 64, 4096, 200000, 32768, 16};
  enum { N = sizeof sizes / sizeof sizes[0] };
  uint64_t offs[N], bytes = 0;
  cldm_dtest_heap heap = cldm_dtest_heap_create(&g_env, 8u << 20);
  run_malloc(&heap, sizes, offs, N, 1);
  for (size_t i = 0; i < N; i++) {
    assert_true(offs[i] != CLDM_DTEST_NULL_OFF);
    bytes += expected_bytes(sizes[i]);
  }
  uint64_t pages = first_page_offset(&heap);
  uint64_t bad[] = {
      offs[0] + 16,              /* inside a small allocation */
      offs[0] + 8,               /* not even granule-aligned */
      offs[2] + 2048,            /* inside a 4 KiB slot */
      offs[3] + 65536,           /* tail page of a large run */
      offs[3] + 16,              /* inside the head page of a run */
      0,                         /* the header */
      300,                       /* metadata */
      pages - 16,                /* just before the first page */
      pages + heap.usable_bytes, /* just past the last page */
      pages + 64 * 65536ull,     /* a page nobody took (middle of the pool) */
      (uint64_t)0 - 4096,        /* below the heap */
  };
  enum { NB = sizeof bad / sizeof bad[0] };
  run_free_offs(&heap, bad, NB);
  assert_stats(&heap, bytes, N, 0, NB);
  cl_mem other = cldm_dtest_buffer(&g_env, 4096, NULL); /* a pointer into another buffer */
  cl_uint at = 64;
  cldm_dtest_args(g_k[K_FREE_FOREIGN], sizeof(cl_mem), &heap.buf, sizeof(cl_mem), &other, sizeof at,
                  &at, (size_t)0);
  cldm_dtest_run(&g_env, g_k[K_FREE_FOREIGN], 1);
  clReleaseMemObject(other);
  assert_stats(&heap, bytes, N, 0, NB + 1);
  /* the live allocations are untouched */
  assert_int_equal(run_check_free(&heap, sizes, offs, N, 0), 0);
  /* free everything, then double-free everything (in one launch per round) */
  run_free_offs(&heap, offs, N);
  assert_stats(&heap, 0, 0, 0, NB + 1);
  run_free_offs(&heap, offs, N);
  assert_stats(&heap, 0, 0, 0, NB + 1 + N);
  /* racing double frees: every pointer freed by 8 work-items of one launch, exactly one wins */
  run_malloc(&heap, sizes, offs, N, 0);
  uint64_t many[8 * N];
  for (size_t i = 0; i < 8 * N; i++)
    many[i] = offs[i % N];
  run_free_offs(&heap, many, 8 * N);
  assert_stats(&heap, 0, 0, 0, NB + 1 + N + 7 * N);
  assert_whole_heap_free(&heap);
  cldm_dtest_heap_release(&heap);
}

/* Rewriting the image resets everything: counters, peak, and all pages. */
static void test_reset(void **state) {
  (void)state;
  require_module();
  enum { N = 4096 };
  uint32_t *sizes = malloc(N * 4);
  uint64_t *offs = malloc(N * 8);
  cldm_dtest_heap heap = cldm_dtest_heap_create(&g_env, 2u << 20);
  for (size_t i = 0; i < N; i++)
    sizes[i] = (uint32_t)(16 + (i * 131) % 5000);
  run_malloc(&heap, sizes, offs, N, 1); /* more than fits: some failures */
  uint64_t bad = 8;
  run_free_offs(&heap, &bad, 1);
  cldm_heap_stats s = cldm_dtest_heap_stats(&g_env, &heap);
  assert_true(s.live_allocations > 0 && s.failed_allocations > 0 && s.invalid_frees == 1);
  cldm_dtest_heap_reset(&g_env, &heap);
  assert_stats(&heap, 0, 0, 0, 0);
  assert_int_equal(cldm_dtest_heap_stats(&g_env, &heap).peak_bytes_held, 0);
  assert_whole_heap_free(&heap);
  /* and it allocates as a new heap */
  run_malloc(&heap, sizes, offs, N, 1);
  size_t got = check_disjoint(&heap, offs, sizes, N);
  assert_stats(&heap, held_bytes(&heap, sizes, offs, N), got, N - got, 0);
  assert_int_equal(run_check_free(&heap, sizes, offs, N, 1), 0);
  assert_stats(&heap, 0, 0, N - got, 0);
  cldm_dtest_heap_release(&heap);
  free(sizes);
  free(offs);
}

int main(int argc, char **argv) {
  int rc = alloc_fixture_args(argc, argv);
  if (rc)
    return rc;
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_invalid_frees),
      cmocka_unit_test(test_reset),
  };
  return cmocka_run_group_tests_name(g_module, tests, alloc_group_setup, alloc_group_teardown);
}
