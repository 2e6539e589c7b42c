/*
 * test_alloc_basic.c — end-to-end tests of one allocator module: malloc and free of sizes around
 * the class and page boundaries, and of random sizes, in split kernels.
 * Fixture, environment and skip rules: alloc_fixture.h.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc_fixture.h"

/* Sizes around the class and page boundaries; alloc in one kernel, check + free in another. */
static void test_basic(void **state) {
  (void)state;
  require_module();
  static const uint32_t sizes[] = {0,     1,     15,    16,    17,     100,      128,  129,   255,
                                   256,   257,   1000,  4095,  4096,   4097,     8192, 20000, 32767,
                                   32768, 32769, 65536, 65537, 200000, 1u << 20, 0,    48};
  enum { N = sizeof sizes / sizeof sizes[0] };
  uint64_t offs[N], bytes = 0, live = 0;
  cldm_dtest_heap heap = cldm_dtest_heap_create(&g_env, 8u << 20);
  run_malloc(&heap, sizes, offs, N, 1);
  for (size_t i = 0; i < N; i++) {
    if (sizes[i] == 0) {
      assert_true(offs[i] == CLDM_DTEST_NULL_OFF); /* malloc(0) is NULL, not a failure */
      continue;
    }
    assert_true(offs[i] != CLDM_DTEST_NULL_OFF);
    bytes += expected_bytes(sizes[i]);
    live++;
  }
  assert_int_equal(check_disjoint(&heap, offs, sizes, N), live);
  assert_stats(&heap, bytes, live, 0, 0);
  /* spec 1.3: the pages of the slabs and runs those blocks lie in are held; one launch of one
   * warp or work-group takes each span once */
  uint64_t kept = 0, held = expected_held(&heap, sizes, offs, N, &kept);
  cldm_heap_stats s = cldm_dtest_heap_stats(&g_env, &heap);
  assert_int_equal(s.bytes_held, held);
  assert_int_equal(s.peak_bytes_held, held);
  assert_int_equal(run_check_free(&heap, sizes, offs, N, 1), 0);
  assert_stats(&heap, 0, 0, 0, 0);
  /* the runs and the used-up slabs are back in the pool; the peak stays */
  s = cldm_dtest_heap_stats(&g_env, &heap);
  assert_int_equal(s.bytes_held, kept);
  assert_int_equal(s.peak_bytes_held, held);
  uint64_t nulls[3] = {CLDM_DTEST_NULL_OFF, CLDM_DTEST_NULL_OFF,
                       CLDM_DTEST_NULL_OFF}; /* free(NULL): nothing */
  run_free_offs(&heap, nulls, 3);
  assert_stats(&heap, 0, 0, 0, 0);
  assert_whole_heap_free(&heap);
  cldm_dtest_heap_release(&heap);
}

/* Random sizes 16 B..8 KiB (and some large) allocated in one launch, checked for overlap on
 * the host, checked and freed in another launch; three rounds on one heap. */
static void test_split_kernels(void **state) {
  (void)state;
  require_module();
  enum { N = 1 << 14 };
  uint32_t *sizes = malloc(N * 4);
  uint64_t *offs = malloc(N * 8);
  uint32_t zero = 0;
  cldm_dtest_heap heap = cldm_dtest_heap_create(&g_env, 256u << 20);
  cl_mem bs = cldm_dtest_buffer(&g_env, N * 4, NULL), bo = cldm_dtest_buffer(&g_env, N * 8, NULL);
  cl_mem bn = cldm_dtest_buffer(&g_env, 4, &zero);
  cl_uint large_one_in = 64;
  for (cl_uint round = 0; round < 3; round++) {
    cl_uint seed = 0x1234u + round * 7919u;
    cldm_dtest_write(&g_env, bn, 4, &zero);
    cldm_dtest_args(g_k[K_RANDOM_ALLOC], sizeof(cl_mem), &heap.buf, sizeof seed, &seed,
                    sizeof large_one_in, &large_one_in, sizeof(cl_mem), &bs, sizeof(cl_mem), &bo,
                    sizeof(cl_mem), &bn, (size_t)0);
    cldm_dtest_run(&g_env, g_k[K_RANDOM_ALLOC], N);
    cldm_dtest_read(&g_env, bs, N * 4, sizes);
    cldm_dtest_read(&g_env, bo, N * 8, offs);
    assert_int_equal(cldm_dtest_read_u32(&g_env, bn), 0); /* 256 MiB holds them all */
    uint64_t bytes = 0;
    for (size_t i = 0; i < N; i++)
      bytes += expected_bytes(sizes[i]);
    assert_int_equal(check_disjoint(&heap, offs, sizes, N), N);
    assert_stats(&heap, bytes, N, 0, 0);
    assert_int_equal(run_check_free(&heap, sizes, offs, N, 1), 0);
    assert_stats(&heap, 0, 0, 0, 0);
  }
  assert_whole_heap_free(&heap);
  clReleaseMemObject(bs);
  clReleaseMemObject(bo);
  clReleaseMemObject(bn);
  cldm_dtest_heap_release(&heap);
  free(sizes);
  free(offs);
}

int main(int argc, char **argv) {
  int rc = alloc_fixture_args(argc, argv);
  if (rc)
    return rc;
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_basic),
      cmocka_unit_test(test_split_kernels),
  };
  return cmocka_run_group_tests_name(g_module, tests, alloc_group_setup, alloc_group_teardown);
}
