/*
 * cldm_layer.h — internal header of the cl_ext_device_malloc ICD layer.
 *
 * The layer sits between the ICD loader and the driver. It never wraps handles: every
 * cl_* object it sees is the driver's own, and it keeps side tables keyed by those handles.
 * Calls go down through the dispatch table the loader handed to clInitLayer (`cldm_next`),
 * guarded by CLDM_NEXT_HAS() because loaders pass tables of different lengths.
 *
 * Prototypes are grouped by the file that defines them, so this header reads as a map of
 * the layer's modules; each group lists its module's intercepts (`<clName>_wrap`, all put into
 * the dispatch table by layer_init.c) after its internal interface. Apart from the next
 * table (cldm_next and cldm_next_entries, set by layer_init.c, read by all), the modules use
 * each other without cycles, each only modules to its left (the modules of one group, between
 * commas, not each other); tests/layer/module_map.py checks it on the object files:
 *   log, map, info < config < check, ptx < device < query, heap < heap_read < new < lifetime
 *   < heap_api, program < clc, binary, il < source < build < link < kernel, extfn < enqueue
 *   < init
 */
#ifndef CLDM_LAYER_H
#define CLDM_LAYER_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include <CL/cl.h>
#include <CL/cl_ext.h>
#include <CL/cl_icd.h>
#include <CL/cl_ext_device_malloc.h>

#include "cldm_clc.h"
#include "cldm_spirv.h"

#ifndef CL_DEVICE_SPIRV_EXTENDED_INSTRUCTION_SETS_KHR /* cl_khr_spirv_queries, newer headers */
#define CL_DEVICE_SPIRV_EXTENDED_INSTRUCTION_SETS_KHR 0x12B9
#endif

#define CLDM_EXPORT __attribute__((visibility("default")))

#define CLDM_NVIDIA_VENDOR_ID 0x10DEu /* CL_DEVICE_VENDOR_ID of NVIDIA's devices (PCI id) */

/* ---- layer_init.c: entry points, dispatch tables -------------------------------------- */

/* The next layer's (or the loader's) dispatch table and how many entries it has. */
extern const cl_icd_dispatch *cldm_next;
extern cl_uint cldm_next_entries;

#define CLDM_SLOT(fn) (offsetof(cl_icd_dispatch, fn) / sizeof(void *))
/* True when the next table has a non-NULL entry `fn` (never reads past its length). */
#define CLDM_NEXT_HAS(fn) (cldm_next && CLDM_SLOT(fn) < cldm_next_entries && cldm_next->fn)

/* ---- layer_log.c: messages on stderr, filtered by CLDM_LOG (README "Settings") ------------ */

typedef enum cldm_log_level {
  CLDM_LOG_NONE = 0,
  CLDM_LOG_ERROR = 1,
  CLDM_LOG_WARN = 2,
  CLDM_LOG_INFO = 3,
  CLDM_LOG_DEBUG = 4
} cldm_log_level;

void cldm_log(cldm_log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int cldm_log_enabled(cldm_log_level level);

/* ---- layer_config.c: the other knobs (README "Settings") ----------------------------------- */

/* Default heap size in bytes: CLDM_HEAP_SIZE (bytes, K/M/G suffixes) or 8 MiB. */
size_t cldm_config_default_heap_size(void);
/* Directory to dump lowered SPIR-V into (CLDM_DUMP_DIR), or NULL. */
const char *cldm_config_dump_dir(void);
/* "svm" or "buffer" if CLDM_HEAP_MEMORY forces the heap's memory kind, else NULL. */
const char *cldm_config_heap_memory(void);
/* 0 if CLDM_NVIDIA=off: NVIDIA devices without IL are left as the driver reports them. */
int cldm_config_nvidia(void);
/* CLDM_PTX_BACKEND: the PTX backend library to load instead of the one next to the layer. */
const char *cldm_config_ptx_backend(void);
/* CLDM_CLC_COMPILER: the OpenCL C compiler library to load instead of the one next to it. */
const char *cldm_config_clc_compiler(void);
/* CLDM_CACHE_DIR, or NULL. */
const char *cldm_config_cache_dir(void);
/* 1 if CLDM_CHECK=1: checked mode (spec 2.4). */
int cldm_config_check(void);
/* CLDM_OOM (spec 2.5). */
typedef enum cldm_oom_mode {
  CLDM_OOM_NULL = 0, /* default: malloc returns NULL, nothing else */
  CLDM_OOM_REPORT,   /* after the kernel: one line per kernel whose allocations failed */
  CLDM_OOM_ABORT     /* the same line, then abort() */
} cldm_oom_mode;
cldm_oom_mode cldm_config_oom(void);
/* 0 if CLDM_BAD_ALLOC=report: a throwing operator new that failed is reported and the process
 * goes on; 1 (default, "abort"): reported, then abort() (spec 2.2). */
int cldm_config_bad_alloc_aborts(void);
/* 1 if CLDM_PROBE_COUNTERS=1: the path counters of probe builds after watched launches. */
int cldm_config_probe(void);
/* The path of `file` in the directory of the layer's own shared object (malloc'd), or NULL. */
char *cldm_config_beside_layer(const char *file);

/* ---- layer_map.c: handle -> value hash map (caller holds the map's lock) ----------------- */

typedef struct cldm_map_slot {
  const void *key;
  void *value;
} cldm_map_slot;

typedef struct cldm_map {
  pthread_mutex_t lock;
  cldm_map_slot *slots;
  size_t cap, len;
} cldm_map;

#define CLDM_MAP_INIT                                                                              \
  { PTHREAD_MUTEX_INITIALIZER, NULL, 0, 0 }
void *cldm_map_get(const cldm_map *m, const void *key);
int cldm_map_put(cldm_map *m, const void *key, void *value); /* 0, or -1 out of memory */
void *cldm_map_remove(cldm_map *m, const void *key);         /* the removed value or NULL */
/* Adds `delta` to the count of holders (an unsigned long at byte `offset` of the value) of the
 * value of `key`, under the map's lock (which the caller does not hold); at 0 the value leaves
 * the map and *gone gets it (else NULL). Returns the new count, or -1 if `key` has no value. */
long cldm_map_hold(cldm_map *m, const void *key, size_t offset, int delta, void **gone);

/* ---- layer_info.c: helpers for clGet*Info-style answers -------------------------------- */

/* Copies `size` bytes from `src` following the OpenCL query rules: CL_INVALID_VALUE (and
 * nothing written) if param_value is non-NULL and param_value_size < size. */
cl_int cldm_info_return(const void *src, size_t size, size_t param_value_size, void *param_value,
                        size_t *param_value_size_ret);

/* Runs a size query + value query through `query` into a malloc'd buffer (*out, *out_size).
 * `query` has the shape of clGetDeviceInfo with the object and name bound by the caller. */
typedef cl_int (*cldm_info_query_fn)(const void *obj, cl_uint name, size_t size, void *value,
                                     size_t *size_ret);
cl_int cldm_info_fetch(cldm_info_query_fn query, const void *obj, cl_uint name, void **out,
                       size_t *out_size);
/* cldm_info_query_fn adapters for contexts and kernels, and a context's platform (or NULL). */
cl_int cldm_info_context_query(const void *obj, cl_uint name, size_t size, void *value,
                               size_t *size_ret);
cl_int cldm_info_kernel_query(const void *obj, cl_uint name, size_t size, void *value,
                              size_t *size_ret);
cl_platform_id cldm_info_context_platform(cl_context context);
/* The context and the device of `queue`: CL_SUCCESS, or CL_INVALID_COMMAND_QUEUE. */
cl_int cldm_info_queue_target(cl_command_queue queue, cl_context *context, cl_device_id *device);

/* ---- layer_check.c: reports of checked mode and CLDM_OOM (spec 2.4, 2.5) ----------------- */

/* What the host remembers of a checked heap's counters between reports. */
typedef struct cldm_check_totals {
  uint64_t counts[8];  /* the heap's event counts (index CLDM_CHECK_*) at the last report */
  uint64_t lost;       /* events counted but not logged, summed over the reports */
  uint64_t failed;     /* the heap's failed allocations at the last report */
  uint64_t new_failed; /* its throwing operator new calls that failed, at the last report */
  uint32_t probe[11];  /* its path counters then (CLDM_PROBE_COUNTERS; CLDM_HDR_PROBE_WORDS) */
} cldm_check_totals;

/* Prints the events of check area `area` (`n` bytes, `capacity` entries) of a heap after
 * `kernel` completed, one line each, and a summary line if there were any; updates *t. */
void cldm_check_report_kernel(const char *kernel, const void *area, size_t n, uint32_t capacity,
                              cldm_check_totals *t);
struct cldm_heap_census; /* cldm_device.h */
/* The census line CLDM_OOM prints after the NULL line: bytes in use, free pages, free slots
 * by class (the classes with the most of them named). */
void cldm_check_format_census(char *line, size_t size, const char *kernel,
                              const struct cldm_heap_census *c);
/* CLDM_OOM=report|abort: prints that `failed` allocations of `kernel` returned NULL (nothing if
 * 0 or CLDM_OOM is unset) and, if `census` is not NULL, the heap's census line; abort() after
 * it with CLDM_OOM=abort. */
void cldm_check_report_oom(const char *kernel, uint64_t failed, uint64_t heap_size,
                           const struct cldm_heap_census *census);
/* Spec 2.2: prints that `stopped` work-items of `kernel` stopped at a throwing operator new
 * that found no room in the heap (of `heap_size` usable bytes); nothing if 0. Then abort(),
 * as C++'s std::terminate, unless CLDM_BAD_ALLOC=report. */
void cldm_check_report_bad_alloc(const char *kernel, uint64_t stopped, uint64_t heap_size);
/* Inspects a whole heap (`n` bytes from its base; `base` its device address if known, else 0):
 * prints a line per damaged live block and the leak line (live allocations, their bytes, the
 * first addresses), labelled `when`. *damaged_out (if not NULL): damaged live blocks. 0, or -1
 * (printed) if the header is damaged. */
int cldm_check_report_heap(const char *when, const void *heap, size_t n, uint64_t base,
                           uint64_t *damaged_out);

/* ---- layer_device.c: per-device state --------------------------------------------------- */

/* How SPIR-V reaches a device (spec 1.1). */
typedef enum cldm_device_route {
  CLDM_ROUTE_NONE = 0, /* not served: the device is left exactly as the driver reports it */
  CLDM_ROUTE_SPIRV,    /* the driver accepts SPIR-V: lowered modules go down as SPIR-V */
  CLDM_ROUTE_PTX       /* an NVIDIA device without IL: the layer translates SPIR-V to PTX
                          (layer_ptx.c) and creates programs from binaries */
} cldm_device_route;

/* What the layer knows of a device, as one consistent copy (cldm_device_snapshot). */
typedef struct cldm_device_state {
  int supported; /* route != CLDM_ROUTE_NONE: the extension is offered */
  cldm_device_route route;
  unsigned cc_major; /* PTX route: CL_DEVICE_COMPUTE_CAPABILITY_MAJOR_NV / MINOR_NV */
  unsigned cc_minor;
  size_t heap_size;     /* heap-size setting for heaps created from now on, bytes (spec 1.2) */
  cl_ulong max_alloc;   /* CL_DEVICE_MAX_MEM_ALLOC_SIZE, bytes (0 if unknown) */
  unsigned features;    /* CLDM_DEVICE_FEATURE_* (cldm_device.h): picks the allocator variant */
  cl_uint address_bits; /* CL_DEVICE_ADDRESS_BITS */
  int svm_coarse;       /* coarse-grained buffer SVM */
} cldm_device_state;

/* Copies the state of `device` into *state, probing the driver the first time (cached per
 * device). CL_SUCCESS, or the error that makes the handle invalid; *state then describes an
 * unknown device (not supported, the default heap size, every other field 0). */
cl_int cldm_device_snapshot(cl_device_id device, cldm_device_state *state);
/* clSetDeviceHeapSizeEXT's rules (spec 1.2). */
cl_int cldm_device_set_heap_size(cl_device_id device, size_t size);
/* Heap bookkeeping for the CL_INVALID_OPERATION rule: a heap of `device` came to exist / went. */
void cldm_device_heap_created(cl_device_id device);
void cldm_device_heap_released(cl_device_id device);
/* The route of the first supported device of `platform` (CLDM_ROUTE_NONE if none is). */
cldm_device_route cldm_device_platform_route(cl_platform_id platform);
/* The route of `context` (CLDM_ROUTE_NONE if no device of it is served) and the allocator
 * features every served device of it has. */
cldm_device_route cldm_device_context_route(cl_context context, unsigned *features);
/* cc[i] = the compute capability of devices[i] (major * 100 + minor) if it takes the PTX route,
 * else 0. */
void cldm_device_compute_capabilities(cl_uint n, const cl_device_id *devices, unsigned *cc);

/* ---- layer_ptx.c: the PTX route, NVIDIA devices without SPIR-V (spec 1.1, 3.4) --------- */

/* 1 if the PTX backend is loaded (loading it on the first call; logs why not). */
int cldm_ptx_available(void);
/* A driver program for `devices` (PTX-route devices of `context`; cc[i]: the compute
 * capability of devices[i] as cldm_device_compute_capabilities gives it) from the SPIR-V
 * `modules` (one, or several linked together; lowered where they allocate), translated to PTX
 * once per compute capability and created with clCreateProgramWithBinary. CL_INVALID_DEVICE if
 * a cc[i] is 0 (a device of another route). The PTX starts with a
 * comment line naming the kernels of `kernels` that take the heap (cldm_ptx_marker), so a
 * binary of the program is recognised when it comes back (layer_binary.c). If the backend
 * cannot translate them, the program is made from an empty PTX module and *build_log
 * (malloc'd) says why: the caller makes its build fail with that log. With no modules, the
 * program is made from the empty PTX module without a log. NULL and *errcode_ret on errors
 * that leave no program (*build_log then NULL). */
cl_program cldm_ptx_program_create(cl_context context, cl_uint num_devices,
                                   const cl_device_id *devices, const unsigned *cc,
                                   const void *const *modules, const size_t *sizes,
                                   size_t num_modules, const char *options,
                                   const cldm_spirv_report *kernels, char **build_log,
                                   cl_int *errcode_ret);
/* The comment line a PTX text of the layer starts with (malloc'd, ending in '\n'):
 * "// cl_ext_device_malloc heap arguments: <kernel>:<num_user_args>[:new] ..." for each kernel
 * of `kernels` that takes the heap (its hidden argument is at index num_user_args; ":new": its
 * work-items may stop at a throwing operator new, spec 2.2). */
char *cldm_ptx_marker(const cldm_spirv_report *kernels);
/* 1 if binary `bin` (n bytes) starts with such a line; *kernels then lists those kernels
 * (owned by the caller, freed with cldm_spirv_report_free). 0 otherwise, -1 out of memory. */
int cldm_ptx_marker_parse(const void *bin, size_t n, cldm_spirv_report *kernels);

/* ---- layer_query.c: extension and device queries (spec 1.1, 1.2) ------------------------- */

cl_int CL_API_CALL clGetDeviceInfo_wrap(cl_device_id device, cl_device_info param_name,
                                        size_t param_value_size, void *param_value,
                                        size_t *param_value_size_ret);
cl_int CL_API_CALL clGetPlatformInfo_wrap(cl_platform_id platform, cl_platform_info param_name,
                                          size_t param_value_size, void *param_value,
                                          size_t *param_value_size_ret);

/* ---- layer_extfn.c: extension function lookup ------------------------------------------- */

void *CL_API_CALL clGetExtensionFunctionAddressForPlatform_wrap(cl_platform_id platform,
                                                                const char *name);
void *CL_API_CALL clGetExtensionFunctionAddress_wrap(const char *name);

/* ---- layer_heap.c: heaps per (context, device) (spec 1.2-1.4, 1.7) ----------------------- */

/* How a kernel's hidden argument is set for a heap, and the heap held for the launch. */
typedef struct cldm_heap_binding {
  int svm;
  void *svm_ptr;
  cl_mem buf;
  struct cldm_heap *heap;
} cldm_heap_binding;

/* The heap of (context, device), created and initialised (blocking) if it does not exist, held
 * for one command: its memory stays until the hold is let go (cldm_heap_hold_until or
 * cldm_heap_let_go, exactly one of them). CL_OUT_OF_RESOURCES (and a logged reason) if it
 * cannot be created; nothing is held then. */
cl_int cldm_heap_acquire(cl_context context, cl_device_id device, cldm_heap_binding *binding);
/* Lets go of the hold of `binding` once the command of `event` completed (an event callback),
 * or now: after an enqueue that failed, or once the command is known to have completed. */
void cldm_heap_hold_until(const cldm_heap_binding *binding, cl_event event);
void cldm_heap_let_go(const cldm_heap_binding *binding);
/* Sets argument `index` of `kernel` to the heap. */
cl_int cldm_heap_bind(cl_kernel kernel, cl_uint index, const cldm_heap_binding *binding);
/* Enqueues the reset of the heap of (context, device) on `queue` (spec 1.4), the heap held
 * until the reset completed. */
cl_int cldm_heap_enqueue_reset(cl_command_queue queue, cl_context context, cl_device_id device,
                               cl_uint num_events, const cl_event *wait_list, cl_event *event);
/* 1 if any heap exists (cheap; release fast paths). */
int cldm_heap_any(void);
/* After a release of an object of `context`, once the application holds no handle to it:
 * frees its heaps if, after `pending` more releases of the context by the caller, only the
 * heaps' own references would remain (a heap that commands still use goes once they
 * completed); with `wait`, gives the driver's own references a moment to go first unless such
 * commands are pending (layer_heap.c, CLDM_REAP_WAIT_MS). */
void cldm_heap_reap(cl_context context, cl_uint pending, int wait);
/* The contexts that have a heap of `device` (of any device if NULL), each once, in a new
 * array (free it) of *n; NULL if there are none or memory is short. */
cl_context *cldm_heap_contexts(cl_device_id device, size_t *n);
/* The heap's count of throwing operator new calls that failed (spec 2.2), as read: returns how
 * much of it was not reported yet (and remembers it as reported) and *heap_size the heap's
 * usable size; 0 if the heap is gone. */
uint64_t cldm_heap_new_failed_seen(cl_context context, cl_device_id device, uint64_t count,
                                   uint64_t *heap_size);

/* ---- layer_heap_read.c: what the host reads of heaps (spec 1.3, 2.4, 2.5) ---------------- */

/* Statistic `name` (CL_DEVICE_HEAP_INFO_*) of the heap of (context, device), read through
 * `queue` after the commands enqueued before (spec 1.3). */
cl_int cldm_heap_info(cl_command_queue queue, cl_context context, cl_device_id device,
                      cl_device_heap_info_ext name, cl_ulong *value);
/* Checked mode and CLDM_OOM, after a kernel named `kernel` that used the heap of (context,
 * device) completed: reads the heap's counters (and check area) through `queue`, reports
 * (layer_check.c; CLDM_OOM=abort and a throwing operator new that failed may abort) and
 * empties the event log. */
cl_int cldm_heap_after_kernel(cl_command_queue queue, cl_context context, cl_device_id device,
                              const char *kernel);
/* Spec 2.2: enqueues on the internal queue of the heap of (context, device), after `after`,
 * a read of the heap's count of throwing operator new calls that failed (CLDM_HDR_WORD_NEW_
 * FAILED_LO's (lo, hi) words) into dst, *ev its event; the heap is held until the read
 * completed. CL_INVALID_CONTEXT if there is no heap. */
cl_int cldm_heap_enqueue_new_failed_read(cl_context context, cl_device_id device, cl_event after,
                                         uint32_t dst[2], cl_event *ev);

/* ---- layer_new.c: throwing operator new that found no room (spec 2.2) ------------------- */

/* After the enqueue of a kernel named `kernel` whose work-items may stop at a throwing operator
 * new, with event `kernel_event` on `queue`: watches the launch (the heap's count read once the
 * kernel completed, a count that grew reported; layer_check.c may abort). Does not wait. */
void cldm_new_watch_launch(cl_command_queue queue, cl_event kernel_event, const char *kernel);
/* Waits for and reports the watches of launches in `context` (its release is near). */
void cldm_new_settle_context(cl_context context);

cl_int CL_API_CALL clFinish_wrap(cl_command_queue queue);
cl_int CL_API_CALL clWaitForEvents_wrap(cl_uint num_events, const cl_event *event_list);

/* ---- layer_lifetime.c: releases that may end a context's heaps --------------------------- */

/* The kinds of object whose release may leave only the heaps' references on their context. */
typedef enum cldm_object_kind {
  CLDM_OBJECT_QUEUE,
  CLDM_OBJECT_MEM,
  CLDM_OBJECT_SAMPLER,
  CLDM_OBJECT_EVENT,
  CLDM_OBJECT_PROGRAM,
  CLDM_OBJECT_KERNEL
} cldm_object_kind;

/* Releases `object` (a handle of `kind`) through the next table; after a successful release,
 * frees the heaps of its context that nothing of the application's can reach any more. */
cl_int cldm_lifetime_release(cldm_object_kind kind, void *object);
/* Frees the heaps (of `device`, of any device if NULL) whose contexts the application has
 * released entirely but that the driver held at the last release (commands still running
 * then); with `wait`, gives each such context a moment (cldm_heap_reap). */
void cldm_lifetime_sweep(cl_device_id device, int wait);

cl_context CL_API_CALL clCreateContext_wrap(
    const cl_context_properties *properties, cl_uint num_devices, const cl_device_id *devices,
    void(CL_CALLBACK *pfn_notify)(const char *, const void *, size_t, void *), void *user_data,
    cl_int *errcode_ret);
cl_context CL_API_CALL clCreateContextFromType_wrap(
    const cl_context_properties *properties, cl_device_type type,
    void(CL_CALLBACK *pfn_notify)(const char *, const void *, size_t, void *), void *user_data,
    cl_int *errcode_ret);
cl_int CL_API_CALL clRetainContext_wrap(cl_context context);
cl_int CL_API_CALL clReleaseContext_wrap(cl_context context);
cl_int CL_API_CALL clReleaseCommandQueue_wrap(cl_command_queue queue);
cl_int CL_API_CALL clReleaseMemObject_wrap(cl_mem mem);
cl_int CL_API_CALL clReleaseSampler_wrap(cl_sampler sampler);
cl_int CL_API_CALL clReleaseEvent_wrap(cl_event event);

/* ---- layer_program.c: the program records, clRetainProgram/clReleaseProgram (spec 1.5) -- */

/* Argument information of a kernel (clGetKernelArgInfo), as the compiler reported it for a
 * program built from source with -cl-kernel-arg-info (layer_clc.c). */
typedef struct cldm_arg_info {
  char *name, *type_name;
  cl_kernel_arg_address_qualifier address;
  cl_kernel_arg_access_qualifier access;
  cl_kernel_arg_type_qualifier type_qual;
} cldm_arg_info;

typedef struct cldm_kernel_args {
  char *kernel;
  size_t num_args;
  cldm_arg_info *args;
} cldm_kernel_args;

/* Per kernel name; a zeroed table is a valid empty one. */
typedef struct cldm_arg_table {
  size_t num_kernels;
  cldm_kernel_args *kernels;
} cldm_arg_table;

void cldm_arg_table_free(cldm_arg_table *t);
/* Appends copies of src's kernels to dst: 0, or -1 out of memory (dst stays freeable). */
int cldm_arg_table_append(cldm_arg_table *dst, const cldm_arg_table *src);
/* The entry of kernel `name`, or NULL. */
const cldm_kernel_args *cldm_arg_table_find(const cldm_arg_table *t, const char *name);

/* How a program with a record came to be. */
typedef enum cldm_program_kind {
  CLDM_PROGRAM_IL = 1, /* created from IL through the layer (layer_il.c): lowered, or on the PTX
                          route */
  CLDM_PROGRAM_TARGET, /* hidden: made by the layer from a source program's compiled module when
                          it allocates (layer_build.c, layer_il.c) */
  CLDM_PROGRAM_BINARY, /* created from a binary of the layer's that came back (layer_binary.c) */
  CLDM_PROGRAM_LINKED, /* linked from programs with records (layer_link.c) */
  CLDM_PROGRAM_SOURCE  /* created with clCreateProgramWithSource from a source that may use the
                          extension (layer_source.c): only `source` is used */
} cldm_program_kind;

/* What the layer keeps of a source program (CLDM_PROGRAM_SOURCE; cldm_source_scan says which):
 * the handle the application holds stays the driver's source program. A build or compile that
 * finds the module allocating makes a second, hidden driver program from the compiled
 * (lowered) module, the target, to which the layer sends what concerns the built program
 * (kernels, binaries, build status and log). */
typedef struct cldm_program_source {
  char *text; /* the application's source, NUL-terminated */
  size_t length;
  unsigned scan; /* CLDM_SOURCE_* bits of the text; 0 for a source kept only because the PTX
                    route may have to link it (a compile keeps its module) */
  cl_context context;
  cldm_device_route route;
  cl_program target; /* the hidden program, or NULL (not built, failed, or the driver's own) */
  int failed;        /* the last build or compile failed in the layer: CL_BUILD_ERROR, `log` */
  char *log;         /* failure: the build log; success: the compiler's warnings; or NULL */
  char *options;     /* the application's options of the last build or compile, or NULL */
  cl_program_binary_type type; /* failed: CL_PROGRAM_BINARY_TYPE_NONE */
  /* The last successful in-process compile: the module (not lowered) and its report, kept
   * for links (imports, exports; the PTX route links modules). */
  void *module;
  size_t module_size;
  cldm_spirv_report report;
  unsigned kernels; /* kernel objects created through the target and alive */
} cldm_program_source;

/* The record of a program the layer must know, one per driver program. Every kind but
 * CLDM_PROGRAM_SOURCE describes the kernels of a module the layer saw (the fields up to `args`);
 * a source program's built program is its target, or the driver's own. Read and written with
 * the records locked (cldm_program_lock). */
typedef struct cldm_program {
  cldm_program_kind kind;
  void *il; /* IL, TARGET: the module it was created from (CL_PROGRAM_IL) */
  size_t il_size;
  /* The engine's report, owned. For a linked program: its tracked inputs' kernels and
   * allocating exports (cldm_spirv_report_append), no imports. */
  cldm_spirv_report report;
  /* PTX route (layer_ptx.c): the driver program is made of PTX binaries. */
  int ptx;
  void *module; /* the SPIR-V the PTX came from (lowered); NULL for linked programs */
  size_t module_size;
  char *build_log;     /* non-NULL: no PTX of its own (translation failed, or link_only);
                          builds fail with this log */
  int link_only;       /* the module imports functions of other modules: it is translated only
                          together with them, by clLinkProgram */
  int compiled;        /* clCompileProgram succeeded (the PTX route has nothing to compile) */
  cldm_arg_table args; /* argument information the layer answers (empty: the driver's) */
  cldm_program_source source; /* CLDM_PROGRAM_SOURCE */
  /* Handles to the program held through the layer (the creator's, clRetainProgram's, the
   * layer's own for a target) plus kernels made from it that are alive (layer_kernel.c): for a
   * source program, the driver's own kernels of it (a source the driver built) or those made
   * from its target. The record goes when they are all gone (cldm_program_hold), not when the
   * driver's count says so, which counts a driver's own references too (kernels of launches
   * still running). */
  unsigned long holders;
} cldm_program;

/* A zeroed record of `kind`; NULL if out of memory. */
cldm_program *cldm_program_new(cldm_program_kind kind);
/* A record of `kind` with copies of `report`'s kernels (no IL); NULL if out of memory. */
cldm_program *cldm_program_new_kernels(cldm_program_kind kind, const cldm_spirv_report *report);
void cldm_program_free(cldm_program *rec);
void cldm_program_lock(void);
void cldm_program_unlock(void);
/* The record of `program` (any kind), or NULL; the caller holds the lock. */
cldm_program *cldm_program_find(cl_program program);
/* The source part of `program`'s record if it is a CLDM_PROGRAM_SOURCE, else NULL; the caller
 * holds the lock. */
cldm_program_source *cldm_program_find_source(cl_program program);
/* Records `rec` (taken over) for `program` with one holder, replacing a stale record of a
 * recycled handle. */
void cldm_program_register(cl_program program, cldm_program *rec);
/* 1 if `program` has a record with kernel tables (any kind but CLDM_PROGRAM_SOURCE). */
int cldm_program_tracked(cl_program program);
/* Adds `delta` to the holders of `program`'s record (cldm_program.holders); at 0 the record
 * goes, and a source program's target is released. Returns the new count, or -1 if the program
 * has no record. */
long cldm_program_hold(cl_program program, int delta);
/* Appends copies of names[0..n) to *list (length *len): 0, or -1 out of memory. */
int cldm_program_names_append(char ***list, size_t *len, char *const *names, size_t n);
void cldm_program_names_free(char **names, size_t n);

/* The target of source program `program` if it has one (retained: release it with the next
 * table), else NULL. */
cl_program cldm_program_target(cl_program program);
/* A kernel object was created through / released from the target of source program
 * `program`. */
void cldm_program_kernel_attached(cl_program program, int delta);
/* Gives the record of `program` (if any) the argument table `args` (taken over). */
void cldm_program_set_args(cl_program program, cldm_arg_table *args);
/* Answers CL_PROGRAM_IL from the record of `program`: 1 (with *err) if it has the IL, else 0. */
int cldm_program_il_info(cl_program program, size_t size, void *value, size_t *size_ret,
                         cl_int *err);
/* 1 if kernel `name` of `program` takes the heap (its record then gives *heap_arg_index,
 * *num_user_args and *throwing_new, spec 2.2), else 0 (also for unknown programs and
 * kernels). */
int cldm_program_kernel_heap(cl_program program, const char *name, uint32_t *heap_arg_index,
                             uint32_t *num_user_args, int *throwing_new);

cl_int CL_API_CALL clRetainProgram_wrap(cl_program program);
cl_int CL_API_CALL clReleaseProgram_wrap(cl_program program);

/* ---- layer_clc.c: the OpenCL C compiler, loaded on demand (spec 1.5.1, 2.3) ------------- */

/* The compiler's interface (loading libcldm-clc.so on the first call), or NULL. */
const cldm_clc_api *cldm_clc(void);
/* Compiles `source` as the driver of `device` would (its extensions, features and OpenCL
 * version), with clCompileProgram's headers if any; *status and *out (freed with
 * cldm_clc_result_release) say how. CL_INVALID_OPERATION if the compiler cannot be loaded,
 * CL_OUT_OF_HOST_MEMORY; CL_SUCCESS otherwise, also when the source does not compile. */
cl_int cldm_clc_compile(cl_device_id device, const char *source, const char *options,
                        size_t num_headers, const char *const *header_sources,
                        const char *const *header_names, cldm_clc_result *out,
                        cldm_clc_status *status);
void cldm_clc_result_release(cldm_clc_result *r);
/* The compiler's argument information as the layer answers it (CL_KERNEL_ARG_* values):
 * 0, or -1 out of memory (*t then empty). */
int cldm_clc_arg_table(const cldm_clc_result *r, cldm_arg_table *t);

/* ---- layer_il.c: programs created from SPIR-V modules (spec 1.5) ------------------------ */

/* A driver program from SPIR-V `il` as clCreateProgramWithIL_wrap makes it (lowered if it
 * allocates, on the PTX route made of PTX binaries), recorded as the hidden target of a source
 * program (CLDM_PROGRAM_TARGET). If the module cannot be lowered, `why` (when not NULL)
 * receives the one-line reason. */
cl_program cldm_il_create_target(cl_context context, const void *il, size_t length, char *why,
                                 size_t why_size, cl_int *errcode_ret);
/* Extension functions served by this module (clCreateProgramWithILKHR), or NULL. */
void *cldm_il_extfn(const char *name);

cl_program CL_API_CALL clCreateProgramWithIL_wrap(cl_context context, const void *il, size_t length,
                                                  cl_int *errcode_ret);

/* ---- layer_binary.c: program binaries that come back (spec 1.5.2, 3.6) ------------------- */

/* After the application read CL_PROGRAM_BINARIES of `program` into `binaries` (`n` pointers,
 * as it passed them): if the program has a record with kernels that take the heap (or
 * argument information), remembers each binary's content (SHA-256) with that record, in memory
 * and as a file in the cache directory, so clCreateProgramWithBinary recognises it later, also
 * in another process. */
void cldm_binary_remember(cl_program program, size_t n, unsigned char *const *binaries);

cl_program CL_API_CALL clCreateProgramWithBinary_wrap(cl_context context, cl_uint num_devices,
                                                      const cl_device_id *device_list,
                                                      const size_t *lengths,
                                                      const unsigned char **binaries,
                                                      cl_int *binary_status, cl_int *errcode_ret);

/* ---- layer_source.c: source programs that may allocate (spec 1.5.1, 3.5) ------------------ */

/* What cldm_source_scan finds in a source (bit set). */
enum {
  CLDM_SOURCE_NAMES = 1u << 0,   /* an identifier malloc, free, calloc, realloc, aligned_alloc,
                                    or new, delete (C++ for OpenCL) */
  CLDM_SOURCE_MACRO = 1u << 1,   /* the identifier cl_ext_device_malloc */
  CLDM_SOURCE_INCLUDE = 1u << 2, /* an #include directive (the included text is not seen) */
};
/* Scans OpenCL C `text` (n bytes) with comments, string and character literals skipped:
 * CLDM_SOURCE_* bits; 0 means the source cannot use the extension. */
unsigned cldm_source_scan(const char *text, size_t n);

/* The text of a hidden program that gives the driver's own diagnostics for the source of
 * `program`: the extension's header, "#line 1", the source (malloc'd), or NULL. */
char *cldm_source_diagnostic_text(cl_program program);

cl_program CL_API_CALL clCreateProgramWithSource_wrap(cl_context context, cl_uint count,
                                                      const char **strings, const size_t *lengths,
                                                      cl_int *errcode_ret);
cl_int CL_API_CALL clGetProgramInfo_wrap(cl_program program, cl_program_info name, size_t size,
                                         void *value, size_t *size_ret);

/* ---- layer_build.c: building and compiling programs (spec 1.5, 1.5.1) -------------------- */

/* `options` without those that do not apply to an already compiled module: -D name[=value],
 * -I dir (also as two words), -cl-std=..., -x ..., -spir-std=... (malloc'd). */
char *cldm_build_binary_options(const char *options);

cl_int CL_API_CALL clBuildProgram_wrap(cl_program program, cl_uint num_devices,
                                       const cl_device_id *device_list, const char *options,
                                       void(CL_CALLBACK *pfn_notify)(cl_program, void *),
                                       void *user_data);
cl_int CL_API_CALL clCompileProgram_wrap(cl_program program, cl_uint num_devices,
                                         const cl_device_id *device_list, const char *options,
                                         cl_uint num_input_headers, const cl_program *input_headers,
                                         const char **header_include_names,
                                         void(CL_CALLBACK *pfn_notify)(cl_program, void *),
                                         void *user_data);
cl_int CL_API_CALL clGetProgramBuildInfo_wrap(cl_program program, cl_device_id device,
                                              cl_program_build_info name, size_t size, void *value,
                                              size_t *size_ret);

/* ---- layer_link.c: linking programs (spec 1.5) ------------------------------------------- */

cl_program CL_API_CALL clLinkProgram_wrap(cl_context context, cl_uint num_devices,
                                          const cl_device_id *device_list, const char *options,
                                          cl_uint num_inputs, const cl_program *inputs,
                                          void(CL_CALLBACK *pfn_notify)(cl_program, void *),
                                          void *user_data, cl_int *errcode_ret);

/* ---- layer_kernel.c: kernels that take the heap (spec 1.6) ------------------------------- */

typedef struct cldm_kernel {
  pthread_mutex_t lock; /* held from binding the heap to the enqueue */
  uint32_t heap_arg_index;
  uint32_t num_user_args;
  char *throwing_new; /* the kernel's name if its work-items may stop at a throwing operator
                         new (spec 2.2: launches watched, layer_new.c), else NULL */
} cldm_kernel;

/* The record of a kernel that takes the heap, or NULL. */
cldm_kernel *cldm_kernel_find(cl_kernel kernel);

cl_kernel CL_API_CALL clCreateKernel_wrap(cl_program program, const char *name,
                                          cl_int *errcode_ret);
cl_int CL_API_CALL clCreateKernelsInProgram_wrap(cl_program program, cl_uint num_kernels,
                                                 cl_kernel *kernels, cl_uint *num_ret);
cl_kernel CL_API_CALL clCloneKernel_wrap(cl_kernel source, cl_int *errcode_ret);
cl_int CL_API_CALL clRetainKernel_wrap(cl_kernel kernel);
cl_int CL_API_CALL clReleaseKernel_wrap(cl_kernel kernel);
cl_int CL_API_CALL clGetKernelInfo_wrap(cl_kernel kernel, cl_kernel_info name, size_t size,
                                        void *value, size_t *size_ret);
cl_int CL_API_CALL clGetKernelArgInfo_wrap(cl_kernel kernel, cl_uint index, cl_kernel_arg_info name,
                                           size_t size, void *value, size_t *size_ret);
cl_int CL_API_CALL clSetKernelArg_wrap(cl_kernel kernel, cl_uint index, size_t size,
                                       const void *value);
cl_int CL_API_CALL clSetKernelArgSVMPointer_wrap(cl_kernel kernel, cl_uint index,
                                                 const void *value);

/* ---- layer_enqueue.c: launches (spec 1.7) ------------------------------------------------ */

cl_int CL_API_CALL clEnqueueNDRangeKernel_wrap(cl_command_queue queue, cl_kernel kernel,
                                               cl_uint work_dim, const size_t *offset,
                                               const size_t *global_size, const size_t *local_size,
                                               cl_uint num_events, const cl_event *wait_list,
                                               cl_event *event);
cl_int CL_API_CALL clEnqueueTask_wrap(cl_command_queue queue, cl_kernel kernel, cl_uint num_events,
                                      const cl_event *wait_list, cl_event *event);

/* ---- layer_heap_api.c: the extension's host entry points (spec 1.2-1.4) ----------------- */

cl_int CL_API_CALL cldm_clSetDeviceHeapSizeEXT(cl_device_id device, size_t size);
cl_int CL_API_CALL cldm_clGetDeviceHeapInfoEXT(cl_command_queue queue,
                                               cl_device_heap_info_ext param_name,
                                               size_t param_value_size, void *param_value,
                                               size_t *param_value_size_ret);
cl_int CL_API_CALL cldm_clEnqueueResetDeviceHeapEXT(cl_command_queue queue, cl_uint num_events,
                                                    const cl_event *wait_list, cl_event *event);

#endif /* CLDM_LAYER_H */
