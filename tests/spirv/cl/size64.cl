// size64.cl — a 64-bit size operand: on spir (Physical32) the lowering saturates it to
// 0xFFFFFFFF when it does not fit, so a huge request fails instead of wrapping around.
extern global void *malloc(ulong size);
extern void free(global void *ptr);

kernel void k_size64(global int *out, int n, ulong extra) {
  global int *p = malloc((ulong)n * 4ul + extra);
  out[get_global_id(0)] = p ? 1 : 0;
  if (p)
    free(p);
}
