/*
 * cldm_alloc_nv.cl — the "nv" variant of the allocator module: the PTX route's lowering links
 * this module, whose cldm_* functions forward to cldm_target_* (Import linkage, which the
 * lowering keeps); the PTX backend then links cldm_alloc.nvptx.bc, cldm_alloc.cl built by clang
 * for NVPTX, which defines them (device/CMakeLists.txt). So the allocator the GPU runs is
 * compiled for it directly, with the warp operations SPIR-V for OpenCL 1.2 cannot express.
 */
global void *cldm_target_malloc(global void *heap, size_t size);
void cldm_target_free(global void *heap, global void *ptr);
global void *cldm_target_calloc(global void *heap, size_t count, size_t size);
global void *cldm_target_realloc(global void *heap, global void *ptr, size_t size);
global void *cldm_target_aligned_alloc(global void *heap, size_t align, size_t size);
void cldm_target_new_failed(global void *heap);

global void *cldm_malloc(global void *heap, size_t size) { return cldm_target_malloc(heap, size); }
void cldm_free(global void *heap, global void *ptr) { cldm_target_free(heap, ptr); }
global void *cldm_calloc(global void *heap, size_t count, size_t size) {
  return cldm_target_calloc(heap, count, size);
}
global void *cldm_realloc(global void *heap, global void *ptr, size_t size) {
  return cldm_target_realloc(heap, ptr, size);
}
global void *cldm_aligned_alloc(global void *heap, size_t align, size_t size) {
  return cldm_target_aligned_alloc(heap, align, size);
}
void cldm_new_failed(global void *heap) { cldm_target_new_failed(heap); }
