/*
 * bench_cuda.h — declarations shared by the two files of cldm-bench-cuda, the CUDA side of the
 * benchmark suite: main.cu (options, the plan, phases, CSV / JSON output) and cases.cu (the
 * cases, with kernels.cuh). The program runs bench/suite's cases with CUDA's device malloc and
 * writes the same CSV schema, impl "cuda".
 */
#ifndef CLDM_BENCH_CUDA_H
#define CLDM_BENCH_CUDA_H

#include <stdint.h>
#include <stdio.h>

#include <vector>

#include <cuda_runtime.h>

#include "bench_plan.h"

void bc_check_cuda(cudaError_t err, const char *what, const char *file, int line);
#define CK(call) bc_check_cuda((call), #call, __FILE__, __LINE__)

/* One phase of the run: one heap size (cudaDeviceSetLimit(cudaLimitMallocHeapSize)). */
struct bc_ctx {
  const bp_plan *plan;
  int device;
  uint64_t heap;
  cudaEvent_t e0, e1;
};

/* A new, empty heap of c.heap bytes: cudaDeviceReset (every allocation of the program goes),
 * cudaDeviceSetLimit(cudaLimitMallocHeapSize), new timing events, and one allocating launch so
 * that the heap exists before anything is timed. CUDA has no heap reset: each case starts
 * this way where the OpenCL suite calls clEnqueueResetDeviceHeapEXT. */
void bc_heap_fresh(bc_ctx &c);

/* A series of repetitions; best = smallest, median. */
struct bc_series {
  std::vector<double> v;
  void add(double x) { v.push_back(x); }
  double best() const;
  double median() const;
};

/* Output (main.cu): one CSV row, impl "cuda". */
void bc_row(const char *case_name, const char *kernel, uint64_t size, uint64_t n, const char *param,
            const char *metric, const char *unit, double value, double median, int reps,
            uint64_t ops);
void bc_row_series(const char *case_name, const char *kernel, uint64_t size, uint64_t n,
                   const char *param, const char *metric, const char *unit, const bc_series &s,
                   uint64_t ops);
void bc_progress(const char *case_name, const char *fmt, ...);
void bc_fail(const char *fmt, ...);
double bc_now_us();

/* The cases (cases.cu). */
void bc_case_throughput(bc_ctx &c);
void bc_case_mixed(bc_ctx &c);
void bc_case_divergent(bc_ctx &c);
void bc_case_workload(bc_ctx &c);
void bc_case_overhead(bc_ctx &c);
void bc_case_utilisation(bc_ctx &c);
void bc_case_fragmentation(bc_ctx &c);
void bc_case_oom(bc_ctx &c);

#endif /* CLDM_BENCH_CUDA_H */
