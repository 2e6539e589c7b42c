/*
 * bench_plan.h — what the benchmark suite runs, shared by the OpenCL suite (bench/suite) and
 * the CUDA program (bench/cuda) so that both run the same cases with the same parameters: the
 * scale (quick, medium, full), the heap sizes taken from the device's limits, the work-item
 * count of a launch for a block size, and every case's parameter lists. Host code only (C11
 * or C++).
 */
#ifndef BENCH_PLAN_H
#define BENCH_PLAN_H

#include <stdint.h>
#include <string.h>

enum { BP_QUICK = 0, BP_MEDIUM = 1, BP_FULL = 2 };

/* Largest main heap of a run: 16 GiB, so that CUDA's side runs with the same heap (on the H200
 * with driver 580, cudaDeviceSetLimit(cudaLimitMallocHeapSize) keeps at most 17681179680 bytes,
 * 16.47 GiB, whatever is asked). The allocator itself takes up to 64 GiB - 64 KiB (spec 1.2):
 * --heap runs larger ones. */
#define BP_HEAP_CAP ((uint64_t)16 << 30)
#define BP_MIN_ITEMS 32u

typedef struct bp_plan {
  int scale;
  uint64_t heap;       /* heap of cases 1-3 and 7 (case 8 uses the default 8 MiB) */
  uint64_t fill_heap;  /* heap of cases 4-6 (filled up to the last block, so smaller) */
  uint32_t n_max;      /* largest launch, in work-items */
  uint32_t fill_items; /* work-items of the launches that fill the heap (cases 4 and 6) */
  int reps;            /* timed repetitions of each measurement, after one untimed warm-up */
  int latency_reps;    /* case 8: launches timed for each latency figure */
  int create_reps;     /* case 8: program creations timed */
  uint32_t local;      /* work-group (block) size of every launch */
  double budget_s;     /* cases 1-3: seconds a case may take (0: no limit); see bp_budget_* */
  uint32_t max_size;   /* cases 1 and 3: block sizes above it are not run (0: no limit) */
} bp_plan;

static inline const char *bp_scale_name(int scale) {
  return scale == BP_QUICK ? "quick" : scale == BP_MEDIUM ? "medium" : "full";
}

/* BP_QUICK/BP_MEDIUM/BP_FULL for "quick"/"medium"/"full", -1 otherwise. */
static inline int bp_scale_parse(const char *s) {
  return !strcmp(s, "quick")    ? BP_QUICK
         : !strcmp(s, "medium") ? BP_MEDIUM
         : !strcmp(s, "full")   ? BP_FULL
                                : -1;
}

static inline uint64_t bp_pow2_floor(uint64_t x) {
  uint64_t p = 1;
  while (x >= 2 * p)
    p *= 2;
  return x ? p : 0;
}

static inline uint64_t bp_min(uint64_t a, uint64_t b) { return a < b ? a : b; }

/* The plan for `scale` on a device whose largest buffer is max_alloc bytes and whose memory
 * is global_mem bytes: the main heap is the largest power of two within max_alloc, a quarter
 * of global_mem and 16 GiB (capped at 64 MiB quick, 1 GiB medium); heap / fill_heap, when not
 * 0, replace the computed sizes. */
static inline void bp_plan_init(bp_plan *p, int scale, uint64_t max_alloc, uint64_t global_mem,
                                uint64_t heap, uint64_t fill_heap) {
  uint64_t cap = bp_pow2_floor(bp_min(bp_min(max_alloc, global_mem / 4), BP_HEAP_CAP));
  memset(p, 0, sizeof *p);
  p->scale = scale;
  p->local = 256;
  if (scale == BP_QUICK) {
    p->heap = bp_min(cap, (uint64_t)64 << 20);
    p->fill_heap = bp_min(cap, (uint64_t)16 << 20);
    p->n_max = 1u << 14;
    p->fill_items = 1u << 12;
    p->reps = 2;
    p->latency_reps = 100;
    p->create_reps = 3;
  } else if (scale == BP_MEDIUM) {
    p->heap = bp_min(cap, (uint64_t)1 << 30);
    p->fill_heap = bp_min(cap, (uint64_t)128 << 20);
    p->n_max = 1u << 18;
    p->fill_items = 1u << 14;
    p->reps = 3;
    p->latency_reps = 300;
    p->create_reps = 10;
  } else {
    p->heap = cap;
    p->fill_heap = bp_min(cap, (uint64_t)1 << 30);
    p->n_max = 1u << 20;
    p->fill_items = 1u << 16;
    p->reps = 5;
    p->latency_reps = 1000;
    p->create_reps = 20;
  }
  if (heap)
    p->heap = heap;
  if (fill_heap)
    p->fill_heap = fill_heap;
}

/* Work-items of a launch in which each allocates `size` bytes from a heap of `heap` bytes:
 * n_max, halved until the blocks take at most half the heap (room for the allocator's
 * rounding and metadata); 0 (skip the case) below BP_MIN_ITEMS. */
static inline uint32_t bp_items(const bp_plan *p, uint64_t heap, uint64_t size) {
  uint64_t n = p->n_max;
  while (n >= BP_MIN_ITEMS && n * size > heap / 2)
    n /= 2;
  return n >= BP_MIN_ITEMS ? (uint32_t)n : 0;
}

/* The time budget of cases 1-3 (--budget): a soft limit for programs whose allocator takes
 * minutes at some launch shapes (CUDA's malloc at 2^20 threads), so that a case reports the
 * shapes and repetitions it managed instead of nothing. The warm-up pass runs the shapes in
 * order and skips those it reaches after `spent` seconds passed the budget; the first timed
 * pass always runs (every reported figure has at least one timed repetition), later passes
 * only while the case is inside its budget. A launch already running is never cut short. */
static inline int bp_budget_left(const bp_plan *p, double spent_s) {
  return p->budget_s <= 0 || spent_s < p->budget_s;
}

/* A parameter list entry: the value, and whether quick runs include it. */
typedef struct bp_entry {
  uint32_t value;
  int quick;
} bp_entry;

/* 1 if cases 1 and 3 run blocks of `size` bytes (--max-size). */
static inline int bp_size_wanted(const bp_plan *p, uint32_t size) {
  return !p->max_size || size <= p->max_size;
}

/* Copies the entries of `list` the scale runs into out (at most 32); returns the count. */
static inline int bp_take(const bp_plan *p, const bp_entry *list, int count, uint32_t *out) {
  int n = 0;
  for (int i = 0; i < count && n < 32; i++)
    if (p->scale != BP_QUICK || list[i].quick)
      out[n++] = list[i].value;
  return n;
}
#define BP_TAKE(plan, list, out)                                                                   \
  bp_take((plan), (list), (int)(sizeof(list) / sizeof((list)[0])), (out))

/* Case 1, throughput: block sizes (16 B - 4 KiB at up to n_max work-items, then 8 KiB - 1 MiB
 * at the work-items the heap allows). */
static const bp_entry bp_throughput_sizes[] = {
    {16, 1},    {32, 0},     {64, 1},     {128, 0},    {256, 1},    {512, 0},
    {1024, 1},  {2048, 0},   {4096, 1},   {8192, 0},   {16384, 0},  {32768, 0},
    {65536, 1}, {131072, 0}, {262144, 0}, {524288, 0}, {1048576, 1}};

/* Case 2, mixed sizes: the largest size of the range [16, size_max], and launch sizes. */
static const bp_entry bp_mixed_max[] = {{256, 0}, {4096, 1}};
static const bp_entry bp_mixed_items[] = {{1u << 10, 1}, {1u << 12, 1}, {1u << 14, 1},
                                          {1u << 16, 0}, {1u << 18, 0}, {1u << 20, 0}};

/* Case 3, divergent callers: every k-th work-item allocates; block sizes. */
static const bp_entry bp_divergent_k[] = {{1, 1}, {2, 1}, {8, 1}, {32, 1}};
static const bp_entry bp_divergent_sizes[] = {{64, 1}, {4096, 0}};

/* Case 4, utilisation: block sizes allocated until the heap is full. */
static const bp_entry bp_util_sizes[] = {{16, 1},    {64, 0},     {256, 1},
                                         {1024, 0},  {4096, 1},   {16384, 0},
                                         {65536, 1}, {262144, 0}, {1048576, 1}};

/* Case 5, fragmentation: sizes in [16, BP_FRAG_MAX]; rounds with everything freed (steady)
 * and rounds that keep half their blocks until the heap is full (fill). */
#define BP_FRAG_MAX 1024u
static inline void bp_frag(const bp_plan *p, uint32_t *items, int *steady_rounds,
                           int *fill_rounds) {
  /* about 24 rounds of half the blocks kept fill the heap */
  uint64_t avg = (16u + BP_FRAG_MAX) / 2;
  uint64_t n = bp_pow2_floor(p->fill_heap / (avg / 2 * 24));
  if (n > p->n_max)
    n = p->n_max;
  if (n < 256)
    n = 256;
  *items = (uint32_t)n;
  *steady_rounds = p->scale == BP_QUICK ? 4 : 8;
  *fill_rounds = p->scale == BP_QUICK ? 16 : 48;
}

/* Case 5's one-size fill: rounds of the same number of mallocs of BP_FILL_ONE_SIZE bytes, all
 * kept, until half a round fails (about 32 rounds fill the heap; as many as it holds, + 2): how
 * an allocator slows down as one size class fills its heap, without holes (CUDA's malloc slows
 * down by orders of magnitude). */
#define BP_FILL_ONE_SIZE 256u

/* Case 6, out of memory: block size of each exhaustion round (everything freed in between). */
static const bp_entry bp_oom_sizes[] = {{256, 1}, {256, 1}, {64, 1}, {4096, 1}, {256, 1}};

/* Case 7, list building: launch sizes; average values per work-item. */
#define BP_WORKLOAD_AVG 16u
static const bp_entry bp_workload_items[] = {
    {1u << 12, 1}, {1u << 14, 1}, {1u << 16, 0}, {1u << 18, 0}, {1u << 20, 0}};

/* Case 8, layer overhead: work-items of the latency launches. */
#define BP_OVERHEAD_ITEMS 256u

#endif /* BENCH_PLAN_H */
