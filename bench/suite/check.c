/*
 * check.c — correctness checks run on every repetition, so that no figure comes from a run
 * that went wrong: no NULL where the heap has room, 16-byte alignment, no two live blocks
 * overlapping (addresses sorted on the host), and an empty heap after the frees
 * (clGetDeviceHeapInfoEXT). A failed check is reported and counted; the case stops.
 */
#include <stdarg.h>
#include <stdlib.h>

#include "suite.h"

static int failures;

void bs_fail(const char *fmt, ...) {
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  fprintf(stderr, "[bench] CHECK FAILED: %s\n", msg);
  bs_out_note_failure(msg);
  failures++;
}

int bs_failures(void) { return failures; }

static int cmp_block(const void *a, const void *b) {
  const bs_block *x = a, *y = b;
  return x->addr < y->addr ? -1 : x->addr > y->addr;
}

int bs_check_disjoint(const char *what, bs_block *b, size_t count) {
  for (size_t i = 0; i < count; i++)
    if (b[i].addr % 16) {
      bs_fail("%s: block at 0x%llx is not 16-byte aligned", what, (unsigned long long)b[i].addr);
      return -1;
    }
  qsort(b, count, sizeof *b, cmp_block);
  for (size_t i = 1; i < count; i++)
    if (b[i - 1].addr + b[i - 1].size > b[i].addr) {
      bs_fail("%s: blocks at 0x%llx (%llu bytes) and 0x%llx overlap", what,
              (unsigned long long)b[i - 1].addr, (unsigned long long)b[i - 1].size,
              (unsigned long long)b[i].addr);
      return -1;
    }
  return 0;
}

long bs_check_blocks(const char *what, const uint64_t *ptrs, uint32_t n, uint32_t size,
                     uint32_t mixed, uint32_t k, uint32_t seed, int expect_all, uint64_t *lo,
                     uint64_t *hi) {
  bs_block *b = malloc((size_t)n * sizeof *b + 1);
  if (!b) {
    bs_fail("%s: out of host memory", what);
    return -1;
  }
  size_t count = 0;
  long result = 0;
  for (uint32_t i = 0; i < n; i++) {
    int selected = bc_selected(i, k) != 0;
    if (!selected && ptrs[i]) {
      bs_fail("%s: work-item %u did not allocate but wrote a block", what, i);
      result = -1;
      break;
    }
    if (selected && !ptrs[i] && expect_all) {
      bs_fail("%s: work-item %u got NULL although the heap had room", what, i);
      result = -1;
      break;
    }
    if (ptrs[i])
      b[count++] = (bs_block){ptrs[i], bc_size(i, size, mixed, seed)};
  }
  if (result == 0 && bs_check_disjoint(what, b, count) != 0)
    result = -1;
  if (result == 0) {
    result = (long)count;
    if (lo)
      *lo = count ? b[0].addr : 0;
    if (hi) {
      uint64_t end = 0;
      for (size_t i = 0; i < count; i++)
        if (b[i].addr + b[i].size > end)
          end = b[i].addr + b[i].size;
      *hi = end;
    }
  }
  free(b);
  return result;
}

int bs_check_heap_empty(bs_session *s, const char *what, int no_failures) {
  cl_ulong live = bs_heap_info(s, CL_DEVICE_HEAP_INFO_LIVE_ALLOCATIONS_EXT);
  cl_ulong used = bs_heap_info(s, CL_DEVICE_HEAP_INFO_BYTES_IN_USE_EXT);
  cl_ulong invalid = bs_heap_info(s, CL_DEVICE_HEAP_INFO_INVALID_FREES_EXT);
  cl_ulong failed = no_failures ? bs_heap_info(s, CL_DEVICE_HEAP_INFO_FAILED_ALLOCATIONS_EXT) : 0;
  if (live || used || invalid || failed) {
    bs_fail("%s: heap not empty after the frees: %llu live allocations, %llu bytes in use, "
            "%llu invalid frees, %llu failed allocations",
            what, (unsigned long long)live, (unsigned long long)used, (unsigned long long)invalid,
            (unsigned long long)failed);
    return -1;
  }
  return 0;
}
