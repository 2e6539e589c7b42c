/*
 * layer_program.c — programs of SPIR-V modules (spec 1.5): their records and their creation.
 *
 * clCreateProgramWithIL (and clCreateProgramWithILKHR, served through extension lookup) hands
 * the module to the SPIR-V engine. On a device that takes SPIR-V, a module that does not
 * allocate goes down byte-identical; one that does is lowered (hidden heap argument,
 * allocator variant chosen for the context's devices, spec 3.2; each variant is parsed once,
 * on first use, and shared by every lowering) and the driver program is created from the
 * result. On the PTX route (layer_ptx.c) every module, allocating or not, becomes a program
 * made from PTX binaries. The layer remembers the user's IL (CL_PROGRAM_IL returns it) and the
 * engine's report on the module (per kernel name, where the hidden argument is; allocating
 * exports and imports, for linking); on the PTX route also the module the PTX came from and
 * a translation failure, which layer_build.c reports at build time. A module that cannot be
 * lowered fails with CL_INVALID_VALUE and a one-line message on stderr (spec 1.5).
 * Records are also made for programs built from a source program's compiled module
 * (layer_source.c, with the compiler's argument information) and from binaries the layer
 * recognises (layer_binary.c); the queries that read them live with those modules.
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

static cldm_map cldm_programs = CLDM_MAP_INIT;

/* ---- records ----------------------------------------------------------------------------- */

void cldm_program_names_free(char **names, size_t n) {
  for (size_t i = 0; i < n; i++)
    free(names[i]);
  free(names);
}

void cldm_arg_table_free(cldm_arg_table *t) {
  for (size_t k = 0; k < t->num_kernels; k++) {
    cldm_kernel_args *e = &t->kernels[k];
    for (size_t a = 0; a < e->num_args; a++) {
      free(e->args[a].name);
      free(e->args[a].type_name);
    }
    free(e->args);
    free(e->kernel);
  }
  free(t->kernels);
  memset(t, 0, sizeof(*t));
}

int cldm_arg_table_append(cldm_arg_table *dst, const cldm_arg_table *src) {
  if (!src->num_kernels)
    return 0;
  cldm_kernel_args *grown =
      realloc(dst->kernels, (dst->num_kernels + src->num_kernels) * sizeof(*grown));
  if (!grown)
    return -1;
  dst->kernels = grown;
  for (size_t k = 0; k < src->num_kernels; k++) {
    const cldm_kernel_args *from = &src->kernels[k];
    cldm_kernel_args *to = &dst->kernels[dst->num_kernels];
    memset(to, 0, sizeof(*to));
    dst->num_kernels++; /* counted at once: a partial copy is still freed */
    if (!(to->kernel = strdup(from->kernel)))
      return -1;
    if (!from->num_args)
      continue;
    if (!(to->args = calloc(from->num_args, sizeof(*to->args))))
      return -1;
    to->num_args = from->num_args;
    for (size_t a = 0; a < from->num_args; a++) {
      to->args[a] = from->args[a];
      to->args[a].name = strdup(from->args[a].name);
      to->args[a].type_name = strdup(from->args[a].type_name);
      if (!to->args[a].name || !to->args[a].type_name)
        return -1;
    }
  }
  return 0;
}

const cldm_kernel_args *cldm_arg_table_find(const cldm_arg_table *t, const char *name) {
  for (size_t k = 0; k < t->num_kernels; k++)
    if (!strcmp(t->kernels[k].kernel, name))
      return &t->kernels[k];
  return NULL;
}

void cldm_program_free(cldm_program *p) {
  if (!p)
    return;
  cldm_spirv_report_free(&p->report);
  cldm_arg_table_free(&p->args);
  free(p->il);
  free(p->module);
  free(p->build_log);
  free(p);
}

/* Appends copies of names[0..n) to *list (length *len). 0, or -1 out of memory. */
int cldm_program_names_append(char ***list, size_t *len, char *const *names, size_t n) {
  if (!n)
    return 0;
  char **grown = realloc(*list, (*len + n) * sizeof(*grown));
  if (!grown)
    return -1;
  *list = grown;
  for (size_t i = 0; i < n; i++) {
    if (!(grown[*len] = strdup(names[i])))
      return -1;
    (*len)++;
  }
  return 0;
}

/* A record of a lowered module: copies the IL and takes `report` over (leaving it zeroed).
 * NULL if out of memory; the report then stays the caller's. */
static cldm_program *cldm_program_new(cldm_spirv_report *report, const void *il, size_t il_size) {
  cldm_program *p = calloc(1, sizeof(*p));
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

cldm_program *cldm_program_new_kernels(const cldm_spirv_report *report) {
  cldm_program *p = calloc(1, sizeof(*p));
  if (p && report) {
    cldm_spirv_report kernels = {0};
    kernels.num_kernels = report->num_kernels;
    kernels.kernels = report->kernels;
    cldm_spirv_status st = cldm_spirv_report_append(&p->report, &kernels, NULL);
    p->report.address_bits = report->address_bits;
    p->report.allocates = report->allocates;
    if (st != CLDM_SPIRV_OK) {
      cldm_program_free(p);
      return NULL;
    }
  }
  return p;
}

int cldm_program_kernel_heap(cl_program program, const char *name, uint32_t *heap_arg_index,
                             uint32_t *num_user_args, int *throwing_new) {
  int takes_heap = 0;
  pthread_mutex_lock(&cldm_programs.lock);
  const cldm_program *p = cldm_map_get(&cldm_programs, program);
  const cldm_spirv_kernel *k = NULL;
  for (size_t i = 0; p && i < p->report.num_kernels && !k; i++)
    if (!strcmp(p->report.kernels[i].name, name))
      k = &p->report.kernels[i];
  if (k && k->takes_heap) {
    takes_heap = 1;
    *heap_arg_index = k->heap_arg_index;
    *num_user_args = k->num_user_args;
    *throwing_new = k->throwing_new;
  }
  pthread_mutex_unlock(&cldm_programs.lock);
  return takes_heap;
}

void cldm_program_lock(void) { pthread_mutex_lock(&cldm_programs.lock); }
void cldm_program_unlock(void) { pthread_mutex_unlock(&cldm_programs.lock); }
cldm_program *cldm_program_find(cl_program program) {
  return cldm_map_get(&cldm_programs, program);
}

int cldm_program_tracked(cl_program program) {
  pthread_mutex_lock(&cldm_programs.lock);
  int tracked = cldm_map_get(&cldm_programs, program) != NULL;
  pthread_mutex_unlock(&cldm_programs.lock);
  return tracked;
}

long cldm_program_hold(cl_program program, int delta) {
  void *gone;
  long now = cldm_map_hold(&cldm_programs, program, offsetof(cldm_program, holders), delta, &gone);
  cldm_program_free(gone);
  return now >= 0 ? now : cldm_source_hold(program, delta);
}

void cldm_program_set_args(cl_program program, cldm_arg_table *args) {
  pthread_mutex_lock(&cldm_programs.lock);
  cldm_program *p = cldm_map_get(&cldm_programs, program);
  if (p) {
    cldm_arg_table_free(&p->args);
    p->args = *args;
    memset(args, 0, sizeof(*args));
  }
  pthread_mutex_unlock(&cldm_programs.lock);
  cldm_arg_table_free(args);
}

int cldm_program_il_info(cl_program program, size_t size, void *value, size_t *size_ret,
                         cl_int *err) {
  pthread_mutex_lock(&cldm_programs.lock);
  const cldm_program *p = cldm_map_get(&cldm_programs, program);
  int have = p && p->il;
  if (have)
    *err = cldm_info_return(p->il, p->il_size, size, value, size_ret);
  pthread_mutex_unlock(&cldm_programs.lock);
  return have;
}

void cldm_program_register(cl_program program, cldm_program *rec) {
  rec->holders = 1; /* the handle of its creator (the application, or the layer for a target) */
  pthread_mutex_lock(&cldm_programs.lock);
  cldm_program *old = cldm_map_remove(&cldm_programs, program); /* a recycled handle */
  if (cldm_map_put(&cldm_programs, program, rec) != 0) {
    cldm_log(CLDM_LOG_ERROR, "out of host memory tracking program %p", (void *)program);
    cldm_program_free(rec);
  }
  pthread_mutex_unlock(&cldm_programs.lock);
  cldm_program_free(old);
}

/* ---- allocator variants, parsed once ------------------------------------------------------ */

static pthread_mutex_t cldm_program_allocators_lock = PTHREAD_MUTEX_INITIALIZER;
/* Per entry of cldm_device_modules(): the module parsed, or NULL until first used. */
static cldm_spirv_parsed_allocator **cldm_program_allocators;

/* The parsed form of allocator variant `m`, parsed on first use and kept for the life of the
 * process; NULL if it cannot be parsed (the caller passes the words too, so lowering then
 * reports why, as without the cache). */
static const cldm_spirv_parsed_allocator *cldm_program_allocator(const cldm_device_module *m) {
  size_t count;
  const cldm_device_module *all = cldm_device_modules(&count);
  size_t i = (size_t)(m - all); /* cldm_device_module_select answers from that table */
  cldm_spirv_parsed_allocator *parsed = NULL;
  pthread_mutex_lock(&cldm_program_allocators_lock);
  if (!cldm_program_allocators)
    cldm_program_allocators = calloc(count, sizeof(*cldm_program_allocators));
  if (cldm_program_allocators && i < count) {
    parsed = cldm_program_allocators[i];
    if (!parsed &&
        cldm_spirv_allocator_parse(m->words, m->num_words, &parsed, NULL) == CLDM_SPIRV_OK)
      cldm_program_allocators[i] = parsed;
  }
  pthread_mutex_unlock(&cldm_program_allocators_lock);
  return parsed;
}

/* ---- creation ---------------------------------------------------------------------------- */

/* Contexts hold devices of one platform, so of one route; without a served device the layer
 * stays out of the way. */
cldm_device_route cldm_program_context_route(cl_context context, unsigned *features) {
  void *devs = NULL;
  size_t size = 0;
  if (!CLDM_NEXT_HAS(clGetContextInfo) ||
      cldm_info_fetch(cldm_info_context_query, context, CL_CONTEXT_DEVICES, &devs, &size) !=
          CL_SUCCESS)
    return CLDM_ROUTE_NONE;
  cldm_device_route route = CLDM_ROUTE_NONE;
  unsigned all = ~0u;
  for (size_t i = 0; i < size / sizeof(cl_device_id); i++) {
    cldm_device_state st;
    if (cldm_device_snapshot(((cl_device_id *)devs)[i], &st) == CL_SUCCESS && st.supported) {
      all &= st.features;
      if (route == CLDM_ROUTE_NONE || st.route == CLDM_ROUTE_PTX)
        route = st.route;
    }
  }
  free(devs);
  *features = route != CLDM_ROUTE_NONE ? all : 0;
  return route;
}

static void cldm_program_dump(const void *words, size_t size) {
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

/* 1 if `name` is a function the PTX backend defines itself (the allocator's target functions,
 * spec 3.4): importing it does not make a module link-only. */
static int cldm_program_backend_import(const char *name) {
  return !strncmp(name, CLDM_SPIRV_TARGET_PREFIX, sizeof(CLDM_SPIRV_TARGET_PREFIX) - 1);
}

/* How many functions `r`'s module imports that only another module can define. */
static size_t cldm_program_foreign_imports(const cldm_spirv_report *r) {
  size_t n = 0;
  for (size_t i = 0; i < r->num_imports; i++)
    n += !cldm_program_backend_import(r->imports[i]);
  return n;
}

/* The build log of a PTX-route module that imports functions (malloc'd, NULL if no memory). */
static char *cldm_program_link_only_log(const cldm_spirv_report *r) {
  size_t len = 256;
  for (size_t i = 0; i < r->num_imports; i++)
    len += strlen(r->imports[i]) + 2;
  char *log = malloc(len);
  if (!log)
    return NULL;
  int n = snprintf(log, len, "the module calls functions it does not define (");
  for (size_t i = 0, k = 0; i < r->num_imports && n > 0 && (size_t)n < len; i++)
    if (!cldm_program_backend_import(r->imports[i]))
      n += snprintf(log + n, len - (size_t)n, "%s%s", k++ ? ", " : "", r->imports[i]);
  if (n > 0 && (size_t)n < len)
    snprintf(log + n, len - (size_t)n,
             "): on NVIDIA devices such a module is compiled with clCompileProgram and linked "
             "with the modules that define them (clLinkProgram)");
  return log;
}

/* The PTX route: a program of binaries from `module` (lowered, or the user's IL if it does not
 * allocate), for every device of the context; takes `rec` over. */
static cl_program cldm_program_create_ptx(cl_context context, cldm_program *rec, const void *module,
                                          size_t module_size, cl_int *errcode_ret) {
  void *devs = NULL;
  size_t size = 0;
  cl_int err = cldm_info_fetch(cldm_info_context_query, context, CL_CONTEXT_DEVICES, &devs, &size);
  rec->ptx = 1;
  rec->module = malloc(module_size);
  if (err == CL_SUCCESS && !rec->module)
    err = CL_OUT_OF_HOST_MEMORY;
  cl_program program = NULL;
  if (err == CL_SUCCESS) {
    memcpy(rec->module, module, module_size);
    rec->module_size = module_size;
    /* A module that imports functions is translated only with the modules that define them
     * (clLinkProgram); alone it has no PTX of its own. The backend's own target functions do
     * not count: it links their definitions into every module that declares them. */
    rec->link_only = cldm_program_foreign_imports(&rec->report) > 0;
    program = cldm_ptx_program_create(
        context, (cl_uint)(size / sizeof(cl_device_id)), devs, (const void *const *)&rec->module,
        &rec->module_size, rec->link_only ? 0 : 1, NULL, &rec->report, &rec->build_log, &err);
    if (program && rec->link_only)
      rec->build_log = cldm_program_link_only_log(&rec->report);
  }
  free(devs);
  if (program)
    cldm_program_register(program, rec);
  else
    cldm_program_free(rec);
  if (errcode_ret)
    *errcode_ret = err;
  return program;
}

static cl_program cldm_program_create(cldm_create_il_fn create, cl_context context, const void *il,
                                      size_t length, char *why, size_t why_size,
                                      cl_int *errcode_ret) {
  unsigned features = 0;
  cldm_device_route route =
      il && length ? cldm_program_context_route(context, &features) : CLDM_ROUTE_NONE;
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
    alloc.parsed32 = cldm_program_allocator(m32);
  }
  if (m64) {
    alloc.words64 = m64->words;
    alloc.num_words64 = m64->num_words;
    alloc.parsed64 = cldm_program_allocator(m64);
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
    cldm_program_dump(out, out_size);
  }
  cldm_program *rec = cldm_program_new(&report, il, length);
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
    program = cldm_program_create_ptx(context, rec, lowered ? out : il, lowered ? out_size : length,
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

static cl_program CL_API_CALL cldm_program_next_create_il(cl_context c, const void *il, size_t n,
                                                          cl_int *e) {
  return cldm_next->clCreateProgramWithIL(c, il, n, e);
}

cl_program CL_API_CALL clCreateProgramWithIL_wrap(cl_context context, const void *il, size_t length,
                                                  cl_int *errcode_ret) {
  return cldm_program_create(cldm_program_next_create_il, context, il, length, NULL, 0,
                             errcode_ret);
}

/* The driver's clCreateProgramWithILKHR, found through the platform of the context. */
static cl_program CL_API_CALL cldm_program_next_create_il_khr(cl_context c, const void *il,
                                                              size_t n, cl_int *e) {
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
  return cldm_program_create(cldm_program_next_create_il_khr, context, il, length, NULL, 0,
                             errcode_ret);
}

cl_program cldm_program_create_from_il(cl_context context, const void *il, size_t length, char *why,
                                       size_t why_size, cl_int *errcode_ret) {
  return cldm_program_create(cldm_program_next_create_il, context, il, length, why, why_size,
                             errcode_ret);
}

void *cldm_program_extfn(const char *name) {
  if (!strcmp(name, "clCreateProgramWithILKHR"))
    return (void *)cldm_clCreateProgramWithILKHR;
  return NULL;
}
