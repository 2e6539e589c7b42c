/*
 * stub_icd.c — a minimal OpenCL ICD for the layer's unit tests: two platforms, three devices
 * (see stub_icd.h), contexts, and IL and source programs (which keep the exact bytes they
 * receive). It lets the tests check the layer's query behaviour against exactly known driver
 * answers, including devices without SPIR-V, under both ICD loaders. Built with STUB_NVIDIA
 * it is an NVIDIA-like driver without IL that takes programs as (PTX) binaries, for the
 * layer's PTX route. Programs of PTX binaries have kernels: each `.entry name(...)`, with as
 * many arguments as its `.param` declarations. Queues, SVM, events and launches are in
 * stub_icd_launch.c. Every object starts with the ICD dispatch pointer, as loaders require.
 */
#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 300
#endif
#ifndef CL_USE_DEPRECATED_OPENCL_1_2_APIS
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#endif
#define _GNU_SOURCE /* memmem */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <CL/cl.h>
#include <CL/cl_ext.h>
#include <CL/cl_icd.h>

#include "stub_icd.h"
#include "stub_icd_launch.h"

#define STUB_EXPORT __attribute__((visibility("default")))
#ifndef CL_DEVICE_SPIRV_EXTENDED_INSTRUCTION_SETS_KHR
#define CL_DEVICE_SPIRV_EXTENDED_INSTRUCTION_SETS_KHR 0x12B9
#endif

static cl_icd_dispatch stub_dispatch;

struct _cl_platform_id {
  cl_icd_dispatch *dispatch;
  const char *name, *extensions;
};
struct _cl_device_id {
  cl_icd_dispatch *dispatch;
  cl_platform_id platform;
  const char *name, *extensions, *il; /* il NULL: the IL query is invalid (OpenCL 1.2) */
  cl_ulong max_alloc;
  int spirv_sets;
  cl_uint vendor_id, cc_major, cc_minor; /* cc_major 0: no compute capability query */
  cl_device_svm_capabilities svm;        /* 0: no SVM (the query is answered with 0) */
};

#ifndef STUB_NVIDIA
#define STUB_NUM_PLATFORMS 2
#define STUB_NUM_DEVICES 3
static struct _cl_platform_id stub_platforms[STUB_NUM_PLATFORMS] = {
    {&stub_dispatch, "cldm stub A", STUB_PLATFORM_A_EXTENSIONS},
    {&stub_dispatch, "cldm stub B", STUB_PLATFORM_B_EXTENSIONS},
};
static struct _cl_device_id stub_devices[STUB_NUM_DEVICES] = {
    {&stub_dispatch, &stub_platforms[0], "stub-plain", STUB_DEVICE0_EXTENSIONS, "", 32u << 20, 0,
     0x1234, 0, 0, 0},
    {&stub_dispatch, &stub_platforms[0], "stub-spirv", STUB_DEVICE1_EXTENSIONS, STUB_DEVICE1_IL,
     STUB_DEVICE1_MAX_ALLOC, 1, 0x1234, 0, 0, 0},
    {&stub_dispatch, &stub_platforms[1], "stub-legacy", STUB_DEVICE2_EXTENSIONS, NULL, 16u << 20, 0,
     0x1234, 0, 0, 0},
};
#else
#define STUB_NUM_PLATFORMS 1
#define STUB_NUM_DEVICES 1
static struct _cl_platform_id stub_platforms[STUB_NUM_PLATFORMS] = {
    {&stub_dispatch, "cldm stub NVIDIA", STUB_NV_PLATFORM_EXTENSIONS},
};
static struct _cl_device_id stub_devices[STUB_NUM_DEVICES] = {
    {&stub_dispatch, &stub_platforms[0], "stub-nv", STUB_NV_DEVICE_EXTENSIONS, "", 256u << 20, 0,
     0x10DE, STUB_NV_CC_MAJOR, STUB_NV_CC_MINOR, CL_DEVICE_SVM_COARSE_GRAIN_BUFFER},
};
#endif

cl_int stub_return(const void *src, size_t size, size_t value_size, void *value, size_t *size_ret) {
  if (value) {
    if (value_size < size)
      return CL_INVALID_VALUE;
    memcpy(value, src, size);
  }
  if (size_ret)
    *size_ret = size;
  return CL_SUCCESS;
}

/* Splits a space-separated list into cl_name_version entries (version 1.0.0). */
static cl_int stub_return_versions(const char *list, size_t value_size, void *value,
                                   size_t *size_ret) {
  cl_name_version out[16];
  size_t n = 0;
  for (const char *p = list; *p && n < 16;) {
    while (*p == ' ')
      p++;
    size_t len = strcspn(p, " ");
    if (!len)
      break;
    memset(&out[n], 0, sizeof(out[n]));
    out[n].version = CL_MAKE_VERSION(1, 0, 0);
    memcpy(out[n].name, p,
           len < CL_NAME_VERSION_MAX_NAME_SIZE ? len : CL_NAME_VERSION_MAX_NAME_SIZE - 1);
    n++;
    p += len;
  }
  return stub_return(out, n * sizeof(out[0]), value_size, value, size_ret);
}

static cl_int CL_API_CALL stub_GetPlatformIDs(cl_uint num_entries, cl_platform_id *platforms,
                                              cl_uint *num_platforms) {
  if ((!platforms && !num_platforms) || (platforms && !num_entries))
    return CL_INVALID_VALUE;
  for (cl_uint i = 0; platforms && i < num_entries && i < STUB_NUM_PLATFORMS; i++)
    platforms[i] = &stub_platforms[i];
  if (num_platforms)
    *num_platforms = STUB_NUM_PLATFORMS;
  return CL_SUCCESS;
}

static int stub_platform_valid(cl_platform_id p) {
  return p >= &stub_platforms[0] && p < &stub_platforms[STUB_NUM_PLATFORMS];
}
static int stub_device_valid(cl_device_id d) {
  return d >= &stub_devices[0] && d < &stub_devices[STUB_NUM_DEVICES];
}

static cl_int CL_API_CALL stub_GetPlatformInfo(cl_platform_id p, cl_platform_info name, size_t size,
                                               void *value, size_t *size_ret) {
  if (!stub_platform_valid(p))
    return CL_INVALID_PLATFORM;
  const char *s = NULL;
  switch (name) {
  case CL_PLATFORM_PROFILE:
    s = "FULL_PROFILE";
    break;
  case CL_PLATFORM_VERSION:
    s = "OpenCL 3.0 cldm-stub";
    break;
  case CL_PLATFORM_NAME:
    s = p->name;
    break;
  case CL_PLATFORM_VENDOR:
    s = "cldm tests";
    break;
  case CL_PLATFORM_EXTENSIONS:
    s = p->extensions;
    break;
  case CL_PLATFORM_ICD_SUFFIX_KHR:
    s = "STUB";
    break;
  case CL_PLATFORM_EXTENSIONS_WITH_VERSION:
    return stub_return_versions(p->extensions, size, value, size_ret);
  case CL_PLATFORM_NUMERIC_VERSION: {
    cl_version v = CL_MAKE_VERSION(3, 0, 0);
    return stub_return(&v, sizeof(v), size, value, size_ret);
  }
  case CL_PLATFORM_HOST_TIMER_RESOLUTION: {
    cl_ulong r = 0;
    return stub_return(&r, sizeof(r), size, value, size_ret);
  }
  default:
    return CL_INVALID_VALUE;
  }
  return stub_return(s, strlen(s) + 1, size, value, size_ret);
}

static cl_int CL_API_CALL stub_GetDeviceIDs(cl_platform_id p, cl_device_type type,
                                            cl_uint num_entries, cl_device_id *devices,
                                            cl_uint *num_devices) {
  if (!stub_platform_valid(p))
    return CL_INVALID_PLATFORM;
  if ((!devices && !num_devices) || (devices && !num_entries))
    return CL_INVALID_VALUE;
  if (!(type & (CL_DEVICE_TYPE_CPU | CL_DEVICE_TYPE_DEFAULT)))
    return CL_DEVICE_NOT_FOUND;
  cl_uint n = 0;
  for (int i = 0; i < STUB_NUM_DEVICES; i++)
    if (stub_devices[i].platform == p) {
      if (devices && n < num_entries)
        devices[n] = &stub_devices[i];
      n++;
    }
  if (num_devices)
    *num_devices = n;
  return CL_SUCCESS;
}

static cl_int CL_API_CALL stub_GetDeviceInfo(cl_device_id d, cl_device_info name, size_t size,
                                             void *value, size_t *size_ret) {
  if (!stub_device_valid(d))
    return CL_INVALID_DEVICE;
  const char *s = NULL;
  switch (name) {
  case CL_DEVICE_TYPE: {
    cl_device_type t = CL_DEVICE_TYPE_CPU;
    return stub_return(&t, sizeof(t), size, value, size_ret);
  }
  case CL_DEVICE_PLATFORM:
    return stub_return(&d->platform, sizeof(d->platform), size, value, size_ret);
  case CL_DEVICE_MAX_MEM_ALLOC_SIZE:
    return stub_return(&d->max_alloc, sizeof(d->max_alloc), size, value, size_ret);
  case CL_DEVICE_AVAILABLE: {
    cl_bool b = CL_TRUE;
    return stub_return(&b, sizeof(b), size, value, size_ret);
  }
  case CL_DEVICE_NAME:
    s = d->name;
    break;
  case CL_DEVICE_VENDOR:
    s = "cldm tests";
    break;
  case CL_DEVICE_VERSION:
    s = d->il ? "OpenCL 3.0 stub" : "OpenCL 1.2 stub";
    break;
  case CL_DRIVER_VERSION:
    s = "1.0";
    break;
  case CL_DEVICE_EXTENSIONS:
    s = d->extensions;
    break;
  case CL_DEVICE_EXTENSIONS_WITH_VERSION:
    return stub_return_versions(d->extensions, size, value, size_ret);
  case CL_DEVICE_IL_VERSION:
    if (!d->il)
      return CL_INVALID_VALUE;
    s = d->il;
    break;
  case CL_DEVICE_VENDOR_ID:
    return stub_return(&d->vendor_id, sizeof(d->vendor_id), size, value, size_ret);
  case CL_DEVICE_COMPUTE_CAPABILITY_MAJOR_NV:
  case CL_DEVICE_COMPUTE_CAPABILITY_MINOR_NV:
    if (!d->cc_major)
      return CL_INVALID_VALUE;
    return stub_return(name == CL_DEVICE_COMPUTE_CAPABILITY_MAJOR_NV ? &d->cc_major : &d->cc_minor,
                       sizeof(cl_uint), size, value, size_ret);
  case CL_DEVICE_ADDRESS_BITS: {
    cl_uint bits = 64;
    return stub_return(&bits, sizeof(bits), size, value, size_ret);
  }
  case CL_DEVICE_SVM_CAPABILITIES:
    return stub_return(&d->svm, sizeof(d->svm), size, value, size_ret);
  case CL_DEVICE_SPIRV_EXTENDED_INSTRUCTION_SETS_KHR: {
    static const char *const sets[] = {STUB_SPIRV_SET0};
    if (!d->spirv_sets)
      return CL_INVALID_VALUE;
    return stub_return(sets, sizeof(sets), size, value, size_ret);
  }
  default:
    return CL_INVALID_VALUE;
  }
  return stub_return(s, strlen(s) + 1, size, value, size_ret);
}

/* ---- contexts and programs: enough for the layer's program path -------------------------- */

struct _cl_context {
  cl_icd_dispatch *dispatch;
  cl_device_id device;
  cl_uint refs;   /* CL_CONTEXT_REFERENCE_COUNT: the application's and its programs' */
  cl_uint hidden; /* queues, SVM allocations, events (stub_context_hold): not in the count */
  struct {
    void(CL_CALLBACK *fn)(cl_context, void *);
    void *data;
  } destructors[4];
  int num_destructors;
};
struct _cl_program {
  cl_icd_dispatch *dispatch;
  cl_context context;
  unsigned char *il; /* the IL, the source, or the binary of a program made from a binary */
  size_t il_size;
  int binary, source, built;
  cl_uint refs;
};
struct _cl_kernel {
  cl_icd_dispatch *dispatch;
  cl_program program;
  char name[256];
  cl_uint num_args, refs;
  const void *svm[STUB_KERNEL_SVM_ARGS]; /* clSetKernelArgSVMPointer's values, by index */
};

static cl_context CL_API_CALL
stub_CreateContext(const cl_context_properties *props, cl_uint n, const cl_device_id *devices,
                   void(CL_CALLBACK *notify)(const char *, const void *, size_t, void *),
                   void *user_data, cl_int *err) {
  if (n != 1 || !devices || !stub_device_valid(devices[0])) {
    if (err)
      *err = CL_INVALID_DEVICE;
    return NULL;
  }
  struct _cl_context *c = calloc(1, sizeof(*c));
  c->dispatch = &stub_dispatch;
  c->device = devices[0];
  c->refs = 1;
  if (err)
    *err = CL_SUCCESS;
  return c;
}

static cl_int CL_API_CALL stub_GetContextInfo(cl_context c, cl_context_info name, size_t size,
                                              void *value, size_t *size_ret) {
  switch (name) {
  case CL_CONTEXT_DEVICES:
    return stub_return(&c->device, sizeof(c->device), size, value, size_ret);
  case CL_CONTEXT_NUM_DEVICES: {
    cl_uint n = 1;
    return stub_return(&n, sizeof(n), size, value, size_ret);
  }
  case CL_CONTEXT_REFERENCE_COUNT:
    return stub_return(&c->refs, sizeof(c->refs), size, value, size_ret);
  default:
    return CL_INVALID_VALUE;
  }
}

static void stub_context_destroy(cl_context c) {
  for (int i = c->num_destructors - 1; i >= 0; i--) /* the last registered first */
    c->destructors[i].fn(c, c->destructors[i].data);
  free(c);
}

static pthread_mutex_t stub_mutex = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;
void stub_lock(void) { pthread_mutex_lock(&stub_mutex); }
void stub_unlock(void) { pthread_mutex_unlock(&stub_mutex); }

static cl_int CL_API_CALL stub_ReleaseContext(cl_context c) {
  stub_lock();
  if (--c->refs == 0 && !c->hidden)
    stub_context_destroy(c);
  stub_unlock();
  return CL_SUCCESS;
}

void stub_context_hold(cl_context c, int delta) {
  stub_lock();
  c->hidden += delta;
  if (!c->refs && !c->hidden)
    stub_context_destroy(c);
  stub_unlock();
}

cl_device_id stub_context_device(cl_context c) { return c->device; }

static cl_int CL_API_CALL stub_SetContextDestructorCallback(
    cl_context c, void(CL_CALLBACK *fn)(cl_context, void *), void *user_data) {
  if (c->num_destructors == 4)
    return CL_OUT_OF_RESOURCES;
  c->destructors[c->num_destructors].fn = fn;
  c->destructors[c->num_destructors++].data = user_data;
  return CL_SUCCESS;
}

/* Keeps a copy of exactly the bytes it was given: tests compare it with what they passed. */

/* The memory of the last program freed, which the next program gets: a handle a driver
 * reuses. */
static struct _cl_program *stub_program_spare;

static struct _cl_program *stub_program_new(void) {
  struct _cl_program *p = stub_program_spare ? stub_program_spare : calloc(1, sizeof(*p));
  stub_program_spare = NULL;
  memset(p, 0, sizeof(*p));
  return p;
}

static cl_program CL_API_CALL stub_CreateProgramWithIL(cl_context c, const void *il, size_t n,
                                                       cl_int *err) {
#ifdef STUB_NVIDIA
  if (err) /* what NVIDIA's driver answers */
    *err = CL_INVALID_OPERATION;
  return NULL;
#endif
  struct _cl_program *p = stub_program_new();
  p->dispatch = &stub_dispatch;
  p->context = c;
  p->il = malloc(n);
  memcpy(p->il, il, n);
  p->il_size = n;
  p->refs = 1;
  stub_lock();
  c->refs++;
  stub_unlock();
  if (err)
    *err = CL_SUCCESS;
  return p;
}

/* A program "from binary": the bytes kept as they came (in the il fields), marked binary. */
static cl_program CL_API_CALL stub_CreateProgramWithBinary(cl_context c, cl_uint n,
                                                           const cl_device_id *devices,
                                                           const size_t *lengths,
                                                           const unsigned char **binaries,
                                                           cl_int *status, cl_int *err) {
  if (n != 1 || !devices || devices[0] != c->device || !lengths || !binaries || !binaries[0] ||
      !lengths[0]) {
    if (err)
      *err = CL_INVALID_VALUE;
    return NULL;
  }
  struct _cl_program *p = stub_program_new();
  p->dispatch = &stub_dispatch;
  p->context = c;
  p->il = malloc(lengths[0]);
  memcpy(p->il, binaries[0], lengths[0]);
  p->il_size = lengths[0];
  p->binary = 1;
  p->refs = 1;
  stub_lock();
  c->refs++;
  stub_unlock();
  if (status)
    status[0] = CL_SUCCESS;
  if (err)
    *err = CL_SUCCESS;
  return p;
}

/* A program of exactly the application's source strings. */
static cl_program CL_API_CALL stub_CreateProgramWithSource(cl_context c, cl_uint count,
                                                           const char **strings,
                                                           const size_t *lengths, cl_int *err) {
  size_t total = 0;
  for (cl_uint i = 0; i < count; i++)
    total += lengths && lengths[i] ? lengths[i] : strlen(strings[i]);
  struct _cl_program *p = stub_program_new();
  p->dispatch = &stub_dispatch;
  p->context = c;
  p->il = malloc(total + 1);
  for (cl_uint i = 0, at = 0; i < count; i++) {
    size_t n = lengths && lengths[i] ? lengths[i] : strlen(strings[i]);
    memcpy(p->il + at, strings[i], n);
    at += (cl_uint)n;
  }
  p->il[total] = '\0';
  p->il_size = total;
  p->source = 1;
  p->refs = 1;
  stub_lock();
  c->refs++;
  stub_unlock();
  if (err)
    *err = CL_SUCCESS;
  return p;
}

static cl_int CL_API_CALL stub_RetainProgram(cl_program p) {
  p->refs++;
  return CL_SUCCESS;
}

static char stub_last_build_options[1024];

static const char *stub_LastBuildOptions(void) { return stub_last_build_options; }

/* "Builds" IL, source, and binaries that look like PTX text; remembers the options. */
static cl_int CL_API_CALL stub_BuildProgram(cl_program p, cl_uint n, const cl_device_id *devices,
                                            const char *options,
                                            void(CL_CALLBACK *notify)(cl_program, void *),
                                            void *user_data) {
  snprintf(stub_last_build_options, sizeof(stub_last_build_options), "%s", options ? options : "");
  int ptx = p->binary && memmem(p->il, p->il_size, ".version", 8) &&
            memmem(p->il, p->il_size, ".target", 7);
  p->built = ptx || !p->binary;
  if (notify)
    notify(p, user_data);
  return p->built ? CL_SUCCESS : CL_BUILD_PROGRAM_FAILURE;
}

static cl_int CL_API_CALL stub_CompileProgram(cl_program p, cl_uint n, const cl_device_id *devices,
                                              const char *options, cl_uint num_headers,
                                              const cl_program *headers, const char **names,
                                              void(CL_CALLBACK *notify)(cl_program, void *),
                                              void *user_data) {
  snprintf(stub_last_build_options, sizeof(stub_last_build_options), "%s", options ? options : "");
  if (notify)
    notify(p, user_data);
  return p->binary ? CL_INVALID_OPERATION : CL_SUCCESS;
}

/* ---- kernels of PTX binaries ------------------------------------------------------------- */

/* The number of `.param` declarations of entry `name` in PTX text p, or -1 if it has none. */
static int stub_ptx_entry_params(const struct _cl_program *p, const char *name) {
  char entry[300];
  snprintf(entry, sizeof(entry), ".entry %s(", name);
  const char *at = memmem(p->il, p->il_size, entry, strlen(entry));
  if (!p->binary || !at)
    return -1;
  const char *end = memchr(at, ')', p->il_size - (size_t)(at - (const char *)p->il));
  int n = 0;
  for (const char *q = at; end && (q = memmem(q, (size_t)(end - q), ".param", 6)); q += 6)
    n++;
  return n;
}

/* The number of parameters of kernel `name` of built source program p ("kernel void name(...)"
 * in its text: commas + 1, 0 for "()"), or -1 if it has none. */
static int stub_source_entry_params(const struct _cl_program *p, const char *name) {
  char entry[300];
  snprintf(entry, sizeof(entry), "kernel void %s(", name);
  const char *at = memmem(p->il, p->il_size, entry, strlen(entry));
  if (!p->source || !p->built || !at)
    return -1;
  at += strlen(entry);
  const char *end = memchr(at, ')', p->il_size - (size_t)(at - (const char *)p->il));
  int n = end && end > at ? 1 : 0;
  for (const char *q = at; end && q < end; q++)
    n += *q == ',';
  return n;
}

/* The memory of the last kernel freed, which the next kernel gets: a handle a driver reuses. */
static struct _cl_kernel *stub_kernel_spare;

static cl_kernel CL_API_CALL stub_CreateKernel(cl_program p, const char *name, cl_int *err) {
  int params = name && strlen(name) < 256 ? stub_ptx_entry_params(p, name) : -1;
  if (params < 0 && name && strlen(name) < 256)
    params = stub_source_entry_params(p, name);
  if (params < 0) {
    if (err)
      *err = CL_INVALID_KERNEL_NAME;
    return NULL;
  }
  struct _cl_kernel *k = stub_kernel_spare ? stub_kernel_spare : calloc(1, sizeof(*k));
  stub_kernel_spare = NULL;
  memset(k, 0, sizeof(*k));
  k->dispatch = &stub_dispatch;
  k->program = p;
  snprintf(k->name, sizeof(k->name), "%s", name);
  k->num_args = (cl_uint)params;
  k->refs = 1;
  p->refs++;
  if (err)
    *err = CL_SUCCESS;
  return k;
}

static cl_int CL_API_CALL stub_ReleaseProgram(cl_program p);

static cl_int CL_API_CALL stub_ReleaseKernel(cl_kernel k) {
  if (--k->refs == 0) {
    stub_ReleaseProgram(k->program);
    free(stub_kernel_spare);
    stub_kernel_spare = k;
  }
  return CL_SUCCESS;
}

static cl_int CL_API_CALL stub_RetainKernel(cl_kernel k) {
  k->refs++;
  return CL_SUCCESS;
}

/* STUB_DRIVER_REF_FUNCTION: the driver's own reference on k (a launch of it in flight) taken
 * (delta 1) or dropped (-1), out of the layer's sight. */
static cl_int stub_DriverRefKernel(cl_kernel k, cl_int delta) {
  return delta > 0 ? stub_RetainKernel(k) : stub_ReleaseKernel(k);
}

static cl_int CL_API_CALL stub_GetKernelInfo(cl_kernel k, cl_kernel_info name, size_t size,
                                             void *value, size_t *size_ret) {
  switch (name) {
  case CL_KERNEL_FUNCTION_NAME:
    return stub_return(k->name, strlen(k->name) + 1, size, value, size_ret);
  case CL_KERNEL_NUM_ARGS:
    return stub_return(&k->num_args, sizeof(k->num_args), size, value, size_ret);
  case CL_KERNEL_REFERENCE_COUNT:
    return stub_return(&k->refs, sizeof(k->refs), size, value, size_ret);
  case CL_KERNEL_PROGRAM:
    return stub_return(&k->program, sizeof(k->program), size, value, size_ret);
  case CL_KERNEL_CONTEXT:
    return stub_return(&k->program->context, sizeof(cl_context), size, value, size_ret);
  default:
    return CL_INVALID_VALUE;
  }
}

static cl_int CL_API_CALL stub_SetKernelArg(cl_kernel k, cl_uint index, size_t size,
                                            const void *value) {
  if (index >= k->num_args)
    return CL_INVALID_ARG_INDEX;
  if (index < STUB_KERNEL_SVM_ARGS)
    k->svm[index] = NULL;
  return CL_SUCCESS;
}

static cl_int CL_API_CALL stub_SetKernelArgSVMPointer(cl_kernel k, cl_uint index,
                                                      const void *value) {
  if (index >= k->num_args)
    return CL_INVALID_ARG_INDEX;
  if (index < STUB_KERNEL_SVM_ARGS)
    k->svm[index] = value;
  return CL_SUCCESS;
}

void stub_kernel_svm_args(cl_kernel k, const void **svm) { memcpy(svm, k->svm, sizeof(k->svm)); }

cl_context stub_kernel_context(cl_kernel k) { return k->program->context; }

static cl_int CL_API_CALL stub_GetProgramBuildInfo(cl_program p, cl_device_id d,
                                                   cl_program_build_info name, size_t size,
                                                   void *value, size_t *size_ret) {
  switch (name) {
  case CL_PROGRAM_BUILD_STATUS: {
    cl_build_status s = p->built ? CL_BUILD_SUCCESS : CL_BUILD_NONE;
    return stub_return(&s, sizeof(s), size, value, size_ret);
  }
  case CL_PROGRAM_BUILD_LOG:
    return stub_return("", 1, size, value, size_ret);
  default:
    return CL_INVALID_VALUE;
  }
}

static cl_int CL_API_CALL stub_GetProgramInfo(cl_program p, cl_program_info name, size_t size,
                                              void *value, size_t *size_ret) {
  switch (name) {
  case CL_PROGRAM_IL:
    if (p->binary || p->source)
      return stub_return(NULL, 0, size, value, size_ret);
    return stub_return(p->il, p->il_size, size, value, size_ret);
  case CL_PROGRAM_SOURCE:
    if (!p->source)
      return stub_return("", 1, size, value, size_ret);
    return stub_return(p->il, p->il_size + 1, size, value, size_ret);
  case CL_PROGRAM_BINARY_SIZES:
    return stub_return(&p->il_size, sizeof(p->il_size), size, value, size_ret);
  case CL_PROGRAM_BINARIES: {
    if (value && size < sizeof(unsigned char *))
      return CL_INVALID_VALUE;
    if (value && *(unsigned char **)value)
      memcpy(*(unsigned char **)value, p->il, p->il_size);
    if (size_ret)
      *size_ret = sizeof(unsigned char *);
    return CL_SUCCESS;
  }
  case CL_PROGRAM_CONTEXT:
    return stub_return(&p->context, sizeof(p->context), size, value, size_ret);
  case CL_PROGRAM_REFERENCE_COUNT:
    return stub_return(&p->refs, sizeof(p->refs), size, value, size_ret);
  default:
    return CL_INVALID_VALUE;
  }
}

static cl_int CL_API_CALL stub_ReleaseProgram(cl_program p) {
  stub_lock();
  if (--p->refs == 0) {
    stub_ReleaseContext(p->context);
    free(p->il);
    free(stub_program_spare);
    stub_program_spare = p;
  }
  stub_unlock();
  return CL_SUCCESS;
}

static cl_int stub_probe(void) { return STUB_PROBE_RESULT; }

STUB_EXPORT cl_int CL_API_CALL clIcdGetPlatformIDsKHR(cl_uint num_entries,
                                                      cl_platform_id *platforms,
                                                      cl_uint *num_platforms) {
  return stub_GetPlatformIDs(num_entries, platforms, num_platforms);
}

static void *CL_API_CALL stub_GetExtensionFunctionAddress(const char *name) {
  if (!strcmp(name, "clIcdGetPlatformIDsKHR"))
    return (void *)clIcdGetPlatformIDsKHR;
  if (!strcmp(name, "clGetPlatformInfo")) /* ocl-icd asks for it this way at load */
    return (void *)stub_GetPlatformInfo;
  if (!strcmp(name, STUB_PROBE_FUNCTION))
    return (void *)stub_probe;
  if (!strcmp(name, STUB_LAST_BUILD_OPTIONS_FUNCTION))
    return (void *)stub_LastBuildOptions;
  if (!strcmp(name, STUB_DRIVER_REF_FUNCTION))
    return (void *)stub_DriverRefKernel;
  if (!strcmp(name, STUB_LAUNCH_STATS_FUNCTION))
    return (void *)stub_launch_stats;
  return NULL;
}

static void *CL_API_CALL stub_GetExtensionFunctionAddressForPlatform(cl_platform_id p,
                                                                     const char *name) {
  (void)p;
  return stub_GetExtensionFunctionAddress(name);
}

STUB_EXPORT void *CL_API_CALL clGetExtensionFunctionAddress(const char *name) {
  return stub_GetExtensionFunctionAddress(name);
}

__attribute__((constructor)) static void stub_init(void) {
  stub_dispatch.clGetPlatformIDs = stub_GetPlatformIDs;
  stub_dispatch.clGetPlatformInfo = stub_GetPlatformInfo;
  stub_dispatch.clGetDeviceIDs = stub_GetDeviceIDs;
  stub_dispatch.clGetDeviceInfo = stub_GetDeviceInfo;
  stub_dispatch.clGetExtensionFunctionAddress = stub_GetExtensionFunctionAddress;
  stub_dispatch.clGetExtensionFunctionAddressForPlatform =
      stub_GetExtensionFunctionAddressForPlatform;
  stub_dispatch.clCreateContext = stub_CreateContext;
  stub_dispatch.clGetContextInfo = stub_GetContextInfo;
  stub_dispatch.clReleaseContext = stub_ReleaseContext;
  stub_dispatch.clCreateProgramWithIL = stub_CreateProgramWithIL;
  stub_dispatch.clGetProgramInfo = stub_GetProgramInfo;
  stub_dispatch.clCreateProgramWithBinary = stub_CreateProgramWithBinary;
  stub_dispatch.clBuildProgram = stub_BuildProgram;
  stub_dispatch.clGetProgramBuildInfo = stub_GetProgramBuildInfo;
  stub_dispatch.clReleaseProgram = stub_ReleaseProgram;
  stub_dispatch.clCreateProgramWithSource = stub_CreateProgramWithSource;
  stub_dispatch.clRetainProgram = stub_RetainProgram;
  stub_dispatch.clCompileProgram = stub_CompileProgram;
  stub_dispatch.clCreateKernel = stub_CreateKernel;
  stub_dispatch.clReleaseKernel = stub_ReleaseKernel;
  stub_dispatch.clRetainKernel = stub_RetainKernel;
  stub_dispatch.clGetKernelInfo = stub_GetKernelInfo;
  stub_dispatch.clSetKernelArg = stub_SetKernelArg;
  stub_dispatch.clSetKernelArgSVMPointer = stub_SetKernelArgSVMPointer;
  stub_dispatch.clSetContextDestructorCallback = stub_SetContextDestructorCallback;
  stub_launch_fill_dispatch(&stub_dispatch);
}
