/*
 * case_workload.c — case 7 of the suite, a real workload: each work-item emits a variable
 * number of values (bc_degree: 0 .. 2 * BP_WORKLOAD_AVG, like the neighbours a graph expansion
 * finds), three ways:
 *   malloc  one pass: each work-item mallocs its own array and fills it (k_list_build); read
 *           back through the pointers (k_list_sum), freed (k_list_free);
 *   prefix  the classic version without malloc: count, exclusive prefix sum (three kernels),
 *           fill one compact array; the output buffer is allocated beforehand at its bound;
 *   bump    one pass reserving each work-item's space with an atomic_add (the ceiling).
 * "produce" is the kernel time to build the output (the sum of the five kernels for prefix),
 * "consume" a kernel reading every value back. Checked on every repetition: every
 * work-item's sum and the total against the host's. Repetitions are interleaved across the
 * launch sizes, as in cases 1-3.
 */
#include <stdlib.h>
#include <string.h>

#include "suite.h"

#define ARG(x) sizeof(x), (const void *)&(x)

static int check_sums(bs_session *s, cl_mem sums, const uint64_t *want, uint64_t *got, uint32_t n,
                      const char *what) {
  bs_read(s, sums, (size_t)n * 8, got);
  for (uint32_t i = 0; i < n; i++)
    if (got[i] != want[i]) {
      bs_fail("%s: work-item %u sums to %llu, %llu expected", what, i, (unsigned long long)got[i],
              (unsigned long long)want[i]);
      return -1;
    }
  return 0;
}

static size_t scan_local_size(bs_session *s) {
  size_t l = s->plan->local, wg = 0;
  const char *names[] = {"k_scan_local", "k_scan_blocks", "k_scan_add"};
  for (int i = 0; i < 3; i++) {
    BS_CHECK(clGetKernelWorkGroupInfo(bs_kernel(s, names[i]), s->dev->device,
                                      CL_KERNEL_WORK_GROUP_SIZE, sizeof wg, &wg, NULL));
    if (wg && l > wg)
      l = wg;
  }
  if (s->dev->max_wg && l > s->dev->max_wg)
    l = s->dev->max_wg;
  return l;
}

typedef struct wl {
  uint32_t n;
  uint64_t *want, total; /* each work-item's sum, the number of values */
  int failed;
  bs_series m_prod, m_cons, m_free, p_prod, p_cons, b_prod, b_cons;
} wl;

static void wl_init(wl *w, uint32_t n) {
  memset(w, 0, sizeof *w);
  w->n = n;
  w->want = malloc((size_t)n * 8);
  for (uint32_t i = 0; i < n; i++) {
    uint32_t d = bc_degree(i, BP_WORKLOAD_AVG);
    uint64_t sum = 0;
    for (uint32_t j = 0; j < d; j++)
      sum += bc_value(i, j);
    w->want[i] = sum;
    w->total += d;
  }
}

/* One repetition for w->n work-items, with buffers of its own (r < 0: the warm-up, not
 * recorded); marks w failed after a failed check. */
static void wl_rep(bs_session *s, wl *w, int r) {
  uint32_t n = w->n, avg = BP_WORKLOAD_AVG;
  size_t L = scan_local_size(s);
  uint32_t nb = (uint32_t)((n + L - 1) / L);
  uint64_t *got = malloc((size_t)n * 8), total = w->total;
  uint32_t *counts_host = malloc((size_t)n * 4);
  cl_mem heads = bs_buffer(s, (size_t)n * 8), counts = bs_buffer(s, (size_t)n * 4);
  cl_mem sums = bs_buffer(s, (size_t)n * 8), out = bs_buffer(s, (size_t)n * (2 * avg + 1) * 4);
  cl_mem offsets = bs_buffer(s, (size_t)n * 4), block_sums = bs_buffer(s, (size_t)nb * 4);
  cl_mem tot = bs_buffer(s, 4), top = bs_buffer(s, 4);
  cl_kernel kbuild = bs_kernel(s, "k_list_build"), ksum = bs_kernel(s, "k_list_sum");
  cl_kernel kfree = bs_kernel(s, "k_list_free"), kcount = bs_kernel(s, "k_wl_count");
  cl_kernel kscan1 = bs_kernel(s, "k_scan_local"), kscan2 = bs_kernel(s, "k_scan_blocks");
  cl_kernel kscan3 = bs_kernel(s, "k_scan_add"), kfill = bs_kernel(s, "k_wl_fill");
  cl_kernel kbump = bs_kernel(s, "k_wl_bump"), kwsum = bs_kernel(s, "k_wl_sum");
  bs_args(kbuild, ARG(heads), ARG(counts), ARG(n), ARG(avg), (size_t)0);
  bs_args(ksum, ARG(heads), ARG(counts), ARG(sums), ARG(n), (size_t)0);
  bs_args(kfree, ARG(heads), ARG(n), (size_t)0);
  bs_args(kcount, ARG(counts), ARG(n), ARG(avg), (size_t)0);
  bs_args(kscan1, ARG(counts), ARG(offsets), ARG(block_sums), L * 4, (const void *)NULL, ARG(n),
          (size_t)0);
  bs_args(kscan2, ARG(block_sums), ARG(tot), L * 4, (const void *)NULL, ARG(nb), (size_t)0);
  bs_args(kscan3, ARG(offsets), ARG(block_sums), ARG(n), (size_t)0);
  bs_args(kfill, ARG(out), ARG(offsets), ARG(n), ARG(avg), (size_t)0);
  bs_args(kbump, ARG(out), ARG(top), ARG(offsets), ARG(n), ARG(avg), (size_t)0);
  bs_args(kwsum, ARG(out), ARG(offsets), ARG(sums), ARG(n), ARG(avg), (size_t)0);
  char what[64];
  snprintf(what, sizeof what, "workload N=%u", n);
  w->failed = 1;
  /* malloc */
  double tb = bs_launch(s, kbuild, n, 0);
  bs_read(s, counts, (size_t)n * 4, counts_host);
  for (uint32_t i = 0; i < n; i++)
    if (counts_host[i] == ~0u) {
      bs_fail("%s: work-item %u got NULL although the heap had room", what, i);
      goto done;
    }
  double ts = bs_launch(s, ksum, n, 0);
  if (check_sums(s, sums, w->want, got, n, what))
    goto done;
  double tf = bs_launch(s, kfree, n, 0);
  if (bs_check_heap_empty(s, what, 1))
    goto done;
  /* count + prefix sum + fill */
  double tp = bs_launch(s, kcount, n, 0);
  tp += bs_launch(s, kscan1, n, L);
  tp += bs_launch(s, kscan2, L, L);
  tp += bs_launch(s, kscan3, n, L);
  tp += bs_launch(s, kfill, n, 0);
  if (bs_read_u32(s, tot) != (uint32_t)total) {
    bs_fail("%s: prefix sum total %u, %llu expected", what, bs_read_u32(s, tot),
            (unsigned long long)total);
    goto done;
  }
  double tps = bs_launch(s, kwsum, n, 0);
  if (check_sums(s, sums, w->want, got, n, "workload (prefix sum)"))
    goto done;
  /* bump pointer */
  double tbp = bs_launch(s, kbump, n, 0);
  if (bs_read_u32(s, top) != (uint32_t)total) {
    bs_fail("%s: bump pointer at %u, %llu expected", what, bs_read_u32(s, top),
            (unsigned long long)total);
    goto done;
  }
  double tbs = bs_launch(s, kwsum, n, 0);
  if (check_sums(s, sums, w->want, got, n, "workload (bump pointer)"))
    goto done;
  w->failed = 0;
  if (r >= 0) {
    bs_series_add(&w->m_prod, tb);
    bs_series_add(&w->m_cons, ts);
    bs_series_add(&w->m_free, tf);
    bs_series_add(&w->p_prod, tp);
    bs_series_add(&w->p_cons, tps);
    bs_series_add(&w->b_prod, tbp);
    bs_series_add(&w->b_cons, tbs);
  }
done:;
  cl_mem all[] = {heads, counts, sums, out, offsets, block_sums, tot, top};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
    clReleaseMemObject(all[i]);
  free(got);
  free(counts_host);
}

static void wl_report(wl *w) {
  uint32_t n = w->n;
  uint64_t total = w->total;
  bs_out_series("workload", "malloc", 4, n, "", "produce", "ms", &w->m_prod, total);
  bs_out_series("workload", "malloc", 4, n, "", "consume", "ms", &w->m_cons, total);
  bs_out_series("workload", "malloc", 4, n, "", "free", "ms", &w->m_free, total);
  bs_out_series("workload", "prefix", 4, n, "", "produce", "ms", &w->p_prod, total);
  bs_out_series("workload", "prefix", 4, n, "", "consume", "ms", &w->p_cons, total);
  bs_out_series("workload", "bump", 4, n, "", "produce", "ms", &w->b_prod, total);
  bs_out_series("workload", "bump", 4, n, "", "consume", "ms", &w->b_cons, total);
  double m = bs_series_best(&w->m_prod), p = bs_series_best(&w->p_prod);
  double b = bs_series_best(&w->b_prod);
  bs_progress("workload",
              "N=%-7u %llu values: malloc %.3f ms (+free %.3f), count+scan+fill "
              "%.3f ms, bump %.3f ms | malloc/prefix %.2fx malloc/bump %.2fx",
              n, (unsigned long long)total, m, bs_series_best(&w->m_free), p, b, p > 0 ? m / p : 0,
              b > 0 ? m / b : 0);
}

/* Launch sizes as cases 1-3 do: repetitions interleaved across them (case_alloc.c). */
void bs_case_workload(bs_session *s) {
  uint32_t items[32];
  wl list[32];
  int count = BP_TAKE(s->plan, bp_workload_items, items), nw = 0;
  for (int i = 0; i < count; i++) {
    uint64_t bound = (uint64_t)items[i] * (2 * BP_WORKLOAD_AVG) * 4 * 2; /* class rounding */
    if (items[i] <= s->plan->n_max && bound <= s->heap_usable / 2)
      wl_init(&list[nw++], items[i]);
  }
  bs_heap_reset(s);
  for (int r = -1; r < s->plan->reps; r++)
    for (int i = 0; i < nw; i++)
      if (r < 0 || !list[i].failed)
        wl_rep(s, &list[i], r);
  for (int i = 0; i < nw; i++) {
    wl *w = &list[i];
    if (!w->failed)
      wl_report(w);
    bs_series *all[] = {&w->m_prod, &w->m_cons, &w->m_free, &w->p_prod,
                        &w->p_cons, &w->b_prod, &w->b_cons};
    for (size_t j = 0; j < sizeof all / sizeof all[0]; j++)
      bs_series_free(all[j]);
    free(w->want);
  }
}
