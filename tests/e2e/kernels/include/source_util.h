/* source_util.h — a header the source-program tests find through -I (test_e2e_source.c): an
 * allocating helper in a header, as applications write them. */
#ifndef SOURCE_UTIL_H
#define SOURCE_UTIL_H

static global uint *source_util_iota(uint n, uint base) {
  global uint *p = (global uint *)malloc(n * sizeof(uint));
  for (uint k = 0; p && k < n; k++)
    p[k] = base + k;
  return p;
}

#endif
