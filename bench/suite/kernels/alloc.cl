/*
 * alloc.cl — the allocating kernels of the benchmark suite (bench/suite): plain OpenCL C that
 * declares malloc/free extern, as README "Writing kernels" shows, compiled to SPIR-V at build
 * time; the layer lowers the module in clCreateProgramWithIL. Each kernel bounds its
 * work-items by `n` (launches are rounded up to whole work-groups).
 *
 * Every block gets the id of the work-item that allocated it in its first word; the kernels
 * that free blocks check it (k_free_only's blocks are checked by k_check of base.cl before),
 * so overlapping blocks show up as errors on the device too (the host also sorts the
 * addresses).
 */
#include "bench_common.h"

extern global void *malloc(size_t size);
extern void free(global void *ptr);

/* Case 1-3, 5, 6: work-item i < n with bc_selected(i, k) mallocs bc_size(i, size, mixed, seed)
 * bytes; ptrs[i] is the block, or 0 (NULL or not selected). */
kernel void k_malloc(global ulong *ptrs, uint n, uint size, uint mixed, uint k, uint seed) {
  uint i = get_global_id(0);
  if (i >= n)
    return;
  global uint *p = 0;
  if (bc_selected(i, k)) {
    p = malloc(bc_size(i, size, mixed, seed));
    if (p)
      *p = i;
  }
  ptrs[i] = (ulong)(size_t)p;
}

/* Frees ptrs[i] (if not 0) for every i < n, or with `keep_round` != 0 only the blocks that
 * bc_kept(i, keep_round - 1) does not keep, zeroing their slot. A block whose first word is
 * not i adds one to errors[0]. */
kernel void k_free(global ulong *ptrs, uint n, uint keep_round, global uint *errors) {
  uint i = get_global_id(0);
  if (i >= n)
    return;
  global uint *p = (global uint *)(size_t)ptrs[i];
  if (!p || (keep_round && bc_kept(i, keep_round - 1u)))
    return;
  if (*p != i)
    atomic_inc(errors);
  free(p);
  if (keep_round)
    ptrs[i] = 0;
}

/* Cases 1-3: frees ptrs[i] (if not 0) for every i < n and nothing else, as allocator
 * benchmarks time free (a free reads no byte of its block). The blocks' ids are checked by
 * k_check of base.cl in a launch of its own before it: a read of each block's first word, which
 * at 4 KiB blocks is one scattered access per work-item and cost more than the free itself
 * (bench/README.md, "Timing"). */
kernel void k_free_only(global ulong *ptrs, uint n) {
  uint i = get_global_id(0);
  if (i >= n)
    return;
  global void *p = (global void *)(size_t)ptrs[i];
  if (p)
    free(p);
}

/* malloc immediately followed by free in the same work-item; ptrs[i] records the block. */
kernel void k_malloc_free(global ulong *ptrs, uint n, uint size, uint mixed, uint k, uint seed) {
  uint i = get_global_id(0);
  if (i >= n)
    return;
  global uint *p = 0;
  if (bc_selected(i, k)) {
    p = malloc(bc_size(i, size, mixed, seed));
    if (p)
      *p = i;
  }
  ptrs[i] = (ulong)(size_t)p;
  free(p);
}

/* Cases 4 and 6: work-item i mallocs `size`-byte blocks until one returns NULL (or `limit`
 * blocks, if not 0), chaining them through their first 8 bytes; heads[i] is the chain, counts[i]
 * its length. */
kernel void k_fill(global ulong *heads, global uint *counts, uint n, uint size, uint limit) {
  uint i = get_global_id(0);
  if (i >= n)
    return;
  global ulong *head = 0;
  uint count = 0;
  for (;;) {
    if (limit && count == limit)
      break;
    global ulong *p = malloc(size);
    if (!p)
      break;
    p[0] = (ulong)(size_t)head;
    head = p;
    count++;
  }
  heads[i] = (ulong)(size_t)head;
  counts[i] = count;
}

/* Frees every chain of k_fill; counts[i] becomes the number of blocks freed. */
kernel void k_fill_free(global ulong *heads, global uint *counts, uint n) {
  uint i = get_global_id(0);
  if (i >= n)
    return;
  global ulong *p = (global ulong *)(size_t)heads[i];
  uint count = 0;
  while (p) {
    global ulong *next = (global ulong *)(size_t)p[0];
    free(p);
    p = next;
    count++;
  }
  counts[i] = count;
  heads[i] = 0;
}

/* Case 7: work-item i writes its bc_degree(i, avg) values into a block of its own;
 * heads[i] is the block (0 for no values), counts[i] the number of values, or ~0 if malloc
 * returned NULL. */
kernel void k_list_build(global ulong *heads, global uint *counts, uint n, uint avg) {
  uint i = get_global_id(0);
  if (i >= n)
    return;
  uint d = bc_degree(i, avg);
  global uint *p = 0;
  if (d) {
    p = malloc(d * sizeof(uint));
    if (p)
      for (uint j = 0; j < d; j++)
        p[j] = bc_value(i, j);
  }
  heads[i] = (ulong)(size_t)p;
  counts[i] = d && !p ? ~0u : d;
}

/* Case 7: the sum of work-item i's values, read through its block. */
kernel void k_list_sum(global const ulong *heads, global const uint *counts, global ulong *sums,
                       uint n) {
  uint i = get_global_id(0);
  if (i >= n)
    return;
  global const uint *p = (global const uint *)(size_t)heads[i];
  ulong s = 0;
  for (uint j = 0, d = p ? counts[i] : 0u; j < d; j++)
    s += p[j];
  sums[i] = s;
}

/* Case 7: frees every block of k_list_build. */
kernel void k_list_free(global ulong *heads, uint n) {
  uint i = get_global_id(0);
  if (i >= n)
    return;
  free((global void *)(size_t)heads[i]);
  heads[i] = 0;
}

/* Case 8: the allocating kernel of the latency figures, 16 bytes per work-item. */
kernel void k_overhead_alloc(global uint *out, uint n) {
  uint i = get_global_id(0);
  if (i >= n)
    return;
  global uint *p = malloc(16);
  if (p)
    *p = i;
  out[i] = p ? *p : ~0u;
  free(p);
}
