/*
 * clc_api.c — the library's one exported symbol, cldm_clc_get_api, and the compile entry
 * point behind it: argument checks and one process-wide lock around each compilation
 * (opencl-clang and LLVMSPIRVLib are not known to be reentrant; a compilation takes tens of
 * milliseconds, so serialising them costs little).
 */
#include <pthread.h>
#include <string.h>

#include <llvm/Config/llvm-config.h>

#include "clc_internal.h"

#ifndef CLDM_VERSION_STRING
#define CLDM_VERSION_STRING "0"
#endif

static const char cldm_clc_version[] =
    "cldm-clc " CLDM_VERSION_STRING " (opencl-clang, LLVM " LLVM_VERSION_STRING ", LLVMSPIRVLib)";

static pthread_mutex_t cldm_clc_lock = PTHREAD_MUTEX_INITIALIZER;

static cldm_clc_status cldm_clc_compile(const cldm_clc_request *req, cldm_clc_result *out) {
  if (out)
    memset(out, 0, sizeof(*out));
  if (!req || !req->source || !out ||
      (req->num_headers && (!req->header_sources || !req->header_names)))
    return CLDM_CLC_E_INVALID_ARG;
  pthread_mutex_lock(&cldm_clc_lock);
  cldm_clc_status s = cldm_clc_run(req, out);
  pthread_mutex_unlock(&cldm_clc_lock);
  return s;
}

static void cldm_clc_free_result(cldm_clc_result *r) {
  if (r)
    cldm_clc_result_free(r);
}

static const char *cldm_clc_status_name(cldm_clc_status s) {
  switch (s) {
  case CLDM_CLC_OK:
    return "ok";
  case CLDM_CLC_E_INVALID_ARG:
    return "invalid argument";
  case CLDM_CLC_E_COMPILE:
    return "compile error";
  case CLDM_CLC_E_TRANSLATE:
    return "SPIR-V translation failed";
  case CLDM_CLC_E_NOMEM:
    return "out of memory";
  }
  return "unknown status";
}

static const char *cldm_clc_header_api(size_t *size) {
  size_t n = 0;
  const char *text = cldm_clc_header_text(&n);
  if (size)
    *size = n;
  return text;
}

static const cldm_clc_api cldm_clc_table = {
    CLDM_CLC_API_VERSION, sizeof(cldm_clc_api), cldm_clc_version,    cldm_clc_compile,
    cldm_clc_free_result, cldm_clc_status_name, cldm_clc_header_api,
};

__attribute__((visibility("default"))) const cldm_clc_api *cldm_clc_get_api(uint32_t api_version) {
  return api_version == CLDM_CLC_API_VERSION ? &cldm_clc_table : NULL;
}
