/*
 * case_frag.c — case 5 of the suite, fragmentation, on the fill heap, with random sizes in
 * [16, BP_FRAG_MAX]:
 *   steady  rounds of N mallocs then N frees: the address range the blocks touch over the
 *           rounds (an allocator that reuses memory keeps it flat);
 *   fill    rounds of N mallocs of which half are kept (bc_kept), until half a round fails or
 *           the rounds run out: malloc time per round against how full the heap is before it
 *           (the slowdown curve), NULLs, the range touched, bytes in use and pages held after
 *           the round, and its peak (every block of the round live: bytes requested, and bytes
 *           in use by size class, which a round of N blocks of 16 B - 1 KiB raises by about
 *           6 % of a 1 GiB heap);
 *   fill_one  rounds of N mallocs of BP_FILL_ONE_SIZE bytes, all kept, until half a round
 *           fails: the slowdown curve of one size class, without holes.
 * Each round runs once (it changes the heap); with a time budget (--budget) each of the three
 * stops starting rounds once it spent it (CUDA's malloc takes seconds a round as its heap fills). Checks: no NULL in the steady rounds, blocks of
 * a round disjoint, every block kept over the fill rounds disjoint from the others, ids intact
 * at free, the heap empty at the end.
 */
#include <stdlib.h>

#include "suite.h"

#define ARG(x) sizeof(x), (const void *)&(x)

static void row(const char *kernel, uint32_t n, int round, const char *metric, const char *unit,
                double v, uint64_t ops) {
  char param[16];
  snprintf(param, sizeof param, "%d", round);
  bs_row r = {kernel, BP_FRAG_MAX, n, param, metric, unit, v, v, 1, ops};
  bs_out_row("fragmentation", &r);
}

/* A row of the one-size fill (its size in the size column). */
static void row1(uint32_t size, uint32_t n, int round, const char *metric, const char *unit,
                 double v) {
  char param[16];
  snprintf(param, sizeof param, "%d", round);
  bs_row r = {"fill_one", size, n, param, metric, unit, v, v, 1, n};
  bs_out_row("fragmentation", &r);
}

static int check_errors(bs_session *s, cl_mem errors, const char *what) {
  uint32_t e = bs_read_u32(s, errors);
  if (e)
    bs_fail("%s: %u blocks lost their contents before free", what, e);
  return e ? -1 : 0;
}

static void steady(bs_session *s, uint32_t n, int rounds, cl_mem errors, uint64_t *host) {
  cl_kernel km = bs_kernel(s, "k_malloc"), kf = bs_kernel(s, "k_free");
  uint32_t smax = BP_FRAG_MAX, mixed = 1, k = 1, no_round = 0;
  cl_mem ptrs = bs_buffer(s, (size_t)n * 8);
  uint64_t lo = UINT64_MAX, hi = 0;
  double first = 0, last = 0;
  double start = bs_now_us();
  bs_heap_reset(s);
  bs_fill_zero(s, errors, 4);
  for (int r = 0; r < rounds && bp_budget_left(s->plan, (bs_now_us() - start) / 1e6); r++) {
    uint32_t seed = (uint32_t)r;
    bs_args(km, ARG(ptrs), ARG(n), ARG(smax), ARG(mixed), ARG(k), ARG(seed), (size_t)0);
    double t = bs_launch(s, km, n, 0);
    bs_read(s, ptrs, (size_t)n * 8, host);
    uint64_t rlo, rhi;
    if (bs_check_blocks("fragmentation steady", host, n, smax, mixed, k, seed, 1, &rlo, &rhi) < 0)
      goto done;
    lo = rlo < lo ? rlo : lo;
    hi = rhi > hi ? rhi : hi;
    bs_args(kf, ARG(ptrs), ARG(n), ARG(no_round), ARG(errors), (size_t)0);
    double tf = bs_launch(s, kf, n, 0);
    if (check_errors(s, errors, "fragmentation steady") ||
        bs_check_heap_empty(s, "fragmentation steady", 1))
      goto done;
    row("steady", n, r, "malloc_time", "ms", t, n);
    row("steady", n, r, "free_time", "ms", tf, n);
    row("steady", n, r, "span", "bytes", (double)(hi - lo), n);
    row("steady", n, r, "round_span", "bytes", (double)(rhi - rlo), n);
    if (r == 0)
      first = (double)(hi - lo);
    last = (double)(hi - lo);
  }
  bs_progress("fragmentation",
              "steady: %d rounds of %u blocks (16-%u B) malloc + free: range "
              "touched %.2f MiB after round 0, %.2f MiB after round %d (%.2fx)",
              rounds, n, smax, first / 1048576, last / 1048576, rounds - 1,
              first > 0 ? last / first : 0);
done:
  clReleaseMemObject(ptrs);
}

static void fill_rounds(bs_session *s, uint32_t n, int rounds, cl_mem errors, uint64_t *host) {
  cl_kernel km = bs_kernel(s, "k_malloc"), kf = bs_kernel(s, "k_free");
  uint32_t smax = BP_FRAG_MAX, mixed = 1, k = 1;
  cl_mem *rp = calloc((size_t)rounds, sizeof *rp);
  bs_block *live = NULL;
  uint64_t lo = UINT64_MAX, hi = 0, live_bytes = 0;
  double t_first = 0, t_last = 0, fill_last = 0, null_peak = 0, null_peak_in_use = 0;
  int done_rounds = 0, ok = 1, first_null = -1;
  double start = bs_now_us();
  bs_heap_reset(s);
  bs_fill_zero(s, errors, 4);
  for (int r = 0; r < rounds && bp_budget_left(s->plan, (bs_now_us() - start) / 1e6); r++) {
    uint32_t seed = 1000u + (uint32_t)r, keep = (uint32_t)r + 1;
    rp[r] = bs_buffer(s, (size_t)n * 8);
    double fill = (double)live_bytes / (double)s->heap_usable;
    bs_args(km, ARG(rp[r]), ARG(n), ARG(smax), ARG(mixed), ARG(k), ARG(seed), (size_t)0);
    double t = bs_launch(s, km, n, 0);
    bs_read(s, rp[r], (size_t)n * 8, host);
    uint64_t rlo = 0, rhi = 0, nulls = 0, round_bytes = 0;
    for (uint32_t i = 0; i < n; i++) {
      nulls += host[i] == 0;
      round_bytes += host[i] ? bc_size(i, smax, mixed, seed) : 0;
    }
    /* the round's peak: every block of it still live (half are freed below) */
    double peak = (double)(live_bytes + round_bytes) / (double)s->heap_usable;
    double peak_in_use =
        (double)bs_heap_info(s, CL_DEVICE_HEAP_INFO_BYTES_IN_USE_EXT) / (double)s->heap_usable;
    if (nulls && first_null < 0) {
      first_null = r;
      null_peak = peak;
      null_peak_in_use = peak_in_use;
    }
    long got = bs_check_blocks("fragmentation fill", host, n, smax, mixed, k, seed, 0, &rlo, &rhi);
    if (got < 0) {
      ok = 0;
      break;
    }
    if (got) {
      lo = rlo < lo ? rlo : lo;
      hi = rhi > hi ? rhi : hi;
    }
    bs_args(kf, ARG(rp[r]), ARG(n), ARG(keep), ARG(errors), (size_t)0);
    double tf = bs_launch(s, kf, n, 0);
    if (check_errors(s, errors, "fragmentation fill")) {
      ok = 0;
      break;
    }
    bs_read(s, rp[r], (size_t)n * 8, host);
    for (uint32_t i = 0; i < n; i++)
      if (host[i])
        live_bytes += bc_size(i, smax, mixed, seed);
    cl_ulong in_use = bs_heap_info(s, CL_DEVICE_HEAP_INFO_BYTES_IN_USE_EXT);
    cl_ulong held = bs_heap_info(s, CL_DEVICE_HEAP_INFO_BYTES_HELD_EXT);
    row("fill", n, r, "malloc_time", "ms", t, n);
    row("fill", n, r, "free_time", "ms", tf, n);
    row("fill", n, r, "fill", "fraction", fill, n);
    row("fill", n, r, "span", "bytes", (double)(hi - lo), n);
    row("fill", n, r, "nulls", "count", (double)nulls, n);
    row("fill", n, r, "in_use", "fraction", (double)in_use / (double)s->heap_usable, n);
    row("fill", n, r, "held", "fraction", (double)held / (double)s->heap_usable, n);
    row("fill", n, r, "peak_fill", "fraction", peak, n);
    row("fill", n, r, "peak_in_use", "fraction", peak_in_use, n);
    if (r == 0)
      t_first = t;
    t_last = t;
    fill_last = fill;
    done_rounds = r + 1;
    if (nulls >= n / 2)
      break;
  }
  /* every block still held, over all rounds, disjoint from the others */
  size_t count = 0;
  if (ok) {
    live = malloc((size_t)done_rounds * n * sizeof *live + 1);
    for (int r = 0; r < done_rounds; r++) {
      bs_read(s, rp[r], (size_t)n * 8, host);
      for (uint32_t i = 0; i < n; i++)
        if (host[i])
          live[count++] = (bs_block){host[i], bc_size(i, smax, mixed, 1000u + (uint32_t)r)};
    }
    ok = bs_check_disjoint("fragmentation fill (blocks kept)", live, count) == 0;
  }
  uint32_t no_round = 0;
  for (int r = 0; r < rounds && rp[r]; r++) {
    bs_args(kf, ARG(rp[r]), ARG(n), ARG(no_round), ARG(errors), (size_t)0);
    bs_launch(s, kf, n, 0);
    clReleaseMemObject(rp[r]);
  }
  if (ok && !check_errors(s, errors, "fragmentation fill"))
    ok = bs_check_heap_empty(s, "fragmentation fill", 0) == 0;
  if (ok)
    bs_progress("fragmentation",
                "fill: %d rounds of %u blocks keeping half: heap %.0f %% full "
                "before the last, malloc %.3f ms in round 0, %.3f ms in the last (%.2fx), "
                "range touched %.1f %% of the heap",
                done_rounds, n, 100 * fill_last, t_first, t_last,
                t_first > 0 ? t_last / t_first : 0,
                100.0 * (double)(hi - lo) / (double)s->heap_usable);
  if (ok && first_null >= 0)
    bs_progress("fragmentation",
                "fill: first NULL in round %d, whose blocks took the heap to %.1f %% full in bytes "
                "requested, %.1f %% in use (size classes) before its frees",
                first_null, 100 * null_peak, 100 * null_peak_in_use);
  free(live);
  free(rp);
}

static void fill_one_rounds(bs_session *s, uint32_t n, int rounds, cl_mem errors, uint64_t *host) {
  cl_kernel km = bs_kernel(s, "k_malloc"), kf = bs_kernel(s, "k_free");
  uint32_t size = BP_FILL_ONE_SIZE, mixed = 0, k = 1, no_round = 0;
  uint64_t fit = s->heap_usable / ((uint64_t)n * size); /* rounds the heap holds, + the full one */
  if ((uint64_t)rounds < fit + 2)
    rounds = (int)fit + 2;
  cl_mem *rp = calloc((size_t)rounds, sizeof *rp);
  bs_block *live = NULL;
  uint64_t live_bytes = 0;
  double t_first = 0, t_last = 0, fill_last = 0;
  int done_rounds = 0, ok = 1;
  double start = bs_now_us();
  bs_heap_reset(s);
  bs_fill_zero(s, errors, 4);
  for (int r = 0; r < rounds && bp_budget_left(s->plan, (bs_now_us() - start) / 1e6); r++) {
    uint32_t seed = 2000u + (uint32_t)r;
    rp[r] = bs_buffer(s, (size_t)n * 8);
    double fill = (double)live_bytes / (double)s->heap_usable;
    bs_args(km, ARG(rp[r]), ARG(n), ARG(size), ARG(mixed), ARG(k), ARG(seed), (size_t)0);
    double t = bs_launch(s, km, n, 0);
    bs_read(s, rp[r], (size_t)n * 8, host);
    uint64_t rlo = 0, rhi = 0, nulls = 0;
    for (uint32_t i = 0; i < n; i++)
      nulls += host[i] == 0;
    if (bs_check_blocks("fragmentation fill_one", host, n, size, mixed, k, seed, 0, &rlo, &rhi) <
        0) {
      ok = 0;
      break;
    }
    live_bytes += (uint64_t)(n - nulls) * size;
    row1(size, n, r, "malloc_time", "ms", t);
    row1(size, n, r, "fill", "fraction", fill);
    row1(size, n, r, "nulls", "count", (double)nulls);
    if (r == 0)
      t_first = t;
    t_last = t;
    fill_last = fill;
    done_rounds = r + 1;
    if (nulls >= n / 2)
      break;
  }
  size_t count = 0; /* every block of every round disjoint from the others */
  if (ok) {
    live = malloc((size_t)done_rounds * n * sizeof *live + 1);
    for (int r = 0; r < done_rounds; r++) {
      bs_read(s, rp[r], (size_t)n * 8, host);
      for (uint32_t i = 0; i < n; i++)
        if (host[i])
          live[count++] = (bs_block){host[i], size};
    }
    ok = bs_check_disjoint("fragmentation fill_one (blocks kept)", live, count) == 0;
  }
  for (int r = 0; r < rounds && rp[r]; r++) {
    bs_args(kf, ARG(rp[r]), ARG(n), ARG(no_round), ARG(errors), (size_t)0);
    bs_launch(s, kf, n, 0);
    clReleaseMemObject(rp[r]);
  }
  if (ok && !check_errors(s, errors, "fragmentation fill_one"))
    ok = bs_check_heap_empty(s, "fragmentation fill_one", 0) == 0;
  if (ok)
    bs_progress("fragmentation",
                "fill_one: %d rounds of %u blocks of %u B, all kept: heap %.0f %% full before "
                "the last, malloc %.3f ms in round 0, %.3f ms in the last (%.2fx)",
                done_rounds, n, size, 100 * fill_last, t_first, t_last,
                t_first > 0 ? t_last / t_first : 0);
  free(live);
  free(rp);
}

void bs_case_fragmentation(bs_session *s) {
  uint32_t n;
  int steady_rounds, fill_round_count;
  bp_frag(s->plan, &n, &steady_rounds, &fill_round_count);
  cl_mem errors = bs_buffer(s, 4);
  uint64_t *host = malloc((size_t)n * 8);
  steady(s, n, steady_rounds, errors, host);
  fill_one_rounds(s, n, fill_round_count, errors, host);
  fill_rounds(s, n, fill_round_count, errors, host);
  free(host);
  clReleaseMemObject(errors);
}
