/*
 * case_alloc.c — cases 1-3 of the suite, one launch shape measured three ways:
 *   1 throughput  every work-item mallocs S bytes, S = 16 B .. 1 MiB;
 *   2 mixed       random sizes in [16, S_max], scaling in the number of work-items;
 *   3 divergent   only every k-th work-item allocates (k = 1, 2, 8, 32).
 * Each measurement times k_malloc (one launch), k_free_only (a second launch) and
 * k_malloc_free (malloc + free in one), next to the baselines k_bump (bump pointer: the
 * ceiling) and k_prealloc (preallocated buffer: no allocation) of the same shape, and k_check
 * (the blocks' ids read back, in a launch between malloc and free: the free launch's shape
 * without allocator), best of the plan's repetitions after a warm-up, repetitions interleaved
 * across the launch shapes of a case. Case 1 also reports each shape's cold figures: k_malloc's
 * and k_bump's first launch on a fresh heap (run_cold). Every repetition is checked: no NULL,
 * no overlapping blocks, the ids written into the blocks intact before their free, the heap
 * empty afterwards.
 */
#include <stdlib.h>
#include <string.h>

#include "suite.h"

typedef struct batch {
  const char *case_name;
  uint32_t size, n, mixed, k, seed;
  char param[16];
  uint64_t blocks, units; /* allocations, bump-pointer granules */
  int failed, skipped;    /* skipped: not run, the case's time budget was spent (--budget) */
  bs_series tm, tf, tmf, tb, tp, tc;
  double cold_m, cold_b; /* the cold repetition's k_malloc and k_bump (ms; < 0: none) */
} batch;

/* run_rep's repetition numbers below 0: not recorded as timed repetitions. */
enum { REP_WARM_UP = -1, REP_COLD = -2 };

#define ARG(x) sizeof(x), (const void *)&(x)

/* The k_malloc-shaped arguments of every kernel of the batch after `first` leading ones. */
static void shape_args(cl_kernel k, cl_uint first, const batch *b) {
  BS_CHECK(clSetKernelArg(k, first + 0, sizeof b->n, &b->n));
  BS_CHECK(clSetKernelArg(k, first + 1, sizeof b->size, &b->size));
  BS_CHECK(clSetKernelArg(k, first + 2, sizeof b->mixed, &b->mixed));
  BS_CHECK(clSetKernelArg(k, first + 3, sizeof b->k, &b->k));
  BS_CHECK(clSetKernelArg(k, first + 4, sizeof b->seed, &b->seed));
}

/* 0 if every selected slot holds a block (malloc + free: addresses may repeat). */
static int check_all_got(const char *what, const uint64_t *p, const batch *b) {
  for (uint32_t i = 0; i < b->n; i++)
    if (bc_selected(i, b->k) && !p[i]) {
      bs_fail("%s: work-item %u got NULL although the heap had room", what, i);
      return -1;
    }
  return 0;
}

static void batch_init(batch *b, const char *case_name, uint32_t size, uint32_t n, uint32_t mixed,
                       uint32_t k, uint32_t seed, const char *param) {
  memset(b, 0, sizeof *b);
  b->case_name = case_name;
  b->size = size;
  b->n = n;
  b->mixed = mixed;
  b->k = k;
  b->seed = seed;
  snprintf(b->param, sizeof b->param, "%s", param);
  b->cold_m = b->cold_b = -1;
  for (uint32_t i = 0; i < n; i++)
    if (bc_selected(i, k)) {
      b->blocks++;
      b->units += (bc_size(i, size, mixed, seed) + BC_GRANULE - 1) / BC_GRANULE;
    }
}

/* One repetition of the batch with buffers of its own: r >= 0 a timed one; REP_WARM_UP not
 * recorded, REP_COLD records only the cold figures (the baselines' blocks are checked in
 * both); marks the batch failed after a failed check. */
static void run_rep(bs_session *s, batch *b, int r) {
  cl_kernel km = bs_kernel(s, "k_malloc"), kf = bs_kernel(s, "k_free_only");
  cl_kernel kmf = bs_kernel(s, "k_malloc_free"), kb = bs_kernel(s, "k_bump");
  cl_kernel kp = bs_kernel(s, "k_prealloc"), kc = bs_kernel(s, "k_check");
  uint32_t n = b->n;
  if (bs_trace())
    fprintf(stderr, "[trace] %s S=%u N=%u repetition %d\n", b->case_name, b->size, n, r);
  cl_mem ptrs = bs_buffer(s, (size_t)n * 8), arena = bs_buffer(s, (size_t)n * b->size);
  cl_mem top = bs_buffer(s, 4), errors = bs_buffer(s, 4);
  uint64_t *host = malloc((size_t)n * 8);
  char what[160];
  snprintf(what, sizeof what, "%s S=%u N=%u%s%s", b->case_name, b->size, n, b->param[0] ? " " : "",
           b->param);
  BS_CHECK(clSetKernelArg(km, 0, sizeof ptrs, &ptrs));
  shape_args(km, 1, b);
  bs_args(kf, ARG(ptrs), ARG(n), (size_t)0);
  bs_args(kc, ARG(ptrs), ARG(n), ARG(errors), (size_t)0);
  BS_CHECK(clSetKernelArg(kmf, 0, sizeof ptrs, &ptrs));
  shape_args(kmf, 1, b);
  bs_args(kb, ARG(arena), ARG(top), ARG(ptrs), (size_t)0);
  shape_args(kb, 3, b);
  bs_args(kp, ARG(arena), ARG(ptrs), (size_t)0);
  shape_args(kp, 2, b);
  b->failed = 1;
  double t_m = bs_launch(s, km, n, 0);
  bs_read(s, ptrs, (size_t)n * 8, host);
  if (bs_check_blocks(what, host, n, b->size, b->mixed, b->k, b->seed, 1, NULL, NULL) < 0)
    goto done;
  double t_c = bs_launch(s, kc, n, 0);
  if (bs_read_u32(s, errors)) {
    bs_fail("%s: %u blocks lost their contents before free", what, bs_read_u32(s, errors));
    goto done;
  }
  double t_f = bs_launch(s, kf, n, 0);
  if (bs_check_heap_empty(s, what, 1))
    goto done;
  double t_mf = bs_launch(s, kmf, n, 0);
  bs_read(s, ptrs, (size_t)n * 8, host);
  if (check_all_got(what, host, b) || bs_check_heap_empty(s, what, 1))
    goto done;
  double t_b = bs_launch(s, kb, n, 0);
  if (bs_read_u32(s, top) != (uint32_t)b->units) {
    bs_fail("%s: bump pointer at %u granules, %llu expected", what, bs_read_u32(s, top),
            (unsigned long long)b->units);
    goto done;
  }
  double t_p = bs_launch(s, kp, n, 0);
  if (r < 0) {
    bs_read(s, ptrs, (size_t)n * 8, host);
    if (bs_check_blocks(what, host, n, b->size, b->mixed, b->k, b->seed, 1, NULL, NULL) < 0)
      goto done;
    if (r == REP_COLD) {
      b->cold_m = t_m;
      b->cold_b = t_b;
    }
  } else {
    bs_series_add(&b->tm, t_m);
    bs_series_add(&b->tf, t_f);
    bs_series_add(&b->tmf, t_mf);
    bs_series_add(&b->tb, t_b);
    bs_series_add(&b->tp, t_p);
    bs_series_add(&b->tc, t_c);
  }
  b->failed = 0;
done:
  free(host);
  clReleaseMemObject(ptrs);
  clReleaseMemObject(arena);
  clReleaseMemObject(top);
  clReleaseMemObject(errors);
}

static void report_batch(batch *b) {
  const char *c = b->case_name;
  bs_out_series(c, "malloc", b->size, b->n, b->param, "time", "ms", &b->tm, b->blocks);
  bs_out_series(c, "free", b->size, b->n, b->param, "time", "ms", &b->tf, b->blocks);
  bs_out_series(c, "malloc_free", b->size, b->n, b->param, "time", "ms", &b->tmf, b->blocks);
  bs_out_series(c, "bump", b->size, b->n, b->param, "time", "ms", &b->tb, b->blocks);
  bs_out_series(c, "prealloc", b->size, b->n, b->param, "time", "ms", &b->tp, b->blocks);
  bs_out_series(c, "check", b->size, b->n, b->param, "time", "ms", &b->tc, b->blocks);
  if (b->cold_m >= 0) {
    bs_row cold = {"malloc", b->size, b->n, b->param, "cold", "ms", 0, 0, 1, b->blocks};
    cold.value = cold.median = b->cold_m;
    bs_out_row(c, &cold);
    cold.kernel = "bump";
    cold.value = cold.median = b->cold_b;
    bs_out_row(c, &cold);
  }
  double m = bs_series_best(&b->tm), bump = bs_series_best(&b->tb), pre = bs_series_best(&b->tp);
  char label[32] = "";
  if (b->mixed)
    snprintf(label, sizeof label, "sizes 16-%u ", b->size);
  if (!strcmp(c, "divergent"))
    snprintf(label, sizeof label, "k=%-2u ", b->k);
  bs_progress(c,
              "S=%-7u N=%-7u %smalloc %.3f ms (%.1f M/s) free %.3f m+f %.3f | "
              "bump %.3f prealloc %.3f check %.3f | malloc/bump %.1fx malloc/prealloc %.1fx",
              b->size, b->n, label, m, (double)b->blocks / m / 1e3, bs_series_best(&b->tf),
              bs_series_best(&b->tmf), bump, pre, bs_series_best(&b->tc), bump > 0 ? m / bump : 0,
              pre > 0 ? m / pre : 0);
  if (b->cold_m >= 0)
    bs_progress(c, "S=%-7u N=%-7u %scold: malloc %.3f ms bump %.3f | malloc/bump %.1fx", b->size,
                b->n, label, b->cold_m, b->cold_b, b->cold_b > 0 ? b->cold_m / b->cold_b : 0);
}

/* The cold figures of a case's shapes: each shape's first k_malloc on a fresh heap, next to the
 * first k_bump of that shape. A repetition over no work-item launches every kernel first, so
 * that no cold figure holds a kernel's first-launch costs (the driver's loading of the
 * program), only the heap's state; then each shape runs one checked repetition right after
 * clEnqueueResetDeviceHeapEXT, which returns the heap to the state of a newly created one
 * (spec 1.4: the layer copies the pristine image of the allocator's metadata). Shapes reached
 * after the case's time budget are skipped, as in the warm-up. */
static void run_cold(bs_session *s, batch *list, int count, double start) {
  batch primer;
  batch_init(&primer, list[0].case_name, list[0].size, 0, list[0].mixed, list[0].k, list[0].seed,
             list[0].param);
  run_rep(s, &primer, REP_WARM_UP);
  for (int i = 0; i < count; i++) {
    if (!bp_budget_left(s->plan, (bs_now_us() - start) / 1e6)) {
      list[i].skipped = 1;
      bs_progress(list[i].case_name, "S=%-7u N=%-7u %s%sskipped: time budget of %g s spent",
                  list[i].size, list[i].n, list[i].param, list[i].param[0] ? " " : "",
                  s->plan->budget_s);
      continue;
    }
    bs_heap_reset(s);
    run_rep(s, &list[i], REP_COLD);
  }
}

/* The batches of one case, repetitions interleaved: pass r runs repetition r of every batch,
 * so that a disturbance on a shared machine spoils one repetition of each batch rather than
 * every repetition of one (the best of the passes is reported). With `cold`, the cold figures
 * first (run_cold). The heap is reset at the start of the warm-up; every batch frees all it
 * allocated. With a time budget (--budget, bp_budget_left) the warm-up skips the shapes it
 * reaches after the budget and the passes after the first stop once it is spent. */
static void run_case(bs_session *s, batch *list, int count, int cold) {
  double start = bs_now_us();
  if (cold)
    run_cold(s, list, count, start);
  bs_heap_reset(s);
  for (int r = REP_WARM_UP; r < s->plan->reps; r++) {
    if (r > 0 && !bp_budget_left(s->plan, (bs_now_us() - start) / 1e6)) {
      bs_progress(list[0].case_name, "time budget of %g s spent after %d timed passes",
                  s->plan->budget_s, r);
      break;
    }
    double t0 = bs_now_us();
    for (int i = 0; i < count; i++) {
      if (r < 0 && !bp_budget_left(s->plan, (bs_now_us() - start) / 1e6)) {
        list[i].skipped = 1;
        bs_progress(list[i].case_name, "S=%-7u N=%-7u %s%sskipped: time budget of %g s spent",
                    list[i].size, list[i].n, list[i].param, list[i].param[0] ? " " : "",
                    s->plan->budget_s);
        continue;
      }
      if (list[i].skipped || (r >= 0 && list[i].failed))
        continue;
      double t1 = bs_now_us();
      run_rep(s, &list[i], r);
      if (r < 0) /* so that a launch shape that takes long shows which it is */
        bs_progress(list[i].case_name, "warm-up S=%-7u N=%-7u %s%s%.2f s", list[i].size, list[i].n,
                    list[i].param, list[i].param[0] ? " " : "", (bs_now_us() - t1) / 1e6);
    }
    if (r < 0)
      bs_progress(list[0].case_name, "warm-up: %d launch shapes, %.1f s", count,
                  (bs_now_us() - t0) / 1e6);
    else
      bs_progress(list[0].case_name, "pass %d/%d: %d launch shapes, %.1f s", r + 1, s->plan->reps,
                  count, (bs_now_us() - t0) / 1e6);
  }
  for (int i = 0; i < count; i++) {
    if (!list[i].failed && !list[i].skipped)
      report_batch(&list[i]);
    bs_series_free(&list[i].tm);
    bs_series_free(&list[i].tf);
    bs_series_free(&list[i].tmf);
    bs_series_free(&list[i].tb);
    bs_series_free(&list[i].tp);
    bs_series_free(&list[i].tc);
  }
}

void bs_case_throughput(bs_session *s) {
  uint32_t sizes[32];
  batch list[32];
  int count = BP_TAKE(s->plan, bp_throughput_sizes, sizes), nb = 0;
  for (int i = 0; i < count; i++) {
    if (!bp_size_wanted(s->plan, sizes[i]))
      continue; /* --max-size */
    uint32_t n = bp_items(s->plan, s->heap_usable, sizes[i]);
    if (!n)
      bs_progress("throughput", "S=%u skipped: the heap holds fewer than %u blocks", sizes[i],
                  2 * BP_MIN_ITEMS);
    else
      batch_init(&list[nb++], "throughput", sizes[i], n, 0, 1, 0, "");
  }
  if (nb)
    run_case(s, list, nb, 1);
}

void bs_case_mixed(bs_session *s) {
  uint32_t maxes[32], items[32];
  batch list[64];
  int nm = BP_TAKE(s->plan, bp_mixed_max, maxes), ni = BP_TAKE(s->plan, bp_mixed_items, items);
  int nb = 0;
  for (int a = 0; a < nm; a++)
    for (int c = 0; c < ni; c++)
      if (items[c] <= s->plan->n_max && (uint64_t)items[c] * maxes[a] <= s->heap_usable / 2)
        batch_init(&list[nb++], "mixed", maxes[a], items[c], 1, 1, 1, "mixed");
  if (nb)
    run_case(s, list, nb, 0);
}

void bs_case_divergent(bs_session *s) {
  uint32_t ks[32], sizes[32];
  batch list[64];
  int nk = BP_TAKE(s->plan, bp_divergent_k, ks), ns = BP_TAKE(s->plan, bp_divergent_sizes, sizes);
  int nb = 0;
  for (int a = 0; a < ns; a++) {
    uint32_t n =
        bp_size_wanted(s->plan, sizes[a]) ? bp_items(s->plan, s->heap_usable, sizes[a]) : 0;
    for (int c = 0; n && c < nk; c++) {
      char param[16];
      snprintf(param, sizeof param, "%u", ks[c]);
      batch_init(&list[nb++], "divergent", sizes[a], n, 0, ks[c], 0, param);
    }
  }
  if (nb)
    run_case(s, list, nb, 0);
}
