// generic.cl — OpenCL C 2.0: malloc/free on Generic pointers (spec 2.1 "pointer" may be
// Generic; free's Ptr may be Generic).
extern void *malloc(size_t size);
extern void free(void *ptr);

kernel void k_generic(global int *out, int n) {
  int *p = malloc((size_t)n * sizeof(int));
  if (!p) {
    out[get_global_id(0)] = -1;
    return;
  }
  for (int i = 0; i < n; i++)
    p[i] = 4 * i;
  int s = 0;
  for (int i = 0; i < n; i++)
    s += p[i];
  free(p);
  out[get_global_id(0)] = s;
}
