/* placeholder, replaced by the allocator */
#include "cldm_heap_layout.h"
global void *cldm_malloc(global void *heap, size_t size) { return 0; }
void cldm_free(global void *heap, global void *ptr) {}
global void *cldm_calloc(global void *heap, size_t count, size_t size) { return 0; }
global void *cldm_realloc(global void *heap, global void *ptr, size_t size) { return 0; }
global void *cldm_aligned_alloc(global void *heap, size_t align, size_t size) { return 0; }
