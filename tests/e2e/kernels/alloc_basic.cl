/* alloc_basic.cl — end-to-end kernels: allocation in kernels and helpers (one and two
 * levels deep, shared by two kernels), persistence across launches, calloc/realloc/
 * aligned_alloc, kernels that do not allocate beside ones that do, many arguments. */
extern global void *malloc(size_t size);
extern void free(global void *ptr);
extern global void *calloc(size_t count, size_t size);
extern global void *realloc(global void *ptr, size_t size);
extern global void *aligned_alloc(size_t alignment, size_t size);

static uint pattern(size_t item, uint k) { return (uint)item * 7919u + k * 31u + 1u; }

/* two levels of helpers: fill_array -> make_array -> malloc */
global uint *make_array(uint n) { return (global uint *)malloc(n * sizeof(uint)); }

global uint *fill_array(size_t item, uint n) {
  global uint *a = make_array(n);
  if (a)
    for (uint k = 0; k < n; k++)
      a[k] = pattern(item, k);
  return a;
}

/* each work-item allocates (item % 13 + 1) * n words, fills them, keeps the pointer */
kernel void fill(global ulong *ptrs, uint n) {
  size_t i = get_global_id(0);
  ptrs[i] = (ulong)fill_array(i, (uint)(i % 13 + 1) * n);
}

/* a second kernel using the same helper */
kernel void fill_again(global ulong *ptrs, uint n) {
  size_t i = get_global_id(0);
  ptrs[i] = (ulong)fill_array(i, n);
}

/* does not allocate: reads what an earlier launch allocated (no hidden argument) */
kernel void check(global const ulong *ptrs, uint n, uint per_item, global uint *bad) {
  size_t i = get_global_id(0);
  global const uint *a = (global const uint *)ptrs[i];
  uint words = per_item ? (uint)(i % 13 + 1) * n : n;
  if (!a) {
    atomic_inc(bad);
    return;
  }
  for (uint k = 0; k < words; k++)
    if (a[k] != pattern(i, k)) {
      atomic_inc(bad);
      return;
    }
}

kernel void release(global ulong *ptrs) {
  size_t i = get_global_id(0);
  free((global void *)ptrs[i]);
  ptrs[i] = 0;
}

/* aligned_alloc(align, 4) per work-item into ptrs[i] (0: NULL); bad counts misaligned ones */
kernel void aligned_fill(global ulong *ptrs, global uint *bad, uint align) {
  size_t i = get_global_id(0);
  global uint *p = (global uint *)aligned_alloc(align, 4);
  ptrs[i] = (ulong)p;
  if (p && ((ulong)p & (align - 1u)))
    atomic_inc(bad);
  if (p)
    p[0] = (uint)i;
}

/* calloc zeroes, realloc keeps contents, aligned_alloc aligns; results[i] = 0 if all good */
kernel void variants(global uint *results) {
  size_t i = get_global_id(0);
  uint fails = 0;
  global uint *z = (global uint *)calloc(i % 5 + 1, 64);
  if (!z)
    fails |= 1;
  else
    for (uint k = 0; k < (i % 5 + 1) * 16; k++)
      if (z[k])
        fails |= 2;
  global uint *r = (global uint *)malloc(32);
  if (r) {
    for (uint k = 0; k < 8; k++)
      r[k] = pattern(i, k);
    r = (global uint *)realloc(r, 4096 + i);
    if (!r)
      fails |= 4;
    else
      for (uint k = 0; k < 8; k++)
        if (r[k] != pattern(i, k))
          fails |= 8;
  }
  ulong align = 64ul << (i % 5); /* 64 B .. 1 KiB */
  global char *al = (global char *)aligned_alloc(align, 100);
  if (!al || ((ulong)al & (align - 1)))
    fails |= 16;
  if (((ulong)z & 15) || ((ulong)r & 15))
    fails |= 32;
  free(z);
  free(r);
  free(al);
  free(0); /* no-op */
  results[i] = fails;
}

/* does not allocate at all */
kernel void plain(global uint *x) { x[get_global_id(0)] += 1; }

/* many existing arguments before the hidden one */
kernel void many_args(global ulong *out, uint a, uint b, uint c, ulong d, float e, global uint *f,
                      uint g, uint h) {
  size_t i = get_global_id(0);
  global uint *p = (global uint *)malloc(16);
  if (p) {
    p[0] = a + b + c + (uint)d + (uint)e + g + h;
    f[i] = p[0];
    free(p);
  } else {
    f[i] = 0xffffffffu;
  }
  out[i] = 1;
}
