/*
 * case_fill.c — cases 4 and 6 of the suite, on the smaller fill heap:
 *   4 utilisation   every work-item of k_fill mallocs S-byte blocks until one returns NULL;
 *                   bytes obtained / heap size per block size (a bump pointer, the ceiling,
 *                   would obtain the whole heap: 1.0);
 *   6 out of memory repeated exhaustion without a reset in between (only frees), block sizes
 *                   changing between rounds: the capacity each round recovers, and the time of
 *                   a launch whose every malloc fails on the full heap.
 * Checks: the heap's live-allocation count equals the blocks the work-items counted, k_fill_free
 * frees exactly as many, and the heap is empty afterwards.
 */
#include <stdlib.h>

#include "suite.h"

#define ARG(x) sizeof(x), (const void *)&(x)

typedef struct fill {
  cl_mem heads, counts, ptrs, errors;
  uint32_t *host_counts;
  uint32_t items;
} fill;

static void fill_open(bs_session *s, fill *f) {
  f->items = s->plan->fill_items;
  f->heads = bs_buffer(s, (size_t)f->items * 8);
  f->counts = bs_buffer(s, (size_t)f->items * 4);
  f->ptrs = bs_buffer(s, (size_t)f->items * 8);
  f->errors = bs_buffer(s, 4);
  f->host_counts = malloc((size_t)f->items * 4);
}

static void fill_close(fill *f) {
  clReleaseMemObject(f->heads);
  clReleaseMemObject(f->counts);
  clReleaseMemObject(f->ptrs);
  clReleaseMemObject(f->errors);
  free(f->host_counts);
}

static uint64_t sum_counts(bs_session *s, fill *f) {
  bs_read(s, f->counts, (size_t)f->items * 4, f->host_counts);
  uint64_t sum = 0;
  for (uint32_t i = 0; i < f->items; i++)
    sum += f->host_counts[i];
  return sum;
}

/* Fills the heap with `size`-byte blocks; returns the blocks obtained (and the time in *ms),
 * or -1 after a failed check. */
static int64_t fill_heap(bs_session *s, fill *f, uint32_t size, double *ms, const char *what) {
  cl_kernel k = bs_kernel(s, "k_fill");
  uint32_t limit = 0;
  bs_args(k, ARG(f->heads), ARG(f->counts), ARG(f->items), ARG(size), ARG(limit), (size_t)0);
  *ms = bs_launch(s, k, f->items, 0);
  uint64_t blocks = sum_counts(s, f);
  cl_ulong live = bs_heap_info(s, CL_DEVICE_HEAP_INFO_LIVE_ALLOCATIONS_EXT);
  if (live != blocks) {
    bs_fail("%s: the heap counts %llu live allocations, the work-items %llu", what,
            (unsigned long long)live, (unsigned long long)blocks);
    return -1;
  }
  return (int64_t)blocks;
}

/* Frees what fill_heap obtained; -1 after a failed check. */
static int free_fill(bs_session *s, fill *f, uint64_t blocks, double *ms, const char *what) {
  cl_kernel k = bs_kernel(s, "k_fill_free");
  bs_args(k, ARG(f->heads), ARG(f->counts), ARG(f->items), (size_t)0);
  *ms = bs_launch(s, k, f->items, 0);
  uint64_t freed = sum_counts(s, f);
  if (freed != blocks) {
    bs_fail("%s: %llu blocks freed of %llu", what, (unsigned long long)freed,
            (unsigned long long)blocks);
    return -1;
  }
  return bs_check_heap_empty(s, what, 0);
}

void bs_case_utilisation(bs_session *s) {
  fill f;
  fill_open(s, &f);
  uint32_t sizes[32];
  int count = BP_TAKE(s->plan, bp_util_sizes, sizes);
  int reps = s->plan->reps < 2 ? s->plan->reps : 2;
  for (int i = 0; i < count; i++) {
    uint32_t size = sizes[i];
    char what[64];
    snprintf(what, sizeof what, "utilisation S=%u", size);
    bs_series tfill = {0}, tfree = {0}, frac = {0}, used = {0};
    uint64_t blocks = 0;
    bs_heap_reset(s);
    for (int r = -1; r < reps; r++) {
      double t_fill, t_free;
      int64_t got = fill_heap(s, &f, size, &t_fill, what);
      if (got < 0)
        goto next;
      cl_ulong in_use = bs_heap_info(s, CL_DEVICE_HEAP_INFO_BYTES_IN_USE_EXT);
      if (free_fill(s, &f, (uint64_t)got, &t_free, what))
        goto next;
      if (r < 0)
        continue;
      blocks = (uint64_t)got;
      bs_series_add(&tfill, t_fill);
      bs_series_add(&tfree, t_free);
      bs_series_add(&frac, (double)got * size / (double)s->heap_usable);
      bs_series_add(&used, (double)in_use / (double)s->heap_usable);
    }
    {
      bs_row u = {"fill",
                  size,
                  f.items,
                  "",
                  "utilisation",
                  "fraction",
                  bs_series_best(&frac),
                  bs_series_median(&frac),
                  frac.n,
                  blocks};
      bs_out_row("utilisation", &u);
      bs_row a = {"fill",
                  size,
                  f.items,
                  "",
                  "in_use",
                  "fraction",
                  bs_series_best(&used),
                  bs_series_median(&used),
                  used.n,
                  blocks};
      bs_out_row("utilisation", &a);
      bs_out_series("utilisation", "fill", size, f.items, "", "time", "ms", &tfill, blocks);
      bs_out_series("utilisation", "fill_free", size, f.items, "", "time", "ms", &tfree, blocks);
      bs_progress("utilisation",
                  "S=%-7u %llu blocks = %.1f %% of the %llu MiB heap (allocator's "
                  "own count %.1f %%), fill %.2f ms, free %.2f ms",
                  size, (unsigned long long)blocks, 100 * bs_series_best(&frac),
                  (unsigned long long)(s->heap_usable >> 20), 100 * bs_series_best(&used),
                  bs_series_best(&tfill), bs_series_best(&tfree));
    }
  next:
    bs_series_free(&tfill);
    bs_series_free(&tfree);
    bs_series_free(&frac);
    bs_series_free(&used);
  }
  fill_close(&f);
}

void bs_case_oom(bs_session *s) {
  fill f;
  fill_open(s, &f);
  uint32_t sizes[32];
  int count = BP_TAKE(s->plan, bp_oom_sizes, sizes);
  uint64_t first_bytes[32] = {0};
  cl_kernel km = bs_kernel(s, "k_malloc"), kf = bs_kernel(s, "k_free");
  uint32_t mixed = 0, k = 1, seed = 0, no_round = 0;
  uint64_t *host = malloc((size_t)f.items * 8);
  bs_heap_reset(s); /* once: the rounds recover capacity by frees alone */
  for (int r = 0; r < count; r++) {
    uint32_t size = sizes[r];
    char what[64], param[16];
    snprintf(what, sizeof what, "oom round %d S=%u", r, size);
    snprintf(param, sizeof param, "%d", r);
    double t_fill, t_free;
    int64_t got = fill_heap(s, &f, size, &t_fill, what);
    if (got < 0)
      break;
    /* the failure path: a whole launch of mallocs on the full heap */
    bs_series tfail = {0};
    uint64_t late = 0;
    bs_args(km, ARG(f.ptrs), ARG(f.items), ARG(size), ARG(mixed), ARG(k), ARG(seed), (size_t)0);
    bs_args(kf, ARG(f.ptrs), ARG(f.items), ARG(no_round), ARG(f.errors), (size_t)0);
    for (int rep = -1; rep < s->plan->reps; rep++) {
      double t = bs_launch(s, km, f.items, 0);
      bs_read(s, f.ptrs, (size_t)f.items * 8, host);
      uint64_t got_now = 0;
      for (uint32_t i = 0; i < f.items; i++)
        got_now += host[i] != 0;
      if (got_now)
        bs_launch(s, kf, f.items, 0); /* give back what a late malloc found */
      late += got_now;
      if (rep >= 0)
        bs_series_add(&tfail, t);
    }
    if (free_fill(s, &f, (uint64_t)got, &t_free, what)) {
      bs_series_free(&tfail);
      break;
    }
    uint64_t bytes = (uint64_t)got * size;
    int first = r;
    for (int j = 0; j < r; j++)
      if (sizes[j] == size) {
        first = j;
        break;
      }
    if (first == r)
      first_bytes[r] = bytes;
    double recovered = first_bytes[first] ? (double)bytes / (double)first_bytes[first] : 0;
    bs_row o = {"fill",
                size,
                f.items,
                param,
                "obtained",
                "fraction",
                (double)bytes / (double)s->heap_usable,
                0,
                1,
                (uint64_t)got};
    o.median = o.value;
    bs_out_row("oom", &o);
    bs_row rc = {"fill",     size,      f.items,   param, "recovered",
                 "fraction", recovered, recovered, 1,     (uint64_t)got};
    bs_out_row("oom", &rc);
    bs_row lt = {"malloc_full", size,         f.items,      param,       "late_successes",
                 "count",       (double)late, (double)late, tfail.n + 1, f.items};
    bs_out_row("oom", &lt);
    bs_row tf = {"fill", size, f.items, param, "time", "ms", t_fill, t_fill, 1, (uint64_t)got};
    bs_out_row("oom", &tf);
    bs_out_series("oom", "malloc_full", size, f.items, param, "time", "ms", &tfail, f.items);
    bs_progress("oom",
                "round %d S=%-5u obtained %.1f %% of the heap (%.3f of round %d), a "
                "launch of %u failing mallocs %.3f ms, %llu late successes",
                r, size, 100.0 * (double)bytes / (double)s->heap_usable, recovered, first, f.items,
                bs_series_best(&tfail), (unsigned long long)late);
    bs_series_free(&tfail);
  }
  free(host);
  fill_close(&f);
}
