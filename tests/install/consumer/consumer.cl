/* consumer.cl — the consumer's kernels: each work-item mallocs an array of its own length and
 * fills it; a later launch sums and frees every array. */
extern global void *malloc(size_t size);
extern void free(global void *ptr);

kernel void fill(global ulong *ptrs, uint n) {
  size_t i = get_global_id(0);
  uint len = 1 + (uint)(i % n);
  global uint *a = (global uint *)malloc(len * sizeof(uint));
  if (a)
    for (uint k = 0; k < len; k++)
      a[k] = (uint)i + k;
  ptrs[i] = (ulong)a;
}

kernel void sum_and_free(global ulong *ptrs, uint n, global ulong *sums) {
  size_t i = get_global_id(0);
  global uint *a = (global uint *)ptrs[i];
  uint len = 1 + (uint)(i % n);
  ulong s = 0;
  if (a) {
    for (uint k = 0; k < len; k++)
      s += a[k];
    free(a);
  }
  ptrs[i] = 0;
  sums[i] = s;
}
