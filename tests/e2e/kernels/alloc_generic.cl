/* alloc_generic.cl — OpenCL C 2.0 with generic pointers: malloc/free/realloc declared with
 * unqualified (generic) pointer types, so the module's allocation calls return and take
 * pointers in the Generic storage class (spec 2.1 allows CrossWorkgroup or Generic). */
extern void *malloc(size_t size);
extern void free(void *ptr);
extern void *realloc(void *ptr, size_t size);

static void fill(uint *p, uint n, uint seed) {
  for (uint k = 0; k < n; k++)
    p[k] = seed + k;
}

kernel void generic_roundtrip(global uint *out) {
  size_t i = get_global_id(0);
  uint n = 1 + (uint)(i % 29);
  uint *p = (uint *)malloc(n * sizeof(uint));
  if (!p) {
    out[i] = 0xffffffffu;
    return;
  }
  fill(p, n, (uint)i);
  p = (uint *)realloc(p, 2 * n * sizeof(uint));
  uint sum = 0;
  for (uint k = 0; p && k < n; k++)
    sum += p[k];
  global uint *g = to_global(p); /* a generic pointer from the heap points to global memory */
  out[i] = g ? sum : 0xfffffffeu;
  free(p);
}
