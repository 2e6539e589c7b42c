/*
 * alloc_fixture.h — the fixture of the device allocator's end-to-end tests (test_alloc_*.c,
 * one file per concern): one allocator module on pocl. The test kernels
 * (kernels/alloc_test.cl) linked with the embedded module named by argv[1] (e.g.
 * "cldm_alloc.cl20.spir64") call cldm_malloc & co. directly; the host creates and resets the
 * heap by writing cldm_heap_image_write's image and reads statistics with
 * cldm_heap_stats_decode. Results come back as heap offsets, which the host checks for
 * bounds, alignment and overlap on its own.
 *
 * Environment: CLDM_TEST_DATA_DIR (set by ctest) holds the linked modules;
 * CLDM_TEST_STRESS_SCALE=n multiplies the stress test's work-items (default 1; 8 gives 2^20
 * allocations per launch); CLDM_TEST_FILTER=<cmocka pattern> runs a subset.
 *
 * A module whose address width differs from the device's is not built (pocl 6.0 rejects a
 * Physical32 module on its 64-bit CPU device with CL_LINK_PROGRAM_FAILURE and then crashes in
 * clBuildProgram); its tests skip. ctest registers only modules the device can run.
 *
 * Each test file's main: alloc_fixture_args(argc, argv), then
 * cmocka_run_group_tests_name(g_module, tests, alloc_group_setup, alloc_group_teardown).
 */
#ifndef CLDM_ALLOC_FIXTURE_H
#define CLDM_ALLOC_FIXTURE_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "cldm_heap_layout.h"
#include "dtest.h"

enum {
  K_MALLOC,
  K_CHECK_FREE,
  K_FREE_OFFS,
  K_FREE_FOREIGN,
  K_ALIGNED,
  K_DIRTY,
  K_CALLOC,
  K_CALLOC_OVERFLOW,
  K_REALLOC,
  K_RANDOM_ALLOC,
  K_STRESS,
  K_CHURN,
  K_HEAP_ADDR,
  K_COUNT
};

extern const char *g_module; /* e.g. "cldm_alloc.cl20.spir64" */
extern cldm_dtest_env g_env;
extern cl_kernel g_k[K_COUNT];

/* Reads argv (the module name) and CLDM_TEST_FILTER; returns 0, or 2 after a usage message. */
int alloc_fixture_args(int argc, char **argv);
/* Group set-up and tear-down: the device, the module's program, every kernel of g_k. */
int alloc_group_setup(void **state);
int alloc_group_teardown(void **state);
/* Every test starts here: a module the device cannot build is a skip only where the device's
 * address width differs from the module's (a Physical32 module on a 64-bit device); otherwise
 * it is a failure. */
void require_module(void);

/* ---- host-side expectations --------------------------------------------------------------- */

/* Offset of page 0 from the heap base: where the allocator puts it for the heap buffer's device
 * address (cldm_heap_first_page). */
uint64_t first_page_offset(const cldm_dtest_heap *heap);
/* Bytes the allocator holds for a malloc of `size` (what bytes_in_use counts). */
uint64_t expected_bytes(uint64_t size);
/* Bytes in use that the non-NULL allocations (offs[i], sizes[i] bytes) hold: runs by their
 * pages, slots by the class of their slab as the page descriptors say (a request whose class was
 * full may have borrowed a larger class's slot, cldm_slab_borrow). */
uint64_t held_bytes(const cldm_dtest_heap *heap, const uint32_t *sizes, const uint64_t *offs,
                    size_t n);
/* Bytes of the pages that the non-NULL allocations (offs[i], sizes[i] bytes, made by one launch
 * on an empty heap) hold: each distinct span of the slabs they lie in, each run. *kept: the
 * bytes of those slabs that stay held once the blocks are freed, the current slabs with
 * tickets left to draw (the others retire with their last free). */
uint64_t expected_held(const cldm_dtest_heap *heap, const uint32_t *sizes, const uint64_t *offs,
                       size_t n, uint64_t *kept);
/* Checks that the non-NULL allocations (offs[i], lens[i] bytes) lie in the pages (from
 * first_page_offset), start 16-byte aligned (relative to the heap base) and do not overlap.
 * Returns how many there are. */
size_t check_disjoint(const cldm_dtest_heap *heap, const uint64_t *offs, const uint32_t *lens,
                      size_t n);
/* Asserts that the room index (cldm_heap_layout.h) marks every slab that the page descriptors
 * show with a free slot, with the mark's summary bit and its class's bit (between launches; the
 * last resort relies on it), and that no class counts a refill or a clear as still under way. */
void assert_index_exact(const cldm_dtest_heap *heap);
/* Asserts the room index (assert_index_exact) and the heap's counters: bytes in use, live
 * allocations, failed allocations, invalid frees (and size; bytes held and their peak within
 * bounds). */
void assert_stats(const cldm_dtest_heap *heap, uint64_t bytes, uint64_t live, uint64_t failed,
                  uint64_t invalid);
/* Asserts the whole heap is free: one allocation of every usable byte succeeds (which needs
 * every page back in the pool), and frees it again: pages held are 0 then, their peak the heap. */
void assert_whole_heap_free(const cldm_dtest_heap *heap);

/* ---- kernel drivers ------------------------------------------------------------------------ */

/* malloc(sizes[i]) for i < n, filled with the work-item's pattern; offsets into offs. */
void run_malloc(const cldm_dtest_heap *heap, const uint32_t *sizes, uint64_t *offs, size_t n,
                int do_fill);
/* Checks each allocation's pattern (work-item i's, sizes[i] bytes) and frees it if do_free.
 * Returns the number of pattern words found wrong. */
uint32_t run_check_free(const cldm_dtest_heap *heap, const uint32_t *sizes, const uint64_t *offs,
                        size_t n, int do_free);
/* free(heap + offs[i]) for each i (any offsets, CLDM_DTEST_NULL_OFF = free(NULL)). */
void run_free_offs(const cldm_dtest_heap *heap, const uint64_t *offs, size_t n);
/* One malloc of `size` bytes; returns its offset. */
uint64_t malloc_one(const cldm_dtest_heap *heap, uint32_t size);

#endif /* CLDM_ALLOC_FIXTURE_H */
