/*
 * overhead.cl — the non-allocating kernel of the suite's layer-overhead case (case 8):
 * launched with and without the layer. Self-contained, so that a run without the layer on a
 * driver that takes no SPIR-V can build it from this source instead.
 */
kernel void k_noalloc(global uint *out, uint n) {
  uint i = get_global_id(0);
  if (i < n)
    out[i] = i;
}
