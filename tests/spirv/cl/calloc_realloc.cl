// calloc_realloc.cl — calloc, realloc and aligned_alloc (spec 2.1 numbers 3-5).
extern global void *malloc(size_t size);
extern void free(global void *ptr);
extern global void *calloc(size_t count, size_t size);
extern global void *realloc(global void *ptr, size_t size);
extern global void *aligned_alloc(size_t alignment, size_t size);

// out = number of zero ints in a calloc'd block of n ints (n expected), -1 on NULL
kernel void k_calloc(global int *out, int n) {
  global int *p = calloc((size_t)n, sizeof(int));
  if (!p) {
    out[get_global_id(0)] = -1;
    return;
  }
  int zeros = 0;
  for (int i = 0; i < n; i++)
    zeros += p[i] == 0;
  free(p);
  out[get_global_id(0)] = zeros;
}

// out = sum of the first two values after growing a 2-int block to n ints (expected 30)
kernel void k_realloc(global int *out, int n) {
  global int *p = malloc(2 * sizeof(int));
  if (!p) {
    out[get_global_id(0)] = -1;
    return;
  }
  p[0] = 10;
  p[1] = 20;
  global int *q = realloc(p, (size_t)n * sizeof(int));
  if (!q) {
    free(p);
    out[get_global_id(0)] = -2;
    return;
  }
  q[n - 1] = 5;
  int r = q[0] + q[1] + q[n - 1] - 5;
  free(q);
  out[get_global_id(0)] = r;
}

// out = 1 if aligned_alloc(256, n) is 256-byte aligned and usable
kernel void k_aligned(global int *out, int n) {
  global uchar *p = aligned_alloc(256, (size_t)n);
  if (!p) {
    out[get_global_id(0)] = -1;
    return;
  }
  p[n - 1] = 1;
  out[get_global_id(0)] = ((size_t)p % 256 == 0) && p[n - 1] == 1;
  free(p);
}
