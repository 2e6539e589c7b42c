/*
 * test_alloc.c — end-to-end tests of one allocator module on pocl: the test kernels
 * (kernels/alloc_test.cl) linked with the embedded module named by argv[1] (e.g.
 * "cldm_alloc.cl20.spir64") call cldm_malloc & co. directly; the host creates and resets the
 * heap by writing cldm_heap_image_write's image and reads statistics with
 * cldm_heap_stats_decode. Results come back as heap offsets, which the host checks for
 * bounds, alignment and overlap on its own.
 *
 * Environment: CLDM_TEST_DATA_DIR (set by ctest) holds the linked modules;
 * CLDM_TEST_STRESS_SCALE=n multiplies the stress test's work-items (default 1; 8 gives 2^20
 * allocations per launch); CLDM_TEST_FILTER=<cmocka pattern> runs a subset.
 *
 * A module whose address width differs from the device's is not built (pocl 6.0 rejects a
 * Physical32 module on its 64-bit CPU device with CL_LINK_PROGRAM_FAILURE and then crashes in
 * clBuildProgram); its tests skip. ctest registers only modules the device can run.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cldm_heap_layout.h"
#include "dtest.h"

static const char *g_module;    /* e.g. "cldm_alloc.cl20.spir64" */
static dt_env g_env;
static cl_int g_open_err;       /* non-zero: the device rejected the module */
static unsigned g_module_bits;  /* 32 or 64 */

enum { K_MALLOC, K_CHECK_FREE, K_FREE_OFFS, K_FREE_FOREIGN, K_ALIGNED, K_DIRTY, K_CALLOC,
       K_CALLOC_OVERFLOW, K_REALLOC, K_RANDOM_ALLOC, K_STRESS, K_CHURN, K_COUNT };
static const char *const k_names[K_COUNT] = {
    "k_malloc", "k_check_free", "k_free_offs", "k_free_foreign", "k_aligned", "k_dirty",
    "k_calloc", "k_calloc_overflow", "k_realloc", "k_random_alloc", "k_stress", "k_churn"};
static cl_kernel g_k[K_COUNT];

/* ---- host-side expectations --------------------------------------------------------------- */

/* Bytes the allocator holds for a malloc of `size` (what bytes_in_use counts). */
static uint64_t expected_bytes(uint64_t size) {
  if (size == 0)
    return 0;
  if (size <= CLDM_MAX_CLASS_BYTES)
    return cldm_class_bytes(cldm_class_of((uint32_t)size));
  return (size + CLDM_PAGE_BYTES - 1) / CLDM_PAGE_BYTES * CLDM_PAGE_BYTES;
}

typedef struct span {
  uint64_t off, len;
} span;

static int span_cmp(const void *a, const void *b) {
  const span *x = a, *y = b;
  return x->off < y->off ? -1 : x->off > y->off;
}

/* Checks that the non-NULL allocations (offs[i], lens[i] bytes) lie in the pages, start
 * 16-byte aligned (relative to the heap base) and do not overlap. Returns how many there are. */
static size_t check_disjoint(const dt_heap *heap, const uint64_t *offs, const uint32_t *lens,
                             size_t n) {
  uint64_t first = dt_heap_pages_offset(&g_env, heap), end = first + heap->usable_bytes;
  span *s = malloc(n * sizeof *s);
  size_t m = 0;
  assert_non_null(s);
  for (size_t i = 0; i < n; i++)
    if (offs[i] != DT_NULL_OFF)
      s[m++] = (span){offs[i], lens[i] ? lens[i] : 1};
  qsort(s, m, sizeof *s, span_cmp);
  for (size_t i = 0; i < m; i++) {
    if (s[i].off < first || s[i].off + s[i].len > end || s[i].off % 16 != 0) {
      fprintf(stderr, "allocation at offset %llu (+%llu) outside pages [%llu, %llu) or unaligned\n",
              (unsigned long long)s[i].off, (unsigned long long)s[i].len,
              (unsigned long long)first, (unsigned long long)end);
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

static void assert_stats(const dt_heap *heap, uint64_t bytes, uint64_t live, uint64_t failed,
                         uint64_t invalid) {
  cldm_heap_stats s = dt_heap_stats(&g_env, heap);
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
  assert_true(s.peak_bytes_in_use >= s.bytes_in_use);
  assert_true(s.peak_bytes_in_use <= s.size);
}

/* Prints, for diagnosis, every page whose descriptor count differs from the number of bits set
 * in its slot bitmap, or whose slab has free slots, and the pool words. */
static void dump_pages(const dt_heap *heap) {
  size_t n = (size_t)dt_heap_pages_offset(&g_env, heap);
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
    uint32_t slots = kind >= 1 && kind <= CLDM_NUM_CLASSES ? cldm_class_slots(kind - 1) : 0;
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

/* ---- kernel drivers ------------------------------------------------------------------------ */

/* malloc(sizes[i]) for i < n, filled with the work-item's pattern; offsets into offs. */
static void run_malloc(const dt_heap *heap, const uint32_t *sizes, uint64_t *offs, size_t n,
                       int do_fill) {
  cl_mem bs = dt_buffer(&g_env, n * 4, sizes), bo = dt_buffer(&g_env, n * 8, NULL);
  cl_uint fill = (cl_uint)do_fill;
  dt_args(g_k[K_MALLOC], sizeof(cl_mem), &heap->buf, sizeof(cl_mem), &bs, sizeof(cl_mem), &bo,
          sizeof fill, &fill, (size_t)0);
  dt_run(&g_env, g_k[K_MALLOC], n);
  dt_read(&g_env, bo, n * 8, offs);
  clReleaseMemObject(bs);
  clReleaseMemObject(bo);
}

/* Checks each allocation's pattern (work-item i's, sizes[i] bytes) and frees it if do_free.
 * Returns the number of pattern words found wrong. */
static uint32_t run_check_free(const dt_heap *heap, const uint32_t *sizes, const uint64_t *offs,
                               size_t n, int do_free) {
  uint32_t zero = 0;
  cl_mem bs = dt_buffer(&g_env, n * 4, sizes), bo = dt_buffer(&g_env, n * 8, offs);
  cl_mem be = dt_buffer(&g_env, 4, &zero);
  cl_uint f = (cl_uint)do_free;
  dt_args(g_k[K_CHECK_FREE], sizeof(cl_mem), &heap->buf, sizeof(cl_mem), &bs, sizeof(cl_mem),
          &bo, sizeof(cl_mem), &be, sizeof f, &f, (size_t)0);
  dt_run(&g_env, g_k[K_CHECK_FREE], n);
  uint32_t errors = dt_read_u32(&g_env, be);
  clReleaseMemObject(bs);
  clReleaseMemObject(bo);
  clReleaseMemObject(be);
  return errors;
}

/* free(heap + offs[i]) for each i (any offsets, DT_NULL_OFF = free(NULL)). */
static void run_free_offs(const dt_heap *heap, const uint64_t *offs, size_t n) {
  cl_mem bo = dt_buffer(&g_env, n * 8, offs);
  dt_args(g_k[K_FREE_OFFS], sizeof(cl_mem), &heap->buf, sizeof(cl_mem), &bo, (size_t)0);
  dt_run(&g_env, g_k[K_FREE_OFFS], n);
  clReleaseMemObject(bo);
}

/* One malloc of `size` bytes; returns its offset. */
static uint64_t malloc_one(const dt_heap *heap, uint32_t size) {
  uint64_t off;
  run_malloc(heap, &size, &off, 1, 0);
  return off;
}

/* Asserts the whole heap is free: one allocation of every usable byte succeeds (which needs
 * every page back in the pool), and frees it again. */
static void assert_whole_heap_free(const dt_heap *heap) {
  cldm_heap_stats before = dt_heap_stats(&g_env, heap);
  uint64_t off = malloc_one(heap, (uint32_t)heap->usable_bytes);
  assert_true(off != DT_NULL_OFF);
  run_free_offs(heap, &off, 1);
  cldm_heap_stats after = dt_heap_stats(&g_env, heap);
  assert_int_equal(after.bytes_in_use, 0);
  assert_int_equal(after.live_allocations, 0);
  assert_int_equal(after.failed_allocations, before.failed_allocations);
  assert_int_equal(after.invalid_frees, before.invalid_frees);
}

/* ---- fixtures ------------------------------------------------------------------------------ */

static int group_setup(void **state) {
  (void)state;
  char file[256];
  snprintf(file, sizeof file, "alloc_test.%s.spv", g_module);
  g_module_bits = strstr(g_module, ".spir64") ? 64 : 32;
  g_open_err = dt_open(&g_env, dt_data_path(file), g_module_bits);
  if (g_open_err != CL_SUCCESS) {
    printf("NOTE: %s: device \"%s\" (%u-bit) rejected the module: error %d\n", g_module,
           g_env.device_name, g_env.device_address_bits, g_open_err);
    return 0;
  }
  for (int i = 0; i < K_COUNT; i++)
    g_k[i] = dt_kernel(&g_env, k_names[i]);
  printf("%s on %s\n", g_module, g_env.device_name);
  return 0;
}

static int group_teardown(void **state) {
  (void)state;
  for (int i = 0; i < K_COUNT; i++)
    if (g_k[i])
      clReleaseKernel(g_k[i]);
  dt_close(&g_env);
  return 0;
}

/* Every test starts here: a module the device cannot build is a skip only where the device's
 * address width differs from the module's (a Physical32 module on a 64-bit device); otherwise
 * it is a failure. */
static void require_module(void) {
  if (g_open_err == CL_SUCCESS)
    return;
  if (g_env.device_address_bits != g_module_bits)
    skip();
  fail_msg("device rejected %s (error %d)", g_module, g_open_err);
}

/* ---- tests --------------------------------------------------------------------------------- */

/* Sizes around the class and page boundaries; alloc in one kernel, check + free in another. */
static void test_basic(void **state) {
  (void)state;
  require_module();
  static const uint32_t sizes[] = {0, 1, 15, 16, 17, 100, 128, 129, 255, 256, 257, 1000, 4095,
                                   4096, 4097, 8192, 20000, 32767, 32768, 32769, 65536, 65537,
                                   200000, 1u << 20, 0, 48};
  enum { N = sizeof sizes / sizeof sizes[0] };
  uint64_t offs[N], bytes = 0, live = 0;
  dt_heap heap = dt_heap_create(&g_env, 8u << 20);
  run_malloc(&heap, sizes, offs, N, 1);
  for (size_t i = 0; i < N; i++) {
    if (sizes[i] == 0) {
      assert_true(offs[i] == DT_NULL_OFF); /* malloc(0) is NULL, not a failure */
      continue;
    }
    assert_true(offs[i] != DT_NULL_OFF);
    bytes += expected_bytes(sizes[i]);
    live++;
  }
  assert_int_equal(check_disjoint(&heap, offs, sizes, N), live);
  assert_stats(&heap, bytes, live, 0, 0);
  assert_int_equal(dt_heap_stats(&g_env, &heap).peak_bytes_in_use, bytes);
  assert_int_equal(run_check_free(&heap, sizes, offs, N, 1), 0);
  assert_stats(&heap, 0, 0, 0, 0);
  assert_int_equal(dt_heap_stats(&g_env, &heap).peak_bytes_in_use, bytes);
  uint64_t nulls[3] = {DT_NULL_OFF, DT_NULL_OFF, DT_NULL_OFF}; /* free(NULL): nothing */
  run_free_offs(&heap, nulls, 3);
  assert_stats(&heap, 0, 0, 0, 0);
  assert_whole_heap_free(&heap);
  dt_heap_release(&heap);
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
  dt_heap heap = dt_heap_create(&g_env, 256u << 20);
  cl_mem bs = dt_buffer(&g_env, N * 4, NULL), bo = dt_buffer(&g_env, N * 8, NULL);
  cl_mem bn = dt_buffer(&g_env, 4, &zero);
  cl_uint large_one_in = 64;
  for (cl_uint round = 0; round < 3; round++) {
    cl_uint seed = 0x1234u + round * 7919u;
    dt_write(&g_env, bn, 4, &zero);
    dt_args(g_k[K_RANDOM_ALLOC], sizeof(cl_mem), &heap.buf, sizeof seed, &seed,
            sizeof large_one_in, &large_one_in, sizeof(cl_mem), &bs, sizeof(cl_mem), &bo,
            sizeof(cl_mem), &bn, (size_t)0);
    dt_run(&g_env, g_k[K_RANDOM_ALLOC], N);
    dt_read(&g_env, bs, N * 4, sizes);
    dt_read(&g_env, bo, N * 8, offs);
    assert_int_equal(dt_read_u32(&g_env, bn), 0); /* 256 MiB holds them all */
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
  dt_heap_release(&heap);
  free(sizes);
  free(offs);
}

/* Fills a heap with one class until malloc returns NULL; returns the allocations made. */
static size_t fill_class(const dt_heap *heap, uint32_t size, size_t requests, uint64_t *offs,
                         uint32_t *sizes) {
  for (size_t i = 0; i < requests; i++)
    sizes[i] = size;
  run_malloc(heap, sizes, offs, requests, 1);
  size_t got = check_disjoint(heap, offs, sizes, requests);
  assert_int_equal(run_check_free(heap, sizes, offs, requests, 0), 0);
  return got;
}

/* For every size class: fill a 1 MiB heap to exhaustion (NULLs returned, counted as failures),
 * measure utilisation, free everything, fill again (same count: no capacity lost). Classes up
 * to 4 KiB must use at least 95 % of the usable heap. Also 16 B, 256 B, 4 KiB in 8 MiB. */
static void test_exhaustion_per_class(void **state) {
  (void)state;
  require_module();
  static const uint64_t heaps[] = {1u << 20, 8u << 20};
  printf("utilisation by class (requests of exactly the class size), %s:\n", g_module);
  printf("  %-8s %-8s %10s %10s %12s %12s\n", "heap", "class", "allocs", "expected",
         "of usable", "of buffer");
  for (size_t hi = 0; hi < 2; hi++) {
    dt_heap heap = dt_heap_create(&g_env, heaps[hi]);
    uint32_t pages = (uint32_t)(heap.usable_bytes / CLDM_PAGE_BYTES);
    for (uint32_t c = 0; c < CLDM_NUM_CLASSES; c++) {
      uint32_t size = cldm_class_bytes(c);
      if (hi == 1 && size != 16 && size != 256 && size != 4096)
        continue;
      size_t cap = (size_t)pages * cldm_class_slots(c);
      size_t requests = cap + cap / 16 + 32;
      uint64_t *offs = malloc(requests * 8);
      uint32_t *sizes = malloc(requests * 4);
      uint64_t failed0 = dt_heap_stats(&g_env, &heap).failed_allocations;
      size_t got = fill_class(&heap, size, requests, offs, sizes);
      /* NULL only when full: every slot of every page was handed out */
      assert_int_equal(got, cap);
      assert_stats(&heap, (uint64_t)got * size, got, failed0 + (requests - got), 0);
      double of_usable = 100.0 * (double)got * size / (double)heap.usable_bytes;
      double of_buffer = 100.0 * (double)got * size / (double)heap.buffer_bytes;
      printf("  %-8llu %-8u %10zu %10zu %11.2f%% %11.2f%%\n",
             (unsigned long long)(heaps[hi] >> 20), size, got, cap, of_usable, of_buffer);
      if (size <= 4096)
        assert_true(of_usable >= 95.0);
      run_free_offs(&heap, offs, requests); /* NULL offsets: free(NULL) */
      assert_stats(&heap, 0, 0, failed0 + (requests - got), 0);
      size_t again = fill_class(&heap, size, requests, offs, sizes);
      assert_int_equal(again, cap);
      run_free_offs(&heap, offs, requests);
      assert_stats(&heap, 0, 0, failed0 + 2 * (requests - got), 0);
      free(offs);
      free(sizes);
    }
    assert_whole_heap_free(&heap);
    dt_heap_release(&heap);
  }
}

/* Mixed sizes (with large ones) until the heap is exhausted; then every byte must be usable
 * again after the frees (whole-heap allocation, then a full 16-byte fill). */
static void test_exhaustion_mixed(void **state) {
  (void)state;
  require_module();
  enum { N = 1 << 13 };
  uint32_t *sizes = malloc(N * 4);
  uint64_t *offs = malloc(N * 8);
  uint32_t zero = 0;
  dt_heap heap = dt_heap_create(&g_env, 4u << 20); /* far less than N requests need */
  cl_mem bs = dt_buffer(&g_env, N * 4, NULL), bo = dt_buffer(&g_env, N * 8, NULL);
  cl_mem bn = dt_buffer(&g_env, 4, &zero);
  cl_uint seed = 99, large_one_in = 16;
  dt_args(g_k[K_RANDOM_ALLOC], sizeof(cl_mem), &heap.buf, sizeof seed, &seed,
          sizeof large_one_in, &large_one_in, sizeof(cl_mem), &bs, sizeof(cl_mem), &bo,
          sizeof(cl_mem), &bn, (size_t)0);
  dt_run(&g_env, g_k[K_RANDOM_ALLOC], N);
  dt_read(&g_env, bs, N * 4, sizes);
  dt_read(&g_env, bo, N * 8, offs);
  uint32_t nulls = dt_read_u32(&g_env, bn);
  assert_true(nulls > 0);
  size_t got = check_disjoint(&heap, offs, sizes, N);
  assert_int_equal(got + nulls, N);
  uint64_t bytes = 0;
  for (size_t i = 0; i < N; i++)
    if (offs[i] != DT_NULL_OFF)
      bytes += expected_bytes(sizes[i]);
  assert_stats(&heap, bytes, got, nulls, 0);
  printf("mixed sizes: %zu of %d requests fit, %.1f %% of the usable heap in use\n", got, N,
         100.0 * (double)bytes / (double)heap.usable_bytes);
  assert_int_equal(run_check_free(&heap, sizes, offs, N, 1), 0);
  assert_stats(&heap, 0, 0, nulls, 0);
  assert_whole_heap_free(&heap);
  /* and the whole heap in 16-byte slots */
  size_t cap = heap.usable_bytes / 16, requests = cap + 100;
  uint64_t *o2 = malloc(requests * 8);
  uint32_t *s2 = malloc(requests * 4);
  assert_int_equal(fill_class(&heap, 16, requests, o2, s2), cap);
  run_free_offs(&heap, o2, requests);
  assert_stats(&heap, 0, 0, nulls + 100, 0);
  free(o2);
  free(s2);
  clReleaseMemObject(bs);
  clReleaseMemObject(bo);
  clReleaseMemObject(bn);
  dt_heap_release(&heap);
  free(sizes);
  free(offs);
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
  dt_heap heap = dt_heap_create(&g_env, 16u << 20);
  cl_mem ba = dt_buffer(&g_env, sizeof aligns, aligns), bs = dt_buffer(&g_env, sizeof sizes, sizes);
  cl_mem bo = dt_buffer(&g_env, sizeof offs, NULL), bm = dt_buffer(&g_env, sizeof mods, NULL);
  dt_args(g_k[K_ALIGNED], sizeof(cl_mem), &heap.buf, sizeof(cl_mem), &ba, sizeof(cl_mem), &bs,
          sizeof(cl_mem), &bo, sizeof(cl_mem), &bm, (size_t)0);
  dt_run(&g_env, g_k[K_ALIGNED], N);
  dt_read(&g_env, bo, sizeof offs, offs);
  dt_read(&g_env, bm, sizeof mods, mods);
  size_t valid = 0;
  for (size_t i = 0; i < N; i++) {
    if (i / NS >= 17) {
      assert_true(offs[i] == DT_NULL_OFF);
      continue;
    }
    assert_true(offs[i] != DT_NULL_OFF);
    assert_int_equal(mods[i], 0); /* absolute device address is a multiple of the alignment */
    valid++;
  }
  assert_int_equal(check_disjoint(&heap, offs, sizes, N), valid);
  cldm_heap_stats s = dt_heap_stats(&g_env, &heap);
  assert_int_equal(s.live_allocations, valid);
  assert_int_equal(s.failed_allocations, 0);
  assert_int_equal(run_check_free(&heap, sizes, offs, N, 1), 0);
  assert_stats(&heap, 0, 0, 0, 0);
  assert_whole_heap_free(&heap);
  clReleaseMemObject(ba);
  clReleaseMemObject(bs);
  clReleaseMemObject(bo);
  clReleaseMemObject(bm);
  dt_heap_release(&heap);
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
  dt_heap heap = dt_heap_create(&g_env, 8u << 20);
  /* dirty: allocate, fill with 0xFF, free */
  run_malloc(&heap, sizes, offs, N, 0);
  for (size_t i = 0; i < N; i++)
    assert_true(offs[i] != DT_NULL_OFF);
  cl_mem bo = dt_buffer(&g_env, sizeof offs, offs), bsz = dt_buffer(&g_env, sizeof sizes, sizes);
  dt_args(g_k[K_DIRTY], sizeof(cl_mem), &heap.buf, sizeof(cl_mem), &bo, sizeof(cl_mem), &bsz,
          (size_t)0);
  dt_run(&g_env, g_k[K_DIRTY], N);
  clReleaseMemObject(bsz);
  run_free_offs(&heap, offs, N);
  assert_stats(&heap, 0, 0, 0, 0);
  /* calloc the same byte counts */
  uint32_t nz0 = 0;
  cl_mem bc = dt_buffer(&g_env, sizeof counts, counts);
  cl_mem bz = dt_buffer(&g_env, sizeof csizes, csizes);
  cl_mem bn = dt_buffer(&g_env, 4, &nz0);
  dt_args(g_k[K_CALLOC], sizeof(cl_mem), &heap.buf, sizeof(cl_mem), &bc, sizeof(cl_mem), &bz,
          sizeof(cl_mem), &bo, sizeof(cl_mem), &bn, (size_t)0);
  dt_run(&g_env, g_k[K_CALLOC], N);
  dt_read(&g_env, bo, sizeof offs, offs);
  assert_int_equal(dt_read_u32(&g_env, bn), 0);
  uint64_t expect = 0;
  for (size_t i = 0; i < N; i++) {
    assert_true(offs[i] != DT_NULL_OFF);
    expect += expected_bytes(counts[i] * csizes[i]);
  }
  assert_stats(&heap, expect, N, 0, 0);
  run_free_offs(&heap, offs, N);
  /* overflow and impossible sizes */
  uint64_t ov[4];
  cl_mem bov = dt_buffer(&g_env, sizeof ov, NULL);
  dt_args(g_k[K_CALLOC_OVERFLOW], sizeof(cl_mem), &heap.buf, sizeof(cl_mem), &bov, (size_t)0);
  dt_run(&g_env, g_k[K_CALLOC_OVERFLOW], 1);
  dt_read(&g_env, bov, sizeof ov, ov);
  for (size_t i = 0; i < 4; i++)
    assert_true(ov[i] == DT_NULL_OFF);
  assert_stats(&heap, 0, 0, 4, 0);
  assert_whole_heap_free(&heap);
  clReleaseMemObject(bo);
  clReleaseMemObject(bc);
  clReleaseMemObject(bz);
  clReleaseMemObject(bn);
  clReleaseMemObject(bov);
  dt_heap_release(&heap);
}

static void run_realloc(const dt_heap *heap, uint64_t *offs, const uint32_t *old_sizes,
                        const uint32_t *new_sizes, size_t n, uint32_t *errors) {
  uint32_t zero = 0;
  cl_mem bo = dt_buffer(&g_env, n * 8, offs), bold = dt_buffer(&g_env, n * 4, old_sizes);
  cl_mem bnew = dt_buffer(&g_env, n * 4, new_sizes), be = dt_buffer(&g_env, 4, &zero);
  dt_args(g_k[K_REALLOC], sizeof(cl_mem), &heap->buf, sizeof(cl_mem), &bo, sizeof(cl_mem), &bold,
          sizeof(cl_mem), &bnew, sizeof(cl_mem), &be, (size_t)0);
  dt_run(&g_env, g_k[K_REALLOC], n);
  dt_read(&g_env, bo, n * 8, offs);
  *errors = dt_read_u32(&g_env, be);
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
      {16, 16},   {16, 17},     {20, 32},     {100, 4000}, {4000, 100},  {3000, 3001},
      {256, 40000}, {40000, 256}, {70000, 70001}, {70000, 200000}, {200000, 70000},
      {1, 1 << 20}, {32768, 32769}, {32769, 32768}, {8, 8}};
  enum { N = sizeof pairs / sizeof pairs[0] };
  uint32_t olds[N], news[N], errors;
  uint64_t offs[N];
  for (size_t i = 0; i < N; i++) {
    olds[i] = pairs[i][0];
    news[i] = pairs[i][1];
  }
  dt_heap heap = dt_heap_create(&g_env, 8u << 20);
  run_malloc(&heap, olds, offs, N, 1);
  run_realloc(&heap, offs, olds, news, N, &errors);
  assert_int_equal(errors, 0);
  uint64_t bytes = 0;
  for (size_t i = 0; i < N; i++) {
    assert_true(offs[i] != DT_NULL_OFF);
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
    assert_true(offs[i] == DT_NULL_OFF);
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
  assert_true(bad[0] == DT_NULL_OFF && bad[1] == DT_NULL_OFF);
  assert_stats(&heap, bytes - expected_bytes(news[1]), N - 1, 0, 2);
  /* realloc failing for lack of space leaves the old allocation valid */
  uint32_t huge_old[1] = {news[2]}, huge_new[1] = {(uint32_t)heap.usable_bytes};
  uint64_t keep[1] = {offs[2]};
  run_realloc(&heap, keep, huge_old, huge_new, 1, &errors);
  assert_true(keep[0] == DT_NULL_OFF);
  uint64_t only2[N];
  for (size_t i = 0; i < N; i++)
    only2[i] = i == 2 ? offs[2] : DT_NULL_OFF;
  assert_int_equal(run_check_free(&heap, news, only2, N, 0), 0); /* pattern intact */
  assert_stats(&heap, bytes - expected_bytes(news[1]), N - 1, 1, 2);
  offs[1] = DT_NULL_OFF;
  run_free_offs(&heap, offs, N);
  assert_stats(&heap, 0, 0, 1, 2);
  assert_whole_heap_free(&heap);
  dt_heap_release(&heap);
}

/* Frees of pointers that are not live allocations are counted and change nothing. */
static void test_invalid_frees(void **state) {
  (void)state;
  require_module();
  static const uint32_t sizes[] = {64, 64, 4096, 200000, 32768, 16};
  enum { N = sizeof sizes / sizeof sizes[0] };
  uint64_t offs[N], bytes = 0;
  dt_heap heap = dt_heap_create(&g_env, 8u << 20);
  run_malloc(&heap, sizes, offs, N, 1);
  for (size_t i = 0; i < N; i++) {
    assert_true(offs[i] != DT_NULL_OFF);
    bytes += expected_bytes(sizes[i]);
  }
  uint64_t pages = dt_heap_pages_offset(&g_env, &heap);
  uint64_t bad[] = {
      offs[0] + 16,                         /* inside a small allocation */
      offs[0] + 8,                          /* not even granule-aligned */
      offs[2] + 2048,                       /* inside a 4 KiB slot */
      offs[3] + 65536,                      /* tail page of a large run */
      offs[3] + 16,                         /* inside the head page of a run */
      0,                                    /* the header */
      300,                                  /* metadata */
      pages - 16,                           /* just before the first page */
      pages + heap.usable_bytes,            /* just past the last page */
      pages + 64 * 65536ull,                /* a page nobody took (middle of the pool) */
      (uint64_t)0 - 4096,                   /* below the heap */
  };
  enum { NB = sizeof bad / sizeof bad[0] };
  run_free_offs(&heap, bad, NB);
  assert_stats(&heap, bytes, N, 0, NB);
  cl_mem other = dt_buffer(&g_env, 4096, NULL); /* a pointer into another buffer */
  cl_uint at = 64;
  dt_args(g_k[K_FREE_FOREIGN], sizeof(cl_mem), &heap.buf, sizeof(cl_mem), &other, sizeof at, &at,
          (size_t)0);
  dt_run(&g_env, g_k[K_FREE_FOREIGN], 1);
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
  dt_heap_release(&heap);
}

/* Rewriting the image resets everything: counters, peak, and all pages. */
static void test_reset(void **state) {
  (void)state;
  require_module();
  enum { N = 4096 };
  uint32_t *sizes = malloc(N * 4);
  uint64_t *offs = malloc(N * 8);
  dt_heap heap = dt_heap_create(&g_env, 2u << 20);
  for (size_t i = 0; i < N; i++)
    sizes[i] = (uint32_t)(16 + (i * 131) % 5000);
  run_malloc(&heap, sizes, offs, N, 1); /* more than fits: some failures */
  uint64_t bad = 8;
  run_free_offs(&heap, &bad, 1);
  cldm_heap_stats s = dt_heap_stats(&g_env, &heap);
  assert_true(s.live_allocations > 0 && s.failed_allocations > 0 && s.invalid_frees == 1);
  dt_heap_reset(&g_env, &heap);
  assert_stats(&heap, 0, 0, 0, 0);
  assert_int_equal(dt_heap_stats(&g_env, &heap).peak_bytes_in_use, 0);
  assert_whole_heap_free(&heap);
  /* and it allocates as a new heap */
  run_malloc(&heap, sizes, offs, N, 1);
  size_t got = check_disjoint(&heap, offs, sizes, N);
  uint64_t bytes = 0;
  for (size_t i = 0; i < N; i++)
    if (offs[i] != DT_NULL_OFF)
      bytes += expected_bytes(sizes[i]);
  assert_stats(&heap, bytes, got, N - got, 0);
  assert_int_equal(run_check_free(&heap, sizes, offs, N, 1), 0);
  assert_stats(&heap, 0, 0, N - got, 0);
  dt_heap_release(&heap);
  free(sizes);
  free(offs);
}

/* Every work-item allocates, fills, checks and frees random sizes (16 B..8 KiB, 1 in 64 large)
 * with up to 4 live at a time, over several launches. */
static void test_stress(void **state) {
  (void)state;
  require_module();
  const char *scale_env = getenv("CLDM_TEST_STRESS_SCALE");
  size_t scale = scale_env ? (size_t)strtoul(scale_env, NULL, 10) : 1;
  if (scale == 0)
    scale = 1;
  size_t items = ((size_t)1 << 13) * scale;
  cl_uint steps = 16, large_one_in = 64;
  uint32_t zero = 0;
  dt_heap heap = dt_heap_create(&g_env, 64u << 20);
  cl_mem be = dt_buffer(&g_env, 4, &zero), bn = dt_buffer(&g_env, 4, &zero);
  for (cl_uint round = 0; round < 3; round++) {
    cl_uint seed = 0xC0FFEEu + round;
    dt_write(&g_env, be, 4, &zero);
    dt_write(&g_env, bn, 4, &zero);
    uint64_t failed0 = dt_heap_stats(&g_env, &heap).failed_allocations;
    dt_args(g_k[K_STRESS], sizeof(cl_mem), &heap.buf, sizeof seed, &seed, sizeof steps, &steps,
            sizeof large_one_in, &large_one_in, sizeof(cl_mem), &be, sizeof(cl_mem), &bn,
            (size_t)0);
    double t = dt_run(&g_env, g_k[K_STRESS], items);
    uint32_t errors = dt_read_u32(&g_env, be), nulls = dt_read_u32(&g_env, bn);
    printf("stress round %u: %zu work-items x %u allocations in %.3f s, %u NULL\n", round, items,
           steps, t, nulls);
    assert_int_equal(errors, 0);
    cldm_heap_stats s = dt_heap_stats(&g_env, &heap);
    assert_int_equal(s.failed_allocations - failed0, nulls);
    assert_stats(&heap, 0, 0, failed0 + nulls, 0);
  }
  assert_whole_heap_free(&heap);
  clReleaseMemObject(be);
  clReleaseMemObject(bn);
  dt_heap_release(&heap);
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
  dt_heap heap = dt_heap_create(&g_env, 1u << 20);
  uint64_t pages = dt_heap_pages_offset(&g_env, &heap);
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
        offs[i] = DT_NULL_OFF; /* no longer ours */
  }
  run_free_offs(&heap, holes, 4);
  assert_stats(&heap, (cap - 4) * 16, cap - 4, 0, 0);
  for (cl_uint size = 16; size <= 64; size += 48) { /* 64: no page for another class */
    uint32_t zero = 0;
    cl_mem be = dt_buffer(&g_env, 4, &zero), bn = dt_buffer(&g_env, 4, &zero);
    cl_uint rounds = 32;
    uint64_t failed0 = dt_heap_stats(&g_env, &heap).failed_allocations;
    dt_args(g_k[K_CHURN], sizeof(cl_mem), &heap.buf, sizeof size, &size, sizeof rounds, &rounds,
            sizeof(cl_mem), &be, sizeof(cl_mem), &bn, (size_t)0);
    dt_run(&g_env, g_k[K_CHURN], ITEMS);
    uint32_t errors = dt_read_u32(&g_env, be), nulls = dt_read_u32(&g_env, bn);
    cldm_heap_stats s = dt_heap_stats(&g_env, &heap);
    printf("contention, %u-byte requests: %u tags overwritten, %llu invalid frees, %u NULL\n",
           size, errors, (unsigned long long)s.invalid_frees, nulls);
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
  assert_int_equal(dt_heap_stats(&g_env, &heap).live_allocations, 0);
  assert_whole_heap_free(&heap);
  dt_heap_release(&heap);
  free(sizes);
  free(offs);
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s <module name, e.g. cldm_alloc.cl20.spir64>\n", argv[0]);
    return 2;
  }
  g_module = argv[1];
  if (getenv("CLDM_TEST_FILTER")) /* e.g. CLDM_TEST_FILTER=test_stress */
    cmocka_set_test_filter(getenv("CLDM_TEST_FILTER"));
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_basic),          cmocka_unit_test(test_split_kernels),
      cmocka_unit_test(test_exhaustion_per_class), cmocka_unit_test(test_exhaustion_mixed),
      cmocka_unit_test(test_aligned_alloc),  cmocka_unit_test(test_calloc_zeroes),
      cmocka_unit_test(test_realloc_keeps),        cmocka_unit_test(test_invalid_frees),
      cmocka_unit_test(test_reset),          cmocka_unit_test(test_stress),
      cmocka_unit_test(test_contention),
  };
  return cmocka_run_group_tests_name(g_module, tests, group_setup, group_teardown);
}
