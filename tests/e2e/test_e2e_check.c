/*
 * test_e2e_check.c — checked mode and CLDM_OOM on pocl through the layer (spec 2.4, 2.5): every
 * event kind (double free, interior-pointer free, free outside the heap, free of unallocated
 * memory, overflow found at free and through realloc, failed allocation) with its report line
 * and query; overflows of live blocks and leaks found by an inspection and at context release;
 * a full event log (events counted, the rest reported as not logged, the log emptied after the
 * report); correct use reporting nothing. The same program runs with checked mode off
 * (nothing reported, the checked queries 0, invalid frees counted as always), with CLDM_OOM=
 * report, and with CLDM_OOM=abort (argument "abort": a child process must abort after its
 * report line). Modes come from the environment the test is registered with.
 */
#include <string.h>

#include "e2e_util.h"

static e2e t;
static int checked;  /* CLDM_CHECK=1 */
static int oom_mode; /* CLDM_OOM=report */

#define OUT_ITEMS 512

typedef struct check_run {
  cl_ulong out0; /* out[0] after the kernel */
  char *err;     /* the layer's stderr during the launch */
} check_run;

static void check_open(void) { e2e_open(&t); }

/* Runs kernel `name` of check.cl over `items` work-items with arg 1 = n (if n_arg). */
static check_run run_check(const char *name, size_t items, int n_arg, cl_uint n) {
  cl_program p = e2e_program(&t, "check");
  cl_kernel k = e2e_kernel(p, name);
  cl_mem out = e2e_buffer(&t, OUT_ITEMS * sizeof(cl_ulong));
  assert_int_equal(clSetKernelArg(k, 0, sizeof(cl_mem), &out), CL_SUCCESS);
  if (n_arg)
    assert_int_equal(clSetKernelArg(k, 1, sizeof(n), &n), CL_SUCCESS);
  check_run r;
  e2e_stderr cap;
  e2e_stderr_begin(&cap);
  e2e_run(&t, k, items);
  r.err = e2e_stderr_end(&cap);
  assert_int_equal(
      clEnqueueReadBuffer(t.queue, out, CL_TRUE, 0, sizeof(r.out0), &r.out0, 0, NULL, NULL),
      CL_SUCCESS);
  clReleaseMemObject(out);
  clReleaseKernel(k);
  clReleaseProgram(p);
  return r;
}

static size_t count_of(const char *text, const char *needle) {
  size_t n = 0;
  for (const char *s = strstr(text, needle); s; s = strstr(s + 1, needle))
    n++;
  return n;
}

static void assert_contains(const char *text, const char *needle) {
  if (!strstr(text, needle))
    fail_msg("expected \"%s\" in the layer's output:\n%s", needle, text);
}

typedef struct kind_case {
  const char *kernel;
  const char *line;              /* what follows "kernel <name>: " */
  cl_device_heap_info_ext query; /* its count */
  cl_ulong invalid;              /* CL_DEVICE_HEAP_INFO_INVALID_FREES_EXT in both modes */
  cl_ulong failed;               /* CL_DEVICE_HEAP_INFO_FAILED_ALLOCATIONS_EXT */
  int address;                   /* the line names out[0] */
  const char *details;           /* the line's end, or NULL */
  const char *summary;           /* the kind's name in the summary line */
} kind_case;

static const kind_case kinds[] = {
    {"double_free", "double free at", CL_DEVICE_HEAP_INFO_DOUBLE_FREES_EXT, 1, 0, 1, NULL,
     "double free"},
    {"interior_free", "interior-pointer free at", CL_DEVICE_HEAP_INFO_INTERIOR_FREES_EXT, 1, 0, 1,
     NULL, "interior-pointer free"},
    {"outside_free", "free outside the heap at", CL_DEVICE_HEAP_INFO_OUTSIDE_FREES_EXT, 1, 0, 0,
     NULL, "free outside the heap"},
    {"unallocated_free", "free of unallocated memory at", CL_DEVICE_HEAP_INFO_UNALLOCATED_FREES_EXT,
     1, 0, 1, NULL, "free of unallocated memory"},
    {"overflow_free", "overflow at", CL_DEVICE_HEAP_INFO_OVERFLOWS_EXT, 0, 0, 1,
     ", block of 48 bytes, 20 bytes requested", "overflow"},
    {"overflow_realloc", "overflow at", CL_DEVICE_HEAP_INFO_OVERFLOWS_EXT, 0, 0, 1,
     ", block of 48 bytes, 20 bytes requested", "overflow"},
    {"too_big", "allocation failed", CL_DEVICE_HEAP_INFO_FAILED_ALLOCATIONS_EXT, 0, 1, 0,
     ", 1073741824 bytes requested", "allocation failed"},
};

static void test_event_kinds(void **state) {
  (void)state;
  for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
    const kind_case *c = &kinds[i];
    check_open();
    check_run r = run_check(c->kernel, 1, 0, 0);
    char want[256];
    snprintf(want, sizeof want, "cl_ext_device_malloc: kernel %s: %s", c->kernel, c->line);
    if (checked) {
      assert_contains(r.err, want);
      if (c->address) {
        snprintf(want, sizeof want, "%s 0x%llx (heap+0x", c->line, (unsigned long long)r.out0);
        assert_contains(r.err, want);
      }
      if (c->details)
        assert_contains(r.err, c->details);
      snprintf(want, sizeof want, "cl_ext_device_malloc: kernel %s: 1 heap events, 1 %s (0 not",
               c->kernel, c->summary);
      assert_contains(r.err, want);
      assert_int_equal(count_of(r.err, "cl_ext_device_malloc: kernel"), 2);
      assert_int_equal(e2e_heap_stat(&t, NULL, c->query), 1);
      assert_int_equal(e2e_heap_stat(&t, NULL, CL_DEVICE_HEAP_INFO_CHECKED_EXT), 1);
    } else {
      assert_null(strstr(r.err, "heap events"));
      assert_null(strstr(r.err, want));
      if (c->query != CL_DEVICE_HEAP_INFO_FAILED_ALLOCATIONS_EXT)
        assert_int_equal(e2e_heap_stat(&t, NULL, c->query), 0);
      assert_int_equal(e2e_heap_stat(&t, NULL, CL_DEVICE_HEAP_INFO_CHECKED_EXT), 0);
    }
    if (oom_mode && c->failed)
      assert_contains(r.err, "kernel too_big: 1 allocations returned NULL (heap of ");
    else
      assert_null(strstr(r.err, "returned NULL"));
    assert_int_equal(e2e_heap_stat(&t, NULL, CL_DEVICE_HEAP_INFO_INVALID_FREES_EXT), c->invalid);
    assert_int_equal(e2e_heap_stat(&t, NULL, CL_DEVICE_HEAP_INFO_FAILED_ALLOCATIONS_EXT),
                     c->failed);
    assert_int_equal(e2e_heap_stat(&t, NULL, CL_DEVICE_HEAP_INFO_LIVE_ALLOCATIONS_EXT), 0);
    free(r.err);
    e2e_close(&t);
  }
}

/* an overflow of a block still live, and leaks: the inspection query, then context release */
static void test_live_overflow_and_leaks(void **state) {
  (void)state;
  check_open();
  check_run live = run_check("overflow_live", 1, 0, 0);
  check_run leaks = run_check("leak", 10, 0, 0);
  assert_null(strstr(live.err, "cl_ext_device_malloc:")); /* nothing freed: nothing found yet */
  assert_null(strstr(leaks.err, "cl_ext_device_malloc:"));
  assert_int_equal(e2e_heap_stat(&t, NULL, CL_DEVICE_HEAP_INFO_LIVE_ALLOCATIONS_EXT), 11);
  e2e_stderr cap;
  e2e_stderr_begin(&cap);
  cl_ulong damaged = e2e_heap_stat(&t, NULL, CL_DEVICE_HEAP_INFO_DAMAGED_BLOCKS_EXT);
  char *err = e2e_stderr_end(&cap);
  char want[256];
  if (checked) {
    assert_int_equal(damaged, 1);
    snprintf(want, sizeof want, "cl_ext_device_malloc: inspection: overflow at 0x%llx (heap+0x",
             (unsigned long long)live.out0);
    assert_contains(err, want);
    assert_contains(err, ", block of 48 bytes, 20 bytes requested (live)");
    /* 20 + 10 * 100 bytes requested */
    assert_contains(err, "cl_ext_device_malloc: inspection: 11 leaked allocations, 1020 bytes; "
                         "first at 0x");
  } else {
    assert_int_equal(damaged, 0);
    assert_null(strstr(err, "cl_ext_device_malloc:"));
  }
  free(err);
  e2e_stderr_begin(&cap);
  e2e_close(&t);
  err = e2e_stderr_end(&cap);
  if (checked)
    assert_contains(err, "cl_ext_device_malloc: context release: 11 leaked allocations, 1020 "
                         "bytes; first at 0x");
  else
    assert_null(strstr(err, "leaked"));
  free(err);
  free(live.err);
  free(leaks.err);
}

/* `n` blocks of 100 bytes held by check.cl's leak kernel, until release_blocks frees them */
typedef struct held_blocks {
  cl_program program;
  cl_kernel leak, release;
  cl_mem out;
  size_t n;
} held_blocks;

static held_blocks hold_blocks(size_t n) {
  held_blocks b = {e2e_program(&t, "check"), NULL, NULL, NULL, n};
  b.leak = e2e_kernel(b.program, "leak");
  b.release = e2e_kernel(b.program, "release_leaks");
  b.out = e2e_buffer(&t, OUT_ITEMS * sizeof(cl_ulong));
  clSetKernelArg(b.leak, 0, sizeof(cl_mem), &b.out);
  clSetKernelArg(b.release, 0, sizeof(cl_mem), &b.out);
  e2e_run(&t, b.leak, n);
  return b;
}

static void release_blocks(held_blocks *b) {
  e2e_run(&t, b->release, b->n);
  clReleaseMemObject(b->out);
  clReleaseKernel(b->leak);
  clReleaseKernel(b->release);
  clReleaseProgram(b->program);
}

/* freeing everything leaves no leak report */
static void test_no_leaks(void **state) {
  (void)state;
  check_open();
  held_blocks b = hold_blocks(100);
  release_blocks(&b);
  e2e_stderr cap;
  e2e_stderr_begin(&cap);
  e2e_close(&t);
  char *err = e2e_stderr_end(&cap);
  assert_null(strstr(err, "cl_ext_device_malloc:"));
  free(err);
}

/* CLDM_OOM: after the NULL line, the census line (spec 2.5): bytes in use, the pages free, the
 * free slots by class. 100 blocks of 100 bytes are held (class 112 B, 128 B checked: the
 * trailer and guard) in slabs of one page (an 8 MiB heap), all their other slots free, then a
 * request no heap holds. */
static void test_oom_census(void **state) {
  (void)state;
  check_open();
  held_blocks b = hold_blocks(100);
  check_run r = run_check("too_big", 1, 0, 0);
  cl_ulong size = e2e_heap_stat(&t, NULL, CL_DEVICE_HEAP_INFO_SIZE_EXT);
  cl_ulong in_use = e2e_heap_stat(&t, NULL, CL_DEVICE_HEAP_INFO_BYTES_IN_USE_EXT);
  cl_ulong held = e2e_heap_stat(&t, NULL, CL_DEVICE_HEAP_INFO_BYTES_HELD_EXT);
  unsigned cls = checked ? 128 : 112;
  assert_int_equal(in_use, 100 * cls);
  /* the pages free, then (the aligned pairs among them depend on where the slabs are) the
   * free slots: those of the slabs of 112 (128) B slots that hold the 100 blocks */
  char want[512], want2[256];
  snprintf(want, sizeof want,
           "cl_ext_device_malloc: kernel too_big: heap of %llu bytes: %.1f %% in use, %llu pages "
           "free (",
           (unsigned long long)size, 100.0 * (double)in_use / (double)size,
           (unsigned long long)((size - held) / 65536));
  snprintf(want2, sizeof want2, " in free aligned pairs), %.1f %% in free slots of 1 classes (",
           100.0 * (double)((held / 65536) * (65536 / cls) - 100) * cls / (double)size);
  if (oom_mode) {
    assert_contains(r.err, "kernel too_big: 1 allocations returned NULL (heap of ");
    assert_contains(r.err, want);
    assert_contains(r.err, want2);
    snprintf(want, sizeof want, "); most in %u B ", cls);
    assert_contains(r.err, want);
  } else {
    assert_null(strstr(r.err, "in free slots"));
  }
  release_blocks(&b);
  free(r.err);
  e2e_close(&t);
}

/* more events than the log holds: all counted, the first 256 logged, the log emptied after */
static void test_full_log(void **state) {
  (void)state;
  check_open();
  check_run r = run_check("many_events", 1, 1, 300);
  if (checked) {
    assert_int_equal(count_of(r.err, "kernel many_events: double free at"), 256);
    assert_contains(r.err, "kernel many_events: 300 heap events, 300 double free (44 not logged");
    assert_int_equal(e2e_heap_stat(&t, NULL, CL_DEVICE_HEAP_INFO_DOUBLE_FREES_EXT), 300);
    assert_int_equal(e2e_heap_stat(&t, NULL, CL_DEVICE_HEAP_INFO_LOST_EVENTS_EXT), 44);
  } else {
    assert_null(strstr(r.err, "cl_ext_device_malloc:"));
    assert_int_equal(e2e_heap_stat(&t, NULL, CL_DEVICE_HEAP_INFO_LOST_EVENTS_EXT), 0);
  }
  assert_int_equal(e2e_heap_stat(&t, NULL, CL_DEVICE_HEAP_INFO_INVALID_FREES_EXT), 300);
  free(r.err);
  r = run_check("many_events", 1, 1, 5); /* the next kernel's events are logged again */
  if (checked) {
    assert_int_equal(count_of(r.err, "kernel many_events: double free at"), 5);
    assert_contains(r.err, "kernel many_events: 5 heap events, 5 double free (0 not logged");
    assert_int_equal(e2e_heap_stat(&t, NULL, CL_DEVICE_HEAP_INFO_DOUBLE_FREES_EXT), 305);
  }
  /* a reset clears the counters */
  cl_event ev;
  assert_int_equal(t.reset_heap(t.queue, 0, NULL, &ev), CL_SUCCESS);
  assert_int_equal(clWaitForEvents(1, &ev), CL_SUCCESS);
  clReleaseEvent(ev);
  assert_int_equal(e2e_heap_stat(&t, NULL, CL_DEVICE_HEAP_INFO_DOUBLE_FREES_EXT), 0);
  free(r.err);
  e2e_close(&t);
}

/* correct use of malloc, realloc, calloc and free by many work-items: nothing reported */
static void test_clean(void **state) {
  (void)state;
  check_open();
  check_run r = run_check("clean", OUT_ITEMS, 0, 0);
  assert_null(strstr(r.err, "cl_ext_device_malloc:"));
  static const cl_device_heap_info_ext zero[] = {
      CL_DEVICE_HEAP_INFO_INVALID_FREES_EXT,     CL_DEVICE_HEAP_INFO_FAILED_ALLOCATIONS_EXT,
      CL_DEVICE_HEAP_INFO_LIVE_ALLOCATIONS_EXT,  CL_DEVICE_HEAP_INFO_DOUBLE_FREES_EXT,
      CL_DEVICE_HEAP_INFO_INTERIOR_FREES_EXT,    CL_DEVICE_HEAP_INFO_OUTSIDE_FREES_EXT,
      CL_DEVICE_HEAP_INFO_UNALLOCATED_FREES_EXT, CL_DEVICE_HEAP_INFO_OVERFLOWS_EXT,
      CL_DEVICE_HEAP_INFO_LOST_EVENTS_EXT,       CL_DEVICE_HEAP_INFO_DAMAGED_BLOCKS_EXT};
  for (size_t i = 0; i < sizeof zero / sizeof zero[0]; i++)
    assert_int_equal(e2e_heap_stat(&t, NULL, zero[i]), 0);
  free(r.err);
  e2e_close(&t);
}

/* The child of test_oom_abort: a launch whose mallocs get NULL (CLDM_OOM=abort aborts at it). */
static void oom_abort_child(void *unused) {
  (void)unused;
  check_open();
  cl_program p = e2e_program(&t, "check");
  cl_kernel k = e2e_kernel(p, "too_big");
  cl_mem out = e2e_buffer(&t, OUT_ITEMS * sizeof(cl_ulong));
  clSetKernelArg(k, 0, sizeof(cl_mem), &out);
  e2e_run(&t, k, 3);
}

/* CLDM_OOM=abort: the launch that saw NULL prints its line and aborts the process */
static void test_oom_abort(void **state) {
  (void)state;
  char *text = e2e_child_aborts(oom_abort_child, NULL);
  assert_contains(text, "cl_ext_device_malloc: kernel too_big: 3 allocations returned NULL");
  assert_contains(text, "cl_ext_device_malloc: kernel too_big: heap of "); /* the census */
  assert_contains(text, "cl_ext_device_malloc: CLDM_OOM=abort: aborting");
  free(text);
}

int main(int argc, char **argv) {
  const char *ck = getenv("CLDM_CHECK"), *om = getenv("CLDM_OOM");
  checked = ck && !strcmp(ck, "1");
  oom_mode = om && !strcmp(om, "report");
  if (argc > 1 && !strcmp(argv[1], "abort")) {
    const struct CMUnitTest abort_tests[] = {cmocka_unit_test(test_oom_abort)};
    return cmocka_run_group_tests(abort_tests, NULL, NULL);
  }
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_event_kinds), cmocka_unit_test(test_live_overflow_and_leaks),
      cmocka_unit_test(test_no_leaks),    cmocka_unit_test(test_full_log),
      cmocka_unit_test(test_clean),       cmocka_unit_test(test_oom_census),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
