/*
 * layer_config.c — the environment knobs documented in README ("Settings"), read once, on first
 * use; a value that is not understood is reported (at log level error) and ignored:
 *   CLDM_HEAP_SIZE   default heap size in bytes, K/M/G suffixes allowed (default: 8M)
 *   CLDM_DUMP_DIR    directory where lowered SPIR-V modules are written (default: unset)
 *   CLDM_HEAP_MEMORY svm | buffer: force the heap's memory kind (default: SVM if available)
 *   CLDM_NVIDIA      on | off: serve NVIDIA devices without SPIR-V through the PTX route
 *                    (default: on; off leaves NVIDIA's driver exactly as it reports itself)
 *   CLDM_PTX_BACKEND path of the PTX backend library (default: libcldm-ptx.so next to the layer)
 *   CLDM_CLC_COMPILER path of the OpenCL C compiler library (default: libcldm-clc.so next to
 *                    the layer)
 *   CLDM_CACHE_DIR   directory of the layer's files kept across processes (PTX translations,
 *                    records of program binaries; default: records under $XDG_CACHE_HOME or
 *                    ~/.cache, PTX in memory only)
 *   CLDM_CHECK       1 | 0: checked mode (spec 2.4; default 0)
 *   CLDM_OOM         report | abort: what the layer does after a kernel whose allocations
 *                    returned NULL (spec 2.5; default: nothing, NULL as always)
 *   CLDM_BAD_ALLOC   abort | report: after a kernel in which a throwing operator new found no
 *                    room and stopped its work-item, print the report and abort() as C++'s
 *                    std::terminate would (default), or print it and go on (spec 2.2)
 *   CLDM_PROBE_COUNTERS 1 | 0: with CLDM_CHECK or CLDM_OOM, one line of the allocator's path
 *                    counters after each watched launch of a probe build (the others have none:
 *                    device/cl/cldm_probe.clh; default 0)
 * CLDM_LOG is read by layer_log.c. Companion libraries are looked up next to the layer's own
 * shared object (cldm_config_beside_layer).
 */
#define _GNU_SOURCE /* dladdr */
#include <ctype.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "cldm_layer.h"

static pthread_once_t cldm_config_once = PTHREAD_ONCE_INIT;
static size_t cldm_config_heap_default = CL_DEVICE_HEAP_SIZE_DEFAULT_EXT;
static const char *cldm_config_dump;
static const char *cldm_config_memory;
static int cldm_config_nvidia_on = 1;
static const char *cldm_config_ptx;
static const char *cldm_config_clc;
static const char *cldm_config_cache;
static int cldm_config_check_on;
static cldm_oom_mode cldm_config_oom_mode = CLDM_OOM_NULL;
static int cldm_config_bad_alloc_abort = 1;
static int cldm_config_probe_on;

/* Parses "<digits>[K|M|G][B|iB]"; returns 0 on failure. */
static size_t cldm_config_parse_size(const char *s) {
  char *end = NULL;
  unsigned long long v = strtoull(s, &end, 10);
  if (end == s)
    return 0;
  unsigned shift = 0;
  switch (toupper((unsigned char)*end)) {
  case 'K':
    shift = 10;
    end++;
    break;
  case 'M':
    shift = 20;
    end++;
    break;
  case 'G':
    shift = 30;
    end++;
    break;
  default:
    break;
  }
  if (*end == 'i')
    end++;
  if (toupper((unsigned char)*end) == 'B')
    end++;
  if (*end != '\0' || v > (SIZE_MAX >> shift))
    return 0;
  return (size_t)(v << shift);
}

static void cldm_config_read(void) {
  const char *hs = getenv("CLDM_HEAP_SIZE");
  if (hs) {
    size_t v = cldm_config_parse_size(hs);
    if (v >= CL_DEVICE_HEAP_SIZE_MIN_EXT)
      cldm_config_heap_default = v;
    else
      cldm_log(CLDM_LOG_ERROR, "CLDM_HEAP_SIZE=%s is not a size >= 1M; using 8M", hs);
  }
  const char *dd = getenv("CLDM_DUMP_DIR");
  if (dd && *dd)
    cldm_config_dump = dd;
  const char *hm = getenv("CLDM_HEAP_MEMORY");
  if (hm && (!strcmp(hm, "svm") || !strcmp(hm, "buffer")))
    cldm_config_memory = hm;
  else if (hm && *hm)
    cldm_log(CLDM_LOG_ERROR, "CLDM_HEAP_MEMORY=%s is not svm or buffer; ignored", hm);
  const char *nv = getenv("CLDM_NVIDIA");
  if (nv && !strcmp(nv, "off"))
    cldm_config_nvidia_on = 0;
  else if (nv && *nv && strcmp(nv, "on"))
    cldm_log(CLDM_LOG_ERROR, "CLDM_NVIDIA=%s is not on or off; ignored", nv);
  const char *pb = getenv("CLDM_PTX_BACKEND");
  if (pb && *pb)
    cldm_config_ptx = pb;
  const char *cc = getenv("CLDM_CLC_COMPILER");
  if (cc && *cc)
    cldm_config_clc = cc;
  const char *cd = getenv("CLDM_CACHE_DIR");
  if (cd && *cd)
    cldm_config_cache = cd;
  const char *ck = getenv("CLDM_CHECK");
  if (ck && !strcmp(ck, "1"))
    cldm_config_check_on = 1;
  else if (ck && *ck && strcmp(ck, "0"))
    cldm_log(CLDM_LOG_ERROR, "CLDM_CHECK=%s is not 1 or 0; ignored", ck);
  const char *om = getenv("CLDM_OOM");
  if (om && !strcmp(om, "report"))
    cldm_config_oom_mode = CLDM_OOM_REPORT;
  else if (om && !strcmp(om, "abort"))
    cldm_config_oom_mode = CLDM_OOM_ABORT;
  else if (om && *om)
    cldm_log(CLDM_LOG_ERROR, "CLDM_OOM=%s is not report or abort; ignored", om);
  const char *ba = getenv("CLDM_BAD_ALLOC");
  if (ba && !strcmp(ba, "report"))
    cldm_config_bad_alloc_abort = 0;
  else if (ba && *ba && strcmp(ba, "abort"))
    cldm_log(CLDM_LOG_ERROR, "CLDM_BAD_ALLOC=%s is not abort or report; ignored", ba);
  const char *pc = getenv("CLDM_PROBE_COUNTERS");
  if (pc && !strcmp(pc, "1"))
    cldm_config_probe_on = 1;
  else if (pc && *pc && strcmp(pc, "0"))
    cldm_log(CLDM_LOG_ERROR, "CLDM_PROBE_COUNTERS=%s is not 1 or 0; ignored", pc);
}

static void cldm_config_init(void) { pthread_once(&cldm_config_once, cldm_config_read); }

size_t cldm_config_default_heap_size(void) {
  cldm_config_init();
  return cldm_config_heap_default;
}

const char *cldm_config_dump_dir(void) {
  cldm_config_init();
  return cldm_config_dump;
}

const char *cldm_config_heap_memory(void) {
  cldm_config_init();
  return cldm_config_memory;
}

int cldm_config_nvidia(void) {
  cldm_config_init();
  return cldm_config_nvidia_on;
}

const char *cldm_config_ptx_backend(void) {
  cldm_config_init();
  return cldm_config_ptx;
}

const char *cldm_config_clc_compiler(void) {
  cldm_config_init();
  return cldm_config_clc;
}

const char *cldm_config_cache_dir(void) {
  cldm_config_init();
  return cldm_config_cache;
}

int cldm_config_check(void) {
  cldm_config_init();
  return cldm_config_check_on;
}

cldm_oom_mode cldm_config_oom(void) {
  cldm_config_init();
  return cldm_config_oom_mode;
}

int cldm_config_bad_alloc_aborts(void) {
  cldm_config_init();
  return cldm_config_bad_alloc_abort;
}

char *cldm_config_beside_layer(const char *file) {
  Dl_info info;
  if (!dladdr((void *)cldm_config_beside_layer, &info) || !info.dli_fname)
    return NULL;
  const char *slash = strrchr(info.dli_fname, '/');
  if (!slash)
    return NULL;
  size_t dir = (size_t)(slash - info.dli_fname) + 1, n = strlen(file) + 1;
  char *path = malloc(dir + n);
  if (path) {
    memcpy(path, info.dli_fname, dir);
    memcpy(path + dir, file, n);
  }
  return path;
}

int cldm_config_probe(void) {
  cldm_config_init();
  return cldm_config_probe_on;
}
