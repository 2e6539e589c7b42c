/* link_lib.cl — a library module for the separate-compilation tests: one exported function
 * that allocates (make_buffer) and one that does not (twice). */
extern global void *malloc(size_t size);

global uint *make_buffer(uint n) {
  global uint *p = (global uint *)malloc(n * sizeof(uint));
  for (uint k = 0; p && k < n; k++)
    p[k] = k;
  return p;
}

uint twice(uint x) { return 2 * x; }

kernel void lib_fill(global ulong *out) { out[get_global_id(0)] = (ulong)make_buffer(4); }
