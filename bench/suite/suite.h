/*
 * suite.h — declarations shared by the files of the benchmark suite (cldm-bench-suite): the
 * device and its extension entry points (device.c), a session = one context with one heap size
 * and the suite's programs (session.c; case 9's context of several devices: session_multi.c),
 * timing (timing.c), correctness checks (check.c), the CSV / JSON output and progress lines
 * (output.c), and the cases (case_*.c).
 *
 * The suite is an ordinary OpenCL application: it sees cl_ext_device_malloc only through the
 * ICD layer (OPENCL_LAYERS), creates its programs with clCreateProgramWithIL, and reaches the
 * extension through clGetExtensionFunctionAddressForPlatform.
 */
#ifndef CLDM_BENCH_SUITE_H
#define CLDM_BENCH_SUITE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <CL/cl.h>
#include <CL/cl_ext_device_malloc.h>

#include "bench_common.h"
#include "bench_plan.h"

/* Aborts the program with the call and its error: an OpenCL failure of the harness, not a
 * result. */
void bs_check_cl(cl_int err, const char *what, const char *file, int line);
#define BS_CHECK(call) bs_check_cl((call), #call, __FILE__, __LINE__)

/* ---- options (main.c) ---- */
/* Case 9 (several devices) runs only when --cases names it: it needs two devices or more. */
enum { BS_NUM_CASES = 9, BS_DEFAULT_CASES = 0xff };
enum { BS_MAX_DEVICES = 8 }; /* case 9's devices (--devices) */
typedef struct bs_opts {
  const char *device; /* substring of the platform or device name; NULL: first with the extension */
  const char *kernels_dir;  /* the .spv (and overhead.cl) files */
  const char *out_dir;      /* opencl.csv, opencl.meta.json */
  int scale;                /* BP_QUICK, BP_MEDIUM, BP_FULL */
  uint64_t heap, fill_heap; /* 0: from the plan */
  int reps;                 /* 0: from the plan */
  double budget_s;          /* --budget: cases 1-3's time limit (0: none) */
  uint32_t max_size;        /* --max-size: cases 1 and 3's largest block (0: all) */
  int local;                /* --local: work-group size (0: the plan's) */
  unsigned cases;           /* bit c-1 set: run case c */
  int devices;              /* case 9: how many devices (default 2) */
  int child;                /* internal: case 8's measurements, 1 with the layer, 2 without */
  const char *self;         /* path of this executable (for the child) */
} bs_opts;

/* ---- the device (device.c) ---- */
typedef struct bs_dev {
  cl_platform_id platform;
  cl_device_id device;
  char name[256], platform_name[256], version[256], driver[256];
  int has_il;  /* CL_DEVICE_IL_VERSION names SPIR-V */
  int has_ext; /* CL_DEVICE_EXTENSIONS lists cl_ext_device_malloc */
  cl_ulong max_alloc, global_mem;
  size_t max_wg;
  cl_uint units;
  clSetDeviceHeapSizeEXT_fn set_heap;
  clGetDeviceHeapInfoEXT_fn heap_info;
  clEnqueueResetDeviceHeapEXT_fn reset_heap;
} bs_dev;

/* Finds the device: the first whose platform or device name contains `pattern` (case
 * insensitive; NULL: any) and that, with need_ext, reports cl_ext_device_malloc. 0 on
 * success, -1 with a message on stderr. */
int bs_dev_open(bs_dev *d, const char *pattern, int need_ext);
/* Case 9's devices: the first `want` devices of `platform` that report cl_ext_device_malloc
 * and whose platform or device name contains `pattern` (NULL: any), into d[0..]. Returns how
 * many were found (at most want). */
int bs_dev_open_many(bs_dev *d, int want, cl_platform_id platform, const char *pattern);
/* Prints every platform and device to stdout. */
void bs_dev_list(void);
/* A short name for result folders: "pocl-cpu", "nvidia-h200", ... (static buffer). */
const char *bs_dev_tag(const bs_dev *d);

/* ---- a session: one context, one heap (session.c) ---- */
enum { BS_MAX_KERNELS = 32 };
typedef struct bs_session {
  bs_dev *dev;
  const bp_plan *plan;
  cl_context ctx;
  cl_command_queue q;     /* in-order, profiling: every timed kernel */
  cl_command_queue plain; /* in-order, no profiling: host-clock latencies */
  cl_program alloc, base; /* kernels/alloc.spv (allocating), kernels/base.spv */
  uint64_t heap_setting;
  uint64_t heap_usable; /* CL_DEVICE_HEAP_INFO_SIZE_EXT */
  struct {
    const char *name;
    cl_kernel k;
    size_t wg;
  } kernels[BS_MAX_KERNELS];
  int nkernels;
} bs_session;

/* Sets the device's heap size to `heap`, creates a context, queues and the programs. */
void bs_session_open(bs_session *s, bs_dev *d, const bp_plan *plan, const char *kernels_dir,
                     uint64_t heap);
/* Releases everything of the session (its heap goes with the context). */
void bs_session_close(bs_session *s);
/* Waits (up to about a second) until the context's reference count stops falling, so that the
 * layer finds only its heaps holding the context at its release (session.c says why). */
void bs_wait_context_quiet(cl_context ctx);
/* The kernel `name` of the allocating or the base program (created once). */
cl_kernel bs_kernel(bs_session *s, const char *name);
/* A program created from kernels_dir/file with clCreateProgramWithIL and built for the
 * `ndev` devices of `devs`. */
cl_program bs_program_il(cl_context ctx, cl_uint ndev, const cl_device_id *devs,
                         const char *kernels_dir, const char *file);

/* ---- case 9's context of several devices (session_multi.c) ---- */
/* One context of `count` devices, the suite's two programs built once for all of them, and one
 * view per device: a bs_session that shares the context and the programs but has the device's
 * own profiling queue and kernel objects (OpenCL leaves clSetKernelArg on one kernel object from
 * several host threads undefined, so each device's thread sets only its own), so that every
 * helper below works on one device of the context. */
typedef struct bs_multi {
  int count;
  bs_dev *dev; /* count devices of one platform */
  cl_context ctx;
  cl_program alloc, base;
  bs_session view[BS_MAX_DEVICES];
} bs_multi;
/* Sets every device's heap size to `heap`, then creates the context, programs and views. */
void bs_multi_open(bs_multi *m, bs_dev *devs, int count, const bp_plan *plan,
                   const char *kernels_dir, uint64_t heap);
void bs_multi_close(bs_multi *m);

cl_mem bs_buffer(bs_session *s, size_t bytes);
void bs_read(bs_session *s, cl_mem m, size_t bytes, void *dst);
void bs_fill_zero(bs_session *s, cl_mem m, size_t bytes);
uint32_t bs_read_u32(bs_session *s, cl_mem m);
/* Sets arguments from index 0: (size, pointer) pairs ended by a size of 0. */
void bs_args(cl_kernel k, ...);
/* Launches k over n work-items (rounded up to whole work-groups of the plan's size, or of
 * `local` if not 0) on the profiling queue, waits, and returns its execution time in ms
 * from event profiling. */
double bs_launch(bs_session *s, cl_kernel k, size_t n, size_t local);

/* Heap statistics (clGetDeviceHeapInfoEXT) and reset (clEnqueueResetDeviceHeapEXT). */
cl_ulong bs_heap_info(bs_session *s, cl_device_heap_info_ext what);
void bs_heap_reset(bs_session *s);

/* ---- timing (timing.c) ---- */
typedef struct bs_series {
  double *v;
  int n, cap;
} bs_series;
void bs_series_add(bs_series *s, double v);
double bs_series_best(const bs_series *s); /* smallest */
double bs_series_median(const bs_series *s);
double bs_series_worst(const bs_series *s); /* largest */
void bs_series_free(bs_series *s);
double bs_now_us(void); /* monotonic clock, microseconds */
int bs_trace(void);     /* CLDM_SUITE_TRACE=1: print launches, buffers, fills as they happen */
/* Milliseconds from CL_PROFILING_COMMAND_START to _END of ev (waited for). */
double bs_event_ms(cl_event ev);

/* ---- correctness (check.c) ---- */
/* Failures are counted and reported, the run goes on; main exits non-zero if any. */
void bs_fail(const char *fmt, ...);
int bs_failures(void);
/* Checks the ptrs a k_malloc-shaped launch wrote (n slots, block i of bc_size(i, size, mixed,
 * seed) bytes where bc_selected(i, k)): with expect_all, no NULL where a block was due; every
 * block 16-byte aligned; unselected slots 0; no two blocks overlap (addresses sorted on the
 * host). Returns the number of blocks; *lo / *hi (if not NULL) get the lowest block address
 * and the end of the highest block. -1 after a failure (reported). */
long bs_check_blocks(const char *what, const uint64_t *ptrs, uint32_t n, uint32_t size,
                     uint32_t mixed, uint32_t k, uint32_t seed, int expect_all, uint64_t *lo,
                     uint64_t *hi);
/* Checks blocks given as (address, size) pairs do not overlap and are 16-byte aligned
 * (the array is sorted in place). 0 if fine, -1 after a reported failure. */
typedef struct bs_block {
  uint64_t addr;
  uint64_t size;
} bs_block;
int bs_check_disjoint(const char *what, bs_block *b, size_t count);
/* Fails unless the heap holds nothing: no live allocation, no bytes in use, no invalid free
 * (and, with no_failures, no failed allocation since the last reset). 0 if empty. */
int bs_check_heap_empty(bs_session *s, const char *what, int no_failures);

/* ---- output (output.c) ---- */
/* One row of the suite's CSV schema (bench/README.md), shared with the CUDA program:
 *   impl,case,kernel,size,n,param,metric,unit,value,median,reps,ops */
typedef struct bs_row {
  const char *kernel;
  uint64_t size, n;
  const char *param;
  const char *metric, *unit;
  double value, median;
  int reps;
  uint64_t ops;
} bs_row;
/* Opens out_dir/opencl.csv (or stdout when out_dir is NULL) and writes the header (not for
 * stdout). */
void bs_out_open(const char *out_dir);
void bs_out_close(void);
/* Writes one row for case `case_name`. */
void bs_out_row(const char *case_name, const bs_row *r);
/* Appends a line received from the child process verbatim. */
void bs_out_raw(const char *line);
/* Writes out_dir/opencl.meta.json: device, plan, heap sizes, failures. */
void bs_out_meta(const char *out_dir, const bs_dev *d, const bp_plan *p, uint64_t main_usable,
                 uint64_t fill_usable, double seconds, const char *cases);
/* Records case 9's devices (names) and their usable heap sizes for the meta file. */
void bs_out_multi(const bs_dev *devs, int count, const uint64_t *heap_usable);
/* Records a failure message for the meta file. */
void bs_out_note_failure(const char *msg);
/* A progress line on stderr: "[bench] <case> <text>". */
void bs_progress(const char *case_name, const char *fmt, ...);
/* Writes a time series as one row: best as value, median as median. */
void bs_out_series(const char *case_name, const char *kernel, uint64_t size, uint64_t n,
                   const char *param, const char *metric, const char *unit, const bs_series *s,
                   uint64_t ops);

/* ---- the cases ---- */
/* Cases 1-3 (case_alloc.c): k_malloc / k_free_only / k_malloc_free next to k_bump, k_prealloc
 * and k_check. */
void bs_case_throughput(bs_session *s);
void bs_case_mixed(bs_session *s);
void bs_case_divergent(bs_session *s);
/* Cases 4 and 6 (case_fill.c): the heap filled to NULL. */
void bs_case_utilisation(bs_session *s);
void bs_case_oom(bs_session *s);
/* Case 5 (case_frag.c). */
void bs_case_fragmentation(bs_session *s);
/* Case 7 (case_workload.c). */
void bs_case_workload(bs_session *s);
/* Case 8 (case_overhead.c): this program run twice more, with and without the layer. */
void bs_case_overhead(const bs_opts *o, const bs_dev *d);
/* Case 8 in one of those runs (o->child): rows to stdout. Returns the exit status. */
int bs_overhead_child(const bs_opts *o);
/* Case 9 (case_multidev.c): case 1's malloc and free on o->devices devices of one context, each
 * alone and all at once; `first` is the device of cases 1-8, `plan` their plan. Skipped, with a
 * progress line, where fewer devices report the extension. */
void bs_case_multidevice(const bs_opts *o, const bs_dev *first, const bp_plan *plan);

#endif /* CLDM_BENCH_SUITE_H */
