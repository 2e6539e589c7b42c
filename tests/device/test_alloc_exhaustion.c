/*
 * test_alloc_exhaustion.c — end-to-end tests of one allocator module: exhaustion, class by
 * class and with mixed sizes; capacity comes back after the frees; a run of pages found where
 * its free pages straddle two pool words; every hole found again in a heap whose pool is dry; the
 * pool's summary kept up, and never trusted for NULL; the stamps of full classes ended by a
 * slab of another class that frees emptied; refills back at their shards' home words once
 * those have room; the room index kept up, and not trusted;
 * full classes borrowing larger classes' free slots.
 * Fixture, environment and skip rules: alloc_fixture.h.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc_fixture.h"

/* Fills a heap with one class until malloc returns NULL; returns the allocations made. */
static size_t fill_class(const cldm_dtest_heap *heap, uint32_t size, size_t requests,
                         uint64_t *offs, uint32_t *sizes) {
  for (size_t i = 0; i < requests; i++)
    sizes[i] = size;
  run_malloc(heap, sizes, offs, requests, 1);
  size_t got = check_disjoint(heap, offs, sizes, requests);
  assert_int_equal(run_check_free(heap, sizes, offs, requests, 0), 0);
  return got;
}

/* Frees every other slot of the blocks at offs (the odd slots of `size`-byte slabs, so that no
 * slab empties), NULLing them there, in one launch; returns how many it freed (gone: scratch). */
static size_t free_odd_slots(const cldm_dtest_heap *heap, uint32_t size, uint64_t *offs,
                             size_t requests, uint64_t *gone) {
  size_t n = 0;
  for (size_t i = 0; i < requests; i++)
    if (offs[i] != CLDM_DTEST_NULL_OFF && (offs[i] / size) % 2) {
      gone[n++] = offs[i];
      offs[i] = CLDM_DTEST_NULL_OFF;
    }
  run_free_offs(heap, gone, n);
  return n;
}

/* For every size class: fill a 1 MiB heap to exhaustion (NULLs returned, counted as failures),
 * measure utilisation, free everything, fill again (same count: no capacity lost). Classes up
 * to 4 KiB must use at least 95 % of the usable heap. Also 16 B, 256 B, 4 KiB in 8 MiB. */
static void test_exhaustion_per_class(void **state) {
  (void)state;
  require_module();
  static const uint64_t heaps[] = {1u << 20, 8u << 20};
  printf("utilisation by class (requests of exactly the class size), %s:\n", g_module);
  printf("  %-8s %-8s %10s %10s %12s %12s\n", "heap", "class", "allocs", "expected", "of usable",
         "of buffer");
  for (size_t hi = 0; hi < 2; hi++) {
    cldm_dtest_heap heap = cldm_dtest_heap_create(&g_env, heaps[hi]);
    uint32_t pages = (uint32_t)(heap.usable_bytes / CLDM_PAGE_BYTES);
    for (uint32_t c = 0; c < CLDM_NUM_CLASSES; c++) {
      uint32_t size = cldm_class_bytes(c);
      if (hi == 1 && size != 16 && size != 256 && size != 4096)
        continue;
      size_t cap = (size_t)(pages / cldm_class_span_pages(c, pages)) * cldm_class_slots(c, pages);
      size_t requests = cap + cap / 16 + 32;
      uint64_t *offs = malloc(requests * 8);
      uint32_t *sizes = malloc(requests * 4);
      uint64_t failed0 = cldm_dtest_heap_stats(&g_env, &heap).failed_allocations;
      size_t got = fill_class(&heap, size, requests, offs, sizes);
      /* NULL only when full: every slot of every page was handed out */
      assert_int_equal(got, cap);
      assert_stats(&heap, (uint64_t)got * size, got, failed0 + (requests - got), 0);
      double of_usable = 100.0 * (double)got * size / (double)heap.usable_bytes;
      double of_buffer = 100.0 * (double)got * size / (double)heap.buffer_bytes;
      printf("  %-8llu %-8u %10zu %10zu %11.2f%% %11.2f%%\n", (unsigned long long)(heaps[hi] >> 20),
             size, got, cap, of_usable, of_buffer);
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
    cldm_dtest_heap_release(&heap);
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
  cldm_dtest_heap heap =
      cldm_dtest_heap_create(&g_env, 4u << 20); /* far less than N requests need */
  cl_mem bs = cldm_dtest_buffer(&g_env, N * 4, NULL), bo = cldm_dtest_buffer(&g_env, N * 8, NULL);
  cl_mem bn = cldm_dtest_buffer(&g_env, 4, &zero);
  cl_uint seed = 99, large_one_in = 16;
  cldm_dtest_args(g_k[K_RANDOM_ALLOC], sizeof(cl_mem), &heap.buf, sizeof seed, &seed,
                  sizeof large_one_in, &large_one_in, sizeof(cl_mem), &bs, sizeof(cl_mem), &bo,
                  sizeof(cl_mem), &bn, (size_t)0);
  cldm_dtest_run(&g_env, g_k[K_RANDOM_ALLOC], N);
  cldm_dtest_read(&g_env, bs, N * 4, sizes);
  cldm_dtest_read(&g_env, bo, N * 8, offs);
  uint32_t nulls = cldm_dtest_read_u32(&g_env, bn);
  assert_true(nulls > 0);
  size_t got = check_disjoint(&heap, offs, sizes, N);
  assert_int_equal(got + nulls, N);
  uint64_t bytes = held_bytes(&heap, sizes, offs, N); /* (requests may have borrowed) */
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
  cldm_dtest_heap_release(&heap);
  free(sizes);
  free(offs);
}

/* Runs are first searched inside single pool words (32 pages each), then across words
 * (cldm_pool_run.clh): with only pages 30-33 free (two in each of the first two words), a 4-page
 * run must still be found there, and a 2-page one inside either word. */
static void test_run_across_words(void **state) {
  (void)state;
  require_module();
  cldm_dtest_heap heap = cldm_dtest_heap_create(&g_env, 4u << 20);
  size_t pages = heap.usable_bytes / CLDM_PAGE_BYTES, requests = pages + 4;
  assert_true(pages >= 64);
  uint64_t *offs = malloc(requests * 8);
  uint32_t *sizes = malloc(requests * 4);
  assert_int_equal(fill_class(&heap, CLDM_PAGE_BYTES, requests, offs, sizes), pages);
  uint64_t first = first_page_offset(&heap);
  uint64_t gone[4];
  size_t n = 0;
  for (size_t i = 0; i < requests; i++) {
    if (offs[i] == CLDM_DTEST_NULL_OFF)
      continue;
    uint64_t page = (offs[i] - first) / CLDM_PAGE_BYTES;
    if (page >= 30 && page <= 33) {
      assert_true(n < 4);
      gone[n++] = offs[i];
      offs[i] = CLDM_DTEST_NULL_OFF;
    }
  }
  assert_int_equal(n, 4);
  run_free_offs(&heap, gone, n);
  uint64_t run = malloc_one(&heap, 4 * CLDM_PAGE_BYTES);
  assert_int_equal(run, first + 30u * CLDM_PAGE_BYTES);
  run_free_offs(&heap, &run, 1);
  uint64_t two = malloc_one(&heap, 2 * CLDM_PAGE_BYTES);
  assert_true(two == first + 30u * CLDM_PAGE_BYTES || two == first + 32u * CLDM_PAGE_BYTES);
  run_free_offs(&heap, &two, 1);
  run_free_offs(&heap, offs, requests);
  assert_whole_heap_free(&heap);
  cldm_dtest_heap_release(&heap);
  free(offs);
  free(sizes);
}

static cldm_heap_header read_image(const cldm_dtest_heap *heap, unsigned char **img);
static void room_census(const cldm_dtest_heap *heap, uint32_t c, int poison, uint32_t *marked,
                        uint32_t *others, uint32_t *hidden);

/* Unissued tickets of class c's current slabs (W's words of the class) in a heap image; the
 * slabs that hold them in *current, those in search mode in *search. */
static uint64_t image_tickets(const unsigned char *img, const cldm_heap_header *hd, uint32_t c,
                              uint32_t *current, uint32_t *search) {
  uint32_t slots = cldm_class_slots(c, hd->num_pages);
  const uint64_t *w = (const uint64_t *)(img + hd->w_offset);
  uint64_t tickets = 0;
  *current = *search = 0;
  for (uint32_t s = 0; s < hd->num_shards; s++) {
    uint64_t v = w[(size_t)s * CLDM_W_ROW_WORDS + c];
    uint32_t page = (uint32_t)v & ~CLDM_W_SEARCH, tick = (uint32_t)(v >> 32);
    if (page < hd->num_pages && tick < slots) {
      ++*current;
      *search += ((uint32_t)v & CLDM_W_SEARCH) != 0;
      tickets += slots - tick;
    }
  }
  return tickets;
}

/* The same of the heap as it is now. */
static uint64_t current_tickets(const cldm_dtest_heap *heap, uint32_t c) {
  unsigned char *img;
  cldm_heap_header hd = read_image(heap, &img);
  uint32_t current, search;
  uint64_t tickets = image_tickets(img, &hd, c, &current, &search);
  free(img);
  return tickets;
}

/* What the heap image says of class c when a test finds fewer holes than it freed, for the
 * log: its slabs, their free slots by count (slots - units) and by bitmap (clear bits), the
 * unissued tickets of its current slabs, units that neither explain (0 in a quiet heap), its
 * marks in the room index, and its last resort's stamp against the counts it compares
 * (cldm_slab_final.clh). */
static void class_audit(const cldm_dtest_heap *heap, uint32_t c) {
  unsigned char *img;
  cldm_heap_header hd = read_image(heap, &img);
  uint32_t slots = cldm_class_slots(c, hd.num_pages), slabs = 0, marks = 0;
  const uint32_t *descs = (const uint32_t *)(img + hd.descs_offset);
  const uint64_t *w = (const uint64_t *)(img + hd.w_offset);
  uint64_t by_count = 0, by_bits = 0;
  for (uint32_t p = 0; p < hd.num_pages; p++) {
    if (descs[p] >> 24 != c + 1u)
      continue;
    const uint32_t *bm =
        (const uint32_t *)(img + hd.bitmaps_offset) + (size_t)p * CLDM_SLOT_BITMAP_WORDS;
    uint32_t set = 0;
    for (uint32_t k = 0; k < slots; k++)
      set += (bm[k / 32] >> (k % 32)) & 1u;
    slabs++;
    by_count += slots - (descs[p] & CLDM_DESC_COUNT_MASK);
    by_bits += slots - set;
  }
  uint32_t current, search, others, hidden;
  uint64_t tickets = image_tickets(img, &hd, c, &current, &search);
  room_census(heap, c, 0, &marks, &others, &hidden);
  const uint64_t *crow = w + (size_t)hd.num_shards * CLDM_W_ROW_WORDS;
  uint64_t stamp = crow[CLDM_W_ROW_WORDS + c], changes = crow[3 * CLDM_W_ROW_WORDS + c];
  uint32_t gives = 0, give_shards = hd.num_shards < CLDM_GIVE_SHARDS_MAX ? hd.num_shards
                                                                         : CLDM_GIVE_SHARDS_MAX;
  for (uint32_t i = 0; i < give_shards; i++) /* the pool-give count's shards (CLDM_W_GIVES) */
    gives += (uint32_t)(w[(size_t)i * CLDM_W_ROW_WORDS + CLDM_W_GIVES] >> 32);
  printf("class %u B: %u slabs, %llu free by count, %llu by bits, %llu unissued tickets in %u "
         "current slabs (%u in search mode), %lld units unexplained, %u marks; stamp room %u "
         "gives %u (room %u, gives %u), changes %u, refills %u\n",
         cldm_class_bytes(c), slabs, (unsigned long long)by_count, (unsigned long long)by_bits,
         (unsigned long long)tickets, current, search,
         (long long)by_bits - (long long)by_count - (long long)tickets, marks, (uint32_t)stamp,
         (uint32_t)(stamp >> 32), (uint32_t)(crow[c] >> 32), gives, (uint32_t)changes,
         (uint32_t)(changes >> 32));
  free(img);
}

/* Holes in a heap whose pool is dry (cldm_slab_reinstall.clh: partly used slabs made current
 * again in search mode, the final path): fill an 8 MiB heap with one class, free every other block
 * (no slab empties, so no page goes back to the pool), then allocate as many as were freed:
 * every one must succeed (NULL only when full), none may overlap a kept block, and one more
 * of each class must fail. For 16 B, 256 B and 4 KiB, then with two classes interleaved, every
 * other block of each freed (the holes of 48 B slabs are no use to 64 B requests); each class
 * asks for more than the whole heap holds of it, since how the classes share the pages depends
 * on the order in which the device runs the calls. */
static void holes_round(cldm_dtest_heap *heap, const uint32_t *class_sizes, size_t nclasses) {
  uint32_t pages = (uint32_t)(heap->usable_bytes / CLDM_PAGE_BYTES);
  size_t cap = 0, per = 0;
  for (size_t k = 0; k < nclasses; k++) {
    uint32_t c = cldm_class_of(class_sizes[k]);
    size_t whole = (size_t)(pages / cldm_class_span_pages(c, pages)) * cldm_class_slots(c, pages);
    cap += whole / nclasses; /* each class's share of the pages */
    per = whole > per ? whole : per;
  }
  /* more requests of each class than the whole heap holds of it: every class fills up, however
   * the classes share the pages */
  size_t requests = (per + 64) * nclasses, n2 = requests;
  uint64_t *offs = malloc(requests * 8), *gone = malloc(requests * 8), *o2 = malloc(2 * n2 * 8);
  uint32_t *sizes = malloc(requests * 4), *s2 = malloc(2 * n2 * 4);
  uint64_t failed0 = cldm_dtest_heap_stats(&g_env, heap).failed_allocations;
  for (size_t i = 0; i < requests; i++)
    sizes[i] = class_sizes[i % nclasses];
  run_malloc(heap, sizes, offs, requests, 1);
  size_t got = check_disjoint(heap, offs, sizes, requests), freed = 0, kept = 0;
  assert_true(got > cap / 2);
  for (size_t k = 0; k < nclasses; k++) { /* the premise: every class saw NULL */
    size_t nulls = 0;
    for (size_t i = k; i < requests; i += nclasses)
      nulls += offs[i] == CLDM_DTEST_NULL_OFF;
    assert_true(nulls > 0);
  }
  uint64_t kept_bytes = 0, freed_of[2] = {0, 0};
  size_t live[2] = {0, 0};
  for (size_t i = 0; i < requests; i++) {
    gone[i] = CLDM_DTEST_NULL_OFF;
    if (offs[i] == CLDM_DTEST_NULL_OFF)
      continue;
    if (live[i % nclasses]++ % 2) { /* every other live block of each class goes */
      gone[i] = offs[i];
      offs[i] = CLDM_DTEST_NULL_OFF;
      freed_of[i % nclasses]++;
      freed++;
    } else {
      kept++;
      kept_bytes += expected_bytes(sizes[i]);
    }
  }
  run_free_offs(heap, gone, requests);
  /* with two classes the smaller may have borrowed slots of the larger when it was full
   * (cldm_slab_borrow): bytes in use count the slots held */
  if (nclasses > 1)
    kept_bytes = held_bytes(heap, sizes, offs, requests);
  assert_stats(heap, kept_bytes, kept, failed0 + (requests - got), 0);
  /* as many of each class as were freed of it: every one must succeed; then, with one class,
   * (a launch of its own) one more must fail. With two, the heap may still hold slots of a
   * class after that class saw NULL: the other class's last resort, running later, ends the
   * epochs of the current slabs of the first (cldm_slab_flush), whose unissued tickets become
   * holes, or pages if nobody drew from the slab. And 48 B blocks that the first launch put
   * into 64 B slots (borrowed) leave 64 B holes: the 48 B requests must borrow them, from the
   * index or from W's tickets where a 64 B slab made current again holds them. */
  size_t n = 0;
  for (size_t k = 0; k < nclasses; k++)
    for (uint64_t j = 0; j < freed_of[k]; j++)
      s2[n++] = class_sizes[k];
  run_malloc(heap, s2, o2, n, 1);
  size_t again = 0, nulls2 = 0;
  for (size_t i = 0; i < n; i++)
    again += o2[i] != CLDM_DTEST_NULL_OFF;
  if (nclasses > 1 && again < freed) {
    /* a request that borrowed a slot (cldm_slab_borrow) took a hole of the other class, or a
     * hole was held by concurrent calls when a request looked (a borrower's pin, a ticket being
     * drawn): the holes left are all still there, and the smaller class's requests can take
     * any of them (they borrow the larger's) */
    size_t left = nulls2 = freed - again;
    size_t null_of[2] = {0, 0};
    for (size_t i = 0; i < n; i++)
      null_of[s2[i] == class_sizes[0] ? 0 : 1] += o2[i] == CLDM_DTEST_NULL_OFF;
    printf("holes: %zu requests got NULL while holes were held (%zu of %u B, %zu of %u B)\n", left,
           null_of[0], class_sizes[0], null_of[1], class_sizes[1]);
    for (size_t k = 0; k < nclasses; k++)
      class_audit(heap, cldm_class_of(class_sizes[k]));
    for (size_t i = 0; i < left; i++)
      s2[n + i] = class_sizes[0] < class_sizes[1] ? class_sizes[0] : class_sizes[1];
    run_malloc(heap, s2 + n, o2 + n, left, 1);
    for (size_t i = 0; i < left; i++)
      again += o2[n + i] != CLDM_DTEST_NULL_OFF;
    n += left;
  }
  if (again < freed)
    for (size_t k = 0; k < nclasses; k++)
      class_audit(heap, cldm_class_of(class_sizes[k]));
  assert_int_equal(again, freed); /* every hole found */
  if (nclasses == 1) {            /* the heap was full, and is again */
    assert_int_equal(got, per);
    assert_true(malloc_one(heap, class_sizes[0]) == CLDM_DTEST_NULL_OFF);
  }
  uint64_t *all = malloc((requests + n) * 8);
  uint32_t *all_sizes = malloc((requests + n) * 4);
  memcpy(all, offs, requests * 8);
  memcpy(all_sizes, sizes, requests * 4);
  memcpy(all + requests, o2, n * 8);
  memcpy(all_sizes + requests, s2, n * 4);
  assert_int_equal(check_disjoint(heap, all, all_sizes, requests + n), kept + freed);
  printf("holes (%zu classes, first %u B): %zu kept, %zu freed, all %zu found again\n", nclasses,
         class_sizes[0], kept, freed, again);
  assert_int_equal(run_check_free(heap, sizes, offs, requests, 1), 0);
  assert_int_equal(run_check_free(heap, s2, o2, n, 1), 0);
  assert_stats(heap, 0, 0, failed0 + (requests - got) + (nclasses == 1) + nulls2, 0);
  free(all);
  free(all_sizes);
  free(offs);
  free(gone);
  free(o2);
  free(sizes);
  free(s2);
}

/* Moves the blocks of offs[0 .. n) that lie in page `page` (base: page 0's offset) to gone,
 * NULLing them in offs; returns how many. */
static size_t take_page_blocks(uint64_t *offs, size_t n, uint64_t base, uint64_t page,
                               uint64_t *gone) {
  size_t k = 0;
  for (size_t i = 0; i < n; i++)
    if (offs[i] != CLDM_DTEST_NULL_OFF && (offs[i] - base) / CLDM_PAGE_BYTES == page) {
      gone[k++] = offs[i];
      offs[i] = CLDM_DTEST_NULL_OFF;
    }
  return k;
}

/* The end of the stamp tests below: a 16 B request is served from page `page`; then it and the
 * blocks of offs go, the statistics count `failed` failures, and the whole heap is free. */
static void expect_served_from(cldm_dtest_heap *heap, uint64_t base, uint64_t page,
                               const uint64_t *offs, size_t n, uint64_t failed) {
  uint64_t got = malloc_one(heap, 16);
  assert_true(got != CLDM_DTEST_NULL_OFF);
  assert_int_equal((got - base) / CLDM_PAGE_BYTES, page);
  run_free_offs(heap, &got, 1);
  run_free_offs(heap, offs, n);
  assert_stats(heap, 0, 0, failed, 0);
  assert_whole_heap_free(heap);
  cldm_dtest_heap_release(heap);
}

/* The last resort's stamps (cldm_slab_final.clh): once a search of a full class found nothing,
 * later calls answer NULL without a search until something gives the class room: a free into one of
 * its full slabs (room for that class alone), pages back in the pool (a slab emptied, a run
 * freed). Each call is a launch of its own, so every NULL after the first of its class comes
 * from a stamp, and every success shows that the stamp ended. */
static void test_stamps_end_with_room(void **state) {
  (void)state;
  require_module();
  cldm_dtest_heap heap = cldm_dtest_heap_create(&g_env, 8u << 20);
  uint64_t base = first_page_offset(&heap),
           failed0 = cldm_dtest_heap_stats(&g_env, &heap).failed_allocations;
  uint32_t pages = (uint32_t)(heap.usable_bytes / CLDM_PAGE_BYTES);
  size_t cap = heap.usable_bytes / 16, requests = cap + 64, nulls = 64;
  uint64_t *offs = malloc(requests * 8), *gone = malloc(requests * 8);
  uint32_t *sizes = malloc(requests * 4);
  assert_int_equal(fill_class(&heap, 16, requests, offs, sizes), cap);
  for (int i = 0; i < 3; i++, nulls += 2) { /* a stamp of each class, then calls that use it */
    assert_true(malloc_one(&heap, 16) == CLDM_DTEST_NULL_OFF);
    assert_true(malloc_one(&heap, 4096) == CLDM_DTEST_NULL_OFF);
  }
  /* one 16 B block freed: room for 16 B, no page for 4 KiB */
  size_t k = 0;
  while (offs[k] == CLDM_DTEST_NULL_OFF)
    k++;
  uint64_t hole = offs[k];
  run_free_offs(&heap, &hole, 1);
  assert_true(malloc_one(&heap, 4096) == CLDM_DTEST_NULL_OFF);
  assert_int_equal(malloc_one(&heap, 16), hole); /* the only free slot */
  assert_true(malloc_one(&heap, 16) == CLDM_DTEST_NULL_OFF);
  nulls += 2;
  /* every block of that page freed: the slab empties and its page goes back to the pool */
  uint64_t page = (hole - base) / CLDM_PAGE_BYTES;
  size_t n = take_page_blocks(offs, requests, base, page, gone);
  assert_int_equal(n, cldm_class_slots(cldm_class_of(16), pages));
  run_free_offs(&heap, gone, n);
  uint64_t big = malloc_one(&heap, 4096);
  assert_true(big != CLDM_DTEST_NULL_OFF);
  assert_int_equal((big - base) / CLDM_PAGE_BYTES, page);
  run_free_offs(&heap, &big, 1);
  run_free_offs(&heap, offs, requests);
  /* the heap full of runs: two pages each, then one page each in the gaps that concurrent
   * claims leave (runs need not be aligned); one run freed gives 16 B a page */
  size_t runs = pages / 2 + 4;
  size_t twos = fill_class(&heap, 2 * CLDM_PAGE_BYTES, runs, offs, sizes);
  assert_true(twos <= pages / 2 && twos > pages / 4);
  size_t ones_asked = pages - 2 * twos + 4;
  size_t ones = fill_class(&heap, CLDM_PAGE_BYTES, ones_asked, offs + runs, sizes + runs);
  assert_int_equal(2 * twos + ones, pages); /* every page in a run */
  nulls += runs - twos + ones_asked - ones;
  runs += ones_asked;
  for (int i = 0; i < 2; i++, nulls++)
    assert_true(malloc_one(&heap, 16) == CLDM_DTEST_NULL_OFF);
  k = 0;
  while (offs[k] == CLDM_DTEST_NULL_OFF)
    k++;
  run_free_offs(&heap, &offs[k], 1);
  offs[k] = malloc_one(&heap, 16);
  assert_true(offs[k] != CLDM_DTEST_NULL_OFF);
  run_free_offs(&heap, offs, runs);
  assert_stats(&heap, 0, 0, failed0 + nulls, 0);
  assert_whole_heap_free(&heap);
  cldm_dtest_heap_release(&heap);
  free(offs);
  free(gone);
  free(sizes);
}

/* The stamps and the current slabs of other classes (spec 2.1: NULL only after the pages held
 * for allocations nobody has made were given back): a 1 KiB slab current with two blocks, the
 * rest of the heap 16 B blocks until a search stamps the 16 B class full. Freeing one 1 KiB
 * block leaves the slab holding the other: still NULL. Freeing the second leaves the slab
 * holding nothing but its unissued tickets, and no count the stamp compares moves (no page is
 * given back, no slab installed, no 16 B slab gets room): the next 16 B request must still end
 * that slab's epoch and be served from its page, not answer NULL from the stamp. */
static void test_stamps_see_emptied_slab(void **state) {
  (void)state;
  require_module();
  cldm_dtest_heap heap = cldm_dtest_heap_create(&g_env, 8u << 20);
  uint64_t base = first_page_offset(&heap),
           failed0 = cldm_dtest_heap_stats(&g_env, &heap).failed_allocations;
  uint32_t pages = (uint32_t)(heap.usable_bytes / CLDM_PAGE_BYTES);
  uint32_t c16 = cldm_class_of(16), c1k = cldm_class_of(1024);
  assert_int_equal(cldm_class_span_pages(c1k, pages), 1);
  assert_int_equal(cldm_class_span_pages(c16, pages), 1);
  uint64_t kept[2] = {malloc_one(&heap, 1024), malloc_one(&heap, 1024)};
  uint64_t page = (kept[0] - base) / CLDM_PAGE_BYTES;
  assert_int_equal((kept[1] - base) / CLDM_PAGE_BYTES, page); /* one current slab */
  size_t cap = (size_t)(pages - 1u) * cldm_class_slots(c16, pages), requests = cap + 64;
  uint64_t *offs = malloc(requests * 8);
  uint32_t *sizes = malloc(requests * 4);
  assert_int_equal(fill_class(&heap, 16, requests, offs, sizes), cap);
  uint64_t nulls = requests - cap;
  for (int i = 0; i < 2; i++, nulls++) /* the stamp's NULLs */
    assert_true(malloc_one(&heap, 16) == CLDM_DTEST_NULL_OFF);
  run_free_offs(&heap, &kept[0], 1);
  assert_true(malloc_one(&heap, 16) == CLDM_DTEST_NULL_OFF); /* the slab still holds one */
  nulls++;
  run_free_offs(&heap, &kept[1], 1);
  expect_served_from(&heap, base, page, offs, requests, failed0 + nulls);
  free(offs);
  free(sizes);
}

/* The same for a partly used slab made current again (cldm_slab_reinstall) after the stamp,
 * which no flush has looked at: a heap full of 1 KiB blocks with every other one freed (the
 * pool dry), a 16 B request stamps its class full, a 1 KiB request makes a slab with holes
 * current again; its blocks all freed, the next 16 B request must be served from its page. */
static void test_stamps_see_reused_slab(void **state) {
  (void)state;
  require_module();
  cldm_dtest_heap heap = cldm_dtest_heap_create(&g_env, 8u << 20);
  uint64_t base = first_page_offset(&heap),
           failed0 = cldm_dtest_heap_stats(&g_env, &heap).failed_allocations;
  uint32_t pages = (uint32_t)(heap.usable_bytes / CLDM_PAGE_BYTES);
  uint32_t c1k = cldm_class_of(1024);
  assert_int_equal(cldm_class_span_pages(c1k, pages), 1);
  size_t cap = (size_t)pages * cldm_class_slots(c1k, pages), requests = cap + 16;
  uint64_t *offs = malloc(requests * 8), *gone = malloc(requests * 8);
  uint32_t *sizes = malloc(requests * 4);
  assert_int_equal(fill_class(&heap, 1024, requests, offs, sizes), cap);
  uint64_t nulls = requests - cap;
  free_odd_slots(&heap, 1024, offs, requests, gone);
  for (int i = 0; i < 2; i++, nulls++) /* a search and the stamp */
    assert_true(malloc_one(&heap, 16) == CLDM_DTEST_NULL_OFF);
  uint64_t one = malloc_one(&heap, 1024); /* a slab with holes becomes current */
  assert_true(one != CLDM_DTEST_NULL_OFF);
  uint64_t page = (one - base) / CLDM_PAGE_BYTES;
  gone[0] = one;
  size_t n = 1 + take_page_blocks(offs, requests, base, page, gone + 1);
  assert_int_equal(n, cldm_class_slots(c1k, pages) / 2 + 1);
  run_free_offs(&heap, gone, n);
  expect_served_from(&heap, base, page, offs, requests, failed0 + nulls);
  free(offs);
  free(gone);
  free(sizes);
}

static void test_holes_in_dry_heap(void **state) {
  (void)state;
  require_module();
  cldm_dtest_heap heap = cldm_dtest_heap_create(&g_env, 8u << 20);
  static const uint32_t one[][1] = {{16}, {256}, {4096}};
  for (size_t i = 0; i < 3; i++)
    holes_round(&heap, one[i], 1);
  static const uint32_t two[] = {48, 64};
  holes_round(&heap, two, 2);
  assert_whole_heap_free(&heap);
  cldm_dtest_heap_release(&heap);
}

/* The heap's metadata image, read into *img (the caller frees it); returns the header. Then
 * summary word i of the pool (cldm_heap_layout.h, CLDM_W_POOL_FULL) in that image. */
static cldm_heap_header read_image(const cldm_dtest_heap *heap, unsigned char **img) {
  cldm_heap_header hd;
  cldm_dtest_read(&g_env, heap->buf, sizeof hd, &hd);
  *img = malloc(hd.image_bytes);
  cldm_dtest_read(&g_env, heap->buf, hd.image_bytes, *img);
  return hd;
}
static uint32_t *summary_word(unsigned char *img, const cldm_heap_header *hd, uint32_t i) {
  size_t row = i / CLDM_W_POOL_FULL_WORDS, at = i % CLDM_W_POOL_FULL_WORDS;
  return (uint32_t *)(img + hd->w_offset + 8 * (row * CLDM_W_ROW_WORDS + CLDM_W_POOL_FULL)) + at;
}

/* Pool words the summary marks taken, and pool words whose pages are all taken. */
static void summary_census(const cldm_dtest_heap *heap, uint32_t *marked, uint32_t *full) {
  unsigned char *img;
  cldm_heap_header hd = read_image(heap, &img);
  *marked = *full = 0;
  for (uint32_t w = 0; w < hd.pool_words; w++) {
    uint32_t pool, left = hd.num_pages - 32 * w;
    memcpy(&pool, img + hd.pool_offset + 4 * w, 4);
    *marked += (*summary_word(img, &hd, w / 32) >> (w % 32)) & 1u;
    *full += (pool | (left >= 32 ? 0u : ~0u << left)) == ~0u;
  }
  free(img);
}

/* Marks every pool word of the heap taken in its summary, a stale hint that cannot be true. */
static void summary_poison(const cldm_dtest_heap *heap) {
  unsigned char *img;
  cldm_heap_header hd = read_image(heap, &img);
  for (uint32_t i = 0; i < (hd.pool_words + 31) / 32; i++)
    *summary_word(img, &hd, i) = ~0u;
  cldm_dtest_write(&g_env, heap->buf, hd.image_bytes, img);
  free(img);
}

/* The pool's summary is a hint the allocator keeps up and never trusts for NULL (cldm_pool.clh),
 * on a heap of 2048 pages (64 pool words, two summary words): a fill of 4 KiB blocks marks the
 * words it fills, and freeing everything clears every mark. Then, after a reset, runs of one page
 * hold the lower half of the pool (where the refills' cursors start) and the summary is made to
 * say every word is taken: a fill of 4 KiB blocks must still get every slot of the upper half,
 * which only the last resort's exact search of the pool finds. */
static void test_pool_summary(void **state) {
  (void)state;
  require_module();
  cldm_dtest_heap heap = cldm_dtest_heap_create(&g_env, 128u << 20);
  uint64_t base = first_page_offset(&heap);
  uint32_t pages = (uint32_t)(heap.usable_bytes / CLDM_PAGE_BYTES), marked, full;
  uint32_t c = cldm_class_of(4096), slots = cldm_class_slots(c, pages);
  assert_int_equal(cldm_class_span_pages(c, pages), 1); /* a slab is a page */
  size_t cap = (size_t)pages * slots, requests = cap + 16;
  uint64_t *offs = malloc(requests * 8);
  uint32_t *sizes = malloc(requests * 4);
  assert_int_equal(fill_class(&heap, 4096, requests, offs, sizes), cap);
  summary_census(&heap, &marked, &full);
  printf("4 KiB fill of %u pages: %u of %u pool words full, %u marked\n", pages, full,
         (pages + 31) / 32, marked);
  assert_int_equal(full, (pages + 31) / 32);
  assert_true(marked >= full / 2); /* the fill keeps the hint (a race may clear a mark) */
  run_free_offs(&heap, offs, requests);
  summary_census(&heap, &marked, &full);
  assert_int_equal(full, 0);
  assert_int_equal(marked, 0); /* every word got pages back after its last take */
  cldm_dtest_heap_reset(&g_env, &heap);
  assert_int_equal(fill_class(&heap, CLDM_PAGE_BYTES, pages, offs, sizes), pages);
  size_t kept = 0;
  for (size_t i = 0; i < pages; i++) /* the runs of the upper half go */
    if ((offs[i] - base) / CLDM_PAGE_BYTES < pages / 2)
      offs[kept++] = offs[i];
    else
      offs[pages + i - kept] = offs[i]; /* (pages + i - kept >= i: no overwrite ahead) */
  assert_int_equal(kept, pages / 2);
  run_free_offs(&heap, offs + pages, pages - kept);
  summary_poison(&heap);
  size_t upper = (size_t)(pages - kept) * slots;
  assert_int_equal(fill_class(&heap, 4096, upper + 16, offs + kept, sizes), upper);
  run_free_offs(&heap, offs, kept + upper + 16);
  assert_whole_heap_free(&heap);
  cldm_dtest_heap_release(&heap);
  free(offs);
  free(sizes);
}

/* The room index finds every hole (cldm_room.clh: exact for the refills from partly used slabs
 * and the last resort): an 8 MiB heap full of 256 B blocks (the pool dry), then, 32 times, one
 * block freed (each from another 32nd of the blocks, so that the slabs lie across the index's
 * words and its summary's), and a request of 256 B must get that very block back. */
static void test_search_hole(void **state) {
  (void)state;
  require_module();
  cldm_dtest_heap heap = cldm_dtest_heap_create(&g_env, 8u << 20);
  uint32_t size = 256;
  size_t requests = heap.usable_bytes / size + 64;
  uint64_t *offs = malloc(requests * 8);
  uint32_t *sizes = malloc(requests * 4);
  size_t got = fill_class(&heap, size, requests, offs, sizes), live = 0;
  assert_true(got < requests);
  for (size_t i = 0; i < requests; i++)
    if (offs[i] != CLDM_DTEST_NULL_OFF)
      offs[live++] = offs[i];
  for (size_t k = 0; k < 32; k++) {
    uint64_t off = offs[k * live / 32 + live / 64];
    run_free_offs(&heap, &off, 1);
    assert_int_equal(malloc_one(&heap, size), off);
  }
  run_free_offs(&heap, offs, live);
  assert_whole_heap_free(&heap);
  cldm_dtest_heap_release(&heap);
  free(offs);
  free(sizes);
}

/* The pool's dry stamps (cldm_pool_span.clh, cldm_pool_has_span: the PTX route's last resort, which
 * the cl20spread variant builds; the others refill exactly there and pass it as well): on the
 * heap of test_pool_summary, runs of one page on every page, then every odd page of the upper
 * half freed, leave free pages but no 2-page span, so a request of a class with 2-page slabs
 * fails after the last resort read the pool and stamped it dry for 2-page spans. The even
 * pages freed too (pages returned: the stamp no longer holds) and the summary made to say every
 * word is taken, a fill of that class must get every slot of the upper half: a stamp trusted
 * after pages came back would answer NULL where the exact read finds spans. */
static void test_pool_dry_stamp(void **state) {
  (void)state;
  require_module();
  cldm_dtest_heap heap = cldm_dtest_heap_create(&g_env, 128u << 20);
  uint64_t base = first_page_offset(&heap);
  uint32_t pages = (uint32_t)(heap.usable_bytes / CLDM_PAGE_BYTES);
  uint32_t size = 18432, c = cldm_class_of(size), slots = cldm_class_slots(c, pages);
  assert_int_equal(cldm_class_span_pages(c, pages), 2);
  uint64_t *offs = malloc((size_t)pages * 8 * slots);
  uint32_t *sizes = malloc((size_t)pages * 4 * slots);
  uint64_t *odd = malloc((size_t)pages * 8), *even = malloc((size_t)pages * 8);
  assert_int_equal(fill_class(&heap, CLDM_PAGE_BYTES, pages, offs, sizes), pages);
  size_t nodd = 0, neven = 0, kept = 0;
  for (size_t i = 0; i < pages; i++) {
    uint64_t page = (offs[i] - base) / CLDM_PAGE_BYTES;
    if (page < pages / 2)
      offs[kept++] = offs[i];
    else if (page % 2)
      odd[nodd++] = offs[i];
    else
      even[neven++] = offs[i];
  }
  assert_int_equal(nodd, pages / 4);
  run_free_offs(&heap, odd, nodd);
  assert_int_equal(malloc_one(&heap, size), CLDM_DTEST_NULL_OFF); /* no 2-page span */
  run_free_offs(&heap, even, neven);
  summary_poison(&heap);
  size_t upper = (size_t)(pages / 4) * slots;
  assert_int_equal(fill_class(&heap, size, upper + 16, offs + kept, sizes), upper);
  run_free_offs(&heap, offs, kept + upper + 16);
  assert_whole_heap_free(&heap);
  cldm_dtest_heap_release(&heap);
  free(offs);
  free(sizes);
  free(odd);
  free(even);
}

/* Where refills put their spans in a pool word (cldm_pool_span.clh, CLDM_POOL_PACK): in the lowest
 * 8-page block that has room, so that one-page spans fill a word from the bottom and leave its
 * upper blocks whole for spans of 8 pages and runs. After six slabs of 16 B (a page each, taken
 * by refills on every shard the launch used) and no free, on a CPU device (pocl: a thread per
 * core, few refills at once) every pool word in use has each block below its highest used one
 * full. Spans placed anywhere in the word (CLDM_POOL_PACK 0) break that in all but a few words:
 * six pages in one word at random fill its lowest block first about once in 10^5 (checked on
 * pocl: the test fails so). On a GPU the words are printed, not checked: thousands of calls
 * refill at once there, and a refill that loses the install gives its span back
 * (cldm_slab_refill.clh), which leaves a hole wherever it took it; an H200 showed
 * 1 of 4 words with room below a used block for the nv variant and 3-5 of 5 for cl12, whose lanes
 * refill one by one. */
static void test_pool_packing(void **state) {
  (void)state;
  require_module();
  cldm_dtest_heap heap = cldm_dtest_heap_create(&g_env, 64u << 20);
  uint32_t pages = (uint32_t)(heap.usable_bytes / CLDM_PAGE_BYTES);
  uint32_t c = cldm_class_of(16), slots = cldm_class_slots(c, pages);
  assert_int_equal(cldm_class_span_pages(c, pages), 1);
  size_t requests = (size_t)slots * 5 + 1;
  uint64_t *offs = malloc(requests * 8);
  uint32_t *sizes = malloc(requests * 4);
  assert_int_equal(fill_class(&heap, 16, requests, offs, sizes), requests);
  unsigned char *img;
  cldm_heap_header hd = read_image(&heap, &img);
  uint32_t used = 0, words = 0, unpacked = 0;
  for (uint32_t w = 0; w < hd.pool_words && 32 * (w + 1) <= hd.num_pages; w++) {
    uint32_t pool;
    memcpy(&pool, img + hd.pool_offset + 4 * w, 4);
    int top = -1, room = -1;
    for (int b = 0; b < 4; b++)
      if ((pool >> (8 * b)) & 0xFFu)
        top = b;
    for (int b = top - 1; b >= 0; b--)
      if (((pool >> (8 * b)) & 0xFFu) != 0xFFu)
        room = b;
    if (room >= 0) {
      printf("pool word %u = 0x%08x: block %d has room below used block %d\n", w, pool, room, top);
      unpacked++;
    }
    for (; pool; pool &= pool - 1)
      used++;
    words += top >= 0;
  }
  printf("six slabs of 16 B: %u pages taken in %u pool words, %u of them with room below a used "
         "block\n",
         used, words, unpacked);
  assert_true(used >= 6);
  cl_device_type type = 0;
  clGetDeviceInfo(g_env.device, CL_DEVICE_TYPE, sizeof type, &type, NULL);
  if (type & CL_DEVICE_TYPE_CPU)
    assert_int_equal(unpacked, 0);
  free(img);
  run_free_offs(&heap, offs, requests);
  assert_whole_heap_free(&heap);
  cldm_dtest_heap_release(&heap);
  free(offs);
  free(sizes);
}

/* One case of test_pool_keeps_pairs: every page of a 1 GiB heap a run of one page but those of
 * `freed` (in one pool word); then a block of `small` bytes (slabs of k pages) and one of `big`
 * (slabs of 2k pages): the small one must come from page small_page, the big one from the span
 * at big_page. */
static void keeps_pairs_case(uint32_t small, uint32_t big, const uint32_t *freed, size_t nf,
                             uint32_t small_page, uint32_t big_page) {
  cldm_dtest_heap heap = cldm_dtest_heap_create(&g_env, 1ull << 30);
  uint32_t pages = (uint32_t)(heap.usable_bytes / CLDM_PAGE_BYTES);
  assert_true(pages >= CLDM_BIG_SLABS_PAGES);
  /* (checked modules add their trailer and guard, CLDM_CHECK_EXTRA_BYTES: the runs stay one
   * page, and the requests' classes stay those of small and big) */
  uint32_t run = CLDM_PAGE_BYTES - CLDM_CHECK_EXTRA_BYTES;
  uint32_t ks = cldm_class_span_pages(cldm_class_of(small), pages);
  assert_int_equal(cldm_class_span_pages(cldm_class_of(small + CLDM_CHECK_EXTRA_BYTES), pages), ks);
  assert_int_equal(cldm_class_span_pages(cldm_class_of(big), pages), 2 * ks);
  assert_int_equal(cldm_class_span_pages(cldm_class_of(big + CLDM_CHECK_EXTRA_BYTES), pages),
                   2 * ks);
  uint64_t base = first_page_offset(&heap);
  uint32_t *sizes = malloc((size_t)pages * 4);
  uint64_t *offs = malloc((size_t)pages * 8), gone[8];
  assert_non_null(sizes);
  assert_non_null(offs);
  assert_int_equal(fill_class(&heap, run, pages, offs, sizes), pages); /* every page a run */
  size_t n = 0;
  for (uint32_t i = 0; i < pages; i++) {
    uint32_t page = (uint32_t)((offs[i] - base) / CLDM_PAGE_BYTES);
    for (size_t f = 0; f < nf; f++)
      if (page == freed[f] && n < 8) {
        gone[n++] = offs[i];
        offs[i] = CLDM_DTEST_NULL_OFF;
      }
  }
  assert_int_equal(n, nf);
  run_free_offs(&heap, gone, n);
  uint64_t s = malloc_one(&heap, small), b = malloc_one(&heap, big);
  assert_true(s != CLDM_DTEST_NULL_OFF);
  if (b == CLDM_DTEST_NULL_OFF)
    fail_msg("%u B got NULL: the slab of %u B took page %u", big, small,
             (unsigned)((s - base) / CLDM_PAGE_BYTES));
  assert_int_equal((s - base) / CLDM_PAGE_BYTES, small_page);
  assert_int_equal((b - base) / CLDM_PAGE_BYTES / (2 * ks), big_page / (2 * ks));
  uint64_t last[2] = {s, b};
  run_free_offs(&heap, last, 2);
  run_free_offs(&heap, offs, pages);
  assert_whole_heap_free(&heap);
  cldm_dtest_heap_release(&heap);
  free(offs);
  free(sizes);
}

/* A refill whose shard's pool cursor has moved on from the shard's home word takes its span
 * from the home word while that has one (CLDM_POOL_HOME, cldm_pool_span.clh): with every shard's
 * cursor set to the top of the pool (where fills of large slabs leave them) and the pool free,
 * the first slab of 16 B comes from the lower half of the pool, which holds the home words
 * (cldm_pool_home: row s's is word s * pool words / (2 * shards)). A build with
 * CLDM_POOL_HOME 0 takes it from the cursor's word (the test fails so). */
static void test_pool_home(void **state) {
  (void)state;
  require_module();
  cldm_dtest_heap heap = cldm_dtest_heap_create(&g_env, 64u << 20);
  unsigned char *img;
  cldm_heap_header hd = read_image(&heap, &img);
  uint32_t top = hd.pool_words - 1;
  for (uint32_t s = 0; s < hd.num_shards; s++) /* the low half of word CLDM_W_CURSOR of row s */
    memcpy(img + hd.w_offset + 8 * ((size_t)s * CLDM_W_ROW_WORDS + CLDM_W_CURSOR), &top, 4);
  cldm_dtest_write(&g_env, heap.buf, hd.image_bytes, img);
  free(img);
  uint64_t off = malloc_one(&heap, 16);
  assert_true(off != CLDM_DTEST_NULL_OFF);
  uint32_t page = (uint32_t)((off - first_page_offset(&heap)) / CLDM_PAGE_BYTES);
  printf("cursors at pool word %u of %u: the slab of 16 B took page %u (word %u)\n", top,
         hd.pool_words, page, page / 32);
  assert_true(page / 32 < hd.pool_words / 2);
  run_free_offs(&heap, &off, 1);
  assert_whole_heap_free(&heap);
  cldm_dtest_heap_release(&heap);
}

/* The pool keeps free pairs whole (CLDM_POOL_BUDDY, cldm_pool_span.clh). On a 1 GiB heap slabs of
 * 16 B take 1 page, of 576 B - 1 KiB 2, of 1152 B - 2 KiB 4. With every page taken but a pair at
 * the bottom of a pool word and a single page above it (whose buddy is taken), a slab of 16 B
 * must take the single page and leave the pair to a slab of 1 KiB; with a free group of 4 at the
 * bottom and a free pair above it, a slab of 1 KiB must take the pair and leave the 4 pages to a
 * slab of 2 KiB. A span taken from the word's lowest block with room (CLDM_POOL_PACK alone)
 * breaks the larger group, and the larger request gets NULL (no other such group is free, no
 * larger class has a slab). */
static void test_pool_keeps_pairs(void **state) {
  (void)state;
  require_module();
  const uint32_t w = 32 * 100; /* pool word 100 */
  const uint32_t pair_single[3] = {w, w + 1, w + 9};
  keeps_pairs_case(16, 1000, pair_single, 3, w + 9, w);
  const uint32_t quad_pair[6] = {w, w + 1, w + 2, w + 3, w + 10, w + 11};
  keeps_pairs_case(1000, 2000, quad_pair, 6, w + 10, w);
}

/* The room index (cldm_heap_layout.h) in a metadata image: the classes' mask, and class c's
 * row (its summary, then one bit per page). */
static uint32_t *room_top(unsigned char *img, const cldm_heap_header *hd) {
  return (uint32_t *)(img + hd->pool_offset + cldm_room_after_pool_bytes(hd->pool_words));
}
static uint32_t *room_row(unsigned char *img, const cldm_heap_header *hd, uint32_t c) {
  return room_top(img, hd) + CLDM_ROOM_TOP_WORDS + (size_t)c * cldm_room_row_words(hd->pool_words);
}

/* What the room index of the heap says: pages marked in class c's row (*marked), marks in
 * other classes' rows (*others), index words with a bit set whose summary bit is clear or
 * whose class's bit in the mask is (*hidden). With poison = 1 it first writes the mask and every
 * row full of marks (untrue: a mark whose slab has no free slot must cost only its clear). */
static void room_census(const cldm_dtest_heap *heap, uint32_t c, int poison, uint32_t *marked,
                        uint32_t *others, uint32_t *hidden) {
  unsigned char *img;
  cldm_heap_header hd = read_image(heap, &img);
  uint32_t ns = cldm_room_summary_words(hd.pool_words);
  uint32_t *top = room_top(img, &hd);
  *marked = *others = *hidden = 0;
  if (poison)
    memset(top, 0xFF, 4 * CLDM_ROOM_TOP_WORDS);
  for (uint32_t k = 0; k < CLDM_NUM_CLASSES; k++) {
    uint32_t *row = room_row(img, &hd, k), listed = (top[k / 32] >> (k % 32)) & 1u;
    if (poison)
      memset(row, 0xFF, 4 * ((size_t)ns + hd.pool_words));
    for (uint32_t w = 0; w < hd.pool_words; w++) {
      uint32_t bits = row[ns + w], n = 0;
      for (; bits; bits &= bits - 1)
        n++;
      *(k == c ? marked : others) += n;
      *hidden += row[ns + w] && (!((row[w / 32] >> (w % 32)) & 1u) || !listed);
    }
  }
  if (poison)
    cldm_dtest_write(&g_env, heap->buf, hd.image_bytes, img);
  free(img);
}

/* The room index (cldm_room.clh): a heap of 256 B slabs (a page each) filled up, then every
 * other block freed, must have every slab marked in its class's row, and no mark anywhere else
 * or behind a clear summary bit; the holes are then all found again (the refills take them from
 * the index). Then the same with every bit of every row set (marks of other classes, pages
 * that are not heads, slabs without a free slot): every hole found again, and the heap full.
 * (A mark missing is not a state the allocator leaves: the heap checks, assert_index_exact.) */
static void test_room_index(void **state) {
  (void)state;
  require_module();
  cldm_dtest_heap heap = cldm_dtest_heap_create(&g_env, 8u << 20);
  uint32_t pages = (uint32_t)(heap.usable_bytes / CLDM_PAGE_BYTES), marked, others, hidden;
  uint32_t c = cldm_class_of(256), slots = cldm_class_slots(c, pages);
  assert_int_equal(cldm_class_span_pages(c, pages), 1);
  size_t cap = (size_t)pages * slots, requests = cap + 16;
  uint64_t *offs = malloc(requests * 8), *gone = malloc(requests * 8), *again = malloc(cap * 8);
  uint32_t *sizes = malloc(requests * 4);
  for (int poison = 0; poison < 2; poison++) {
    assert_int_equal(fill_class(&heap, 256, requests, offs, sizes), cap);
    size_t n = free_odd_slots(&heap, 256, offs, requests, gone);
    assert_int_equal(n, cap / 2);
    room_census(&heap, c, poison, &marked, &others, &hidden);
    if (!poison) {
      printf("room index after freeing half of every 256 B slab: %u of %u slabs marked, %u "
             "other marks, %u hidden\n",
             marked, pages, others, hidden);
      assert_int_equal(marked, pages);
      assert_int_equal(others, 0);
      assert_int_equal(hidden, 0);
    }
    run_malloc(&heap, sizes, again, n, 1);
    assert_int_equal(check_disjoint(&heap, again, sizes, n), n); /* every hole found */
    assert_true(malloc_one(&heap, 256) == CLDM_DTEST_NULL_OFF);  /* and the heap full again */
    run_free_offs(&heap, again, n);
    run_free_offs(&heap, offs, requests);
    assert_whole_heap_free(&heap);
    cldm_dtest_heap_reset(&g_env, &heap);
  }
  cldm_dtest_heap_release(&heap);
  free(offs);
  free(gone);
  free(again);
  free(sizes);
}

/* Borrowing from tickets (cldm_slab_borrow, spec 2.1): the free slots of a slab made current
 * again are its W word's tickets, and its room mark is gone. A heap full of 32 B blocks, a 16 B
 * malloc that gets NULL (a drawn stamp: no ticket in any current slab of 32 B), every other
 * block of one slab freed, one 32 B malloc (its refill makes that slab current again, its free
 * slots tickets): the only free slots a 16 B request can have are those tickets, and every one
 * of them must be served (on the H200, 48 B requests got NULL while 154 free 64 B slots were
 * tickets, before borrowers drew them). */
static void test_borrow_tickets(void **state) {
  (void)state;
  require_module();
  cldm_dtest_heap heap = cldm_dtest_heap_create(&g_env, 8u << 20);
  uint32_t pages = (uint32_t)(heap.usable_bytes / CLDM_PAGE_BYTES);
  uint32_t c32 = cldm_class_of(32);
  size_t cap = (size_t)pages * cldm_class_slots(c32, pages), requests = cap + 16;
  uint64_t *offs = malloc(requests * 8), *gone = malloc(requests * 8);
  uint32_t *sizes = malloc(requests * 4);
  assert_int_equal(cldm_class_span_pages(c32, pages), 1); /* a slab a page */
  assert_int_equal(fill_class(&heap, 32, requests, offs, sizes), cap);
  /* a 16 B request finds no mark and no ticket: NULL, and the 32 B class's drawn stamp (no
   * ticket in any of its current slabs); the slab made current again below counts a change,
   * which must end that stamp, or the borrowers after it would skip those tickets */
  assert_true(malloc_one(&heap, 16) == CLDM_DTEST_NULL_OFF);
  uint64_t base = first_page_offset(&heap), page = (offs[0] - base) / CLDM_PAGE_BYTES;
  size_t n = 0; /* one slab's odd blocks freed: its mark alone */
  for (size_t i = 0; i < requests; i++)
    if (offs[i] != CLDM_DTEST_NULL_OFF && (offs[i] - base) / CLDM_PAGE_BYTES == page &&
        (offs[i] / 32) % 2) {
      gone[n++] = offs[i];
      offs[i] = CLDM_DTEST_NULL_OFF;
    }
  assert_true(n > 8);
  run_free_offs(&heap, gone, n);
  uint64_t one = malloc_one(&heap, 32);
  assert_true(one != CLDM_DTEST_NULL_OFF);
  uint64_t tickets = current_tickets(&heap, c32); /* that slab's holes, one taken */
  assert_int_equal(tickets, n - 1);
  size_t k = (size_t)tickets + 8;
  uint64_t *got = malloc(k * 8);
  uint32_t *small = malloc(k * 4);
  for (size_t i = 0; i < k; i++)
    small[i] = 16;
  run_malloc(&heap, small, got, k, 1);
  size_t served = check_disjoint(&heap, got, small, k);
  printf("borrowing from tickets: %zu of %zu 16 B requests served by %llu tickets of 32 B slots\n",
         served, k, (unsigned long long)tickets);
  assert_int_equal(served, tickets);
  for (size_t i = 0; i < k; i++)
    if (got[i] != CLDM_DTEST_NULL_OFF)
      assert_int_equal((got[i] - first_page_offset(&heap)) % 32, 0);
  assert_int_equal(current_tickets(&heap, c32), 0);
  run_free_offs(&heap, got, k);
  run_free_offs(&heap, &one, 1);
  run_free_offs(&heap, offs, requests);
  assert_whole_heap_free(&heap);
  cldm_dtest_heap_release(&heap);
  free(offs);
  free(gone);
  free(sizes);
  free(got);
  free(small);
}

/* Borrowing (cldm_slab_borrow, spec 2.1): a heap full of 32 B blocks with every other one
 * freed has no slab of 16 B and no page: 16 B requests take the 32 B holes, every one of them
 * (32 B is within twice 16 B), and then get NULL; 48 B requests do too (the holes are smaller);
 * 8 B - 16 B requests aligned to 32 B take them as well (32 B slots are 32 B-aligned), and the
 * statistics count the 32 B slots they hold. A heap full of 16 B blocks with holes gives 32 B
 * requests nothing (no class borrows a smaller slot). */
static void test_borrow(void **state) {
  (void)state;
  require_module();
  cldm_dtest_heap heap = cldm_dtest_heap_create(&g_env, 8u << 20);
  uint32_t pages = (uint32_t)(heap.usable_bytes / CLDM_PAGE_BYTES);
  uint32_t c32 = cldm_class_of(32), slots = cldm_class_slots(c32, pages);
  size_t cap = (size_t)pages * slots, requests = cap + 16;
  uint64_t *offs = malloc(requests * 8), *gone = malloc(requests * 8);
  uint64_t *got = malloc(4 * (requests + 8) * 8);
  uint32_t *sizes = malloc(requests * 4), *small = malloc(4 * (requests + 8) * 4);
  uint64_t failed0 = cldm_dtest_heap_stats(&g_env, &heap).failed_allocations;
  assert_int_equal(fill_class(&heap, 32, requests, offs, sizes), cap);
  size_t n = free_odd_slots(&heap, 32, offs, requests, gone);
  assert_int_equal(n, cap / 2);
  uint64_t failed = failed0 + (requests - cap);
  for (size_t i = 0; i < 4 * (n + 8); i++)
    small[i] = 16;
  /* as many requests as holes and 8 more, in one launch; then, while holes are left, launches
   * for them: a borrower racing 10^5 others may miss the last free slots of a slab for a moment
   * (every hole must be found again, and NULL come after) */
  size_t asked = 0, served = 0;
  for (int launch = 0; launch < 4 && (launch == 0 || served < n); launch++) {
    size_t k = n - served + 8;
    run_malloc(&heap, small, got + asked, k, 1);
    size_t now = 0;
    for (size_t i = 0; i < k; i++)
      now += got[asked + i] != CLDM_DTEST_NULL_OFF;
    printf("borrowing, launch %d: %zu of %zu 16 B requests served by freed 32 B slots (%zu "
           "holes)\n",
           launch, now, k, n - served);
    served += now;
    asked += k;
  }
  assert_int_equal(check_disjoint(&heap, got, small, asked), n); /* every hole, then NULL */
  for (size_t i = 0; i < asked; i++)
    if (got[i] != CLDM_DTEST_NULL_OFF)
      assert_int_equal((got[i] - first_page_offset(&heap)) % 32, 0);
  failed += asked - n;
  assert_stats(&heap, (uint64_t)cap * 32, cap, failed, 0);   /* 32 B slots in use, all of them */
  assert_true(malloc_one(&heap, 48) == CLDM_DTEST_NULL_OFF); /* 32 B holes are too small */
  failed++;
  run_free_offs(&heap, got, asked);
  assert_stats(&heap, (uint64_t)(cap - n) * 32, cap - n, failed, 0);
  run_free_offs(&heap, offs, requests);
  assert_whole_heap_free(&heap);
  /* 16 B slabs with holes: 32 B requests get nothing from them */
  cldm_dtest_heap_reset(&g_env, &heap);
  failed0 = cldm_dtest_heap_stats(&g_env, &heap).failed_allocations;
  size_t cap16 = (size_t)pages * cldm_class_slots(cldm_class_of(16), pages);
  uint64_t *o16 = malloc((cap16 + 16) * 8);
  uint32_t *s16 = malloc((cap16 + 16) * 4);
  assert_int_equal(fill_class(&heap, 16, cap16 + 16, o16, s16), cap16);
  uint64_t hole = o16[1] != CLDM_DTEST_NULL_OFF ? o16[1] : o16[0];
  run_free_offs(&heap, &hole, 1);
  assert_true(malloc_one(&heap, 32) == CLDM_DTEST_NULL_OFF);
  assert_int_equal(malloc_one(&heap, 16), hole); /* (o16 names it again) */
  run_free_offs(&heap, o16, cap16 + 16);
  assert_stats(&heap, 0, 0, failed0 + 16 + 1, 0);
  assert_whole_heap_free(&heap);
  cldm_dtest_heap_release(&heap);
  free(o16);
  free(s16);
  free(offs);
  free(gone);
  free(got);
  free(sizes);
  free(small);
}

int main(int argc, char **argv) {
  int rc = alloc_fixture_args(argc, argv);
  if (rc)
    return rc;
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_exhaustion_per_class),
      cmocka_unit_test(test_exhaustion_mixed),
      cmocka_unit_test(test_run_across_words),
      cmocka_unit_test(test_holes_in_dry_heap),
      cmocka_unit_test(test_stamps_end_with_room),
      cmocka_unit_test(test_stamps_see_emptied_slab),
      cmocka_unit_test(test_stamps_see_reused_slab),
      cmocka_unit_test(test_pool_summary),
      cmocka_unit_test(test_pool_dry_stamp),
      cmocka_unit_test(test_search_hole),
      cmocka_unit_test(test_pool_packing),
      cmocka_unit_test(test_pool_keeps_pairs),
      cmocka_unit_test(test_pool_home),
      cmocka_unit_test(test_room_index),
      cmocka_unit_test(test_borrow),
      cmocka_unit_test(test_borrow_tickets),
  };
  return cmocka_run_group_tests_name(g_module, tests, alloc_group_setup, alloc_group_teardown);
}
