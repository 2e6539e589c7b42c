/*
 * cases.cu — the cases of cldm-bench-cuda, each the CUDA twin of bench/suite's case_*.c:
 * the same launches (kernels.cuh), parameters (bench_plan.h), repetitions (best of the plan's
 * after one warm-up, interleaved across the launch shapes of cases 1-3 and 7; case 1's cold
 * figures first), host-side checks (no NULL where the heap has room, blocks sorted and
 * disjoint, ids intact at free, sums and totals) and rows. Kernel times come from CUDA events
 * around each launch (the counterpart of OpenCL event profiling).
 * CUDA has no heap statistics and no heap reset: where the OpenCL suite checks the heap is
 * empty, this program relies on the frees' own checks; where it resets the heap, this program
 * starts a new one (bc_heap_fresh).
 */
#include <stdlib.h>
#include <string.h>

#include <algorithm>
#include <string>
#include <vector>

#include "bench_cuda.h"
#include "kernels.cuh"

/* ---- launches, buffers ---- */

template <typename... P, typename... A>
static double launch(bc_ctx &c, void (*kern)(P...), u32 n, u32 local, size_t shared, A... args) {
  if (!local)
    local = c.plan->local;
  u32 grid = (n + local - 1) / local;
  if (!grid)
    grid = 1;
  CK(cudaEventRecord(c.e0));
  kern<<<grid, local, shared>>>(args...);
  CK(cudaGetLastError());
  CK(cudaEventRecord(c.e1));
  CK(cudaEventSynchronize(c.e1));
  float ms = 0;
  CK(cudaEventElapsedTime(&ms, c.e0, c.e1));
  return ms;
}

template <typename T> static T *dev_alloc(size_t count) {
  void *p = NULL;
  CK(cudaMalloc(&p, count ? count * sizeof(T) : 16));
  CK(cudaMemset(p, 0, count ? count * sizeof(T) : 16));
  return (T *)p;
}

template <typename T> static void dev_read(T *dst, const T *src, size_t count) {
  if (!count) /* a launch over no thread (run_cold's primer) wrote nothing */
    return;
  CK(cudaMemcpy(dst, src, count * sizeof(T), cudaMemcpyDeviceToHost));
}

static u32 read_u32(const u32 *p) {
  u32 v = 0;
  dev_read(&v, p, 1);
  return v;
}

void bc_heap_fresh(bc_ctx &c) {
  if (c.e0) {
    cudaEventDestroy(c.e0);
    cudaEventDestroy(c.e1);
  }
  CK(cudaDeviceReset());
  CK(cudaSetDevice(c.device));
  CK(cudaDeviceSetLimit(cudaLimitMallocHeapSize, (size_t)c.heap));
  size_t got = 0;
  CK(cudaDeviceGetLimit(&got, cudaLimitMallocHeapSize));
  if (got < c.heap)
    bc_fail("cudaLimitMallocHeapSize is %zu after setting %llu", got, (unsigned long long)c.heap);
  CK(cudaEventCreate(&c.e0));
  CK(cudaEventCreate(&c.e1));
  u64 *p = dev_alloc<u64>(1);
  launch(c, k_malloc_free, 1, 1, 0, p, 1u, 16u, 0u, 1u, 0u);
  cudaFree(p);
}

/* ---- checks ---- */

struct block {
  u64 addr, size;
};

static int check_disjoint(const char *what, std::vector<block> &b) {
  for (const block &x : b)
    if (x.addr % 16) {
      bc_fail("%s: block at 0x%llx is not 16-byte aligned", what, x.addr);
      return -1;
    }
  std::sort(b.begin(), b.end(), [](const block &x, const block &y) { return x.addr < y.addr; });
  for (size_t i = 1; i < b.size(); i++)
    if (b[i - 1].addr + b[i - 1].size > b[i].addr) {
      bc_fail("%s: blocks at 0x%llx (%llu bytes) and 0x%llx overlap", what, b[i - 1].addr,
              b[i - 1].size, b[i].addr);
      return -1;
    }
  return 0;
}

/* As bs_check_blocks of bench/suite/check.c. */
static long check_blocks(const char *what, const u64 *ptrs, u32 n, u32 size, u32 mixed, u32 k,
                         u32 seed, int expect_all, u64 *lo, u64 *hi) {
  std::vector<block> b;
  b.reserve(n);
  for (u32 i = 0; i < n; i++) {
    int selected = bc_selected(i, k) != 0;
    if (!selected && ptrs[i]) {
      bc_fail("%s: thread %u did not allocate but wrote a block", what, i);
      return -1;
    }
    if (selected && !ptrs[i] && expect_all) {
      bc_fail("%s: thread %u got NULL although the heap had room", what, i);
      return -1;
    }
    if (ptrs[i])
      b.push_back(block{ptrs[i], bc_size(i, size, mixed, seed)});
  }
  if (check_disjoint(what, b))
    return -1;
  if (lo)
    *lo = b.empty() ? 0 : b.front().addr;
  if (hi) {
    u64 end = 0;
    for (const block &x : b)
      end = std::max(end, x.addr + x.size);
    *hi = end;
  }
  return (long)b.size();
}

/* ---- cases 1-3 ---- */

struct batch {
  const char *case_name;
  u32 size, n, mixed, k, seed;
  std::string param;
  u64 blocks = 0, units = 0;
  bool failed = false, skipped = false; /* skipped: the case's time budget was spent */
  bc_series tm, tf, tmf, tb, tp, tc;
  double cold_m = -1, cold_b = -1; /* the cold repetition's k_malloc and k_bump (ms; < 0: none) */
  batch(const char *c, u32 s, u32 n_, u32 m, u32 k_, u32 seed_, const char *p)
      : case_name(c), size(s), n(n_), mixed(m), k(k_), seed(seed_), param(p) {
    for (u32 i = 0; i < n; i++)
      if (bc_selected(i, k)) {
        blocks++;
        units += (bc_size(i, size, mixed, seed) + BC_GRANULE - 1) / BC_GRANULE;
      }
  }
};

/* run_rep's repetition numbers below 0: not recorded as timed repetitions. */
enum { REP_WARM_UP = -1, REP_COLD = -2 };

/* One repetition with buffers of its own: r >= 0 a timed one; REP_WARM_UP not recorded,
 * REP_COLD records only the cold figures (the baselines' blocks are checked in both); as
 * run_rep of bench/suite/case_alloc.c. */
static void run_rep(bc_ctx &c, batch &b, int r) {
  u32 n = b.n;
  u64 *ptrs = dev_alloc<u64>(n);
  unsigned char *arena = dev_alloc<unsigned char>((size_t)n * b.size);
  u32 *top = dev_alloc<u32>(1), *errors = dev_alloc<u32>(1);
  std::vector<u64> host(n);
  char what[160];
  snprintf(what, sizeof what, "%s S=%u N=%u %s", b.case_name, b.size, n, b.param.c_str());
  b.failed = true;
  double t_m = launch(c, k_malloc, n, 0, 0, ptrs, n, b.size, b.mixed, b.k, b.seed);
  dev_read(host.data(), ptrs, n);
  if (check_blocks(what, host.data(), n, b.size, b.mixed, b.k, b.seed, 1, NULL, NULL) < 0)
    goto done;
  {
    double t_c = launch(c, k_check, n, 0, 0, ptrs, n, errors);
    if (read_u32(errors)) {
      bc_fail("%s: %u blocks lost their contents before free", what, read_u32(errors));
      goto done;
    }
    double t_f = launch(c, k_free_only, n, 0, 0, ptrs, n);
    double t_mf = launch(c, k_malloc_free, n, 0, 0, ptrs, n, b.size, b.mixed, b.k, b.seed);
    dev_read(host.data(), ptrs, n);
    for (u32 i = 0; i < n; i++)
      if (bc_selected(i, b.k) && !host[i]) {
        bc_fail("%s: thread %u got NULL in malloc+free although the heap had room", what, i);
        goto done;
      }
    double t_b = launch(c, k_bump, n, 0, 0, arena, top, ptrs, n, b.size, b.mixed, b.k, b.seed);
    if (read_u32(top) != (u32)b.units) {
      bc_fail("%s: bump pointer at %u granules, %llu expected", what, read_u32(top), b.units);
      goto done;
    }
    double t_p = launch(c, k_prealloc, n, 0, 0, arena, ptrs, n, b.size, b.mixed, b.k, b.seed);
    if (r < 0) {
      dev_read(host.data(), ptrs, n);
      if (check_blocks(what, host.data(), n, b.size, b.mixed, b.k, b.seed, 1, NULL, NULL) < 0)
        goto done;
      if (r == REP_COLD) {
        b.cold_m = t_m;
        b.cold_b = t_b;
      }
    } else {
      b.tm.add(t_m);
      b.tf.add(t_f);
      b.tmf.add(t_mf);
      b.tb.add(t_b);
      b.tp.add(t_p);
      b.tc.add(t_c);
    }
    b.failed = false;
  }
done:
  cudaFree(ptrs);
  cudaFree(arena);
  cudaFree(top);
  cudaFree(errors);
}

static void report_batch(const batch &b) {
  const char *p = b.param.c_str();
  bc_row_series(b.case_name, "malloc", b.size, b.n, p, "time", "ms", b.tm, b.blocks);
  bc_row_series(b.case_name, "free", b.size, b.n, p, "time", "ms", b.tf, b.blocks);
  bc_row_series(b.case_name, "malloc_free", b.size, b.n, p, "time", "ms", b.tmf, b.blocks);
  bc_row_series(b.case_name, "bump", b.size, b.n, p, "time", "ms", b.tb, b.blocks);
  bc_row_series(b.case_name, "prealloc", b.size, b.n, p, "time", "ms", b.tp, b.blocks);
  bc_row_series(b.case_name, "check", b.size, b.n, p, "time", "ms", b.tc, b.blocks);
  if (b.cold_m >= 0) {
    bc_row(b.case_name, "malloc", b.size, b.n, p, "cold", "ms", b.cold_m, b.cold_m, 1, b.blocks);
    bc_row(b.case_name, "bump", b.size, b.n, p, "cold", "ms", b.cold_b, b.cold_b, 1, b.blocks);
  }
  bc_progress(b.case_name,
              "S=%-7u N=%-7u %s malloc %.3f ms free %.3f m+f %.3f | bump %.3f "
              "prealloc %.3f check %.3f | malloc/bump %.1fx",
              b.size, b.n, p, b.tm.best(), b.tf.best(), b.tmf.best(), b.tb.best(), b.tp.best(),
              b.tc.best(), b.tb.best() > 0 ? b.tm.best() / b.tb.best() : 0);
  if (b.cold_m >= 0)
    bc_progress(b.case_name, "S=%-7u N=%-7u %s cold: malloc %.3f ms bump %.3f | malloc/bump %.1fx",
                b.size, b.n, p, b.cold_m, b.cold_b, b.cold_b > 0 ? b.cold_m / b.cold_b : 0);
}

/* The cold figures of a case's shapes, as run_cold of bench/suite/case_alloc.c: each shape
 * on a new heap (bc_heap_fresh: a new context), every kernel launched once over no thread so
 * that no figure holds a kernel's loading (CUDA loads kernels lazily, at their first launch),
 * then one checked repetition whose malloc and bump launches are the cold figures. Shapes
 * reached after the case's time budget are skipped, as in the warm-up. */
static void run_cold(bc_ctx &c, std::vector<batch> &list, double start) {
  for (batch &b : list) {
    if (!bp_budget_left(c.plan, (bc_now_us() - start) / 1e6)) {
      b.skipped = true;
      bc_progress(b.case_name, "S=%-7u N=%-7u %s%sskipped: time budget of %g s spent", b.size, b.n,
                  b.param.c_str(), b.param.empty() ? "" : " ", c.plan->budget_s);
      continue;
    }
    bc_heap_fresh(c);
    batch primer(b.case_name, b.size, 0, b.mixed, b.k, b.seed, b.param.c_str());
    run_rep(c, primer, REP_WARM_UP);
    run_rep(c, b, REP_COLD);
  }
}

/* Repetitions interleaved across the batches of a case, with `cold` the cold figures first
 * (run_cold), a new heap at the start of the warm-up, each shape's warm-up time printed, the
 * time budget (--budget, bp_budget_left) applied: as run_case of bench/suite/case_alloc.c. */
static void run_case(bc_ctx &c, std::vector<batch> &list, bool cold) {
  if (list.empty())
    return;
  double start = bc_now_us();
  if (cold)
    run_cold(c, list, start);
  bc_heap_fresh(c);
  const char *name = list[0].case_name;
  for (int r = REP_WARM_UP; r < c.plan->reps; r++) {
    if (r > 0 && !bp_budget_left(c.plan, (bc_now_us() - start) / 1e6)) {
      bc_progress(name, "time budget of %g s spent after %d timed passes", c.plan->budget_s, r);
      break;
    }
    double t0 = bc_now_us();
    for (batch &b : list) {
      if (r < 0 && !bp_budget_left(c.plan, (bc_now_us() - start) / 1e6)) {
        b.skipped = true;
        bc_progress(name, "S=%-7u N=%-7u %s%sskipped: time budget of %g s spent", b.size, b.n,
                    b.param.c_str(), b.param.empty() ? "" : " ", c.plan->budget_s);
        continue;
      }
      if (b.skipped || (r >= 0 && b.failed))
        continue;
      double t1 = bc_now_us();
      run_rep(c, b, r);
      if (r < 0) /* so that a launch shape that takes long shows which it is */
        bc_progress(name, "warm-up S=%-7u N=%-7u %s%s%.2f s", b.size, b.n, b.param.c_str(),
                    b.param.empty() ? "" : " ", (bc_now_us() - t1) / 1e6);
    }
    if (r >= 0)
      bc_progress(name, "pass %d/%d: %.1f s", r + 1, c.plan->reps, (bc_now_us() - t0) / 1e6);
  }
  for (const batch &b : list)
    if (!b.failed && !b.skipped)
      report_batch(b);
}

void bc_case_throughput(bc_ctx &c) {
  uint32_t sizes[32];
  int count = BP_TAKE(c.plan, bp_throughput_sizes, sizes);
  std::vector<batch> list;
  for (int i = 0; i < count; i++) {
    u32 n = bp_size_wanted(c.plan, sizes[i]) ? bp_items(c.plan, c.heap, sizes[i]) : 0;
    if (n)
      list.emplace_back("throughput", sizes[i], n, 0, 1, 0, "");
  }
  run_case(c, list, true);
}

void bc_case_mixed(bc_ctx &c) {
  uint32_t maxes[32], items[32];
  int nm = BP_TAKE(c.plan, bp_mixed_max, maxes), ni = BP_TAKE(c.plan, bp_mixed_items, items);
  std::vector<batch> list;
  for (int a = 0; a < nm; a++)
    for (int b = 0; b < ni; b++)
      if (items[b] <= c.plan->n_max && (uint64_t)items[b] * maxes[a] <= c.heap / 2)
        list.emplace_back("mixed", maxes[a], items[b], 1, 1, 1, "mixed");
  run_case(c, list, false);
}

void bc_case_divergent(bc_ctx &c) {
  uint32_t ks[32], sizes[32];
  int nk = BP_TAKE(c.plan, bp_divergent_k, ks), ns = BP_TAKE(c.plan, bp_divergent_sizes, sizes);
  std::vector<batch> list;
  for (int a = 0; a < ns; a++) {
    u32 n = bp_size_wanted(c.plan, sizes[a]) ? bp_items(c.plan, c.heap, sizes[a]) : 0;
    for (int b = 0; n && b < nk; b++) {
      char param[16];
      snprintf(param, sizeof param, "%u", ks[b]);
      list.emplace_back("divergent", sizes[a], n, 0, ks[b], 0, param);
    }
  }
  run_case(c, list, false);
}

/* ---- case 7 ---- */

static int check_sums(const u64 *sums, const std::vector<u64> &want, std::vector<u64> &got, u32 n,
                      const char *what) {
  dev_read(got.data(), sums, n);
  for (u32 i = 0; i < n; i++)
    if (got[i] != want[i]) {
      bc_fail("%s: thread %u sums to %llu, %llu expected", what, i, got[i], want[i]);
      return -1;
    }
  return 0;
}

struct wl {
  u32 n;
  std::vector<u64> want;
  u64 total = 0;
  bool failed = false;
  bc_series m_prod, m_cons, m_free, p_prod, p_cons, b_prod, b_cons;
  explicit wl(u32 n_) : n(n_), want(n_) {
    for (u32 i = 0; i < n; i++) {
      u32 d = bc_degree(i, BP_WORKLOAD_AVG);
      u64 s = 0;
      for (u32 j = 0; j < d; j++)
        s += bc_value(i, j);
      want[i] = s;
      total += d;
    }
  }
};

/* One repetition with buffers of its own, as wl_rep of bench/suite/case_workload.c. */
static void wl_rep(bc_ctx &c, wl &w, int r) {
  u32 n = w.n, avg = BP_WORKLOAD_AVG, L = c.plan->local, nb = (n + L - 1) / L;
  u64 total = w.total;
  std::vector<u64> got(n);
  std::vector<u32> counts_host(n);
  u64 *heads = dev_alloc<u64>(n), *sums = dev_alloc<u64>(n);
  u32 *counts = dev_alloc<u32>(n), *out = dev_alloc<u32>((size_t)n * (2 * avg + 1));
  u32 *offsets = dev_alloc<u32>(n), *block_sums = dev_alloc<u32>(nb);
  u32 *tot = dev_alloc<u32>(1), *top = dev_alloc<u32>(1);
  char what[64];
  snprintf(what, sizeof what, "workload N=%u", n);
  size_t shm = (size_t)L * 4;
  w.failed = true;
  double tb = launch(c, k_list_build, n, 0, 0, heads, counts, n, avg);
  dev_read(counts_host.data(), counts, n);
  for (u32 i = 0; i < n; i++)
    if (counts_host[i] == ~0u) {
      bc_fail("%s: thread %u got NULL although the heap had room", what, i);
      goto done;
    }
  {
    double ts = launch(c, k_list_sum, n, 0, 0, (const u64 *)heads, (const u32 *)counts, sums, n);
    if (check_sums(sums, w.want, got, n, what))
      goto done;
    double tf = launch(c, k_list_free, n, 0, 0, heads, n);
    double tp = launch(c, k_wl_count, n, 0, 0, counts, n, avg);
    tp += launch(c, k_scan_local, n, L, shm, (const u32 *)counts, offsets, block_sums, n);
    tp += launch(c, k_scan_blocks, L, L, shm, block_sums, tot, nb);
    tp += launch(c, k_scan_add, n, L, 0, offsets, (const u32 *)block_sums, n);
    tp += launch(c, k_wl_fill, n, 0, 0, out, (const u32 *)offsets, n, avg);
    if (read_u32(tot) != (u32)total) {
      bc_fail("%s: prefix sum total %u, %llu expected", what, read_u32(tot), total);
      goto done;
    }
    double tps = launch(c, k_wl_sum, n, 0, 0, (const u32 *)out, (const u32 *)offsets, sums, n, avg);
    if (check_sums(sums, w.want, got, n, "workload (prefix sum)"))
      goto done;
    double tbp = launch(c, k_wl_bump, n, 0, 0, out, top, offsets, n, avg);
    if (read_u32(top) != (u32)total) {
      bc_fail("%s: bump pointer at %u, %llu expected", what, read_u32(top), total);
      goto done;
    }
    double tbs = launch(c, k_wl_sum, n, 0, 0, (const u32 *)out, (const u32 *)offsets, sums, n, avg);
    if (check_sums(sums, w.want, got, n, "workload (bump pointer)"))
      goto done;
    w.failed = false;
    if (r >= 0) {
      w.m_prod.add(tb);
      w.m_cons.add(ts);
      w.m_free.add(tf);
      w.p_prod.add(tp);
      w.p_cons.add(tps);
      w.b_prod.add(tbp);
      w.b_cons.add(tbs);
    }
  }
done:
  void *all[] = {heads, sums, counts, out, offsets, block_sums, tot, top};
  for (void *p : all)
    cudaFree(p);
}

static void wl_report(const wl &w) {
  u32 n = w.n;
  bc_row_series("workload", "malloc", 4, n, "", "produce", "ms", w.m_prod, w.total);
  bc_row_series("workload", "malloc", 4, n, "", "consume", "ms", w.m_cons, w.total);
  bc_row_series("workload", "malloc", 4, n, "", "free", "ms", w.m_free, w.total);
  bc_row_series("workload", "prefix", 4, n, "", "produce", "ms", w.p_prod, w.total);
  bc_row_series("workload", "prefix", 4, n, "", "consume", "ms", w.p_cons, w.total);
  bc_row_series("workload", "bump", 4, n, "", "produce", "ms", w.b_prod, w.total);
  bc_row_series("workload", "bump", 4, n, "", "consume", "ms", w.b_cons, w.total);
  bc_progress("workload",
              "N=%-7u malloc %.3f ms (+free %.3f), count+scan+fill %.3f ms, bump %.3f ms", n,
              w.m_prod.best(), w.m_free.best(), w.p_prod.best(), w.b_prod.best());
}

void bc_case_workload(bc_ctx &c) {
  uint32_t items[32];
  int count = BP_TAKE(c.plan, bp_workload_items, items);
  std::vector<wl> list;
  for (int i = 0; i < count; i++) {
    uint64_t bound = (uint64_t)items[i] * (2 * BP_WORKLOAD_AVG) * 4 * 2;
    if (items[i] <= c.plan->n_max && bound <= c.heap / 2)
      list.emplace_back(items[i]);
  }
  if (list.empty())
    return;
  bc_heap_fresh(c);
  for (int r = -1; r < c.plan->reps; r++)
    for (wl &w : list)
      if (r < 0 || !w.failed)
        wl_rep(c, w, r);
  for (const wl &w : list)
    if (!w.failed)
      wl_report(w);
}

/* ---- case 8 ---- */

template <typename... P, typename... A>
static void latency(bc_ctx &c, void (*kern)(P...), u32 n, const char *kernel, A... args) {
  u32 local = n < c.plan->local ? n : c.plan->local, grid = (n + local - 1) / local;
  for (int r = 0; r < 10; r++) {
    kern<<<grid, local>>>(args...);
    CK(cudaDeviceSynchronize());
  }
  bc_series enq, fin;
  for (int r = 0; r < c.plan->latency_reps; r++) {
    double t0 = bc_now_us();
    kern<<<grid, local>>>(args...);
    double t1 = bc_now_us();
    CK(cudaDeviceSynchronize());
    enq.add(t1 - t0);
  }
  for (int r = 0; r < c.plan->latency_reps; r++) {
    double t0 = bc_now_us();
    kern<<<grid, local>>>(args...);
    CK(cudaDeviceSynchronize());
    fin.add(bc_now_us() - t0);
  }
  CK(cudaGetLastError());
  bc_row_series("overhead", kernel, 0, n, "cuda", "enqueue", "us", enq, 1);
  bc_row_series("overhead", kernel, 0, n, "cuda", "finish", "us", fin, 1);
  bc_progress("overhead", "%s: median launch %.1f us, launch + synchronize %.1f us", kernel,
              enq.median(), fin.median());
}

void bc_case_overhead(bc_ctx &c) {
  uint64_t heap = c.heap;
  c.heap = (uint64_t)8 << 20; /* CUDA's default, and the OpenCL suite's case 8 heap */
  bc_heap_fresh(c);
  u32 n = BP_OVERHEAD_ITEMS;
  u32 *out = dev_alloc<u32>(n);
  latency(c, k_noalloc, n, "noalloc", out, n);
  latency(c, k_overhead_alloc, n, "alloc", out, n);
  std::vector<u32> host(n);
  dev_read(host.data(), out, n);
  for (u32 i = 0; i < n; i++)
    if (host[i] != i) {
      bc_fail("overhead: k_overhead_alloc thread %u read %u", i, host[i]);
      break;
    }
  cudaFree(out);
  c.heap = heap;
  bc_heap_fresh(c);
}

/* ---- cases 4 and 6 ---- */

struct fill_bufs {
  u64 *heads, *ptrs;
  u32 *counts, *errors;
  u32 items;
  std::vector<u32> host;
};

static void fill_open(bc_ctx &c, fill_bufs &f) {
  f.items = c.plan->fill_items;
  f.heads = dev_alloc<u64>(f.items);
  f.ptrs = dev_alloc<u64>(f.items);
  f.counts = dev_alloc<u32>(f.items);
  f.errors = dev_alloc<u32>(1);
  f.host.resize(f.items);
}

static void fill_close(fill_bufs &f) {
  cudaFree(f.heads);
  cudaFree(f.ptrs);
  cudaFree(f.counts);
  cudaFree(f.errors);
}

static u64 sum_counts(fill_bufs &f) {
  dev_read(f.host.data(), f.counts, f.items);
  u64 s = 0;
  for (u32 v : f.host)
    s += v;
  return s;
}

static int free_fill(bc_ctx &c, fill_bufs &f, u64 blocks, double *ms, const char *what) {
  *ms = launch(c, k_fill_free, f.items, 0, 0, f.heads, f.counts, f.items);
  u64 freed = sum_counts(f);
  if (freed != blocks) {
    bc_fail("%s: %llu blocks freed of %llu", what, freed, blocks);
    return -1;
  }
  return 0;
}

void bc_case_utilisation(bc_ctx &c) {
  uint32_t sizes[32];
  int count = BP_TAKE(c.plan, bp_util_sizes, sizes);
  int reps = c.plan->reps < 2 ? c.plan->reps : 2;
  for (int i = 0; i < count; i++) {
    bc_heap_fresh(c);
    fill_bufs f;
    fill_open(c, f);
    u32 size = sizes[i], limit = 0;
    char what[64];
    snprintf(what, sizeof what, "utilisation S=%u", size);
    bc_series tfill, tfree, frac;
    u64 blocks = 0;
    int ok = 1;
    for (int r = -1; r < reps && ok; r++) {
      double t_fill = launch(c, k_fill, f.items, 0, 0, f.heads, f.counts, f.items, size, limit);
      u64 got = sum_counts(f);
      double t_free;
      ok = free_fill(c, f, got, &t_free, what) == 0;
      if (r < 0 || !ok)
        continue;
      blocks = got;
      tfill.add(t_fill);
      tfree.add(t_free);
      frac.add((double)got * size / (double)c.heap);
    }
    fill_close(f);
    if (!ok)
      continue;
    bc_row("utilisation", "fill", size, f.items, "", "utilisation", "fraction", frac.best(),
           frac.median(), (int)frac.v.size(), blocks);
    bc_row_series("utilisation", "fill", size, f.items, "", "time", "ms", tfill, blocks);
    bc_row_series("utilisation", "fill_free", size, f.items, "", "time", "ms", tfree, blocks);
    bc_progress("utilisation", "S=%-7u %llu blocks = %.1f %% of the %llu MiB heap, fill %.2f ms",
                size, blocks, 100 * frac.best(), (unsigned long long)(c.heap >> 20), tfill.best());
  }
}

void bc_case_oom(bc_ctx &c) {
  bc_heap_fresh(c); /* once: the rounds recover capacity by frees alone */
  fill_bufs f;
  fill_open(c, f);
  uint32_t sizes[32];
  int count = BP_TAKE(c.plan, bp_oom_sizes, sizes);
  u64 first_bytes[32] = {0};
  u32 no_round = 0, limit = 0;
  std::vector<u64> host(f.items);
  for (int r = 0; r < count; r++) {
    u32 size = sizes[r];
    char what[64], param[16];
    snprintf(what, sizeof what, "oom round %d S=%u", r, size);
    snprintf(param, sizeof param, "%d", r);
    double t_fill = launch(c, k_fill, f.items, 0, 0, f.heads, f.counts, f.items, size, limit);
    u64 got = sum_counts(f), late = 0;
    bc_series tfail;
    for (int rep = -1; rep < c.plan->reps; rep++) {
      double t = launch(c, k_malloc, f.items, 0, 0, f.ptrs, f.items, size, 0u, 1u, 0u);
      dev_read(host.data(), f.ptrs, f.items);
      u64 now = 0;
      for (u64 p : host)
        now += p != 0;
      if (now)
        launch(c, k_free, f.items, 0, 0, f.ptrs, f.items, no_round, f.errors);
      late += now;
      if (rep >= 0)
        tfail.add(t);
    }
    double t_free;
    if (free_fill(c, f, got, &t_free, what))
      break;
    u64 bytes = got * size;
    int first = r;
    for (int j = 0; j < r; j++)
      if (sizes[j] == size) {
        first = j;
        break;
      }
    if (first == r)
      first_bytes[r] = bytes;
    double recovered = first_bytes[first] ? (double)bytes / (double)first_bytes[first] : 0;
    double obtained = (double)bytes / (double)c.heap;
    bc_row("oom", "fill", size, f.items, param, "obtained", "fraction", obtained, obtained, 1, got);
    bc_row("oom", "fill", size, f.items, param, "recovered", "fraction", recovered, recovered, 1,
           got);
    bc_row("oom", "malloc_full", size, f.items, param, "late_successes", "count", (double)late,
           (double)late, (int)tfail.v.size() + 1, f.items);
    bc_row("oom", "fill", size, f.items, param, "time", "ms", t_fill, t_fill, 1, got);
    bc_row_series("oom", "malloc_full", size, f.items, param, "time", "ms", tfail, f.items);
    bc_progress("oom",
                "round %d S=%-5u obtained %.1f %% of the heap (%.3f of round %d), %u failing "
                "mallocs %.3f ms, %llu late successes",
                r, size, 100 * obtained, recovered, first, f.items, tfail.best(), late);
  }
  fill_close(f);
}

/* ---- case 5 ---- */

static void frag_row(const char *kernel, u32 n, int round, const char *metric, const char *unit,
                     double v) {
  char param[16];
  snprintf(param, sizeof param, "%d", round);
  bc_row("fragmentation", kernel, BP_FRAG_MAX, n, param, metric, unit, v, v, 1, n);
}

/* fill_one: rounds of n mallocs of BP_FILL_ONE_SIZE bytes, all kept, until half a round fails
 * (the suite's case_frag.c does the same through the layer). */
static void fill_one(bc_ctx &c, u32 n, int rounds) {
  u32 size = BP_FILL_ONE_SIZE, no_round = 0;
  u64 fit = c.heap / ((u64)n * size); /* rounds the heap holds, and the full one */
  if ((u64)rounds < fit + 2)
    rounds = (int)fit + 2;
  std::vector<u64> host(n);
  bc_heap_fresh(c);
  u32 *errors = dev_alloc<u32>(1);
  std::vector<u64 *> rp;
  u64 live_bytes = 0;
  double t_first = 0, t_last = 0, fill_last = 0;
  int ok = 1;
  double start = bc_now_us();
  for (int r = 0; r < rounds && bp_budget_left(c.plan, (bc_now_us() - start) / 1e6); r++) {
    u32 seed = 2000u + (u32)r;
    rp.push_back(dev_alloc<u64>(n));
    double fill = (double)live_bytes / (double)c.heap;
    double t = launch(c, k_malloc, n, 0, 0, rp[r], n, size, 0u, 1u, seed);
    dev_read(host.data(), rp[r], n);
    u64 nulls = 0, rlo = 0, rhi = 0;
    for (u64 p : host)
      nulls += p == 0;
    if (check_blocks("fragmentation fill_one", host.data(), n, size, 0, 1, seed, 0, &rlo, &rhi) <
        0) {
      ok = 0;
      break;
    }
    live_bytes += (n - nulls) * (u64)size;
    char param[16];
    snprintf(param, sizeof param, "%d", r);
    bc_row("fragmentation", "fill_one", size, n, param, "malloc_time", "ms", t, t, 1, n);
    bc_row("fragmentation", "fill_one", size, n, param, "fill", "fraction", fill, fill, 1, n);
    bc_row("fragmentation", "fill_one", size, n, param, "nulls", "count", (double)nulls,
           (double)nulls, 1, n);
    if (r == 0)
      t_first = t;
    t_last = t;
    fill_last = fill;
    if (nulls >= n / 2)
      break;
  }
  if (ok) {
    std::vector<block> live;
    for (size_t r = 0; r < rp.size(); r++) {
      dev_read(host.data(), rp[r], n);
      for (u32 i = 0; i < n; i++)
        if (host[i])
          live.push_back(block{host[i], size});
    }
    ok = check_disjoint("fragmentation fill_one (blocks kept)", live) == 0;
  }
  for (u64 *p : rp) {
    launch(c, k_free, n, 0, 0, p, n, no_round, errors);
    cudaFree(p);
  }
  if (ok && read_u32(errors))
    bc_fail("fragmentation fill_one: blocks lost their contents before free");
  else if (ok)
    bc_progress("fragmentation",
                "fill_one: %zu rounds of %u B, heap %.0f %% full before the last, malloc "
                "%.3f ms in round 0, %.3f ms in the last (%.2fx)",
                rp.size(), size, 100 * fill_last, t_first, t_last,
                t_first > 0 ? t_last / t_first : 0);
  cudaFree(errors);
}

void bc_case_fragmentation(bc_ctx &c) {
  u32 n;
  int steady_rounds, fill_rounds;
  bp_frag(c.plan, &n, &steady_rounds, &fill_rounds);
  u32 smax = BP_FRAG_MAX, no_round = 0;
  std::vector<u64> host(n);
  /* steady */
  bc_heap_fresh(c);
  u32 *errors = dev_alloc<u32>(1);
  u64 *ptrs = dev_alloc<u64>(n), lo = ~0ull, hi = 0;
  double first = 0, last = 0;
  int ok = 1;
  double start = bc_now_us();
  for (int r = 0; r < steady_rounds && ok && bp_budget_left(c.plan, (bc_now_us() - start) / 1e6);
       r++) {
    u32 seed = (u32)r;
    double t = launch(c, k_malloc, n, 0, 0, ptrs, n, smax, 1u, 1u, seed);
    dev_read(host.data(), ptrs, n);
    u64 rlo, rhi;
    if (check_blocks("fragmentation steady", host.data(), n, smax, 1, 1, seed, 1, &rlo, &rhi) < 0) {
      ok = 0;
      break;
    }
    lo = std::min(lo, rlo);
    hi = std::max(hi, rhi);
    double tf = launch(c, k_free, n, 0, 0, ptrs, n, no_round, errors);
    if (read_u32(errors)) {
      bc_fail("fragmentation steady: blocks lost their contents before free");
      ok = 0;
      break;
    }
    frag_row("steady", n, r, "malloc_time", "ms", t);
    frag_row("steady", n, r, "free_time", "ms", tf);
    frag_row("steady", n, r, "span", "bytes", (double)(hi - lo));
    frag_row("steady", n, r, "round_span", "bytes", (double)(rhi - rlo));
    if (r == 0)
      first = (double)(hi - lo);
    last = (double)(hi - lo);
  }
  cudaFree(ptrs);
  if (ok)
    bc_progress("fragmentation",
                "steady: range touched %.2f MiB after round 0, %.2f MiB after "
                "round %d",
                first / 1048576, last / 1048576, steady_rounds - 1);
  /* before fill_one: its fresh heap resets the device, after which this pointer is no
   * allocation, and the error of freeing it then stayed as CUDA's last error until the next
   * launch's check (the mixed fill's first launch stopped the program: "invalid argument") */
  cudaFree(errors);
  if (ok)
    fill_one(c, n, fill_rounds);
  /* fill */
  bc_heap_fresh(c);
  errors = dev_alloc<u32>(1);
  std::vector<u64 *> rp;
  u64 live_bytes = 0;
  lo = ~0ull;
  hi = 0;
  double t_first = 0, t_last = 0, fill_last = 0;
  start = bc_now_us();
  for (int r = 0; r < fill_rounds && ok && bp_budget_left(c.plan, (bc_now_us() - start) / 1e6);
       r++) {
    u32 seed = 1000u + (u32)r, keep = (u32)r + 1;
    rp.push_back(dev_alloc<u64>(n));
    double fill = (double)live_bytes / (double)c.heap;
    double t = launch(c, k_malloc, n, 0, 0, rp[r], n, smax, 1u, 1u, seed);
    dev_read(host.data(), rp[r], n);
    u64 nulls = 0, rlo = 0, rhi = 0;
    for (u64 p : host)
      nulls += p == 0;
    long got = check_blocks("fragmentation fill", host.data(), n, smax, 1, 1, seed, 0, &rlo, &rhi);
    if (got < 0) {
      ok = 0;
      break;
    }
    if (got) {
      lo = std::min(lo, rlo);
      hi = std::max(hi, rhi);
    }
    double tf = launch(c, k_free, n, 0, 0, rp[r], n, keep, errors);
    if (read_u32(errors)) {
      bc_fail("fragmentation fill: blocks lost their contents before free");
      ok = 0;
      break;
    }
    dev_read(host.data(), rp[r], n);
    for (u32 i = 0; i < n; i++)
      if (host[i])
        live_bytes += bc_size(i, smax, 1, seed);
    frag_row("fill", n, r, "malloc_time", "ms", t);
    frag_row("fill", n, r, "free_time", "ms", tf);
    frag_row("fill", n, r, "fill", "fraction", fill);
    frag_row("fill", n, r, "span", "bytes", (double)(hi - lo));
    frag_row("fill", n, r, "nulls", "count", (double)nulls);
    if (r == 0)
      t_first = t;
    t_last = t;
    fill_last = fill;
    if (nulls >= n / 2)
      break;
  }
  if (ok) {
    std::vector<block> live;
    for (size_t r = 0; r < rp.size(); r++) {
      dev_read(host.data(), rp[r], n);
      for (u32 i = 0; i < n; i++)
        if (host[i])
          live.push_back(block{host[i], bc_size(i, smax, 1, 1000u + (u32)r)});
    }
    ok = check_disjoint("fragmentation fill (blocks kept)", live) == 0;
  }
  for (u64 *p : rp) {
    launch(c, k_free, n, 0, 0, p, n, no_round, errors);
    cudaFree(p);
  }
  if (ok)
    bc_progress("fragmentation",
                "fill: %zu rounds, heap %.0f %% full before the last, malloc "
                "%.3f ms in round 0, %.3f ms in the last (%.2fx)",
                rp.size(), 100 * fill_last, t_first, t_last, t_first > 0 ? t_last / t_first : 0);
  cudaFree(errors);
}
