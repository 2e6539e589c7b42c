// size32.cl — a 32-bit size operand (spec 2.1: 32- or 64-bit integers): on spir64 the
// lowering widens it with OpUConvert.
extern global void *malloc(uint size);
extern void free(global void *ptr);

kernel void k_size32(global int *out, int n) {
  global int *p = malloc((uint)n * 4u);
  if (!p) {
    out[get_global_id(0)] = -1;
    return;
  }
  p[n - 1] = n;
  out[get_global_id(0)] = p[n - 1];
  free(p);
}
