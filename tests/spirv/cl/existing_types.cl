// existing_types.cl — the module already declares the types and constants the allocator uses
// (uchar, ulong, uint, __global uchar *, bool, 0, 16, ...): linking must unify them, since
// duplicate non-aggregate types are invalid SPIR-V. At -O2 the overflow check becomes
// llvm.umul.with.overflow, which llvm-spirv emits as a function "spirv.llvm_umul_with_overflow_i64"
// — the same one the stand-in allocator carries.
extern global void *malloc(size_t size);
extern void free(global void *ptr);

kernel void k_types(global uchar *bytes, global ulong *longs, global uint *ints, int n) {
  size_t count = (size_t)n, size = (size_t)longs[1]; /* the host passes 16 */
  size_t total = count * size;
  bool overflow = size != 0 && total / size != count;
  global uchar *p = overflow ? 0 : malloc(total + 16);
  bool ok = p != 0;
  if (ok) {
    p[0] = bytes[0];
    free(p);
  }
  longs[0] = ok ? 16ul : 0ul;
  ints[0] = ok ? 1u : 0u;
}
