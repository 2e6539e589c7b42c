/*
 * ptx_internal.h — internal header of the PTX backend (libcldm-ptx.so). Prototypes are grouped
 * by the file that defines them, so this header reads as a map of the backend:
 *
 *   ptx_api.c        the exported table, argument checks, target choice, the pipeline's order
 *   ptx_log.c        growable log text
 *   ptx_check.c      SPIR-V checks before LLVMSPIRVLib sees the module
 *   ptx_validate.c   what each id operand may name (types, labels, values, functions)
 *   ptx_spirv_fix.c  valid SPIR-V the translator cannot take, rewritten (scalar OpConstantNull)
 *   ptx_reader.cpp   LLVMSPIRVLib: SPIR-V -> LLVM module (OpenCL 1.2 built-in names)
 *   ptx_addrspace.cpp  SPIR -> NVPTX address-space renumbering (type-remapping clone)
 *   ptx_callees.cpp  callable copies of kernels that other code calls
 *   ptx_mangle.c     built-in names: SPIR address-space mangling -> NVPTX's (libclc's)
 *   ptx_link.cpp     link-only-needed linking, names of unresolved functions
 *   ptx_recover.cpp  an abort inside LLVM becomes a failed translation
 *   ptx_codegen.c    retarget, checks of atomics, link overrides + libclc, internalise,
 *                    optimise, emit PTX (LLVM C API)
 *   ptx_libclc.c     locating and reading libclc's nvptx64--nvidiacl.bc
 *   ptx_cache.c      in-memory and on-disk translation cache
 * SHA-256 (cache keys) comes from layer/common (cldm_sha256.h).
 */
#ifndef CLDM_PTX_INTERNAL_H
#define CLDM_PTX_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include <llvm-c/Core.h>

#include "cldm_ptx.h"
#include "cldm_sha256.h"

#ifdef __cplusplus
extern "C" {
#endif

#define CLDM_PTX_HIDDEN __attribute__((visibility("hidden")))

/* ---- ptx_log.c ------------------------------------------------------------------------ */

typedef struct cldm_ptx_log {
  char *s;
  size_t len, cap;
  int oom; /* an append failed: the text is truncated */
} cldm_ptx_log;

void cldm_ptx_log_printf(cldm_ptx_log *log, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void cldm_ptx_log_append(cldm_ptx_log *log, const char *text, size_t len);
/* The text (malloc'd, NUL-terminated; NULL if empty); the log is empty afterwards. */
char *cldm_ptx_log_take(cldm_ptx_log *log);
void cldm_ptx_log_free(cldm_ptx_log *log);

/* ---- ptx_check.c ---------------------------------------------------------------------- */

/* Checks `words` (host byte order) for what the PTX route needs: well-formed SPIR-V (the
 * engine's parser), no allocation left (lowered), Physical64 + OpenCL memory model, kernels
 * only, SPIR-V <= 1.4, only capabilities, types, extended instruction sets and atomic memory
 * orders the route compiles correctly. Fails with MALFORMED or UNSUPPORTED and a log line. */
cldm_ptx_status cldm_ptx_check_spirv(const uint32_t *words, size_t num_words, cldm_ptx_log *log);

/* ---- ptx_validate.c ------------------------------------------------------------------- */

struct cldm_spirv_module; /* the engine's parsed module (layer/spirv/src/internal.h) */
/* Checks that every id operand names the kind of thing its position needs (see the file). The
 * module must have passed the engine's operand check. */
cldm_ptx_status cldm_ptx_validate_ids(const struct cldm_spirv_module *m, cldm_ptx_log *log);
/* Word positions of an atomic instruction's memory-semantics operands (0: none); its pointer
 * operand is two words before the first. ptx_check.c uses it too. */
void cldm_ptx_atomic_semantics(uint32_t op, unsigned *first, unsigned *second);

/* ---- ptx_spirv_fix.c ------------------------------------------------------------------ */

/* Rewrites constructs LLVMSPIRVLib 15 asserts on into equivalent ones. *out is a new word array
 * (malloc'd) when something changed, else NULL. The module must have passed the check. */
cldm_ptx_status cldm_ptx_fix_spirv(const uint32_t *words, size_t num_words, uint32_t **out,
                                   size_t *out_words, cldm_ptx_log *log);

/* ---- ptx_reader.cpp ------------------------------------------------------------------- */

/* Reads SPIR-V (host order) with LLVMSPIRVLib, OpenCL 1.2 built-in representation, into a
 * module of `ctx` (an opaque-pointer context). */
cldm_ptx_status cldm_ptx_read_spirv(LLVMContextRef ctx, const uint32_t *words, size_t num_words,
                                    LLVMModuleRef *out, cldm_ptx_log *log);

/* ---- ptx_addrspace.cpp ---------------------------------------------------------------- */

/* SPIR address space -> NVPTX address space: private 0 -> 0, global 1 -> 1, constant 2 -> 4,
 * local 3 -> 3, generic 4 -> 0. Returns -1 for any other number. */
int cldm_ptx_nvptx_addrspace(unsigned spir_as);
/* Rewrites every type, global, function and instruction of `m` to NVPTX address-space
 * numbers. Debug information is dropped first. */
cldm_ptx_status cldm_ptx_remap_address_spaces(LLVMModuleRef m, cldm_ptx_log *log);

/* ---- ptx_callees.cpp ------------------------------------------------------------------ */

/* Every spir_kernel that is called gets an internal spir_func copy, and the calls go to it.
 * Returns the number of copies made. */
unsigned cldm_ptx_split_called_kernels(LLVMModuleRef m);

/* ---- ptx_mangle.c --------------------------------------------------------------------- */

/* The NVPTX (libclc) spelling of an Itanium-mangled OpenCL built-in name that was mangled
 * with SPIR address-space numbers: vendor qualifier U3AS2 (constant) -> U3AS4, U3AS4
 * (generic) -> none. Clang keeps an unprinted address-space qualifier as a substitution
 * candidate, so the substitution indices stay valid. Returns a malloc'd name, or NULL when
 * nothing changes or the name is not understood (left as it is). */
char *cldm_ptx_mangle_nvptx(const char *name);

/* ---- ptx_link.cpp --------------------------------------------------------------------- */

/* Links `src` into `dst`, only the definitions `dst` needs; existing definitions in `dst`
 * win. `src` is consumed. */
cldm_ptx_status cldm_ptx_link_needed(LLVMModuleRef dst, LLVMModuleRef src, const char *what,
                                     cldm_ptx_log *log);
/* Demangled form of an Itanium name into `buf` (or the name itself). */
void cldm_ptx_demangle(const char *name, char *buf, size_t size);

/* ---- ptx_recover.cpp ------------------------------------------------------------------ */

/* Runs fn(arg); returns 0, or -1 if it crashed (assertion, abort, fatal LLVM error, fault),
 * in which case fn did not return normally and what it allocated is lost. */
int cldm_ptx_run_recoverable(void (*fn)(void *), void *arg);

/* ---- ptx_codegen.c -------------------------------------------------------------------- */

/* Registers per thread that kernels which allocate may use (.maxnreg; 0: no cap), unless
 * CLDM_PTX_MAXNREG says otherwise (ptx_api.c). No cap by default: ptxas sizes such a kernel for
 * the allocator's rare paths (refills, the last resort), and a cap low enough to fit more
 * work-groups on an SM speeds up the fast path but makes those paths spill, which slows down
 * every launch that refills (a fill of a fresh heap). The allocator keeps its own register
 * count down instead (device/cl/cldm_config.clh, CLDM_SLAB_FINAL_REFILL). */
#ifndef CLDM_PTX_MAXNREG_DEFAULT
#define CLDM_PTX_MAXNREG_DEFAULT 0u
#endif

typedef struct cldm_ptx_codegen_opts {
  const char *sm;  /* "sm_86" */
  const char *isa; /* "7.5" */
  int optimize;    /* 0: -cl-opt-disable */
  const void *libclc;
  size_t libclc_size; /* nvptx64--nvidiacl.bc */
  unsigned maxnreg;   /* registers per thread of kernels that allocate (.maxnreg), 0: no cap */
} cldm_ptx_codegen_opts;

/* The whole LLVM part: `n` SPIR-V modules (checked, host order) -> PTX text (malloc'd). Several
 * modules are linked into one (functions without SPIR-V linkage stay private to their module,
 * as LLVMSPIRVLib makes them internal; an import is resolved by another module's export). */
cldm_ptx_status cldm_ptx_codegen(const uint32_t *const *words, const size_t *num_words, size_t n,
                                 const cldm_ptx_codegen_opts *opts, char **ptx, size_t *ptx_size,
                                 cldm_ptx_log *log);
/* The embedded overrides (work-item functions, fences) as bitcode. */
const unsigned char *cldm_ptx_overrides_bitcode(size_t *size);
/* The NVPTX allocator (cldm_target_*, device/), linked into modules that call it. */
const unsigned char *cldm_ptx_allocator_bitcode(size_t *size);

/* ---- ptx_libclc.c --------------------------------------------------------------------- */

/* Finds nvptx64--nvidiacl.bc ($CLDM_LIBCLC_DIR, next to the library, the built-in path) and
 * returns its bytes (cached for the process; valid until the next call). Caller holds the
 * translation lock. `identity` receives "path:size:mtime" for cache keys. */
cldm_ptx_status cldm_ptx_libclc_load(const void **data, size_t *size, char *identity,
                                     size_t identity_size, cldm_ptx_log *log);
/* Only the identity (stat, no read). */
cldm_ptx_status cldm_ptx_libclc_identity(char *identity, size_t identity_size, cldm_ptx_log *log);

/* ---- ptx_cache.c ---------------------------------------------------------------------- */

typedef struct cldm_ptx_key {
  uint8_t b[32];
} cldm_ptx_key;

/* Looks the key up in memory, then in $CLDM_CACHE_DIR. On a hit returns 1 with a malloc'd
 * copy of the PTX in *ptx and where it came from in *from ("memory" / "disk"). */
int cldm_ptx_cache_get(const cldm_ptx_key *key, char **ptx, size_t *size, const char **from);
/* Stores a translation (memory, and disk when $CLDM_CACHE_DIR is set). */
void cldm_ptx_cache_put(const cldm_ptx_key *key, const char *ptx, size_t size, cldm_ptx_log *log);
void cldm_ptx_cache_count_miss(void);
void cldm_ptx_cache_stats_get(cldm_ptx_cache_stats *out);
void cldm_ptx_cache_clear_all(void);

#ifdef __cplusplus
}
#endif
#endif /* CLDM_PTX_INTERNAL_H */
