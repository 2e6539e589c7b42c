/*
 * layer_ptx.c — the PTX route (spec 1.1, 3.4): NVIDIA devices whose driver takes no SPIR-V.
 *
 * The translation itself (SPIR-V -> LLVM -> PTX) lives in a separate library, libcldm-ptx.so
 * (layer/ptx/), that links LLVM; the layer dlopen()s it the first time a device needs it, so
 * a process without such a device never loads LLVM because of the layer. The library is
 * looked up as $CLDM_PTX_BACKEND, else next to the layer's own shared object, else by the
 * dynamic linker's search.
 *
 * A program for such a device is a driver program made from binaries: the module (lowered if
 * it allocates) is translated once per distinct compute capability of the devices and handed
 * to clCreateProgramWithBinary as PTX text, which NVIDIA's driver compiles for the GPU at
 * clBuildProgram. A module the backend cannot translate still gives a program (made from an
 * empty PTX module) whose build fails with the backend's reason as its build log, as a
 * driver reports a module it cannot compile.
 *
 * The PTX the layer hands the driver starts with one comment line that names the kernels
 * taking the heap and where their hidden argument is (cldm_ptx_marker). The driver compiles
 * PTX comments away and returns its binaries as the PTX text it was given, so a binary of such
 * a program that comes back through clCreateProgramWithBinary, in any process, says by itself
 * how its kernels are launched (layer_binary.c).
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cldm_layer.h"
#include "cldm_ptx.h"

static pthread_once_t cldm_ptx_once = PTHREAD_ONCE_INIT;
static const cldm_ptx_api *cldm_ptx_lib;

static void cldm_ptx_load(void) {
  const char *forced = cldm_config_ptx_backend();
  char *beside = forced ? NULL : cldm_config_beside_layer(CLDM_PTX_LIBRARY_NAME);
  const char *tried = forced ? forced : beside;
  void *h = tried ? dlopen(tried, RTLD_NOW | RTLD_LOCAL) : NULL;
  if (!h && !forced) {
    tried = CLDM_PTX_LIBRARY_NAME;
    h = dlopen(tried, RTLD_NOW | RTLD_LOCAL);
  }
  if (!h) {
    cldm_log(CLDM_LOG_WARN, "NVIDIA device without SPIR-V: PTX backend %s not loaded (%s)",
             tried ? tried : CLDM_PTX_LIBRARY_NAME, dlerror());
    free(beside);
    return;
  }
  cldm_ptx_get_api_fn get = (cldm_ptx_get_api_fn)dlsym(h, CLDM_PTX_GET_API_SYMBOL);
  const cldm_ptx_api *api = get ? get(CLDM_PTX_API_VERSION) : NULL;
  if (!api || api->api_version != CLDM_PTX_API_VERSION || api->size < sizeof(*api)) {
    cldm_log(CLDM_LOG_ERROR, "PTX backend %s: interface version %u, the layer needs %u", tried,
             api ? api->api_version : 0u, CLDM_PTX_API_VERSION);
    dlclose(h);
  } else {
    cldm_ptx_lib = api;
    cldm_log(CLDM_LOG_INFO, "PTX backend %s loaded: %s", tried, api->version_string);
  }
  free(beside);
}

int cldm_ptx_available(void) {
  pthread_once(&cldm_ptx_once, cldm_ptx_load);
  return cldm_ptx_lib != NULL;
}

static const char cldm_ptx_marker_prefix[] = "// cl_ext_device_malloc heap arguments:";
/* after a kernel's argument count: its work-items may stop at a throwing operator new */
static const char cldm_ptx_marker_new[] = ":new";

char *cldm_ptx_marker(const cldm_spirv_report *kernels) {
  size_t len = sizeof(cldm_ptx_marker_prefix) + 2;
  for (size_t i = 0; kernels && i < kernels->num_kernels; i++)
    len += strlen(kernels->kernels[i].name) + 16;
  char *line = malloc(len);
  if (!line)
    return NULL;
  size_t n = (size_t)snprintf(line, len, "%s", cldm_ptx_marker_prefix);
  for (size_t i = 0; kernels && i < kernels->num_kernels; i++)
    if (kernels->kernels[i].takes_heap)
      n += (size_t)snprintf(line + n, len - n, " %s:%u%s", kernels->kernels[i].name,
                            (unsigned)kernels->kernels[i].num_user_args,
                            kernels->kernels[i].throwing_new ? cldm_ptx_marker_new : "");
  snprintf(line + n, len - n, "\n");
  return line;
}

int cldm_ptx_marker_parse(const void *bin, size_t n, cldm_spirv_report *kernels) {
  memset(kernels, 0, sizeof(*kernels));
  size_t plen = sizeof(cldm_ptx_marker_prefix) - 1;
  if (!bin || n < plen || memcmp(bin, cldm_ptx_marker_prefix, plen))
    return 0;
  const char *p = (const char *)bin + plen, *end = (const char *)bin + n;
  const char *eol = memchr(p, '\n', (size_t)(end - p));
  if (!eol)
    return 0;
  while (p < eol) {
    while (p < eol && *p == ' ')
      p++;
    const char *w = p;
    while (p < eol && *p != ' ')
      p++;
    const char *colon = memchr(w, ':', (size_t)(p - w));
    if (p == w)
      break;
    char *stop = NULL;
    unsigned long args = colon ? strtoul(colon + 1, &stop, 10) : 0;
    size_t nl = sizeof(cldm_ptx_marker_new) - 1;
    int throwing_new = stop && (size_t)(p - stop) == nl && !memcmp(stop, cldm_ptx_marker_new, nl);
    if (throwing_new)
      stop += nl;
    if (!colon || colon == w || stop != p || args > UINT32_MAX) {
      cldm_spirv_report_free(kernels);
      return 0; /* not a line the layer wrote */
    }
    cldm_spirv_kernel *grown =
        realloc(kernels->kernels, (kernels->num_kernels + 1) * sizeof(*grown));
    char *name = strndup(w, (size_t)(colon - w));
    if (!grown || !name) {
      free(name);
      if (grown)
        kernels->kernels = grown;
      cldm_spirv_report_free(kernels);
      return -1;
    }
    kernels->kernels = grown;
    cldm_spirv_kernel *k = &grown[kernels->num_kernels++];
    k->name = name;
    k->takes_heap = 1;
    k->num_user_args = (uint32_t)args;
    k->heap_arg_index = (uint32_t)args;
    k->throwing_new = throwing_new;
  }
  kernels->allocates = 1;
  kernels->address_bits = 64;
  return 1;
}

/* A PTX module with no entry points: what a program whose translation failed is made of. */
static const char cldm_ptx_empty[] = "//\n// cl_ext_device_malloc: translation failed (see the "
                                     "build log)\n//\n.version 7.5\n.target sm_75\n"
                                     ".address_size 64\n";

/* Appends "<device i>: <text>" to *log. */
static void cldm_ptx_log_append(char **log, cl_uint device_index, const char *text) {
  size_t old = *log ? strlen(*log) : 0, add = strlen(text) + 32;
  char *grown = realloc(*log, old + add);
  if (!grown)
    return;
  snprintf(grown + old, add, "%sdevice %u: %s", old ? "\n" : "", device_index, text);
  *log = grown;
}

cl_program cldm_ptx_program_create(cl_context context, cl_uint num_devices,
                                   const cl_device_id *devices, const unsigned *cc,
                                   const void *const *modules, const size_t *sizes,
                                   size_t num_modules, const char *options,
                                   const cldm_spirv_report *kernels, char **build_log,
                                   cl_int *errcode_ret) {
  cl_int err = CL_SUCCESS;
  cl_program program = NULL;
  *build_log = NULL;
  char *marker = cldm_ptx_marker(kernels);
  char **ptx = calloc(num_devices ? num_devices : 1, sizeof(*ptx));
  size_t *lengths = calloc(num_devices ? num_devices : 1, sizeof(*lengths));
  const unsigned char **bins = calloc(num_devices ? num_devices : 1, sizeof(*bins));
  if (!ptx || !lengths || !bins || !num_devices || !marker) {
    err = num_devices ? CL_OUT_OF_HOST_MEMORY : CL_INVALID_DEVICE;
    goto out;
  }
  if (!cldm_ptx_available()) {
    err = CL_INVALID_OPERATION;
    goto out;
  }
  int failed = num_modules == 0;
  for (cl_uint i = 0; i < num_devices && num_modules; i++) {
    if (!cc[i]) { /* not a device of the PTX route */
      err = CL_INVALID_DEVICE;
      goto out;
    }
    for (cl_uint j = 0; j < i && !ptx[i]; j++) /* one translation per compute capability */
      if (cc[j] == cc[i] && ptx[j]) {
        ptx[i] = ptx[j];
        lengths[i] = lengths[j];
      }
    if (ptx[i])
      continue;
    cldm_ptx_target target = {cc[i] / 100, cc[i] % 100, options};
    char *text = NULL, *log = NULL;
    size_t text_size = 0;
    cldm_ptx_status s =
        num_modules == 1
            ? cldm_ptx_lib->translate(modules[0], sizes[0], &target, &text, &text_size, &log)
            : cldm_ptx_lib->translate_linked(modules, sizes, num_modules, &target, &text,
                                             &text_size, &log);
    if (s == CLDM_PTX_OK) {
      size_t mlen = strlen(marker);
      ptx[i] = malloc(mlen + text_size + 1);
      if (ptx[i]) {
        memcpy(ptx[i], marker, mlen);
        memcpy(ptx[i] + mlen, text, text_size + 1);
        lengths[i] = mlen + text_size + 1; /* NUL included, as NVIDIA's own binaries count it */
      } else
        err = CL_OUT_OF_HOST_MEMORY;
      cldm_ptx_lib->free_result(text);
    } else if (s == CLDM_PTX_E_NOMEM) {
      err = CL_OUT_OF_HOST_MEMORY;
    } else {
      char line[64];
      snprintf(line, sizeof(line), "PTX translation failed (%s)", cldm_ptx_lib->status_name(s));
      cldm_ptx_log_append(build_log, i, line);
      if (log)
        cldm_ptx_log_append(build_log, i, log);
      cldm_log(CLDM_LOG_ERROR, "%s:\n%s", line, log ? log : "");
      failed = 1;
    }
    if (log)
      cldm_ptx_lib->free_result(log);
    if (err != CL_SUCCESS)
      goto out;
  }
  for (cl_uint i = 0; i < num_devices; i++) {
    bins[i] = (const unsigned char *)(failed ? cldm_ptx_empty : ptx[i]);
    if (failed)
      lengths[i] = sizeof(cldm_ptx_empty);
  }
  program = cldm_next->clCreateProgramWithBinary(context, num_devices, devices, lengths, bins, NULL,
                                                 &err);
  if (program && !failed)
    cldm_log(CLDM_LOG_INFO, "program %p made from PTX for %u device(s)", (void *)program,
             num_devices);
out:
  for (cl_uint i = 0; ptx && i < num_devices; i++) {
    int shared = 0;
    for (cl_uint j = 0; j < i && !shared; j++)
      shared = ptx[j] == ptx[i];
    if (!shared)
      free(ptx[i]);
  }
  free(marker);
  free(ptx);
  free(lengths);
  free(bins);
  if (!program) {
    free(*build_log);
    *build_log = NULL;
  }
  if (errcode_ret)
    *errcode_ret = err;
  return program;
}
