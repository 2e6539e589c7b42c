/*
 * cldm_clc.h — public C API of the OpenCL C compiler library (libcldm-clc.so): OpenCL C
 * source -> SPIR-V, for programs the layer builds from source (spec 1.5.1, 2.3, 3.5).
 *
 * The compiler links clang and LLVM (through Debian's libopencl-clang, the OpenCL C front end
 * of Intel's OpenCL stack, and LLVMSPIRVLib), so it is a separate shared object: the layer
 * dlopen()s CLDM_CLC_LIBRARY_NAME only when a source program may allocate, looks up the one
 * exported symbol CLDM_CLC_GET_API_SYMBOL and checks the table it returns, as for the PTX
 * backend (cldm_ptx.h):
 *
 *   cldm_clc_get_api_fn get = (cldm_clc_get_api_fn)dlsym(h, CLDM_CLC_GET_API_SYMBOL);
 *   const cldm_clc_api *api = get ? get(CLDM_CLC_API_VERSION) : NULL;
 *   if (!api || api->api_version != CLDM_CLC_API_VERSION || api->size < sizeof *api) ...
 *
 * What compile does: the source is compiled by opencl-clang for spir64 (typed pointers, as
 * LLVMSPIRVLib 15 needs) with the extension's OpenCL C interface included first (the header
 * include/opencl-c/cl_ext_device_malloc.h, built into the library) and cl_ext_device_malloc
 * defined; the device's extensions and OpenCL C features are enabled as a driver would
 * (-cl-ext); the module is translated to SPIR-V 1.0 by LLVMSPIRVLib. Of the build options,
 * those that change the module are honoured (-D, -I, -cl-std=, -w, -Werror, the -cl-* math
 * and optimisation options); the others (-x, -triple, -O<n>, -g, options the front end does
 * not know) are left out here, since some of them would abort the front end or the translator
 * and the driver judges them when it builds the module. Diagnostics come back as clang prints them
 * ("<name>:<line>:<col>: error: ...", the source line and a caret).
 *
 * All functions are thread-safe (compilations are serialised). No function aborts on bad
 * source or options: failures are a status and a log.
 */
#ifndef CLDM_CLC_H
#define CLDM_CLC_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CLDM_CLC_API_VERSION 1u
#define CLDM_CLC_LIBRARY_NAME "libcldm-clc.so"
#define CLDM_CLC_GET_API_SYMBOL "cldm_clc_get_api"

typedef enum cldm_clc_status {
  CLDM_CLC_OK = 0,
  CLDM_CLC_E_INVALID_ARG, /* NULL source or result */
  CLDM_CLC_E_COMPILE,     /* the source does not compile: the log holds the diagnostics */
  CLDM_CLC_E_TRANSLATE,   /* the module could not be translated to SPIR-V (log says why) */
  CLDM_CLC_E_NOMEM
} cldm_clc_status;

/* What to compile, and for which device. */
typedef struct cldm_clc_request {
  const char *source;  /* NUL-terminated OpenCL C */
  const char *options; /* clBuildProgram / clCompileProgram options; may be NULL */
  /* clCompileProgram's input headers: their sources and the names #include finds them by */
  size_t num_headers;
  const char *const *header_sources;
  const char *const *header_names;
  /* Space-separated extension and OpenCL C feature names the device reports
   * (CL_DEVICE_EXTENSIONS, CL_DEVICE_OPENCL_C_FEATURES); each is enabled (-cl-ext=+name). */
  const char *device_extensions;
  unsigned opencl_version; /* the device's OpenCL version x 100 (__OPENCL_VERSION__), e.g. 300 */
  const char *source_name; /* the source's name in diagnostics; NULL: the front end's default */
} cldm_clc_request;

/* Argument information of a kernel, from the front end (what -cl-kernel-arg-info reports). */
typedef struct cldm_clc_arg {
  char *name;
  char *type_name;     /* e.g. "float4*", "uint" */
  unsigned addr_space; /* 0 private, 1 global, 2 constant, 3 local (SPIR numbering) */
  unsigned access;     /* 0 none, 1 read_only, 2 write_only, 3 read_write */
  unsigned type_qual;  /* CLDM_CLC_QUAL_* bits */
} cldm_clc_arg;

enum {
  CLDM_CLC_QUAL_CONST = 1u << 0,
  CLDM_CLC_QUAL_RESTRICT = 1u << 1,
  CLDM_CLC_QUAL_VOLATILE = 1u << 2,
  CLDM_CLC_QUAL_PIPE = 1u << 3
};

typedef struct cldm_clc_kernel {
  char *name;
  size_t num_args;
  cldm_clc_arg *args;
} cldm_clc_kernel;

typedef struct cldm_clc_result {
  void *spirv; /* the module (SPIR-V words in host order), NULL unless CLDM_CLC_OK */
  size_t spirv_size;
  char *log; /* diagnostics (errors, or warnings of a successful compile), NUL-terminated;
                NULL if there were none */
  size_t num_kernels;
  cldm_clc_kernel *kernels;
} cldm_clc_result;

typedef struct cldm_clc_api {
  uint32_t api_version;       /* CLDM_CLC_API_VERSION of the library */
  uint32_t size;              /* sizeof(cldm_clc_api) of the library: later versions append */
  const char *version_string; /* e.g. "cldm-clc 0.1.0 (opencl-clang, LLVM 15.0.6)" */

  /* Compiles req->source; fills *out (zeroed first, also on failure: the log says why).
   * Free *out with free_result. */
  cldm_clc_status (*compile)(const cldm_clc_request *req, cldm_clc_result *out);
  void (*free_result)(cldm_clc_result *result); /* frees the members and zeroes *result */
  const char *(*status_name)(cldm_clc_status status);
  /* The extension's OpenCL C header every compilation includes (not NUL-terminated; *size
   * bytes), for callers that hand the same declarations to another compiler. */
  const char *(*header)(size_t *size);
} cldm_clc_api;

typedef const cldm_clc_api *(*cldm_clc_get_api_fn)(uint32_t api_version);

/* The only symbol the library exports; NULL if it cannot serve `api_version`. */
const cldm_clc_api *cldm_clc_get_api(uint32_t api_version);

#ifdef __cplusplus
}
#endif
#endif /* CLDM_CLC_H */
