/*
 * kernels.cuh — the CUDA kernels of cldm-bench-cuda, one for one the OpenCL kernels of
 * bench/suite/kernels (alloc.cl, base.cl, overhead.cl) with the same arguments and the same
 * per-work-item work, using CUDA's device malloc/free (heap size set with
 * cudaDeviceSetLimit(cudaLimitMallocHeapSize)). Sizes, selections and values come from
 * bench/common/bench_common.h, as in the OpenCL kernels.
 */
#ifndef CLDM_BENCH_CUDA_KERNELS_CUH
#define CLDM_BENCH_CUDA_KERNELS_CUH

#include <stdint.h>

#include "bench_common.h"

typedef unsigned long long u64;
typedef unsigned int u32;

__device__ static inline u32 gid() { return blockIdx.x * blockDim.x + threadIdx.x; }

/* ---- alloc.cl ---- */
__global__ void k_malloc(u64 *ptrs, u32 n, u32 size, u32 mixed, u32 k, u32 seed) {
  u32 i = gid();
  if (i >= n)
    return;
  u32 *p = 0;
  if (bc_selected(i, k)) {
    p = (u32 *)malloc(bc_size(i, size, mixed, seed));
    if (p)
      *p = i;
  }
  ptrs[i] = (u64)(uintptr_t)p;
}

/* k_free_only of alloc.cl: frees ptrs[i] and reads nothing of the block (cases 1-3). */
__global__ void k_free_only(u64 *ptrs, u32 n) {
  u32 i = gid();
  if (i >= n)
    return;
  void *p = (void *)(uintptr_t)ptrs[i];
  if (p)
    free(p);
}

__global__ void k_free(u64 *ptrs, u32 n, u32 keep_round, u32 *errors) {
  u32 i = gid();
  if (i >= n)
    return;
  u32 *p = (u32 *)(uintptr_t)ptrs[i];
  if (!p || (keep_round && bc_kept(i, keep_round - 1u)))
    return;
  if (*p != i)
    atomicAdd(errors, 1u);
  free(p);
  if (keep_round)
    ptrs[i] = 0;
}

__global__ void k_malloc_free(u64 *ptrs, u32 n, u32 size, u32 mixed, u32 k, u32 seed) {
  u32 i = gid();
  if (i >= n)
    return;
  u32 *p = 0;
  if (bc_selected(i, k)) {
    p = (u32 *)malloc(bc_size(i, size, mixed, seed));
    if (p)
      *p = i;
  }
  ptrs[i] = (u64)(uintptr_t)p;
  free(p);
}

__global__ void k_fill(u64 *heads, u32 *counts, u32 n, u32 size, u32 limit) {
  u32 i = gid();
  if (i >= n)
    return;
  u64 *head = 0;
  u32 count = 0;
  for (;;) {
    if (limit && count == limit)
      break;
    u64 *p = (u64 *)malloc(size);
    if (!p)
      break;
    p[0] = (u64)(uintptr_t)head;
    head = p;
    count++;
  }
  heads[i] = (u64)(uintptr_t)head;
  counts[i] = count;
}

__global__ void k_fill_free(u64 *heads, u32 *counts, u32 n) {
  u32 i = gid();
  if (i >= n)
    return;
  u64 *p = (u64 *)(uintptr_t)heads[i];
  u32 count = 0;
  while (p) {
    u64 *next = (u64 *)(uintptr_t)p[0];
    free(p);
    p = next;
    count++;
  }
  counts[i] = count;
  heads[i] = 0;
}

__global__ void k_list_build(u64 *heads, u32 *counts, u32 n, u32 avg) {
  u32 i = gid();
  if (i >= n)
    return;
  u32 d = bc_degree(i, avg);
  u32 *p = 0;
  if (d) {
    p = (u32 *)malloc(d * sizeof(u32));
    if (p)
      for (u32 j = 0; j < d; j++)
        p[j] = bc_value(i, j);
  }
  heads[i] = (u64)(uintptr_t)p;
  counts[i] = d && !p ? ~0u : d;
}

__global__ void k_list_sum(const u64 *heads, const u32 *counts, u64 *sums, u32 n) {
  u32 i = gid();
  if (i >= n)
    return;
  const u32 *p = (const u32 *)(uintptr_t)heads[i];
  u64 s = 0;
  for (u32 j = 0, d = p ? counts[i] : 0u; j < d; j++)
    s += p[j];
  sums[i] = s;
}

__global__ void k_list_free(u64 *heads, u32 n) {
  u32 i = gid();
  if (i >= n)
    return;
  free((void *)(uintptr_t)heads[i]);
  heads[i] = 0;
}

__global__ void k_overhead_alloc(u32 *out, u32 n) {
  u32 i = gid();
  if (i >= n)
    return;
  u32 *p = (u32 *)malloc(16);
  if (p)
    *p = i;
  out[i] = p ? *p : ~0u;
  free(p);
}

/* ---- base.cl ---- */
__global__ void k_bump(unsigned char *arena, u32 *top, u64 *ptrs, u32 n, u32 size, u32 mixed, u32 k,
                       u32 seed) {
  u32 i = gid();
  if (i >= n)
    return;
  u32 *p = 0;
  if (bc_selected(i, k)) {
    u32 units = (bc_size(i, size, mixed, seed) + BC_GRANULE - 1u) / BC_GRANULE;
    p = (u32 *)(arena + (size_t)atomicAdd(top, units) * BC_GRANULE);
    *p = i;
  }
  ptrs[i] = (u64)(uintptr_t)p;
}

/* k_check of base.cl: block ptrs[i] still holds i (cases 1-3, before k_free_only). */
__global__ void k_check(u64 *ptrs, u32 n, u32 *errors) {
  u32 i = gid();
  if (i >= n)
    return;
  u32 *p = (u32 *)(uintptr_t)ptrs[i];
  if (p && *p != i)
    atomicAdd(errors, 1u);
}

__global__ void k_prealloc(unsigned char *arena, u64 *ptrs, u32 n, u32 size, u32 mixed, u32 k,
                           u32 seed) {
  u32 i = gid();
  if (i >= n)
    return;
  u32 *p = 0;
  if (bc_selected(i, k)) {
    p = (u32 *)(arena + (size_t)i * size);
    *p = i;
  }
  ptrs[i] = (u64)(uintptr_t)p;
  (void)mixed;
  (void)seed;
}

__global__ void k_wl_count(u32 *counts, u32 n, u32 avg) {
  u32 i = gid();
  if (i < n)
    counts[i] = bc_degree(i, avg);
}

/* tmp: blockDim.x u32 of dynamic shared memory */
__global__ void k_scan_local(const u32 *counts, u32 *offsets, u32 *block_sums, u32 n) {
  extern __shared__ u32 tmp[];
  u32 i = gid(), l = threadIdx.x, size = blockDim.x;
  u32 v = i < n ? counts[i] : 0u;
  tmp[l] = v;
  __syncthreads();
  for (u32 d = 1; d < size; d *= 2) {
    u32 t = l >= d ? tmp[l - d] : 0u;
    __syncthreads();
    tmp[l] += t;
    __syncthreads();
  }
  if (i < n)
    offsets[i] = tmp[l] - v;
  if (l == size - 1u)
    block_sums[blockIdx.x] = tmp[l];
}

__global__ void k_scan_blocks(u32 *block_sums, u32 *total, u32 blocks) {
  extern __shared__ u32 tmp[];
  u32 l = threadIdx.x, size = blockDim.x, carry = 0;
  for (u32 base = 0; base < blocks; base += size) {
    u32 v = base + l < blocks ? block_sums[base + l] : 0u;
    tmp[l] = v;
    __syncthreads();
    for (u32 d = 1; d < size; d *= 2) {
      u32 t = l >= d ? tmp[l - d] : 0u;
      __syncthreads();
      tmp[l] += t;
      __syncthreads();
    }
    if (base + l < blocks)
      block_sums[base + l] = carry + tmp[l] - v;
    carry += tmp[size - 1u];
    __syncthreads();
  }
  if (l == 0)
    total[0] = carry;
}

__global__ void k_scan_add(u32 *offsets, const u32 *block_sums, u32 n) {
  u32 i = gid();
  if (i < n)
    offsets[i] += block_sums[blockIdx.x];
}

__global__ void k_wl_fill(u32 *out, const u32 *offsets, u32 n, u32 avg) {
  u32 i = gid();
  if (i >= n)
    return;
  u32 d = bc_degree(i, avg);
  u32 *p = out + offsets[i];
  for (u32 j = 0; j < d; j++)
    p[j] = bc_value(i, j);
}

__global__ void k_wl_bump(u32 *out, u32 *top, u32 *offsets, u32 n, u32 avg) {
  u32 i = gid();
  if (i >= n)
    return;
  u32 d = bc_degree(i, avg);
  u32 at = d ? atomicAdd(top, d) : 0u;
  u32 *p = out + at;
  for (u32 j = 0; j < d; j++)
    p[j] = bc_value(i, j);
  offsets[i] = at;
}

__global__ void k_wl_sum(const u32 *out, const u32 *offsets, u64 *sums, u32 n, u32 avg) {
  u32 i = gid();
  if (i >= n)
    return;
  const u32 *p = out + offsets[i];
  u64 s = 0;
  for (u32 j = 0, d = bc_degree(i, avg); j < d; j++)
    s += p[j];
  sums[i] = s;
}

/* ---- overhead.cl ---- */
__global__ void k_noalloc(u32 *out, u32 n) {
  u32 i = gid();
  if (i < n)
    out[i] = i;
}

#endif /* CLDM_BENCH_CUDA_KERNELS_CUH */
