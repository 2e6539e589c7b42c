/*
 * clc_internal.h — internal header of the OpenCL C compiler library (libcldm-clc.so).
 * Prototypes are grouped by the file that defines them, so this header reads as a map:
 *
 *   clc_api.c       the exported table, argument checks, the one compile lock
 *   clc_options.c   build options -> what the front end is given (filtered), and the
 *                   front end's extra options (-cl-ext from the device's names)
 *   clc_cxx.cpp     C++ for OpenCL: clang's CompilerInstance (opencl-clang 15 has no C++)
 *   clc_compile.cpp opencl-clang's Compile (or clc_cxx.cpp), the module's kernel argument
 *                   information, LLVMSPIRVLib's writeSpirv; a crash inside either becomes a
 *                   failure
 */
#ifndef CLDM_CLC_INTERNAL_H
#define CLDM_CLC_INTERNAL_H

#include <stddef.h>

#include "cldm_clc.h"

#ifdef __cplusplus
extern "C" {
#endif

#define CLDM_CLC_HIDDEN __attribute__((visibility("hidden")))

/* ---- clc_options.c ----------------------------------------------------------------------- */

/* The options given to the front end (malloc'd): of `options`, those it honours and that are
 * safe to give it (-D, -I, -cl-std=CL1.1..CL3.0 and C++ for OpenCL, -w, -Werror, the -cl-*
 * math and optimisation options), each as written; every other option (and the argument of
 * -x, -triple, -target-triple, -s) is left out. Words are separated by blanks; double quotes
 * group blanks into a word. *opt_disable is set when -cl-opt-disable is among them. NULL if
 * out of memory. */
CLDM_CLC_HIDDEN char *cldm_clc_filter_options(const char *options, int *opt_disable);

/* The OpenCL C version the filtered options select (the last -cl-std=, else 1.2) x 100; C++
 * for OpenCL 1.0 counts as 200, 2021 as 300. */
CLDM_CLC_HIDDEN int cldm_clc_options_std(const char *filtered);
/* 1 if the last -cl-std= of the filtered options selects C++ for OpenCL. */
CLDM_CLC_HIDDEN int cldm_clc_options_cxx(const char *filtered);

/* The front end's extra options (malloc'd): typed pointers, no built-in library functions, the
 * extension's header included from `include_dir`, cl_ext_device_malloc defined, and
 * "-cl-ext=+a,+b" for each name of the space-separated `extensions` (names of other characters
 * than [A-Za-z0-9_] skipped). OpenCL C 3.0 feature names (__opencl_c_*) are taken only when
 * `opencl_c_std` is 300 (they mean nothing before), and then also defined as macros. NULL if
 * out of memory. */
CLDM_CLC_HIDDEN char *cldm_clc_extra_options(const char *extensions, int opencl_c_std,
                                             const char *include_dir, const char *header_name);

/* ---- clc_compile.cpp --------------------------------------------------------------------- */

/* Compiles and translates (the caller holds the compile lock); fills *out, whose log is set on
 * failure. */
CLDM_CLC_HIDDEN cldm_clc_status cldm_clc_run(const cldm_clc_request *req, cldm_clc_result *out);
/* The built-in header's text and size. */
CLDM_CLC_HIDDEN const char *cldm_clc_header_text(size_t *size);
/* Frees what *r holds and zeroes it. */
CLDM_CLC_HIDDEN void cldm_clc_result_free(cldm_clc_result *r);

#ifdef __cplusplus
}

/* ---- clc_cxx.cpp ------------------------------------------------------------------------- */
#include <memory>
#include <string>

namespace llvm {
class LLVMContext;
class Module;
} // namespace llvm

/* Compiles req's C++ for OpenCL source with the filtered `options` and the `extra` options of
 * cldm_clc_extra_options (the extension's header `header` found at `header_path`) into *module
 * (in ctx); diagnostics are appended to *log. CLDM_CLC_OK or CLDM_CLC_E_COMPILE. */
CLDM_CLC_HIDDEN cldm_clc_status cldm_clc_cxx_compile(
    const cldm_clc_request *req, const std::string &options, const std::string &extra,
    const std::string &header_path, const std::string &header, llvm::LLVMContext &ctx,
    std::unique_ptr<llvm::Module> *module, std::string *log);
#endif
#endif /* CLDM_CLC_INTERNAL_H */
