// many_args.cl — a kernel with many existing arguments of several kinds; the heap must come
// after all of them.
extern global void *malloc(size_t size);
extern void free(global void *ptr);

kernel void k_many(global int *out, int n, global const float *f, local int *scratch, char c,
                   short s, long l, float x, global uchar *bytes, constant int *table, uint u,
                   double d) {
  global long *p = malloc(sizeof(long) * 4);
  int ok = p != 0;
  if (p) {
    p[0] = l;
    p[1] = c + s;
    free(p);
  }
  out[get_global_id(0)] =
      ok + n + (int)f[0] + scratch[0] + (int)x + bytes[0] + table[0] + (int)u + (int)d;
}
