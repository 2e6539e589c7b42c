/* gated.cl — a launch that still uses the heap after the application released its context
 * (test_e2e_heap): each work-item allocates a block of `words` words, fills it, reads it back
 * and keeps it. results[i]: the block's address, 0 if malloc returned NULL, 1 if the block did
 * not read back what was written. */
extern global void *malloc(size_t size);

static uint word(size_t item, uint k) { return (uint)item * 2654435761u + k; }

kernel void scribble(global ulong *results, uint words) {
  size_t i = get_global_id(0);
  global uint *p = (global uint *)malloc(words * sizeof(uint));
  ulong r = (ulong)p;
  for (uint k = 0; p && k < words; k++)
    p[k] = word(i, k);
  for (uint k = 0; p && k < words; k++)
    if (p[k] != word(i, k))
      r = 1;
  results[i] = r;
}
