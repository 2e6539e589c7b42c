/*
 * layer_il.c — programs created from SPIR-V modules (spec 1.5): clCreateProgramWithIL, and
 * clCreateProgramWithILKHR served through extension lookup; also the hidden targets of source
 * programs (layer_build.c), made the same way from their compiled modules.
 *
 * The module goes to the SPIR-V engine. On a device that takes SPIR-V, a module that does not
 * allocate goes down byte-identical; one that does is lowered (hidden heap argument,
 * allocator variant chosen for the context's devices, spec 3.2; each variant is parsed once,
 * on first use, and shared by every lowering) and the driver program is created from the
 * result. On the PTX route (layer_ptx.c) every module, allocating or not, becomes a program
 * made from PTX binaries. The program's record (layer_program.c) keeps the user's IL
 * (CL_PROGRAM_IL returns it) and the engine's report on the module (per kernel name, where the
 * hidden argument is; allocating exports and imports, for linking); on the PTX route also the
 * module the PTX came from and a translation failure, which layer_build.c reports at build
 * time. A module that cannot be lowered fails with CL_INVALID_VALUE and a one-line message on
 * stderr (spec 1.5).
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cldm_device.h"
#include "cldm_layer.h"
#include "cldm_spirv.h"

typedef cl_program(CL_API_CALL *cldm_create_il_fn)(cl_context, const void *, size_t, cl_int *);

/* ---- allocator variants, parsed once ----------------------------------------------------- */

static pthread_mutex_t cldm_il_allocators_lock = PTHREAD_MUTEX_INITIALIZER;
/* Per entry of cldm_device_modules(): the module parsed, or NULL until first used. */
static cldm_spirv_parsed_allocator **cldm_il_allocators;

/* The parsed form of allocator variant `m`, parsed on first use and kept for the life of the
 * process; NULL if it cannot be parsed (the caller passes the words too, so lowering then
 * reports why, as without the cache). */
static const cldm_spirv_parsed_allocator *cldm_il_allocator(const cldm_device_module *m) {
  size_t count;
  const cldm_device_module *all = cldm_device_modules(&count);
  size_t i = (size_t)(m - all); /* cldm_device_module_select answers from that table */
  cldm_spirv_parsed_allocator *parsed = NULL;
  pthread_mutex_lock(&cldm_il_allocators_lock);
  if (!cldm_il_allocators)
    cldm_il_allocators = calloc(count, sizeof(*cldm_il_allocators));
  if (cldm_il_allocators && i < count) {
    parsed = cldm_il_allocators[i];
    if (!parsed &&
        cldm_spirv_allocator_parse(m->words, m->num_words, &parsed, NULL) == CLDM_SPIRV_OK)
      cldm_il_allocators[i] = parsed;
  }
  pthread_mutex_unlock(&cldm_il_allocators_lock);
  return parsed;
}

/* ---- creation ---------------------------------------------------------------------------- */

/* A record of `kind` for a module created through the layer: copies the IL and takes `report`
 * over (leaving it zeroed). NULL if out of memory; the report then stays the caller's. */
static cldm_program *cldm_il_record(cldm_program_kind kind, cldm_spirv_report *report,
                                    const void *il, size_t il_size) {
  cldm_program *p = cldm_program_new(kind);
  void *copy = malloc(il_size ? il_size : 1);
  if (!p || !copy) {
    free(p);
    free(copy);
    return NULL;
  }
  memcpy(copy, il, il_size);
  p->il = copy;
  p->il_size = il_size;
  p->report = *report;
  memset(report, 0, sizeof(*report));
  return p;
}

static void cldm_il_dump(const void *words, size_t size) {
  static unsigned seq;
  const char *dir = cldm_config_dump_dir();
  if (!dir)
    return;
  char path[4096];
  snprintf(path, sizeof(path), "%s/cldm-%d-%u.spv", dir, (int)getpid(),
           __atomic_fetch_add(&seq, 1, __ATOMIC_RELAXED));
  FILE *f = fopen(path, "wb");
  if (!f || fwrite(words, 1, size, f) != size)
    cldm_log(CLDM_LOG_WARN, "cannot write lowered module to %s", path);
  else
    cldm_log(CLDM_LOG_INFO, "lowered module written to %s", path);
  if (f)
    fclose(f);
}

/* 1 if `name` is a function the PTX backend resolves itself, so that importing it does not make
 * a module link-only: the allocator's target functions (spec 3.4), and Itanium-mangled names,
 * which is how OpenCL C's built-in functions reach SPIR-V from front ends that declare them
 * (clang's HIP and C++ for OpenCL: _Z12get_local_idj) and which libclc's NVPTX library defines.
 * A mangled name that neither the module nor libclc defines fails the build with the backend's
 * list of undefined functions (OpenCL C's own functions, unmangled, still make a module
 * link-only). */
static int cldm_il_backend_import(const char *name) {
  return !strncmp(name, CLDM_SPIRV_TARGET_PREFIX, sizeof(CLDM_SPIRV_TARGET_PREFIX) - 1) ||
         !strncmp(name, "_Z", 2);
}

/* How many functions `r`'s module imports that only another module can define. */
static size_t cldm_il_foreign_imports(const cldm_spirv_report *r) {
  size_t n = 0;
  for (size_t i = 0; i < r->num_imports; i++)
    n += !cldm_il_backend_import(r->imports[i]);
  return n;
}

/* The build log of a PTX-route module that imports functions (malloc'd, NULL if no memory). */
static char *cldm_il_link_only_log(const cldm_spirv_report *r) {
  size_t len = 256;
  for (size_t i = 0; i < r->num_imports; i++)
    len += strlen(r->imports[i]) + 2;
  char *log = malloc(len);
  if (!log)
    return NULL;
  int n = snprintf(log, len, "the module calls functions it does not define (");
  for (size_t i = 0, k = 0; i < r->num_imports && n > 0 && (size_t)n < len; i++)
    if (!cldm_il_backend_import(r->imports[i]))
      n += snprintf(log + n, len - (size_t)n, "%s%s", k++ ? ", " : "", r->imports[i]);
  if (n > 0 && (size_t)n < len)
    snprintf(log + n, len - (size_t)n,
             "): on NVIDIA devices such a module is compiled with clCompileProgram and linked "
             "with the modules that define them (clLinkProgram)");
  return log;
}

/* The PTX route: a program of binaries from `module` (lowered, or the user's IL if it does not
 * allocate), for every device of the context; takes `rec` over. */
static cl_program cldm_il_create_ptx(cl_context context, cldm_program *rec, const void *module,
                                     size_t module_size, cl_int *errcode_ret) {
  void *devs = NULL;
  size_t size = 0;
  cl_int err = cldm_info_fetch(cldm_info_context_query, context, CL_CONTEXT_DEVICES, &devs, &size);
  cl_uint num_devices = (cl_uint)(size / sizeof(cl_device_id));
  unsigned *cc = calloc(num_devices ? num_devices : 1, sizeof(*cc));
  rec->ptx = 1;
  rec->module = malloc(module_size);
  if (err == CL_SUCCESS && (!rec->module || !cc))
    err = CL_OUT_OF_HOST_MEMORY;
  cl_program program = NULL;
  if (err == CL_SUCCESS) {
    memcpy(rec->module, module, module_size);
    rec->module_size = module_size;
    /* A module that imports functions is translated only with the modules that define them
     * (clLinkProgram); alone it has no PTX of its own. The backend's own target functions do
     * not count: it links their definitions into every module that declares them. */
    rec->link_only = cldm_il_foreign_imports(&rec->report) > 0;
    cldm_device_compute_capabilities(num_devices, devs, cc);
    program = cldm_ptx_program_create(
        context, num_devices, devs, cc, (const void *const *)&rec->module, &rec->module_size,
        rec->link_only ? 0 : 1, NULL, &rec->report, &rec->build_log, &err);
    if (program && rec->link_only)
      rec->build_log = cldm_il_link_only_log(&rec->report);
  }
  free(devs);
  free(cc);
  if (program)
    cldm_program_register(program, rec);
  else
    cldm_program_free(rec);
  if (errcode_ret)
    *errcode_ret = err;
  return program;
}

static cl_program cldm_il_create(cldm_create_il_fn create, cldm_program_kind kind,
                                 cl_context context, const void *il, size_t length, char *why,
                                 size_t why_size, cl_int *errcode_ret) {
  unsigned features = 0;
  cldm_device_route route =
      il && length ? cldm_device_context_route(context, &features) : CLDM_ROUTE_NONE;
  if (route == CLDM_ROUTE_NONE)
    return create(context, il, length, errcode_ret);

  /* checked mode: the checked modules (spec 2.4). The NVPTX allocator has no checked build:
   * on the PTX route checked mode takes cl12checked, which the route translates like any
   * module (slower: one work-item at a time, as on GPUs older than compute capability 8.0) */
  if (cldm_config_check())
    features = (features | CLDM_DEVICE_FEATURE_CHECKED) & ~CLDM_DEVICE_FEATURE_TARGET_PTX;
  cldm_spirv_allocator alloc = {0};
  const cldm_device_module *m32 = cldm_device_module_select(32, features);
  const cldm_device_module *m64 = cldm_device_module_select(64, features);
  if (m32) {
    alloc.words32 = m32->words;
    alloc.num_words32 = m32->num_words;
    alloc.parsed32 = cldm_il_allocator(m32);
  }
  if (m64) {
    alloc.words64 = m64->words;
    alloc.num_words64 = m64->num_words;
    alloc.parsed64 = cldm_il_allocator(m64);
  }
  void *out = NULL;
  size_t out_size = 0;
  cldm_spirv_report report = {0};
  cldm_spirv_error err = {0};
  cldm_spirv_status st = cldm_spirv_lower(il, length, &alloc, &out, &out_size, &report, &err);
  if (st != CLDM_SPIRV_OK) {
    if (why)
      snprintf(why, why_size, "%s: %s", cldm_spirv_status_name(st), err.message);
    else
      cldm_log(CLDM_LOG_ERROR, "clCreateProgramWithIL: %s: %s", cldm_spirv_status_name(st),
               err.message);
    cldm_spirv_report_free(&report);
    if (errcode_ret)
      *errcode_ret = CL_INVALID_VALUE;
    return NULL;
  }
  if (!report.allocates && route == CLDM_ROUTE_SPIRV) {
    cldm_spirv_report_free(&report);
    return create(context, il, length, errcode_ret); /* byte-identical, spec 1.5 */
  }
  if (report.allocates) {
    cldm_log(CLDM_LOG_INFO, "lowered a %zu-byte module (%zu kernels, allocator %s) to %zu bytes",
             length, report.num_kernels,
             report.address_bits == 32 ? (m32 ? m32->name : "-") : (m64 ? m64->name : "-"),
             out_size);
    cldm_il_dump(out, out_size);
  }
  cldm_program *rec = cldm_il_record(kind, &report, il, length);
  cldm_spirv_report_free(&report); /* nothing left unless the record could not be made */
  if (!rec) {
    free(out);
    if (errcode_ret)
      *errcode_ret = CL_OUT_OF_HOST_MEMORY;
    return NULL;
  }
  cl_program program;
  if (route == CLDM_ROUTE_PTX) {
    int lowered = rec->report.allocates;
    program = cldm_il_create_ptx(context, rec, lowered ? out : il, lowered ? out_size : length,
                                 errcode_ret);
    free(out);
    return program;
  }
  program = create(context, out, out_size, errcode_ret);
  free(out);
  if (program)
    cldm_program_register(program, rec);
  else
    cldm_program_free(rec);
  return program;
}

static cl_program CL_API_CALL cldm_il_next_create_il(cl_context c, const void *il, size_t n,
                                                     cl_int *e) {
  return cldm_next->clCreateProgramWithIL(c, il, n, e);
}

cl_program CL_API_CALL clCreateProgramWithIL_wrap(cl_context context, const void *il, size_t length,
                                                  cl_int *errcode_ret) {
  return cldm_il_create(cldm_il_next_create_il, CLDM_PROGRAM_IL, context, il, length, NULL, 0,
                        errcode_ret);
}

/* The driver's clCreateProgramWithILKHR, found through the platform of the context. */
static cl_program CL_API_CALL cldm_il_next_create_il_khr(cl_context c, const void *il, size_t n,
                                                         cl_int *e) {
  cldm_create_il_fn fn = NULL;
  cl_platform_id platform = cldm_info_context_platform(c);
  if (platform && CLDM_NEXT_HAS(clGetExtensionFunctionAddressForPlatform))
    fn = (cldm_create_il_fn)cldm_next->clGetExtensionFunctionAddressForPlatform(
        platform, "clCreateProgramWithILKHR");
  if (!fn && CLDM_NEXT_HAS(clCreateProgramWithIL))
    fn = cldm_next->clCreateProgramWithIL; /* same semantics (OpenCL 2.1 core) */
  if (!fn) {
    if (e)
      *e = CL_INVALID_OPERATION;
    return NULL;
  }
  return fn(c, il, n, e);
}

static cl_program CL_API_CALL cldm_clCreateProgramWithILKHR(cl_context context, const void *il,
                                                            size_t length, cl_int *errcode_ret) {
  return cldm_il_create(cldm_il_next_create_il_khr, CLDM_PROGRAM_IL, context, il, length, NULL, 0,
                        errcode_ret);
}

cl_program cldm_il_create_target(cl_context context, const void *il, size_t length, char *why,
                                 size_t why_size, cl_int *errcode_ret) {
  return cldm_il_create(cldm_il_next_create_il, CLDM_PROGRAM_TARGET, context, il, length, why,
                        why_size, errcode_ret);
}

void *cldm_il_extfn(const char *name) {
  if (!strcmp(name, "clCreateProgramWithILKHR"))
    return (void *)cldm_clCreateProgramWithILKHR;
  return NULL;
}
