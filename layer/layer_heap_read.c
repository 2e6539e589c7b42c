/*
 * layer_heap_read.c — what the host reads of a device heap (layer_heap.c makes and frees
 * them): the statistics of clGetDeviceHeapInfoEXT (spec 1.3), checked mode's queries, its
 * reports after each kernel and its inspection of a whole heap (spec 2.4), CLDM_OOM's report and
 * census (spec 2.5) and the path counters of probe builds. Each read holds the heap
 * (cldm_heap_get) and is a blocking command on the caller's queue, ordered after the commands
 * enqueued on it before.
 *
 * Checked mode (CLDM_CHECK=1): heaps are made with a check area (the checked modules' event
 * log); after each kernel that used the heap (cldm_heap_after_kernel) the layer reads the check
 * area, has layer_check.c print its events and empties the log. CLDM_OOM reads the header's
 * failed-allocation count after each such kernel. Throwing operator new (spec 2.2): the header's
 * count of those that failed is read after each kernel that may have one, with the reports
 * above, else by layer_new.c's watches (cldm_heap_enqueue_new_failed_read, not blocking).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cldm_device.h"
#include "cldm_heap.h"
#include "cldm_heap_layout.h"
#include "cldm_layer.h"

/* Usable size a heap created now for `device` would have (spec 1.3, no heap yet). */
static cl_int cldm_heap_prospective_size(cl_device_id device, cl_ulong *value) {
  cldm_device_state st;
  cldm_device_snapshot(device, &st);
  cldm_heap_geometry g;
  if (cldm_heap_geometry_of(&st, &g) != 0)
    return CL_OUT_OF_HOST_MEMORY; /* as the heap's creation would fail */
  *value = g.usable_bytes;
  return CL_SUCCESS;
}

/* CLDM_PROBE_COUNTERS=1: the path counters (device/cl/cldm_probe.clh) that the launch of
 * `kernel` added to the header's, whose values at the last report are in `last` (a count below
 * its last value: the heap was reset, and the launch added the count itself), one line to stderr
 * unless it added none (every launch of a build without the counters: nothing printed). */
static void cldm_heap_probe_report(const char *kernel, const cldm_heap_header *hdr,
                                   uint32_t *last) {
  static const char *const names[] = {"flushes",   "pool_reads",  "flush_rows", "searches",
                                      "finals",    "late_rounds", "stamped",    "again",
                                      "exhausted", "borrows",     "refills"};
  _Static_assert(sizeof names / sizeof names[0] == CLDM_HDR_PROBE_WORDS, "a name per counter");
  _Static_assert(sizeof((cldm_check_totals *)0)->probe == 4 * CLDM_HDR_PROBE_WORDS, "a count each");
  const cldm_u32 *words = (const cldm_u32 *)hdr;
  uint32_t added[CLDM_HDR_PROBE_WORDS], any = 0;
  for (unsigned i = 0; i < CLDM_HDR_PROBE_WORDS; i++) {
    uint32_t now = words[CLDM_HDR_WORD_PROBE + i];
    added[i] = now >= last[i] ? now - last[i] : now;
    last[i] = now;
    any |= added[i];
  }
  if (!any)
    return;
  fprintf(stderr, "cl_ext_device_malloc: probe %s", kernel);
  for (unsigned i = 0; i < CLDM_HDR_PROBE_WORDS; i++)
    fprintf(stderr, " %s=%u", names[i], (unsigned)added[i]);
  fprintf(stderr, "\n");
}

/* cldm_heap_after_kernel with a hold on heap h (copied into *copy). */
static cl_int cldm_heap_after_kernel_held(cl_command_queue queue, cldm_heap *h, cldm_heap *copy,
                                          const char *kernel) {
  cldm_heap_header hdr;
  cl_int err = cldm_heap_copy(copy, queue, 0, sizeof hdr, &hdr, 0);
  if (err != CL_SUCCESS)
    return err;
  if (hdr.magic != CLDM_HEAP_MAGIC || hdr.layout_version != CLDM_HEAP_LAYOUT_VERSION) {
    fprintf(stderr, "cl_ext_device_malloc: kernel %s: the heap's header is damaged\n", kernel);
    return CL_SUCCESS;
  }
  uint64_t failed = ((uint64_t)hdr.failed_hi << 32) | hdr.failed_lo;
  uint64_t new_failed = cldm_hdr_new_failed(hdr);
  cldm_check_totals totals = copy->totals;
  if (cldm_config_probe())
    cldm_heap_probe_report(kernel, &hdr, totals.probe);
  /* a reset restarts the counts at 0 */
  uint64_t new_failed_allocs = failed >= totals.failed ? failed - totals.failed : failed;
  totals.failed = failed;
  uint64_t stopped = new_failed >= totals.new_failed ? new_failed - totals.new_failed : new_failed;
  totals.new_failed = new_failed;
  size_t area_bytes = cldm_check_area_bytes(&copy->geom);
  void *area = NULL;
  if (area_bytes && cldm_hdr_check_offset(hdr) == copy->geom.check_offset) {
    area = malloc(area_bytes);
    if (!area)
      return CL_OUT_OF_HOST_MEMORY;
    err = cldm_heap_copy(copy, queue, copy->geom.check_offset, area_bytes, area, 0);
    if (err == CL_SUCCESS) {
      cldm_check_report_kernel(kernel, area, area_bytes, copy->geom.check_capacity, &totals);
      uint32_t claimed;
      memcpy(&claimed, area, sizeof claimed);
      if (claimed) { /* empty the log: the claim counter, then the entries written */
        size_t used = (size_t)CLDM_CHECK_ENTRY_BYTES *
                      (claimed < copy->geom.check_capacity ? claimed : copy->geom.check_capacity);
        memset(area, 0, area_bytes);
        err = cldm_heap_copy(copy, queue, copy->geom.check_offset, 4, area, 1);
        if (err == CL_SUCCESS)
          err = cldm_heap_copy(copy, queue, copy->geom.check_offset + CLDM_CHECK_AREA_HEADER_BYTES,
                               used, area, 1);
      }
    }
    free(area);
  }
  cldm_heap_set_totals(h, &totals);
  cldm_heap_census *census = NULL; /* CLDM_OOM: where the heap's memory is, after a NULL */
  if (new_failed_allocs && cldm_config_oom() != CLDM_OOM_NULL) {
    void *span = malloc(copy->geom.stats_span);
    census = malloc(sizeof *census);
    if (!span || !census ||
        cldm_heap_copy(copy, queue, 0, copy->geom.stats_span, span, 0) != CL_SUCCESS ||
        cldm_heap_census_decode(span, copy->geom.stats_span, census) != 0) {
      free(census);
      census = NULL;
    }
    free(span);
  }
  cldm_check_report_oom(kernel, new_failed_allocs, copy->geom.usable_bytes, census); /* may abort */
  free(census);
  cldm_check_report_bad_alloc(kernel, stopped, copy->geom.usable_bytes); /* may abort */
  return err;
}

cl_int cldm_heap_after_kernel(cl_command_queue queue, cl_context context, cl_device_id device,
                              const char *kernel) {
  cldm_heap copy;
  cldm_heap *h = cldm_heap_get(context, device, &copy);
  if (!h)
    return CL_SUCCESS;
  cl_int err = cldm_heap_after_kernel_held(queue, h, &copy, kernel);
  cldm_heap_release(h, 1);
  return err;
}

cl_int cldm_heap_enqueue_new_failed_read(cl_context context, cl_device_id device, cl_event after,
                                         uint32_t dst[2], cl_event *ev) {
  cldm_heap copy;
  cldm_heap *h = cldm_heap_get(context, device, &copy);
  if (!h)
    return CL_INVALID_CONTEXT;
  size_t offset = 4u * CLDM_HDR_WORD_NEW_FAILED_LO;
  cl_int err = copy.svm ? cldm_next->clEnqueueSVMMemcpy(copy.queue, CL_FALSE, dst,
                                                        (unsigned char *)copy.svm_ptr + offset, 8,
                                                        1, &after, ev)
                        : cldm_next->clEnqueueReadBuffer(copy.queue, copy.buf, CL_FALSE, offset, 8,
                                                         dst, 1, &after, ev);
  cldm_heap_binding held;
  cldm_heap_binding_of(h, &held);
  if (err == CL_SUCCESS) {
    cldm_next->clFlush(copy.queue);   /* submitted now: its callback, not a later wait, reports */
    cldm_heap_hold_until(&held, *ev); /* the memory stays until the read completed */
  } else
    cldm_heap_let_go(&held);
  return err;
}

/* The checked-mode queries (spec 2.4) of heap h. */
static cl_int cldm_heap_check_info(cl_command_queue queue, const cldm_heap *h,
                                   cl_device_heap_info_ext name, cl_ulong *value) {
  *value = 0;
  if (name == CL_DEVICE_HEAP_INFO_CHECKED_EXT) {
    *value = h->geom.check_offset != 0;
    return cldm_next->clFinish(queue);
  }
  if (!h->geom.check_offset)
    return cldm_next->clFinish(queue); /* not checked: no such events */
  if (name == CL_DEVICE_HEAP_INFO_DAMAGED_BLOCKS_EXT)
    return cldm_heap_inspect(h, queue, "inspection", value);
  size_t area_bytes = cldm_check_area_bytes(&h->geom);
  void *area = malloc(area_bytes);
  if (!area)
    return CL_OUT_OF_HOST_MEMORY;
  cl_int err = cldm_heap_copy(h, queue, h->geom.check_offset, area_bytes, area, 0);
  cldm_check_log log;
  if (err == CL_SUCCESS &&
      cldm_check_log_decode(area, area_bytes, h->geom.check_capacity, &log, NULL, 0) == 0) {
    switch (name) {
    case CL_DEVICE_HEAP_INFO_DOUBLE_FREES_EXT:
      *value = log.counts[CLDM_CHECK_FREE_DOUBLE];
      break;
    case CL_DEVICE_HEAP_INFO_INTERIOR_FREES_EXT:
      *value = log.counts[CLDM_CHECK_FREE_INTERIOR];
      break;
    case CL_DEVICE_HEAP_INFO_OUTSIDE_FREES_EXT:
      *value = log.counts[CLDM_CHECK_FREE_OUTSIDE];
      break;
    case CL_DEVICE_HEAP_INFO_UNALLOCATED_FREES_EXT:
      *value = log.counts[CLDM_CHECK_FREE_UNALLOCATED];
      break;
    case CL_DEVICE_HEAP_INFO_OVERFLOWS_EXT:
      *value = log.counts[CLDM_CHECK_OVERFLOW];
      break;
    default: /* CL_DEVICE_HEAP_INFO_LOST_EVENTS_EXT: counted, not logged, as reported */
      *value = h->totals.lost;
      break;
    }
  }
  free(area);
  return err;
}

/* cldm_heap_info of a heap held, copied into *copy. */
static cl_int cldm_heap_info_held(cl_command_queue queue, const cldm_heap *copy,
                                  cl_device_heap_info_ext name, cl_ulong *value) {
  if (name >= CL_DEVICE_HEAP_INFO_CHECKED_EXT && name <= CL_DEVICE_HEAP_INFO_DAMAGED_BLOCKS_EXT)
    return cldm_heap_check_info(queue, copy, name, value);
  size_t span = copy->geom.stats_span;
  void *bytes = malloc(span);
  if (!bytes)
    return CL_OUT_OF_HOST_MEMORY;
  /* a blocking read on the caller's queue: ordered after every command enqueued before */
  cl_int err = cldm_heap_copy(copy, queue, 0, span, bytes, 0);
  cldm_heap_stats stats;
  if (err == CL_SUCCESS && cldm_heap_stats_decode(bytes, span, &stats) != 0) {
    cldm_log(CLDM_LOG_ERROR, "the device heap's header is damaged (bad magic or version)");
    err = CL_OUT_OF_RESOURCES;
  }
  cldm_heap_header hdr;
  memcpy(&hdr, bytes, sizeof hdr); /* the span starts with the header */
  free(bytes);
  if (err != CL_SUCCESS)
    return err;
  switch (name) {
  case CL_DEVICE_HEAP_INFO_SIZE_EXT:
    *value = stats.size;
    break;
  case CL_DEVICE_HEAP_INFO_BYTES_IN_USE_EXT:
    *value = stats.bytes_in_use;
    break;
  case CL_DEVICE_HEAP_INFO_BYTES_HELD_EXT:
    *value = stats.bytes_held;
    break;
  case CL_DEVICE_HEAP_INFO_PEAK_BYTES_HELD_EXT:
    *value = stats.peak_bytes_held;
    break;
  case CL_DEVICE_HEAP_INFO_LIVE_ALLOCATIONS_EXT:
    *value = stats.live_allocations;
    break;
  case CL_DEVICE_HEAP_INFO_FAILED_ALLOCATIONS_EXT:
    *value = stats.failed_allocations;
    break;
  case CL_DEVICE_HEAP_INFO_BAD_ALLOCS_EXT:
    *value = cldm_hdr_new_failed(hdr);
    break;
  default:
    *value = stats.invalid_frees;
    break;
  }
  return CL_SUCCESS;
}

cl_int cldm_heap_info(cl_command_queue queue, cl_context context, cl_device_id device,
                      cl_device_heap_info_ext name, cl_ulong *value) {
  cldm_heap copy;
  cldm_heap *h = cldm_heap_get(context, device, &copy);
  if (!h) {
    cl_int err = cldm_next->clFinish(queue); /* "as of all commands enqueued before" */
    if (err != CL_SUCCESS)
      return err;
    *value = name == CL_DEVICE_HEAP_INFO_CHECKED_EXT ? (cl_ulong)cldm_config_check() : 0;
    return name == CL_DEVICE_HEAP_INFO_SIZE_EXT ? cldm_heap_prospective_size(device, value)
                                                : CL_SUCCESS;
  }
  cl_int err = cldm_heap_info_held(queue, &copy, name, value);
  cldm_heap_release(h, 1);
  return err;
}
