// helper_two_kernels.cl — one allocating helper called from two kernels; a kernel calling
// another kernel (llvm-spirv emits entry-point wrappers that call the kernel bodies).
extern global void *malloc(size_t size);
extern void free(global void *ptr);

int sum_to(int n, int scale) {
  global int *p = malloc((size_t)n * sizeof(int));
  if (!p)
    return -1;
  for (int i = 0; i < n; i++)
    p[i] = i * scale;
  int s = 0;
  for (int i = 0; i < n; i++)
    s += p[i];
  free(p);
  return s;
}

kernel void k_helper_a(global int *out, int n) { out[get_global_id(0)] = sum_to(n, 1); }
kernel void k_helper_b(global int *out, int n) { out[get_global_id(0)] = sum_to(n, 2); }
kernel void k_calls_kernel(global int *out, int n) { k_helper_a(out, n); }
kernel void k_plain(global int *out, int n) { out[get_global_id(0)] = 7 + n; }
