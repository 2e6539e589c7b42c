/* census.h — a count of a heap's metadata read back to the host, for cldm_bench_alloc's
 * CLDM_BENCH_CENSUS (bench/alloc/README.md). */
#ifndef CLDM_BENCH_CENSUS_H
#define CLDM_BENCH_CENSUS_H

#include "dtest.h"

/* Reads the header, the current-slab words, the page descriptors and the pool of `heap` (the
 * device idle) and prints one line on stdout, `when` naming the moment. */
void cldm_bench_census(cldm_dtest_env *env, const cldm_dtest_heap *heap, const char *when);

#endif
