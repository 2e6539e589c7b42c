/*
 * cldm_ptx.h — public C API of the PTX backend (libcldm-ptx.so): SPIR-V -> PTX text that
 * NVIDIA's OpenCL driver accepts through clCreateProgramWithBinary.
 *
 * The backend is a separate shared object so that only processes with an NVIDIA device load
 * LLVM: the layer dlopen()s CLDM_PTX_LIBRARY_NAME when a device needs it, looks up the one
 * exported symbol CLDM_PTX_GET_API_SYMBOL and checks the table it returns:
 *
 *   cldm_ptx_get_api_fn get = (cldm_ptx_get_api_fn)dlsym(h, CLDM_PTX_GET_API_SYMBOL);
 *   const cldm_ptx_api *api = get ? get(CLDM_PTX_API_VERSION) : NULL;
 *   if (!api || api->api_version != CLDM_PTX_API_VERSION || api->size < sizeof *api) ...
 *
 * Input: a SPIR-V module (bytes, either endianness) that no longer allocates, i.e. already
 * lowered by the SPIR-V engine (cldm_spirv_lower) with an allocator variant ordered by explicit
 * fences (the "cl12" variant), Physical64 addressing, OpenCL memory model.
 * Route, all in-process: LLVMSPIRVLib reads the module with OpenCL 1.2 built-in names; the
 * module is retargeted to nvptx64-nvidia-nvcl (SPIR address spaces renumbered, kernels made PTX
 * entries); the backend's own work-item functions and fences are linked first, then libclc's
 * nvptx64--nvidiacl.bc; everything but the kernels is internalised; LLVM optimises and the
 * NVPTX back end writes PTX. Constructs the route cannot compile correctly (images, samplers,
 * pipes, printf, device-side enqueue, sub-groups, atomics with acquire/release/seq_cst order,
 * Physical32) are refused with CLDM_PTX_E_UNSUPPORTED and a log that names them.
 *
 * libclc is found through $CLDM_LIBCLC_DIR, else next to libcldm-ptx.so (its directory and
 * ../share/clc), else the directory compiled in (Debian's /usr/lib/clc).
 * Translations are cached in memory per (module content, target, options that change the
 * result), and on disk when $CLDM_CACHE_DIR names a directory (files written under a temporary
 * name and renamed, so concurrent processes never read a partial file).
 *
 * All functions are thread-safe. No function aborts on malformed input: every failure is a
 * status plus a human-readable log.
 */
#ifndef CLDM_PTX_H
#define CLDM_PTX_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CLDM_PTX_API_VERSION 1u
#define CLDM_PTX_LIBRARY_NAME "libcldm-ptx.so"
#define CLDM_PTX_GET_API_SYMBOL "cldm_ptx_get_api"

typedef enum cldm_ptx_status {
  CLDM_PTX_OK = 0,
  CLDM_PTX_E_INVALID_ARG, /* NULL pointers, size not a multiple of 4, ... */
  CLDM_PTX_E_MALFORMED,   /* not well-formed SPIR-V (the engine's parser rejected it) */
  CLDM_PTX_E_UNSUPPORTED, /* valid, but uses what the PTX route cannot compile (log says what) */
  CLDM_PTX_E_TRANSLATE,   /* LLVMSPIRVLib or the retargeting failed */
  CLDM_PTX_E_LINK,        /* linking the work-item functions / libclc failed, or a built-in
                              function the module calls exists in neither */
  CLDM_PTX_E_LIBCLC,      /* libclc's nvptx64--nvidiacl.bc not found or unreadable */
  CLDM_PTX_E_CODEGEN,     /* the NVPTX back end failed */
  CLDM_PTX_E_NOMEM
} cldm_ptx_status;

/* The device to translate for. */
typedef struct cldm_ptx_target {
  unsigned cc_major, cc_minor; /* compute capability (CL_DEVICE_COMPUTE_CAPABILITY_*_NV) */
  const char *options;         /* clBuildProgram options, may be NULL. -cl-opt-disable turns
                                  optimisation off; every other option is accepted and has no
                                  effect on the PTX. */
} cldm_ptx_target;

typedef struct cldm_ptx_cache_stats {
  uint64_t memory_hits; /* translations answered from the in-memory cache */
  uint64_t disk_hits;   /* ... from $CLDM_CACHE_DIR */
  uint64_t misses;      /* translations actually run (successful or not) */
  uint64_t entries;     /* entries in the in-memory cache now */
  uint64_t bytes;       /* PTX bytes held by it */
} cldm_ptx_cache_stats;

typedef struct cldm_ptx_api {
  uint32_t api_version;       /* CLDM_PTX_API_VERSION of the library */
  uint32_t size;              /* sizeof(cldm_ptx_api) of the library: later versions only
                                  append members */
  const char *version_string; /* e.g. "cldm-ptx 0.1.0 (LLVM 15.0.6)" */

  /* Translates `spirv` (size bytes) for `target`. On success *ptx is a malloc'd NUL-terminated
   * PTX text and *ptx_size its length without the NUL (pass ptx_size + 1 where the driver wants
   * the terminator counted). On failure *ptx is NULL. *log (if log != NULL) receives a malloc'd
   * human-readable log on success (chosen target, cache use) and on failure (why), or NULL.
   * Results are freed with free_result. */
  cldm_ptx_status (*translate)(const void *spirv, size_t size, const cldm_ptx_target *target,
                               char **ptx, size_t *ptx_size, char **log);
  void (*free_result)(void *p);
  const char *(*status_name)(cldm_ptx_status status);

  /* The PTX target chosen for a compute capability: writes e.g. "sm_86" and "7.5" (the ISA
   * version) into the buffers (16 bytes each are enough). LLVM 15 knows no SM above 8.6: newer
   * GPUs get sm_86 PTX, which the driver compiles for the real GPU. */
  void (*target_for)(unsigned cc_major, unsigned cc_minor, char sm[16], char isa[16]);

  void (*cache_stats)(cldm_ptx_cache_stats *out);
  void (*cache_clear)(void); /* drops the in-memory cache and zeroes the counters */

  /* clLinkProgram: translates `n` modules linked together (each as translate takes it; a
   * function one module imports is resolved by another's export; functions no other module
   * imports stay private to their module, so the allocator each lowered module carries does
   * not clash). Same results and logs as translate. */
  cldm_ptx_status (*translate_linked)(const void *const *spirv, const size_t *sizes, size_t n,
                                      const cldm_ptx_target *target, char **ptx, size_t *ptx_size,
                                      char **log);
} cldm_ptx_api;

typedef const cldm_ptx_api *(*cldm_ptx_get_api_fn)(uint32_t api_version);

/* The only symbol the library exports. Returns NULL if it cannot serve `api_version`
 * (a newer major interface than it has). */
const cldm_ptx_api *cldm_ptx_get_api(uint32_t api_version);

#ifdef __cplusplus
}
#endif
#endif /* CLDM_PTX_H */
