/*
 * layer_check.c — the reports of checked mode and of CLDM_OOM (spec 2.4, 2.5): after a kernel
 * that used the heap, one line per event of the heap's event log and a summary; the line of a
 * kernel whose allocations returned NULL (and the abort of CLDM_OOM=abort); the line of a
 * kernel whose throwing operator new found no room (and the abort that stands for C++'s
 * std::terminate, spec 2.2); the leak report of
 * an inspection (context release, or the CL_DEVICE_HEAP_INFO_DAMAGED_BLOCKS_EXT query).
 * It works on bytes layer_heap.c read from the heap, decoded by device/host/cldm_check.c, and
 * writes to stderr whatever CLDM_LOG says: the reports are what the modes are for.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cldm_device.h"
#include "cldm_heap_layout.h"
#include "cldm_layer.h"

static pthread_mutex_t cldm_check_out_lock = PTHREAD_MUTEX_INITIALIZER; /* whole reports */

#define CLDM_CHECK_FIRST_BLOCKS 8 /* addresses a leak report names */

void cldm_check_report_kernel(const char *kernel, const void *area, size_t n, uint32_t capacity,
                              cldm_check_totals *t) {
  cldm_check_log log;
  cldm_check_event *ev = calloc(capacity ? capacity : 1, sizeof(*ev));
  if (!ev || cldm_check_log_decode(area, n, capacity, &log, ev, capacity) != 0) {
    free(ev);
    return;
  }
  uint64_t delta[8], total = 0;
  for (int k = 0; k < 8; k++) {
    /* counts only grow, except through a reset of the heap, which restarts them at 0 */
    delta[k] = log.counts[k] >= t->counts[k] ? log.counts[k] - t->counts[k] : log.counts[k];
    t->counts[k] = log.counts[k];
    total += delta[k];
  }
  uint64_t lost = total > log.logged ? total - log.logged : 0;
  t->lost += lost;
  if (total == 0) {
    free(ev);
    return;
  }
  pthread_mutex_lock(&cldm_check_out_lock);
  char line[512];
  for (uint32_t i = 0; i < log.logged; i++) {
    cldm_check_format_event(line, sizeof line, kernel, &ev[i]);
    fprintf(stderr, "%s\n", line);
  }
  int len = snprintf(line, sizeof line, "cl_ext_device_malloc: kernel %s: %" PRIu64 " heap events",
                     kernel, total);
  for (uint32_t k = 1; k < 8 && len > 0 && (size_t)len < sizeof line; k++)
    if (delta[k])
      len += snprintf(line + len, sizeof line - (size_t)len, ", %" PRIu64 " %s", delta[k],
                      cldm_check_kind_name(k));
  if (len > 0 && (size_t)len < sizeof line)
    snprintf(line + len, sizeof line - (size_t)len, " (%" PRIu64 " not logged: log full)", lost);
  fprintf(stderr, "%s\n", line);
  fflush(stderr);
  pthread_mutex_unlock(&cldm_check_out_lock);
  free(ev);
}

#define CLDM_CENSUS_NAMED 4 /* classes with the most free bytes that the census line names */

void cldm_check_format_census(char *line, size_t size, const char *kernel,
                              const cldm_heap_census *c) {
  double heap = c->size ? (double)c->size : 1.0, in_use = (double)c->run_pages * 65536.0;
  double free_slots = 0, current = 0;
  unsigned classes = 0, named[CLDM_CENSUS_NAMED], n_named = 0;
  for (unsigned k = 0; k < CLDM_CENSUS_CLASSES; k++) {
    const cldm_heap_census_class *e = &c->classes[k];
    in_use += (double)e->live * e->class_bytes;
    if (e->slots <= e->live)
      continue;
    double f = (double)(e->slots - e->live) * e->class_bytes;
    free_slots += f;
    current += (double)e->unissued * e->class_bytes;
    classes++;
    unsigned i = n_named < CLDM_CENSUS_NAMED ? n_named++ : CLDM_CENSUS_NAMED;
    for (; i > 0; i--) { /* insertion into the classes with the most free bytes, most first */
      const cldm_heap_census_class *o = &c->classes[named[i - 1]];
      if ((double)(o->slots - o->live) * o->class_bytes >= f)
        break;
      if (i < CLDM_CENSUS_NAMED)
        named[i] = named[i - 1];
    }
    if (i < CLDM_CENSUS_NAMED)
      named[i] = k;
  }
  int len = snprintf(line, size,
                     "cl_ext_device_malloc: kernel %s: heap of %" PRIu64 " bytes: %.1f %% in use, "
                     "%u pages free (%u in free aligned pairs), %.1f %% in free slots of %u "
                     "classes (%.1f %% held by current slabs)",
                     kernel, c->size, 100.0 * in_use / heap, c->free_pages, 2 * c->free_spans[0],
                     100.0 * free_slots / heap, classes, 100.0 * current / heap);
  for (unsigned i = 0; i < n_named && len > 0 && (size_t)len < size; i++) {
    const cldm_heap_census_class *e = &c->classes[named[i]];
    len += snprintf(line + len, size - (size_t)len, "%s%u B %.1f %%", i ? ", " : "; most in ",
                    e->class_bytes, 100.0 * (double)(e->slots - e->live) * e->class_bytes / heap);
  }
}

void cldm_check_report_oom(const char *kernel, uint64_t failed, uint64_t heap_size,
                           const cldm_heap_census *census) {
  cldm_oom_mode mode = cldm_config_oom();
  if (mode == CLDM_OOM_NULL || failed == 0)
    return;
  char line[512];
  if (census)
    cldm_check_format_census(line, sizeof line, kernel, census);
  pthread_mutex_lock(&cldm_check_out_lock);
  fprintf(stderr,
          "cl_ext_device_malloc: kernel %s: %" PRIu64 " allocations returned NULL (heap of %" PRIu64
          " bytes)\n",
          kernel, failed, heap_size);
  if (census)
    fprintf(stderr, "%s\n", line);
  if (mode == CLDM_OOM_ABORT)
    fprintf(stderr, "cl_ext_device_malloc: CLDM_OOM=abort: aborting\n");
  fflush(stderr);
  pthread_mutex_unlock(&cldm_check_out_lock);
  if (mode == CLDM_OOM_ABORT)
    abort();
}

void cldm_check_report_bad_alloc(const char *kernel, uint64_t stopped, uint64_t heap_size) {
  if (stopped == 0)
    return;
  int aborts = cldm_config_bad_alloc_aborts();
  pthread_mutex_lock(&cldm_check_out_lock);
  fprintf(stderr,
          "cl_ext_device_malloc: kernel %s: %" PRIu64 " work-items stopped: operator new found no "
          "room (std::bad_alloc; heap of %" PRIu64 " bytes)\n",
          kernel, stopped, heap_size);
  if (aborts)
    fprintf(stderr, "cl_ext_device_malloc: std::bad_alloc not handled: aborting "
                    "(CLDM_BAD_ALLOC=report goes on)\n");
  fflush(stderr);
  pthread_mutex_unlock(&cldm_check_out_lock);
  if (aborts)
    abort();
}

/* Appends " 0x<address> (heap+0x<offset>)" (or the offset alone, base unknown) to line. */
static int cldm_check_append_block(char *line, size_t size, int len, uint64_t base,
                                   const cldm_check_block *b, const char *sep) {
  if (len < 0 || (size_t)len >= size)
    return len;
  if (base)
    return len + snprintf(line + len, size - (size_t)len, "%s0x%" PRIx64 " (heap+0x%" PRIx64 ")",
                          sep, base + b->offset, b->offset);
  return len + snprintf(line + len, size - (size_t)len, "%sheap+0x%" PRIx64, sep, b->offset);
}

int cldm_check_report_heap(const char *when, const void *heap, size_t n, uint64_t base,
                           uint64_t *damaged_out) {
  cldm_check_block first[CLDM_CHECK_FIRST_BLOCKS], damaged[CLDM_CHECK_FIRST_BLOCKS];
  cldm_check_scan scan;
  if (cldm_check_heap_scan(heap, n, base, &scan, first, CLDM_CHECK_FIRST_BLOCKS, damaged,
                           CLDM_CHECK_FIRST_BLOCKS) != 0) {
    fprintf(stderr, "cl_ext_device_malloc: %s: the heap's header is damaged: not inspected\n",
            when);
    return -1;
  }
  if (damaged_out)
    *damaged_out = scan.damaged;
  pthread_mutex_lock(&cldm_check_out_lock);
  char line[1024];
  for (uint64_t i = 0; i < scan.damaged && i < CLDM_CHECK_FIRST_BLOCKS; i++) {
    int len = snprintf(line, sizeof line, "cl_ext_device_malloc: %s: overflow at", when);
    len = cldm_check_append_block(line, sizeof line, len, base, &damaged[i], " ");
    if (len > 0 && (size_t)len < sizeof line)
      snprintf(line + len, sizeof line - (size_t)len,
               ", block of %" PRIu64 " bytes, %" PRIu64 " bytes requested (live)", damaged[i].bytes,
               damaged[i].size);
    fprintf(stderr, "%s\n", line);
  }
  if (scan.live) {
    int len = snprintf(line, sizeof line,
                       "cl_ext_device_malloc: %s: %" PRIu64 " leaked allocations, %" PRIu64
                       " bytes; first at",
                       when, scan.live, scan.live_bytes);
    for (uint64_t i = 0; i < scan.live && i < CLDM_CHECK_FIRST_BLOCKS; i++)
      len = cldm_check_append_block(line, sizeof line, len, base, &first[i], i ? ", " : " ");
    fprintf(stderr, "%s\n", line);
  }
  fflush(stderr);
  pthread_mutex_unlock(&cldm_check_out_lock);
  return 0;
}
