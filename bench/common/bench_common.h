/*
 * bench_common.h — the per-work-item functions every benchmark program shares, so that the
 * OpenCL kernels (OpenCL C), their host-side checks (C) and the CUDA program (CUDA C++) compute
 * exactly the same sizes, selections and values: a 32-bit integer hash, the random size of a
 * mixed-size request, the work-items a divergent launch selects, the blocks a fragmentation
 * round keeps, and the output of the list-building workload.
 */
#ifndef BENCH_COMMON_H
#define BENCH_COMMON_H

#if defined(__OPENCL_C_VERSION__)
typedef uint bc_u32;
#define BC_FN static inline
#elif defined(__CUDACC__)
#include <stdint.h>
typedef uint32_t bc_u32;
#define BC_FN static inline __host__ __device__
#else
#include <stdint.h>
typedef uint32_t bc_u32;
#define BC_FN static inline
#endif

/* Size of a work-item's mixed-size request: uniform in [16, size_max] (size_max >= 16). */
#define BC_MIN_SIZE 16u
/* Allocation granule of the bump-pointer baseline (and of every allocator measured). */
#define BC_GRANULE 16u

/* A 32-bit mixing function (lowbias32, public domain, by C. Wellons). */
BC_FN bc_u32 bc_hash(bc_u32 x) {
  x ^= x >> 16;
  x *= 0x7feb352du;
  x ^= x >> 15;
  x *= 0x846ca68bu;
  x ^= x >> 16;
  return x;
}

/* Bytes work-item i requests: `size`, or with `mixed` a random size in [16, size] drawn
 * from (i, seed). */
BC_FN bc_u32 bc_size(bc_u32 i, bc_u32 size, bc_u32 mixed, bc_u32 seed) {
  if (!mixed)
    return size;
  return BC_MIN_SIZE + bc_hash(i ^ (seed * 0x9e3779b9u + 0x632be5abu)) % (size - BC_MIN_SIZE + 1u);
}

/* 1 if work-item i allocates in a launch where every k-th work-item does (k >= 1). */
BC_FN bc_u32 bc_selected(bc_u32 i, bc_u32 k) { return i % k == 0u; }

/* 1 if the block of work-item i allocated in fragmentation round `round` is kept (not freed
 * at the end of the round): half of them, drawn from (i, round). */
BC_FN bc_u32 bc_kept(bc_u32 i, bc_u32 round) {
  return bc_hash(i ^ (round * 0x85ebca6bu + 0x27d4eb2fu)) & 1u;
}

/* List-building workload: work-item i emits bc_degree(i) values (0 .. 2 * avg), value j is
 * bc_value(i, j) (think of neighbour ids found by a graph expansion). */
BC_FN bc_u32 bc_degree(bc_u32 i, bc_u32 avg) {
  return bc_hash(i * 0x9e3779b9u + 7u) % (2u * avg + 1u);
}
BC_FN bc_u32 bc_value(bc_u32 i, bc_u32 j) { return bc_hash(i * 0x01000193u ^ (j + 0x5bd1e995u)); }

#endif /* BENCH_COMMON_H */
