/* generic.cl (OpenCL C 2.0) — generic pointers through the PTX path: built-ins taking generic
 * pointers (SPIR U3AS4, re-mangled to libclc's unqualified NVPTX names), casts between
 * private/local/global and generic, and to_global/to_local (the backend's overrides). */
static void store4(int *p, int4 v) { vstore4(v, 0, p); }

kernel void generic_ptrs(global float *out, global int *o2, local int *l) {
  float ip;
  float f = fract(out[0], &ip);
  out[1] = f + ip;
  int *p = (get_global_id(0) & 1) ? (int *)o2 : (int *)l;
  store4(p, (int4)(1, 2, 3, 4));
  o2[8] = to_global(p) != 0;
  o2[9] = to_local(p) != 0;
}
