/* target.cl — a module that calls the PTX backend's allocator functions (cldm_target_*, spec
 * 3.4) directly, as the allocator's "nv" variant does: the backend links their definitions, so
 * the module builds on its own (it is not one that only clLinkProgram can complete). */
global void *cldm_target_malloc(global void *heap, size_t size);
void cldm_target_free(global void *heap, global void *ptr);

kernel void target_roundtrip(global void *heap, global ulong *out) {
  global uint *p = (global uint *)cldm_target_malloc(heap, 16);
  if (p) {
    p[0] = (uint)get_global_id(0);
    out[get_global_id(0)] = p[0];
    cldm_target_free(heap, p);
  } else {
    out[get_global_id(0)] = ~0ul;
  }
}
