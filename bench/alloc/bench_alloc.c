/*
 * bench_alloc.c — allocation and free rates of the device allocator's 64-bit modules, next to
 * a bump-pointer kernel (one atomic_add per allocation) measured in the same run.
 *
 *   cldm_bench_alloc [work-items = 65536] [repetitions = 5]
 *   (CLDM_BENCH_MODULES=a,b limits the modules, CLDM_BENCH_SIZES=16,64 sets the sizes,
 *   CLDM_BENCH_HEAP=1G makes every heap at least that large: the allocator's shards per class
 *   grow with the heap, cldm_class_shards; CLDM_BENCH_KEEP_HEAP=1 runs every size of a module
 *   on one heap, the largest any of them needs, reset only when it is created, so that each
 *   size finds the heap as the sizes before it left it, as in the suite's cases;
 *   CLDM_BENCH_CENSUS=1 prints what the heap holds after each launch, census.c;
 *   CLDM_BENCH_LOCAL=N launches work-groups of N work-items instead of DT_LOCAL_SIZE (the suite
 *   uses 256); CLDM_BENCH_WRITE=1 times k_malloc_write, which also writes each block's first
 *   word, as the suite's kernels do, instead of k_malloc)
 *
 * For each module and each size (16 B, 256 B, 4 KiB): every work-item of one launch calls
 * cldm_malloc(size) (k_malloc), then every work-item of a second launch frees its pointer
 * (k_free); a third kernel does malloc + free per work-item (k_malloc_free). The heap is reset by
 * an image write before each repetition (not timed), unless CLDM_BENCH_KEEP_HEAP is set. Times
 * are kernel execution times from event profiling, the best of the repetitions; every repetition
 * is checked (no NULL, heap empty afterwards), so a broken allocator cannot report a rate.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "census.h"
#include "cldm_heap_layout.h"
#include "dtest.h"

typedef struct timing {
  double best_s, sum_s;
  int n;
} timing;

static void timing_add(timing *t, double s) {
  if (t->n == 0 || s < t->best_s)
    t->best_s = s;
  t->sum_s += s;
  t->n++;
}

static size_t local_size = DT_LOCAL_SIZE; /* CLDM_BENCH_LOCAL */

/* Runs k for n work-items on a profiling queue; returns the kernel's execution time (s). */
static double run_profiled(cldm_dtest_env *env, cl_command_queue q, cl_kernel k, size_t n) {
  cl_uint nargs, count = (cl_uint)n;
  DT_CHECK(clGetKernelInfo(k, CL_KERNEL_NUM_ARGS, sizeof nargs, &nargs, NULL));
  DT_CHECK(clSetKernelArg(k, nargs - 1, sizeof count, &count));
  size_t local = local_size, global = (n + local - 1) / local * local;
  cl_event ev;
  DT_CHECK(clEnqueueNDRangeKernel(q, k, 1, NULL, &global, &local, 0, NULL, &ev));
  DT_CHECK(clWaitForEvents(1, &ev));
  cl_ulong t0, t1;
  DT_CHECK(clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_START, sizeof t0, &t0, NULL));
  DT_CHECK(clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_END, sizeof t1, &t1, NULL));
  clReleaseEvent(ev);
  (void)env;
  return (double)(t1 - t0) * 1e-9;
}

static size_t count_nulls(cldm_dtest_env *env, cl_mem ptrs, size_t n) {
  uint64_t *p = malloc(n * 8);
  size_t nulls = 0;
  cldm_dtest_read(env, ptrs, n * 8, p);
  for (size_t i = 0; i < n; i++)
    nulls += p[i] == 0;
  free(p);
  return nulls;
}

static void fail_run(const char *what) {
  fprintf(stderr, "cldm_bench_alloc: %s\n", what);
  exit(1);
}

/* The heap for n blocks of `size`: the blocks' class bytes + 1/8 + 16 MiB, at least min_heap. */
static uint64_t heap_bytes_for(size_t n, uint32_t size, uint64_t min_heap) {
  uint64_t need = (uint64_t)n * cldm_class_bytes(cldm_class_of(size));
  uint64_t b = need + need / 8 + (16u << 20);
  return b < min_heap ? min_heap : b;
}

static double rate(size_t n, const timing *t) { return (double)n / t->best_s / 1e6; }

/* CLDM_BENCH_VERBOSE=1: every launch's time on stderr as it ends, so that a launch that takes
 * long (or never ends) shows which it is. CLDM_BENCH_CENSUS=1: what the heap holds after the
 * launches (census.c), read while no kernel runs, outside the timed launches. */
static int verbose, with_census;
static double noted(const char *kernel, cl_uint size, int r, double t) {
  if (verbose)
    fprintf(stderr, "cldm_bench_alloc: %u B repetition %d %s %.3f ms\n", size, r, kernel, t * 1e3);
  return t;
}

static void census(cldm_dtest_env *env, const cldm_dtest_heap *heap, cl_uint size, int r,
                   const char *after) {
  if (!with_census)
    return;
  char when[96];
  snprintf(when, sizeof when, "%u B repetition %d %s", size, r, after);
  cldm_bench_census(env, heap, when);
}

int main(int argc, char **argv) {
  size_t n = argc > 1 ? strtoul(argv[1], NULL, 0) : 65536;
  int reps = argc > 2 ? atoi(argv[2]) : 5;
  uint32_t sizes[16] = {16, 256, 4096};
  size_t num_sizes = 3;
  if (getenv("CLDM_BENCH_SIZES")) { /* e.g. 16,64,256,1024,4096 */
    num_sizes = 0;
    for (const char *p = getenv("CLDM_BENCH_SIZES"); *p && num_sizes < 16;) {
      char *end;
      unsigned long v = strtoul(p, &end, 10);
      if (end == p || v == 0 || v > CLDM_MAX_CLASS_BYTES)
        fail_run("CLDM_BENCH_SIZES: sizes 1..32768, comma-separated");
      sizes[num_sizes++] = (uint32_t)v;
      p = *end == ',' ? end + 1 : end;
    }
  }
  uint64_t min_heap = 0;
  if (getenv("CLDM_BENCH_HEAP")) { /* bytes, K/M/G */
    char *end;
    min_heap = strtoull(getenv("CLDM_BENCH_HEAP"), &end, 10);
    int shift = *end == 'K' ? 10 : *end == 'M' ? 20 : *end == 'G' ? 30 : 0;
    if (end == getenv("CLDM_BENCH_HEAP") || (*end && (!shift || end[1])))
      fail_run("CLDM_BENCH_HEAP: bytes with an optional K, M or G");
    min_heap <<= shift;
  }
  verbose = getenv("CLDM_BENCH_VERBOSE") && atoi(getenv("CLDM_BENCH_VERBOSE"));
  if (getenv("CLDM_BENCH_LOCAL") && atoi(getenv("CLDM_BENCH_LOCAL")) > 0)
    local_size = (size_t)atoi(getenv("CLDM_BENCH_LOCAL"));
  with_census = getenv("CLDM_BENCH_CENSUS") && atoi(getenv("CLDM_BENCH_CENSUS"));
  int keep_heap = getenv("CLDM_BENCH_KEEP_HEAP") && atoi(getenv("CLDM_BENCH_KEEP_HEAP"));
  setvbuf(stdout, NULL, _IOLBF, 0); /* lines in order with stderr's in one log */
  char modules[1024] = CLDM_BENCH_MODULES;
  if (getenv("CLDM_BENCH_MODULES")) /* e.g. cldm_alloc.cl20.spir64 */
    snprintf(modules, sizeof modules, "%s", getenv("CLDM_BENCH_MODULES"));
  if (!getenv("CLDM_TEST_DATA_DIR"))
    setenv("CLDM_TEST_DATA_DIR", CLDM_BENCH_DATA_DIR, 0);
  if (n == 0 || reps <= 0)
    fail_run("usage: cldm_bench_alloc [work-items] [repetitions]");

  printf("cldm_bench_alloc: %zu work-items, best of %d, kernel times from event profiling\n", n,
         reps);
  if (min_heap)
    printf("heaps of at least %llu MiB (CLDM_BENCH_HEAP)\n", (unsigned long long)(min_heap >> 20));
  if (keep_heap)
    printf("one heap per module, reset once (CLDM_BENCH_KEEP_HEAP)\n");
  printf("%-26s %6s | %9s %9s | %9s %9s | %9s %9s | %9s %9s | %11s\n", "module", "size",
         "malloc ms", "M/s", "free ms", "M/s", "m+f ms", "M/s", "bump ms", "M/s", "bump/malloc");
  char *save = NULL; /* strtok_r: the OpenCL implementation may use strtok itself */
  for (char *module = strtok_r(modules, ",", &save); module; module = strtok_r(NULL, ",", &save)) {
    cldm_dtest_env env;
    char file[256];
    snprintf(file, sizeof file, "bench_alloc.%s.spv", module);
    if (cldm_dtest_open(&env, cldm_dtest_data_path(file), 64) != CL_SUCCESS)
      fail_run("device rejected the module");
    cl_int err;
    cl_queue_properties props[] = {CL_QUEUE_PROPERTIES, CL_QUEUE_PROFILING_ENABLE, 0};
    cl_command_queue q = clCreateCommandQueueWithProperties(env.ctx, env.device, props, &err);
    DT_CHECK(err);
    int write = getenv("CLDM_BENCH_WRITE") && atoi(getenv("CLDM_BENCH_WRITE"));
    cl_kernel km = cldm_dtest_kernel(&env, write ? "k_malloc_write" : "k_malloc"),
              kf = cldm_dtest_kernel(&env, "k_free");
    cl_kernel kmf = cldm_dtest_kernel(&env, "k_malloc_free"),
              kb = cldm_dtest_kernel(&env, "k_bump");
    cl_mem ptrs = cldm_dtest_buffer(&env, n * 8, NULL);
    cldm_dtest_heap kept = {0}; /* CLDM_BENCH_KEEP_HEAP: the module's one heap */
    uint64_t kept_bytes = 0;
    for (size_t si = 0; keep_heap && si < num_sizes; si++) {
      uint64_t b = heap_bytes_for(n, sizes[si], min_heap);
      kept_bytes = b > kept_bytes ? b : kept_bytes;
    }
    for (size_t si = 0; si < num_sizes; si++) {
      cl_uint size = sizes[si];
      uint64_t heap_bytes = keep_heap ? kept_bytes : heap_bytes_for(n, size, min_heap);
      cl_ulong max_alloc = 0;
      DT_CHECK(clGetDeviceInfo(env.device, CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof max_alloc,
                               &max_alloc, NULL));
      if (cldm_heap_buffer_size(heap_bytes) > max_alloc || (uint64_t)n * size > max_alloc) {
        printf("%-26s %6u | skipped: a %llu MiB heap exceeds CL_DEVICE_MAX_MEM_ALLOC_SIZE\n",
               module, size, (unsigned long long)(heap_bytes >> 20));
        continue;
      }
      if (keep_heap && !kept.buf)
        kept = cldm_dtest_heap_create(&env, heap_bytes);
      cldm_dtest_heap heap = keep_heap ? kept : cldm_dtest_heap_create(&env, heap_bytes);
      cl_mem arena = cldm_dtest_buffer(&env, (size_t)n * size, NULL),
             top = cldm_dtest_buffer(&env, 4, NULL);
      timing tm = {0}, tf = {0}, tmf = {0}, tb = {0};
      for (int r = -1; r < reps; r++) { /* r == -1: warm-up, not counted */
        if (!keep_heap)
          cldm_dtest_heap_reset(&env, &heap);
        cldm_dtest_args(km, sizeof(cl_mem), &heap.buf, sizeof size, &size, sizeof(cl_mem), &ptrs,
                        (size_t)0);
        double t_m = noted("malloc", size, r, run_profiled(&env, q, km, n));
        if (count_nulls(&env, ptrs, n) != 0)
          fail_run("malloc returned NULL");
        census(&env, &heap, size, r, "after malloc");
        cldm_dtest_args(kf, sizeof(cl_mem), &heap.buf, sizeof(cl_mem), &ptrs, (size_t)0);
        double t_f = noted("free", size, r, run_profiled(&env, q, kf, n));
        cldm_heap_stats s = cldm_dtest_heap_stats(&env, &heap);
        if (s.live_allocations != 0 || s.bytes_in_use != 0 || s.invalid_frees != 0 ||
            s.failed_allocations != 0) {
          fprintf(stderr,
                  "cldm_bench_alloc: %u B repetition %d: %llu live allocations, %llu bytes in "
                  "use, %llu invalid frees, %llu failed allocations\n",
                  size, r, (unsigned long long)s.live_allocations,
                  (unsigned long long)s.bytes_in_use, (unsigned long long)s.invalid_frees,
                  (unsigned long long)s.failed_allocations);
          fail_run("heap not empty after the frees");
        }
        census(&env, &heap, size, r, "after free");
        cldm_dtest_args(kmf, sizeof(cl_mem), &heap.buf, sizeof size, &size, sizeof(cl_mem), &ptrs,
                        (size_t)0);
        double t_mf = noted("malloc+free", size, r, run_profiled(&env, q, kmf, n));
        if (count_nulls(&env, ptrs, n) != 0)
          fail_run("malloc (+free) returned NULL");
        census(&env, &heap, size, r, "after malloc+free");
        uint32_t zero = 0;
        cldm_dtest_write(&env, top, 4, &zero);
        cldm_dtest_args(kb, sizeof(cl_mem), &arena, sizeof(cl_mem), &top, sizeof size, &size,
                        sizeof(cl_mem), &ptrs, (size_t)0);
        double t_b = noted("bump", size, r, run_profiled(&env, q, kb, n));
        if (cldm_dtest_read_u32(&env, top) != (uint32_t)(n * size))
          fail_run("bump pointer lost an add");
        if (r >= 0) {
          timing_add(&tm, t_m);
          timing_add(&tf, t_f);
          timing_add(&tmf, t_mf);
          timing_add(&tb, t_b);
        }
      }
      printf("%-26s %6u | %9.3f %9.2f | %9.3f %9.2f | %9.3f %9.2f | %9.3f %9.2f | %10.1fx\n",
             module, size, tm.best_s * 1e3, rate(n, &tm), tf.best_s * 1e3, rate(n, &tf),
             tmf.best_s * 1e3, rate(n, &tmf), tb.best_s * 1e3, rate(n, &tb), tm.best_s / tb.best_s);
      fflush(stdout);
      clReleaseMemObject(arena);
      clReleaseMemObject(top);
      if (!keep_heap)
        cldm_dtest_heap_release(&heap);
    }
    if (kept.buf)
      cldm_dtest_heap_release(&kept);
    clReleaseMemObject(ptrs);
    clReleaseKernel(km);
    clReleaseKernel(kf);
    clReleaseKernel(kmf);
    clReleaseKernel(kb);
    clReleaseCommandQueue(q);
    cldm_dtest_close(&env);
  }
  printf("M/s: million operations per second (m+f: malloc and free pairs); bump/malloc: how many\n"
         "times faster the bump-pointer kernel ran than k_malloc.\n");
  return 0;
}
