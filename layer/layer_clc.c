/*
 * layer_clc.c — the OpenCL C compiler (spec 1.5.1, 2.3, 3.5), for source programs that may allocate.
 *
 * The compiler itself (opencl-clang + LLVMSPIRVLib: OpenCL C -> SPIR-V) lives in a separate
 * library, libcldm-clc.so (layer/clc/), that links clang and LLVM; the layer dlopen()s it the
 * first time a source program needs it, so a process that never builds such a program never
 * loads clang because of the layer. The library is looked up as $CLDM_CLC_COMPILER, else next
 * to the layer's own shared object, else by the dynamic linker's search.
 *
 * A compilation is made for one device, as a driver would make it: the device's extensions
 * and OpenCL C features are enabled and __OPENCL_VERSION__ is the device's OpenCL version.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cldm_layer.h"

static pthread_once_t cldm_clc_once = PTHREAD_ONCE_INIT;
static const cldm_clc_api *cldm_clc_lib;

static void cldm_clc_load(void) {
  const char *forced = cldm_config_clc_compiler();
  char *beside = forced ? NULL : cldm_config_beside_layer(CLDM_CLC_LIBRARY_NAME);
  const char *tried = forced ? forced : beside;
  void *h = tried ? dlopen(tried, RTLD_NOW | RTLD_LOCAL) : NULL;
  if (!h && !forced) {
    tried = CLDM_CLC_LIBRARY_NAME;
    h = dlopen(tried, RTLD_NOW | RTLD_LOCAL);
  }
  if (!h) {
    cldm_log(CLDM_LOG_WARN,
             "OpenCL C compiler %s not loaded (%s): source programs go to the driver unchanged",
             tried ? tried : CLDM_CLC_LIBRARY_NAME, dlerror());
    free(beside);
    return;
  }
  cldm_clc_get_api_fn get = (cldm_clc_get_api_fn)dlsym(h, CLDM_CLC_GET_API_SYMBOL);
  const cldm_clc_api *api = get ? get(CLDM_CLC_API_VERSION) : NULL;
  if (!api || api->api_version != CLDM_CLC_API_VERSION || api->size < sizeof(*api)) {
    cldm_log(CLDM_LOG_ERROR, "OpenCL C compiler %s: interface version %u, the layer needs %u",
             tried, api ? api->api_version : 0u, CLDM_CLC_API_VERSION);
    dlclose(h);
  } else {
    cldm_clc_lib = api;
    cldm_log(CLDM_LOG_INFO, "OpenCL C compiler %s loaded: %s", tried, api->version_string);
  }
  free(beside);
}

const cldm_clc_api *cldm_clc(void) {
  pthread_once(&cldm_clc_once, cldm_clc_load);
  return cldm_clc_lib;
}

static cl_int cldm_clc_device_query(const void *obj, cl_uint name, size_t size, void *value,
                                    size_t *size_ret) {
  return cldm_next->clGetDeviceInfo((cl_device_id)obj, name, size, value, size_ret);
}

/* The device's extension names and OpenCL C feature names, space-separated (malloc'd). */
static char *cldm_clc_device_names(cl_device_id device) {
  void *ext = NULL, *feat = NULL;
  size_t ext_size = 0, feat_size = 0;
  cldm_info_fetch(cldm_clc_device_query, device, CL_DEVICE_EXTENSIONS, &ext, &ext_size);
  if (cldm_info_fetch(cldm_clc_device_query, device, CL_DEVICE_OPENCL_C_FEATURES, &feat,
                      &feat_size) != CL_SUCCESS)
    feat_size = 0;
  size_t n = feat_size / sizeof(cl_name_version);
  char *out = malloc((ext ? strlen(ext) : 0) + n * (CL_NAME_VERSION_MAX_NAME_SIZE + 1) + 2);
  if (out) {
    size_t len = (size_t)sprintf(out, "%s", ext ? (const char *)ext : "");
    const cl_name_version *v = feat;
    for (size_t i = 0; i < n; i++)
      len += (size_t)sprintf(out + len, " %.*s", CL_NAME_VERSION_MAX_NAME_SIZE, v[i].name);
  }
  free(ext);
  free(feat);
  return out;
}

/* The device's OpenCL version x 100 ("OpenCL 3.0 ..." -> 300), 120 if unknown. */
static unsigned cldm_clc_device_version(cl_device_id device) {
  void *ver = NULL;
  size_t size = 0;
  unsigned major = 1, minor = 2;
  if (cldm_info_fetch(cldm_clc_device_query, device, CL_DEVICE_VERSION, &ver, &size) ==
          CL_SUCCESS &&
      sscanf((const char *)ver, "OpenCL %u.%u", &major, &minor) != 2) {
    major = 1;
    minor = 2;
  }
  free(ver);
  return major * 100 + minor * 10;
}

/* The OpenCL C version `options` select with their last -cl-std=CLx.y (x * 100 + y * 10), or 0
 * if they select none (C++ for OpenCL is not checked). */
static unsigned cldm_clc_options_version(const char *options) {
  unsigned v = 0, major, minor;
  for (const char *p = options ? options : ""; (p = strstr(p, "-cl-std=CL")) != NULL; p += 10)
    if ((p == options || p[-1] == ' ' || p[-1] == '\t') &&
        sscanf(p + 10, "%u.%u", &major, &minor) == 2)
      v = major * 100 + minor * 10;
  return v;
}

/* 1 if the device compiles OpenCL C `version` (CL_DEVICE_OPENCL_C_ALL_VERSIONS, else every
 * version up to CL_DEVICE_OPENCL_C_VERSION). */
static int cldm_clc_device_has_c_version(cl_device_id device, unsigned version) {
  void *all = NULL, *ver = NULL;
  size_t all_size = 0, size = 0;
  int has = 0;
  if (cldm_info_fetch(cldm_clc_device_query, device, CL_DEVICE_OPENCL_C_ALL_VERSIONS, &all,
                      &all_size) == CL_SUCCESS &&
      all_size >= sizeof(cl_name_version)) {
    const cl_name_version *v = all;
    for (size_t i = 0; i < all_size / sizeof(*v) && !has; i++)
      has = CL_VERSION_MAJOR(v[i].version) * 100 + CL_VERSION_MINOR(v[i].version) * 10 == version;
  } else {
    unsigned major = 1, minor = 2;
    if (cldm_info_fetch(cldm_clc_device_query, device, CL_DEVICE_OPENCL_C_VERSION, &ver, &size) ==
            CL_SUCCESS &&
        sscanf((const char *)ver, "OpenCL C %u.%u", &major, &minor) != 2)
      major = 1, minor = 2;
    has = version <= major * 100 + minor * 10;
  }
  free(all);
  free(ver);
  return has;
}

cl_int cldm_clc_compile(cl_device_id device, const char *source, const char *options,
                        size_t num_headers, const char *const *header_sources,
                        const char *const *header_names, cldm_clc_result *out,
                        cldm_clc_status *status) {
  memset(out, 0, sizeof(*out));
  const cldm_clc_api *api = cldm_clc();
  if (!api)
    return CL_INVALID_OPERATION;
  unsigned wanted = cldm_clc_options_version(options);
  if (wanted && !cldm_clc_device_has_c_version(device, wanted)) {
    /* what a driver refuses: the device does not compile that version */
    char line[160];
    snprintf(line, sizeof(line),
             "error: the device does not support OpenCL C %u.%u (-cl-std=CL%u.%u)\n", wanted / 100,
             wanted / 10 % 10, wanted / 100, wanted / 10 % 10);
    if (!(out->log = strdup(line)))
      return CL_OUT_OF_HOST_MEMORY;
    *status = CLDM_CLC_E_COMPILE;
    return CL_SUCCESS;
  }
  char *names = cldm_clc_device_names(device);
  if (!names)
    return CL_OUT_OF_HOST_MEMORY;
  cldm_device_state st;
  if (options && strstr(options, "-cl-std=CLC++") &&
      cldm_device_snapshot(device, &st) == CL_SUCCESS && st.route == CLDM_ROUTE_PTX) {
    /* C++ for OpenCL (spec 2.3) has its operators with generic pointers; NVIDIA's driver
     * reports no generic address space, but the PTX route translates generic pointers
     * itself (NVPTX's generic space): the front end gets the feature */
    char *more = realloc(names, strlen(names) + sizeof(" __opencl_c_generic_address_space"));
    if (!more) {
      free(names);
      return CL_OUT_OF_HOST_MEMORY;
    }
    names = strcat(more, " __opencl_c_generic_address_space");
  }
  cldm_clc_request req;
  memset(&req, 0, sizeof(req));
  req.source = source;
  req.options = options;
  req.num_headers = num_headers;
  req.header_sources = header_sources;
  req.header_names = header_names;
  req.device_extensions = names;
  req.opencl_version = cldm_clc_device_version(device);
  req.source_name = "<kernel>";
  *status = api->compile(&req, out);
  free(names);
  if (*status == CLDM_CLC_E_NOMEM)
    return CL_OUT_OF_HOST_MEMORY;
  cldm_log(CLDM_LOG_INFO, "compiled a %zu-byte source: %s (%zu-byte module)", strlen(source),
           api->status_name(*status), out->spirv_size);
  return CL_SUCCESS;
}

void cldm_clc_result_release(cldm_clc_result *r) {
  const cldm_clc_api *api = cldm_clc();
  if (api)
    api->free_result(r);
}

int cldm_clc_arg_table(const cldm_clc_result *r, cldm_arg_table *t) {
  static const cl_kernel_arg_address_qualifier address[4] = {
      CL_KERNEL_ARG_ADDRESS_PRIVATE, CL_KERNEL_ARG_ADDRESS_GLOBAL, CL_KERNEL_ARG_ADDRESS_CONSTANT,
      CL_KERNEL_ARG_ADDRESS_LOCAL};
  static const cl_kernel_arg_access_qualifier access[4] = {
      CL_KERNEL_ARG_ACCESS_NONE, CL_KERNEL_ARG_ACCESS_READ_ONLY, CL_KERNEL_ARG_ACCESS_WRITE_ONLY,
      CL_KERNEL_ARG_ACCESS_READ_WRITE};
  memset(t, 0, sizeof(*t));
  if (!r->num_kernels)
    return 0;
  if (!(t->kernels = calloc(r->num_kernels, sizeof(*t->kernels))))
    return -1;
  for (size_t k = 0; k < r->num_kernels; k++) {
    const cldm_clc_kernel *from = &r->kernels[k];
    cldm_kernel_args *to = &t->kernels[k];
    t->num_kernels++; /* counted at once: a partial table is still freed */
    if (!(to->kernel = strdup(from->name)) ||
        (from->num_args && !(to->args = calloc(from->num_args, sizeof(*to->args))))) {
      cldm_arg_table_free(t);
      return -1;
    }
    for (size_t a = 0; a < from->num_args; a++) {
      const cldm_clc_arg *fa = &from->args[a];
      cldm_arg_info *ta = &to->args[a];
      to->num_args++;
      ta->name = strdup(fa->name ? fa->name : "");
      ta->type_name = strdup(fa->type_name ? fa->type_name : "");
      ta->address = address[fa->addr_space < 4 ? fa->addr_space : 0];
      ta->access = access[fa->access < 4 ? fa->access : 0];
      ta->type_qual =
          (cl_kernel_arg_type_qualifier)(fa->type_qual &
                                         (CL_KERNEL_ARG_TYPE_CONST | CL_KERNEL_ARG_TYPE_RESTRICT |
                                          CL_KERNEL_ARG_TYPE_VOLATILE | CL_KERNEL_ARG_TYPE_PIPE));
      if (!ta->name || !ta->type_name) {
        cldm_arg_table_free(t);
        return -1;
      }
    }
  }
  return 0;
}
