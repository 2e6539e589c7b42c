/* exhaust.cl — fill the heap to exhaustion with `size`-byte blocks, then free them. */
extern global void *malloc(size_t size);
extern void free(global void *ptr);

kernel void grab(global ulong *ptrs, ulong size) {
  size_t i = get_global_id(0);
  global uchar *p = (global uchar *)malloc(size);
  if (p) {
    p[0] = (uchar)i; /* touch first and last byte */
    p[size - 1] = (uchar)i;
  }
  ptrs[i] = (ulong)p;
}

kernel void release(global ulong *ptrs) {
  size_t i = get_global_id(0);
  free((global void *)ptrs[i]);
  ptrs[i] = 0;
}

/* frees a pointer that was never allocated, and one twice */
kernel void bad_frees(global ulong *ptrs) {
  size_t i = get_global_id(0);
  global uchar *p = (global uchar *)malloc(64);
  free(p + 16); /* not at an allocation start */
  free(p);
  free(p); /* already free */
  ptrs[i] = 0;
}
