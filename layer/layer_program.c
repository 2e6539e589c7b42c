/*
 * layer_program.c — programs of SPIR-V modules that allocate (spec 1.5).
 *
 * clCreateProgramWithIL (and clCreateProgramWithILKHR, served through extension lookup) hands
 * the module to the SPIR-V engine. A module that does not allocate goes down byte-identical.
 * One that does is lowered (hidden heap argument, allocator variant chosen for the context's
 * devices, spec 3.2) and the driver program is created from the result; the layer remembers
 * the user's IL (CL_PROGRAM_IL returns it) and, per kernel name, where the hidden argument is.
 * A module that cannot be lowered fails with CL_INVALID_VALUE and a one-line message on
 * stderr (spec 1.5). clLinkProgram carries the kernel table over to the linked program.
 */
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

static void cldm_program_free(cldm_program *p)
{
  if (!p)
    return;
  for (size_t i = 0; i < p->num_kernels; i++)
    free(p->kernels[i].name);
  free(p->kernels);
  free(p->il);
  free(p);
}

/* Copies the engine's per-kernel report into a record. */
static cldm_program *cldm_program_from_report(const cldm_spirv_report *r, const void *il,
                                              size_t il_size)
{
  cldm_program *p = calloc(1, sizeof(*p));
  if (!p)
    return NULL;
  p->kernels = calloc(r->num_kernels ? r->num_kernels : 1, sizeof(*p->kernels));
  p->il = malloc(il_size ? il_size : 1);
  if (!p->kernels || !p->il) {
    cldm_program_free(p);
    return NULL;
  }
  memcpy(p->il, il, il_size);
  p->il_size = il_size;
  for (size_t i = 0; i < r->num_kernels; i++) {
    cldm_program_kernel *k = &p->kernels[p->num_kernels];
    k->name = strdup(r->kernels[i].name);
    if (!k->name) {
      cldm_program_free(p);
      return NULL;
    }
    k->takes_heap = r->kernels[i].takes_heap;
    k->num_user_args = r->kernels[i].num_user_args;
    k->heap_arg_index = r->kernels[i].heap_arg_index;
    p->num_kernels++;
  }
  p->heap_exports = 0; /* set from the engine report once it lists exported allocating functions */
  return p;
}

int cldm_program_kernel_lookup(cl_program program, const char *name, cldm_program_kernel *out)
{
  int found = 0;
  pthread_mutex_lock(&cldm_programs.lock);
  const cldm_program *p = cldm_map_get(&cldm_programs, program);
  for (size_t i = 0; p && i < p->num_kernels && !found; i++)
    if (!strcmp(p->kernels[i].name, name)) {
      *out = p->kernels[i];
      out->name = NULL; /* not owned by the caller */
      found = 1;
    }
  pthread_mutex_unlock(&cldm_programs.lock);
  return found;
}

int cldm_program_tracked(cl_program program)
{
  pthread_mutex_lock(&cldm_programs.lock);
  int tracked = cldm_map_get(&cldm_programs, program) != NULL;
  pthread_mutex_unlock(&cldm_programs.lock);
  return tracked;
}

static void cldm_program_register(cl_program program, cldm_program *rec)
{
  pthread_mutex_lock(&cldm_programs.lock);
  cldm_program *old = cldm_map_remove(&cldm_programs, program); /* a recycled handle */
  if (cldm_map_put(&cldm_programs, program, rec) != 0) {
    cldm_log(CLDM_LOG_ERROR, "out of host memory tracking program %p", (void *)program);
    cldm_program_free(rec);
  }
  pthread_mutex_unlock(&cldm_programs.lock);
  cldm_program_free(old);
}

/* ---- creation ---------------------------------------------------------------------------- */

/* The allocator feature set usable on every supported device of `context`; returns 0 if the
 * context has no supported device (the layer then stays out of the way). */
static int cldm_context_features(cl_context context, unsigned *features)
{
  void *devs = NULL;
  size_t size = 0;
  if (!CLDM_NEXT_HAS(clGetContextInfo) ||
      cldm_info_fetch(cldm_context_query, context, CL_CONTEXT_DEVICES, &devs, &size) != CL_SUCCESS)
    return 0;
  int any = 0;
  unsigned all = ~0u;
  for (size_t i = 0; i < size / sizeof(cl_device_id); i++) {
    unsigned f = 0;
    if (cldm_device_caps(((cl_device_id *)devs)[i], &f, NULL, NULL) == CL_SUCCESS) {
      all &= f;
      any = 1;
    }
  }
  free(devs);
  *features = any ? all : 0;
  return any;
}

static void cldm_program_dump(const void *words, size_t size)
{
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

static cl_program cldm_program_create(cldm_create_il_fn create, cl_context context,
                                      const void *il, size_t length, cl_int *errcode_ret)
{
  unsigned features = 0;
  if (!il || !length || !cldm_context_features(context, &features))
    return create(context, il, length, errcode_ret);

  cldm_spirv_allocator alloc = {0};
  const cldm_device_module *m32 = cldm_device_module_select(32, features);
  const cldm_device_module *m64 = cldm_device_module_select(64, features);
  if (m32) {
    alloc.words32 = m32->words;
    alloc.num_words32 = m32->num_words;
  }
  if (m64) {
    alloc.words64 = m64->words;
    alloc.num_words64 = m64->num_words;
  }
  void *out = NULL;
  size_t out_size = 0;
  cldm_spirv_report report = {0};
  cldm_spirv_error err = {0};
  cldm_spirv_status st = cldm_spirv_lower(il, length, &alloc, &out, &out_size, &report, &err);
  if (st != CLDM_SPIRV_OK) {
    cldm_log(CLDM_LOG_ERROR, "clCreateProgramWithIL: %s: %s", cldm_spirv_status_name(st), err.message);
    cldm_spirv_report_free(&report);
    if (errcode_ret)
      *errcode_ret = CL_INVALID_VALUE;
    return NULL;
  }
  if (!report.allocates) {
    cldm_spirv_report_free(&report);
    return create(context, il, length, errcode_ret); /* byte-identical, spec 1.5 */
  }
  cldm_log(CLDM_LOG_INFO, "lowered a %zu-byte module (%zu kernels, allocator %s) to %zu bytes",
           length, report.num_kernels,
           report.address_bits == 32 ? (m32 ? m32->name : "-") : (m64 ? m64->name : "-"), out_size);
  cldm_program_dump(out, out_size);
  cldm_program *rec = cldm_program_from_report(&report, il, length);
  cldm_spirv_report_free(&report);
  if (!rec) {
    free(out);
    if (errcode_ret)
      *errcode_ret = CL_OUT_OF_HOST_MEMORY;
    return NULL;
  }
  cl_program program = create(context, out, out_size, errcode_ret);
  free(out);
  if (program)
    cldm_program_register(program, rec);
  else
    cldm_program_free(rec);
  return program;
}

static cl_program CL_API_CALL cldm_next_create_il(cl_context c, const void *il, size_t n, cl_int *e)
{
  return cldm_next->clCreateProgramWithIL(c, il, n, e);
}

static cl_program CL_API_CALL clCreateProgramWithIL_wrap(cl_context context, const void *il,
                                                          size_t length, cl_int *errcode_ret)
{
  return cldm_program_create(cldm_next_create_il, context, il, length, errcode_ret);
}

/* The driver's clCreateProgramWithILKHR, found through the platform of the context. */
static cl_program CL_API_CALL cldm_next_create_il_khr(cl_context c, const void *il, size_t n,
                                                      cl_int *e)
{
  cldm_create_il_fn fn = NULL;
  cl_platform_id platform = cldm_context_platform(c);
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
                                                            size_t length, cl_int *errcode_ret)
{
  return cldm_program_create(cldm_next_create_il_khr, context, il, length, errcode_ret);
}

/* ---- queries, linking, release ----------------------------------------------------------- */

static cl_int CL_API_CALL clGetProgramInfo_wrap(cl_program program, cl_program_info name,
                                                size_t size, void *value, size_t *size_ret)
{
  if (name == CL_PROGRAM_IL) {
    pthread_mutex_lock(&cldm_programs.lock);
    const cldm_program *p = cldm_map_get(&cldm_programs, program);
    cl_int err = CL_SUCCESS;
    if (p && p->il)
      err = cldm_info_return(p->il, p->il_size, size, value, size_ret);
    pthread_mutex_unlock(&cldm_programs.lock);
    if (p && p->il)
      return err;
  }
  return cldm_next->clGetProgramInfo(program, name, size, value, size_ret);
}

static cl_program CL_API_CALL clLinkProgram_wrap(cl_context context, cl_uint num_devices,
                                                 const cl_device_id *device_list,
                                                 const char *options, cl_uint num_inputs,
                                                 const cl_program *inputs,
                                                 void(CL_CALLBACK *pfn_notify)(cl_program, void *),
                                                 void *user_data, cl_int *errcode_ret)
{
  /* Merge the kernel tables of the tracked inputs; refuse what spec 5 issue 4 leaves out. */
  cldm_program *merged = NULL;
  int tracked = 0, exports = 0;
  pthread_mutex_lock(&cldm_programs.lock);
  for (cl_uint i = 0; inputs && i < num_inputs; i++) {
    const cldm_program *p = cldm_map_get(&cldm_programs, inputs[i]);
    if (!p)
      continue;
    tracked++;
    exports += p->heap_exports;
    if (!merged && !(merged = calloc(1, sizeof(*merged))))
      break;
    cldm_program_kernel *grown =
        realloc(merged->kernels, (merged->num_kernels + p->num_kernels + 1) * sizeof(*grown));
    if (!grown)
      break;
    merged->kernels = grown;
    for (size_t k = 0; k < p->num_kernels; k++) {
      merged->kernels[merged->num_kernels] = p->kernels[k];
      merged->kernels[merged->num_kernels].name = strdup(p->kernels[k].name);
      merged->num_kernels++;
    }
  }
  pthread_mutex_unlock(&cldm_programs.lock);
  if (tracked && num_inputs > 1 && exports) {
    cldm_log(CLDM_LOG_ERROR,
             "clLinkProgram: a separately compiled module exports %d function(s) that allocate; "
             "calls into them from other modules cannot be given the heap (spec 5, issue 4): "
             "create the program from one whole-program module instead", exports);
    cldm_program_free(merged);
    if (errcode_ret)
      *errcode_ret = CL_LINK_PROGRAM_FAILURE;
    return NULL;
  }
  cl_program program = cldm_next->clLinkProgram(context, num_devices, device_list, options,
                                                num_inputs, inputs, pfn_notify, user_data,
                                                errcode_ret);
  if (program && merged)
    cldm_program_register(program, merged);
  else
    cldm_program_free(merged);
  return program;
}

static cl_int CL_API_CALL clReleaseProgram_wrap(cl_program program)
{
  cl_uint refs = 0;
  cl_context context = NULL;
  int tracked = cldm_program_tracked(program);
  if (tracked)
    cldm_next->clGetProgramInfo(program, CL_PROGRAM_REFERENCE_COUNT, sizeof(refs), &refs, NULL);
  if (cldm_heaps_exist())
    cldm_next->clGetProgramInfo(program, CL_PROGRAM_CONTEXT, sizeof(context), &context, NULL);
  cl_int err = cldm_next->clReleaseProgram(program);
  if (err == CL_SUCCESS && tracked && refs == 1) {
    pthread_mutex_lock(&cldm_programs.lock);
    cldm_program *rec = cldm_map_remove(&cldm_programs, program);
    pthread_mutex_unlock(&cldm_programs.lock);
    cldm_program_free(rec);
  }
  if (err == CL_SUCCESS && context)
    cldm_heap_reap(context);
  return err;
}

void cldm_dispatch_fill_program(cl_icd_dispatch *d)
{
  d->clCreateProgramWithIL = clCreateProgramWithIL_wrap;
  d->clGetProgramInfo = clGetProgramInfo_wrap;
  d->clLinkProgram = clLinkProgram_wrap;
  d->clReleaseProgram = clReleaseProgram_wrap;
  cldm_dispatch_fill_kernel(d);
  cldm_dispatch_fill_lifetime(d);
}

void *cldm_extfn_program(const char *name)
{
  if (!strcmp(name, "clCreateProgramWithILKHR"))
    return (void *)cldm_clCreateProgramWithILKHR;
  return NULL;
}
