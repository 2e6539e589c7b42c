// bump_alloc.cl — a trivial stand-in for the device allocator (device/), for the SPIR-V
// engine's tests only: it exports cldm_malloc/cldm_free/cldm_calloc/cldm_realloc/
// cldm_aligned_alloc/cldm_new_failed with the signatures of device/include/cldm_device.h, so
// that lowering can be tested before (and independently of) the real allocator.
//
// Heap layout (all offsets in bytes from the heap pointer, header words are uint):
//   [0]  next    offset of the next free byte (the host writes BUMP_ARENA = 64)
//   [4]  limit   size of the heap buffer in bytes (the host writes it)
//   [8]  mallocs successful allocations (malloc, calloc, realloc, aligned_alloc)
//   [12] frees   calls of free with a non-NULL pointer (and realloc's implicit frees)
//   [16] failed  requests that returned NULL for lack of space or bad arguments
//   [64] arena:  blocks of [16-byte header: uint size][payload], payload 16-byte aligned
// Nothing is ever reused. A 64-bit size above 4 GiB fails.
#define HDR_NEXT 0
#define HDR_LIMIT 1
#define HDR_MALLOCS 2
#define HDR_FREES 3
#define HDR_FAILED 4
#define HDR_STOPS 5

static global uint *hdr(global void *heap) { return (global uint *)heap; }

static global void *bump(global void *heap, size_t size, size_t align) {
  global uint *h = hdr(heap);
  if (size == 0 || size > 0x7FFFFFF0u || align > 65536u || (align & (align - 1)) != 0) {
    atomic_inc(&h[HDR_FAILED]);
    return 0;
  }
  if (align < 16)
    align = 16;
  uint need = (uint)(((size + 15) & ~(size_t)15) + align + 16);
  uint off = atomic_add(&h[HDR_NEXT], need);
  if ((ulong)off + need > h[HDR_LIMIT]) {
    atomic_inc(&h[HDR_FAILED]);
    return 0;
  }
  global uchar *base = (global uchar *)heap;
  size_t addr = (size_t)base + off + 16; /* align the address, not the offset */
  size_t payload = ((addr + align - 1) & ~(align - 1)) - (size_t)base;
  *(global uint *)(base + payload - 16) = (uint)size;
  atomic_inc(&h[HDR_MALLOCS]);
  return base + payload;
}

global void *cldm_malloc(global void *heap, size_t size) { return bump(heap, size, 16); }

void cldm_free(global void *heap, global void *ptr) {
  if (ptr)
    atomic_inc(&hdr(heap)[HDR_FREES]);
}

global void *cldm_calloc(global void *heap, size_t count, size_t size) {
  size_t total = count * size;
  if (size != 0 && total / size != count) {
    atomic_inc(&hdr(heap)[HDR_FAILED]);
    return 0;
  }
  global uchar *p = bump(heap, total, 16);
  if (p)
    for (size_t i = 0; i < total; i++)
      p[i] = 0;
  return p;
}

global void *cldm_realloc(global void *heap, global void *ptr, size_t size) {
  if (!ptr)
    return bump(heap, size, 16);
  if (size == 0) {
    cldm_free(heap, ptr);
    return 0;
  }
  global uchar *old = ptr;
  size_t old_size = *(global uint *)(old - 16);
  global uchar *p = bump(heap, size, 16);
  if (!p)
    return 0;
  size_t n = old_size < size ? old_size : size;
  for (size_t i = 0; i < n; i++)
    p[i] = old[i];
  cldm_free(heap, ptr);
  return p;
}

global void *cldm_aligned_alloc(global void *heap, size_t align, size_t size) {
  return bump(heap, size, align);
}

void cldm_new_failed(global void *heap) { atomic_inc(&hdr(heap)[HDR_STOPS]); }
