/*
 * base.cl — the baselines of the benchmark suite (bench/suite), kernels that allocate nothing
 * (the layer passes this module to the driver unchanged):
 *   k_bump      the ceiling: one atomic_add on a 16-byte granule counter per block, no reuse;
 *   k_prealloc  no allocation: block i of a preallocated buffer, at i * size;
 * both with the same signature and per-block work (the work-item id written into the block's
 * first word) as k_malloc of alloc.cl; k_check, the check of the blocks' ids before their free
 * (a read of each block's first word, in the free launch's shape); and the classic three-pass
 * version of the list-building workload (count, exclusive prefix sum, fill) with its
 * bump-pointer variant.
 */
#include "bench_common.h"

/* Block of work-item i from a bump pointer over `arena`; top counts 16-byte granules (so a
 * 32-bit counter spans 64 GiB). */
kernel void k_bump(global uchar *arena, global uint *top, global ulong *ptrs, uint n, uint size,
                   uint mixed, uint k, uint seed) {
  uint i = get_global_id(0);
  if (i >= n)
    return;
  global uint *p = 0;
  if (bc_selected(i, k)) {
    uint units = (bc_size(i, size, mixed, seed) + BC_GRANULE - 1u) / BC_GRANULE;
    p = (global uint *)(arena + (size_t)atomic_add(top, units) * BC_GRANULE);
    *p = i;
  }
  ptrs[i] = (ulong)(size_t)p;
}

/* Block i of a preallocated buffer of n blocks of `size` bytes (the largest size). */
kernel void k_prealloc(global uchar *arena, global ulong *ptrs, uint n, uint size, uint mixed,
                       uint k, uint seed) {
  uint i = get_global_id(0);
  if (i >= n)
    return;
  global uint *p = 0;
  if (bc_selected(i, k)) {
    p = (global uint *)(arena + (size_t)i * size);
    *p = i;
  }
  ptrs[i] = (ulong)(size_t)p;
}

/* Cases 1-3: the check that precedes k_free_only (alloc.cl): block ptrs[i] (if not 0) must
 * still hold i in its first word, else errors[0] grows. Also the read-only baseline of the free
 * launch: the same launch shape touching every block once, allocating nothing. */
kernel void k_check(global ulong *ptrs, uint n, global uint *errors) {
  uint i = get_global_id(0);
  if (i >= n)
    return;
  global uint *p = (global uint *)(size_t)ptrs[i];
  if (p && *p != i)
    atomic_inc(errors);
}

/* Case 7, pass 1: how many values each work-item emits. */
kernel void k_wl_count(global uint *counts, uint n, uint avg) {
  uint i = get_global_id(0);
  if (i < n)
    counts[i] = bc_degree(i, avg);
}

/* Case 7, pass 2a: exclusive prefix sum of counts within each work-group (into offsets) and
 * each work-group's total (into block_sums); tmp holds one uint per work-item of the group. */
kernel void k_scan_local(global const uint *counts, global uint *offsets, global uint *block_sums,
                         local uint *tmp, uint n) {
  uint i = get_global_id(0), l = get_local_id(0), size = get_local_size(0);
  uint v = i < n ? counts[i] : 0u;
  tmp[l] = v;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (uint d = 1; d < size; d *= 2) { /* Hillis-Steele inclusive scan */
    uint t = l >= d ? tmp[l - d] : 0u;
    barrier(CLK_LOCAL_MEM_FENCE);
    tmp[l] += t;
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (i < n)
    offsets[i] = tmp[l] - v;
  if (l == size - 1u)
    block_sums[get_group_id(0)] = tmp[l];
}

/* Case 7, pass 2b: one work-group scans the block totals in place (exclusive), in chunks of
 * its size, carrying the running sum; total[0] receives the grand total. */
kernel void k_scan_blocks(global uint *block_sums, global uint *total, local uint *tmp,
                          uint blocks) {
  uint l = get_local_id(0), size = get_local_size(0), carry = 0;
  for (uint base = 0; base < blocks; base += size) {
    uint v = base + l < blocks ? block_sums[base + l] : 0u;
    tmp[l] = v;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint d = 1; d < size; d *= 2) {
      uint t = l >= d ? tmp[l - d] : 0u;
      barrier(CLK_LOCAL_MEM_FENCE);
      tmp[l] += t;
      barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (base + l < blocks)
      block_sums[base + l] = carry + tmp[l] - v;
    carry += tmp[size - 1u];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (l == 0)
    total[0] = carry;
}

/* Case 7, pass 2c: adds each work-group's offset. */
kernel void k_scan_add(global uint *offsets, global const uint *block_sums, uint n) {
  uint i = get_global_id(0);
  if (i < n)
    offsets[i] += block_sums[get_group_id(0)];
}

/* Case 7, pass 3: each work-item writes its values at its offset of one compact array. */
kernel void k_wl_fill(global uint *out, global const uint *offsets, uint n, uint avg) {
  uint i = get_global_id(0);
  if (i >= n)
    return;
  uint d = bc_degree(i, avg);
  global uint *p = out + offsets[i];
  for (uint j = 0; j < d; j++)
    p[j] = bc_value(i, j);
}

/* Case 7, bump-pointer variant: one pass, each work-item reserves its values' space with one
 * atomic_add and writes them there; offsets[i] is where they start. */
kernel void k_wl_bump(global uint *out, global uint *top, global uint *offsets, uint n, uint avg) {
  uint i = get_global_id(0);
  if (i >= n)
    return;
  uint d = bc_degree(i, avg);
  uint at = d ? atomic_add(top, d) : 0u;
  global uint *p = out + at;
  for (uint j = 0; j < d; j++)
    p[j] = bc_value(i, j);
  offsets[i] = at;
}

/* Case 7: the sum of work-item i's values in a compact array (either variant). */
kernel void k_wl_sum(global const uint *out, global const uint *offsets, global ulong *sums, uint n,
                     uint avg) {
  uint i = get_global_id(0);
  if (i >= n)
    return;
  global const uint *p = out + offsets[i];
  ulong s = 0;
  for (uint j = 0, d = bc_degree(i, avg); j < d; j++)
    s += p[j];
  sums[i] = s;
}
