// two_level.cl — allocation two calls deep: kernel -> outer -> inner -> malloc/free.
extern global void *malloc(size_t size);
extern void free(global void *ptr);

__attribute__((noinline)) global int *inner(int n) { return malloc((size_t)n * sizeof(int)); }

__attribute__((noinline)) int outer(int n) {
  global int *p = inner(n);
  if (!p)
    return -1;
  for (int i = 0; i < n; i++)
    p[i] = 3 * i;
  int s = 0;
  for (int i = 0; i < n; i++)
    s += p[i];
  free(p);
  return s;
}

int not_allocating(int n) { return n + 1; }

kernel void k_two_level(global int *out, int n) {
  out[get_global_id(0)] = outer(n) + not_allocating(0) - 1;
}
kernel void k_plain(global int *out, int n) { out[get_global_id(0)] = not_allocating(n) + 6; }
