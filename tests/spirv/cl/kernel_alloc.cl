// kernel_alloc.cl — allocation directly in a kernel, next to a kernel that does not allocate.
extern global void *malloc(size_t size);
extern void free(global void *ptr);

kernel void k_malloc(global int *out, int n) {
  size_t gid = get_global_id(0);
  global int *p = malloc(n * sizeof(int));
  if (!p) {
    out[gid] = -1;
    return;
  }
  for (int i = 0; i < n; i++)
    p[i] = (int)gid * i;
  int s = 0;
  for (int i = 0; i < n; i++)
    s += p[i];
  free(p);
  out[gid] = s;
}

kernel void k_plain(global int *out, int n) { out[get_global_id(0)] = 7 + n; }
