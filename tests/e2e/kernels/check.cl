/* check.cl — one kernel per event kind of checked mode (spec 2.4), run by test_e2e_check.c
 * with checked mode on and off. Every kernel runs as one work-item, so the blocks it takes
 * are consecutive slots of one slab. out[0] receives a pointer the test looks for in the
 * report. */
extern global void *malloc(size_t size);
extern void free(global void *ptr);
extern global void *realloc(global void *ptr, size_t size);
extern global void *calloc(size_t count, size_t size);

kernel void double_free(global ulong *out) {
  global uchar *p = (global uchar *)malloc(64);
  free(p);
  free(p);
  out[0] = (ulong)p;
}

kernel void interior_free(global ulong *out) {
  global uchar *p = (global uchar *)malloc(64);
  free(p + 16);
  free(p);
  out[0] = (ulong)(p + 16);
}

kernel void outside_free(global ulong *out) {
  free((global void *)out); /* a buffer of the application, not the heap */
  out[0] = 0;
}

/* the slot after two consecutive allocations: a block start never handed out */
kernel void unallocated_free(global ulong *out) {
  global uchar *a = (global uchar *)malloc(64), *b = (global uchar *)malloc(64);
  global uchar *c = b + (b - a);
  free(c);
  free(a);
  free(b);
  out[0] = (ulong)c;
}

/* writes one byte past a 20-byte block, then frees it */
kernel void overflow_free(global ulong *out) {
  global uchar *p = (global uchar *)malloc(20);
  for (int i = 0; i <= 20; i++)
    p[i] = (uchar)i;
  free(p);
  out[0] = (ulong)p;
}

/* the same through realloc, which checks and frees the old block */
kernel void overflow_realloc(global ulong *out) {
  global uchar *p = (global uchar *)calloc(1, 20);
  p[21] = 1;
  global uchar *q = (global uchar *)realloc(p, 40);
  free(q);
  out[0] = (ulong)p;
}

/* writes past a 20-byte block and keeps it: found by an inspection */
kernel void overflow_live(global ulong *out) {
  global uchar *p = (global uchar *)malloc(20);
  p[24] = 7;
  out[0] = (ulong)p;
}

/* `n` blocks of 100 bytes kept (leaks unless freed by release_leaks) */
kernel void leak(global ulong *out) {
  size_t i = get_global_id(0);
  out[i] = (ulong)malloc(100);
}

kernel void release_leaks(global ulong *out) {
  size_t i = get_global_id(0);
  free((global void *)out[i]);
  out[i] = 0;
}

/* a request larger than any heap of the tests */
kernel void too_big(global ulong *out) {
  size_t i = get_global_id(0);
  out[i] = (ulong)malloc((size_t)1 << 30);
}

/* more events than the log holds: double frees of one block */
kernel void many_events(global ulong *out, uint n) {
  global uchar *p = (global uchar *)malloc(64);
  free(p);
  for (uint i = 0; i < n; i++)
    free(p);
  out[0] = (ulong)p;
}

/* correct use: nothing to report */
kernel void clean(global ulong *out) {
  size_t i = get_global_id(0);
  global uint *p = (global uint *)malloc(4 * (i % 50 + 1));
  for (size_t k = 0; k <= i % 50; k++)
    p[k] = (uint)k;
  p = (global uint *)realloc(p, 4 * (i % 50 + 60));
  free(p);
  global uchar *z = (global uchar *)calloc(3, 7);
  free(z);
  out[i] = 0;
}
