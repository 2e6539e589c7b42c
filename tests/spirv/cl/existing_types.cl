// existing_types.cl — the module already declares the types and constants the allocator uses
// (uchar, ulong, uint, __global uchar *, bool, 0, 16, ...): linking must unify them, since
// duplicate non-aggregate types are invalid SPIR-V.
extern global void *malloc(size_t size);
extern void free(global void *ptr);

kernel void k_types(global uchar *bytes, global ulong *longs, global uint *ints, int n) {
  global uchar *p = malloc((size_t)n + 16);
  bool ok = p != 0;
  if (ok) {
    p[0] = bytes[0];
    free(p);
  }
  longs[0] = ok ? 16ul : 0ul;
  ints[0] = ok ? 1u : 0u;
}
