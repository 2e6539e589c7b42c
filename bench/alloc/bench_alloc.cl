/*
 * bench_alloc.cl — kernels of the allocator benchmark (bench/alloc/bench_alloc.c), linked with
 * each allocator module by spirv-link. Every kernel does one allocation-sized operation per
 * work-item and stores one 64-bit result, so the kernels differ only in the operation.
 * The last argument `n` bounds the work-items (launches are rounded up to work-groups); the
 * others call the allocator with size 0 / NULL, so every call is in uniform control flow (the
 * sub-group variant requires it).
 */
extern global void *cldm_malloc(global void *heap, size_t size);
extern void cldm_free(global void *heap, global void *ptr);

/* One cldm_malloc(size) per work-item, the pointer kept for k_free; with `write`, the block's
 * first word gets the work-item's id. A macro, not a function: each kernel's code stays its
 * own, without a call the PTX route would keep. */
#define MALLOC_ONE(write)                                                                          \
  do {                                                                                             \
    uint i = get_global_id(0);                                                                     \
    global uint *p = cldm_malloc(heap, i < n ? size : 0u);                                         \
    if ((write) && i < n && p)                                                                     \
      *p = i;                                                                                      \
    if (i < n)                                                                                     \
      ptrs[i] = (ulong)(size_t)p;                                                                  \
  } while (0)

kernel void k_malloc(global uchar *heap, uint size, global ulong *ptrs, uint n) { MALLOC_ONE(0); }

/* k_malloc and the block written, as the suite's kernels and their users do
 * (CLDM_BENCH_WRITE). */
kernel void k_malloc_write(global uchar *heap, uint size, global ulong *ptrs, uint n) {
  MALLOC_ONE(1);
}

/* One cldm_free per work-item. */
kernel void k_free(global uchar *heap, global const ulong *ptrs, uint n) {
  uint i = get_global_id(0);
  cldm_free(heap, i < n ? (global void *)(size_t)ptrs[i] : (global void *)0);
}

/* malloc immediately followed by free, per work-item. */
kernel void k_malloc_free(global uchar *heap, uint size, global ulong *ptrs, uint n) {
  uint i = get_global_id(0);
  global void *p = cldm_malloc(heap, i < n ? size : 0u);
  if (i < n)
    ptrs[i] = (ulong)(size_t)p;
  cldm_free(heap, p);
}

/* The ceiling: a bump pointer, one atomic_add per allocation, no reuse. */
kernel void k_bump(global uchar *arena, global uint *top, uint size, global ulong *ptrs, uint n) {
  uint i = get_global_id(0);
  if (i >= n)
    return;
  ptrs[i] = (ulong)(size_t)(arena + atomic_add(top, size));
}
