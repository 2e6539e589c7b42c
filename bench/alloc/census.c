/* census.c — what a heap holds, counted on the host from its metadata (cldm_heap_layout.h):
 * free pages in the pool and pool words that still have an aligned free span of 8 pages (a
 * slab of the largest span: what a refill of a large class needs); slabs by fill (count 0,
 * partly used, full; current or not); pages in runs; and the shards' pool cursors (the word
 * each shard's next refill starts its search from, cldm_slab_refill_from): how many distinct
 * words they name and how many shards share the most common one. Cursors that converge on one
 * frontier make every refill search the words the others emptied, a cost that grows with the
 * heap's history, which the rates alone do not show. */
#include "census.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cldm_heap_layout.h"

static void *read_at(cldm_dtest_env *env, const cldm_dtest_heap *heap, size_t off, size_t bytes) {
  void *p = malloc(bytes ? bytes : 1);
  if (!p) {
    fprintf(stderr, "census: out of host memory\n");
    abort();
  }
  DT_CHECK(clEnqueueReadBuffer(env->queue, heap->buf, CL_TRUE, off, bytes, p, 0, NULL, NULL));
  return p;
}

static int cmp_u32(const void *a, const void *b) {
  uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
  return x < y ? -1 : x > y;
}

void cldm_bench_census(cldm_dtest_env *env, const cldm_dtest_heap *heap, const char *when) {
  cldm_heap_header hd;
  DT_CHECK(clEnqueueReadBuffer(env->queue, heap->buf, CL_TRUE, 0, sizeof hd, &hd, 0, NULL, NULL));
  if (hd.magic != CLDM_HEAP_MAGIC || hd.layout_version != CLDM_HEAP_LAYOUT_VERSION) {
    printf("census %s: header not of this layout (magic %#x, version %u)\n", when, hd.magic,
           hd.layout_version);
    return;
  }
  uint32_t np = hd.num_pages, nw = hd.pool_words, ns = hd.num_shards;
  uint32_t *pool = read_at(env, heap, hd.pool_offset, (size_t)nw * 4);
  uint32_t *descs = read_at(env, heap, hd.descs_offset, (size_t)np * 4);
  uint64_t *w = read_at(env, heap, hd.w_offset, (size_t)ns * CLDM_W_ROW_WORDS * 8);

  uint32_t free_pages = 0, span8_words = 0;
  for (uint32_t i = 0; i < nw; i++) {
    uint32_t valid = np - i * 32u >= 32u ? 0xFFFFFFFFu : (1u << (np - i * 32u)) - 1u;
    uint32_t freeb = ~pool[i] & valid;
    free_pages += (uint32_t)__builtin_popcount(freeb);
    for (uint32_t g = 0; g < 32u; g += 8u)
      if (((freeb >> g) & 0xFFu) == 0xFFu) {
        span8_words++;
        break;
      }
  }
  /* current slabs: the head pages W names with tickets left to issue (a used-up word still
   * names its last slab, which may be retired since) */
  unsigned char *current = calloc(np ? np : 1, 1);
  uint32_t currents = 0;
  for (uint32_t s = 0; s < ns; s++)
    for (uint32_t c = 0; c < CLDM_NUM_CLASSES; c++) {
      uint64_t v = w[(size_t)s * CLDM_W_ROW_WORDS + c];
      uint32_t p = (uint32_t)(v & 0x7FFFFFFFu), tick = (uint32_t)(v >> 32);
      if (p < np && tick < cldm_class_slots(c, np) && !current[p]) {
        current[p] = 1;
        currents++;
      }
    }
  uint32_t empty = 0, partial = 0, full = 0, cur_empty = 0, run_pages = 0, span_pages = 0;
  for (uint32_t p = 0; p < np; p++) {
    uint32_t kind = descs[p] >> CLDM_DESC_KIND_SHIFT, count = descs[p] & CLDM_DESC_COUNT_MASK;
    if (kind == CLDM_DESC_KIND_LARGE_HEAD || kind == CLDM_DESC_KIND_LARGE_TAIL) {
      run_pages++;
    } else if (kind >= 1u && kind <= CLDM_NUM_CLASSES) {
      uint32_t c = kind - 1u, slots = cldm_class_slots(c, np);
      span_pages += cldm_class_span_pages(c, np);
      if (count == 0 && current[p])
        cur_empty++;
      else if (count == 0)
        empty++;
      else if (count >= slots)
        full++;
      else
        partial++;
    }
  }
  /* cursors: low 32 bits of word CLDM_W_CURSOR of each shard's row (>= pool words: unset) */
  uint32_t *cur = malloc((size_t)(ns ? ns : 1) * 4), set = 0;
  for (uint32_t s = 0; s < ns; s++) {
    uint32_t v = (uint32_t)w[(size_t)s * CLDM_W_ROW_WORDS + CLDM_W_CURSOR];
    if (v < nw)
      cur[set++] = v;
  }
  qsort(cur, set, 4, cmp_u32);
  uint32_t distinct = 0, most = 0;
  for (uint32_t i = 0; i < set;) {
    uint32_t j = i;
    while (j < set && cur[j] == cur[i])
      j++;
    distinct++;
    most = j - i > most ? j - i : most;
    i = j;
  }
  printf("census %s: pool %u of %u pages free (%.1f %%), %u of %u words with a free aligned "
         "8-page span; slabs on %u pages: %u empty (%u of them current), %u partly used, "
         "%u full, %u current with tickets left; %u pages in runs; cursors of %u of %u shards "
         "on %u distinct words, at most %u on one\n",
         when, free_pages, np, np ? 100.0 * free_pages / np : 0.0, span8_words, nw, span_pages,
         empty + cur_empty, cur_empty, partial, full, currents, run_pages, set, ns, distinct, most);
  fflush(stdout);
  free(cur);
  free(current);
  free(w);
  free(descs);
  free(pool);
}
