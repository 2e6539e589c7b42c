/*
 * timing.c — the suite's clocks: kernel execution times from event profiling
 * (CL_PROFILING_COMMAND_START to _END), a monotonic host clock for latencies, and series of
 * repetitions summarised as best (smallest) and median.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "suite.h"

void bs_series_add(bs_series *s, double v) {
  if (s->n == s->cap) {
    s->cap = s->cap ? 2 * s->cap : 16;
    s->v = realloc(s->v, (size_t)s->cap * sizeof *s->v);
    if (!s->v) {
      fprintf(stderr, "cldm-bench-suite: out of host memory\n");
      exit(2);
    }
  }
  s->v[s->n++] = v;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

double bs_series_best(const bs_series *s) {
  double b = s->n ? s->v[0] : 0;
  for (int i = 1; i < s->n; i++)
    if (s->v[i] < b)
      b = s->v[i];
  return b;
}

double bs_series_worst(const bs_series *s) {
  double b = s->n ? s->v[0] : 0;
  for (int i = 1; i < s->n; i++)
    if (s->v[i] > b)
      b = s->v[i];
  return b;
}

double bs_series_median(const bs_series *s) {
  if (!s->n)
    return 0;
  double *c = malloc((size_t)s->n * sizeof *c);
  if (!c)
    return 0;
  memcpy(c, s->v, (size_t)s->n * sizeof *c);
  qsort(c, (size_t)s->n, sizeof *c, cmp_double);
  double m = s->n % 2 ? c[s->n / 2] : (c[s->n / 2 - 1] + c[s->n / 2]) / 2;
  free(c);
  return m;
}

void bs_series_free(bs_series *s) {
  free(s->v);
  memset(s, 0, sizeof *s);
}

double bs_now_us(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e6 + (double)t.tv_nsec * 1e-3;
}

double bs_event_ms(cl_event ev) {
  BS_CHECK(clWaitForEvents(1, &ev));
  cl_ulong t0 = 0, t1 = 0;
  BS_CHECK(clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_START, sizeof t0, &t0, NULL));
  BS_CHECK(clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_END, sizeof t1, &t1, NULL));
  return (double)(t1 - t0) * 1e-6;
}
