/*
 * ptx_api.c — the backend's one exported symbol, cldm_ptx_get_api, and the translation entry
 * point behind it: argument checks, byte order, the PTX target for a compute capability, build
 * options, the cache key, then check (ptx_check.c) and translate (ptx_codegen.c) under one
 * process-wide lock (LLVMSPIRVLib is not known to be reentrant; translations are rare and
 * cached, so serialising them costs little).
 */
#include <ctype.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <llvm/Config/llvm-config.h>

#include "ptx_internal.h"

#ifndef CLDM_VERSION_STRING
#define CLDM_VERSION_STRING "0"
#endif

#define SPIRV_MAGIC 0x07230203u
#define SPIRV_MAGIC_SWAPPED 0x03022307u

static const char version_string[] =
    "cldm-ptx " CLDM_VERSION_STRING " (LLVM " LLVM_VERSION_STRING ", LLVMSPIRVLib, libclc)";

static pthread_mutex_t translate_lock = PTHREAD_MUTEX_INITIALIZER;

/* SMs LLVM 15's NVPTX back end knows, with the PTX ISA version used for each: the lowest that
 * supports it, except sm_86, which gets LLVM 15's highest (7.5, as proven on newer GPUs
 * through the driver's JIT). */
static const struct {
  unsigned cc;
  const char *sm, *isa;
} sm_table[] = {
    {20, "sm_20", "3.2"}, {21, "sm_21", "3.2"}, {30, "sm_30", "3.2"}, {32, "sm_32", "4.0"},
    {35, "sm_35", "3.2"}, {37, "sm_37", "4.1"}, {50, "sm_50", "4.0"}, {52, "sm_52", "4.1"},
    {53, "sm_53", "4.2"}, {60, "sm_60", "5.0"}, {61, "sm_61", "5.0"}, {62, "sm_62", "5.0"},
    {70, "sm_70", "6.0"}, {72, "sm_72", "6.1"}, {75, "sm_75", "6.3"}, {80, "sm_80", "7.0"},
    {86, "sm_86", "7.5"},
};

static void target_for(unsigned cc_major, unsigned cc_minor, char sm[16], char isa[16]) {
  unsigned cc = cc_major > 100 ? 1000 : cc_major * 10 + (cc_minor > 9 ? 9 : cc_minor);
  size_t pick = 0;
  for (size_t i = 0; i < sizeof sm_table / sizeof sm_table[0]; i++)
    if (sm_table[i].cc <= cc)
      pick = i;
  snprintf(sm, 16, "%s", sm_table[pick].sm);
  snprintf(isa, 16, "%s", sm_table[pick].isa);
}

/* 1 if the build options contain -cl-opt-disable as a word. */
static int opt_disabled(const char *options) {
  static const char flag[] = "-cl-opt-disable";
  for (const char *p = options ? options : ""; (p = strstr(p, flag)); p += sizeof flag - 1) {
    int start = p == options || isspace((unsigned char)p[-1]);
    char end = p[sizeof flag - 1];
    if (start && (end == '\0' || isspace((unsigned char)end)))
      return 1;
  }
  return 0;
}

static uint8_t overrides_digest[32];
static pthread_once_t digest_once = PTHREAD_ONCE_INIT;
static void digest_overrides(void) {
  size_t n;
  const unsigned char *b = cldm_ptx_overrides_bitcode(&n);
  cldm_sha256 s;
  cldm_sha256_init(&s);
  cldm_sha256_update(&s, b, n);
  b = cldm_ptx_allocator_bitcode(&n); /* linked into some modules: part of every key */
  cldm_sha256_update(&s, b, n);
  cldm_sha256_final(&s, overrides_digest);
}

/* Registers per thread of kernels that allocate (ptx_codegen.c, cap_registers):
 * CLDM_PTX_MAXNREG if set (0: no cap), else CLDM_PTX_MAXNREG_DEFAULT. */
static unsigned allocator_maxnreg(void) {
  const char *e = getenv("CLDM_PTX_MAXNREG");
  if (!e || !*e)
    return CLDM_PTX_MAXNREG_DEFAULT;
  char *end;
  unsigned long v = strtoul(e, &end, 10);
  return *end || v > 255 ? CLDM_PTX_MAXNREG_DEFAULT : (unsigned)v;
}

static void make_key(cldm_ptx_key *key, uint32_t *const *words, const size_t *num_words, size_t n,
                     const char *libclc_identity, const char *sm, const char *isa, int optimize,
                     unsigned maxnreg) {
  pthread_once(&digest_once, digest_overrides);
  cldm_sha256 s;
  cldm_sha256_init(&s);
  char regs[16] = "";
  if (maxnreg)
    snprintf(regs, sizeof regs, "maxnreg %u", maxnreg);
  const char *parts[] = {"cldm-ptx cache key 1",
                         version_string,
                         libclc_identity,
                         sm,
                         isa,
                         optimize ? "O2" : "O0",
                         regs};
  for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++)
    cldm_sha256_update(&s, parts[i], strlen(parts[i]) + 1);
  cldm_sha256_update(&s, overrides_digest, sizeof overrides_digest);
  if (n > 1) { /* a link: every module, each with its length (one module keeps its old key) */
    uint64_t count = n;
    cldm_sha256_update(&s, "linked", 7);
    cldm_sha256_update(&s, &count, sizeof count);
  }
  for (size_t m = 0; m < n; m++) {
    if (n > 1) {
      uint64_t len = num_words[m];
      cldm_sha256_update(&s, &len, sizeof len);
    }
    cldm_sha256_update(&s, words[m], num_words[m] * 4);
  }
  cldm_sha256_final(&s, key->b);
}

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

/* One input module into host byte order (malloc'd copy in *out). */
static cldm_ptx_status load_words(const void *spirv, size_t size, size_t index, size_t n,
                                  uint32_t **out, size_t *num_words, cldm_ptx_log *log) {
  char which[64] = "";
  if (n > 1)
    snprintf(which, sizeof which, " (module %zu of %zu)", index + 1, n);
  *out = NULL;
  if (!spirv) {
    cldm_ptx_log_printf(log, "invalid arguments: module%s is NULL\n", which);
    return CLDM_PTX_E_INVALID_ARG;
  }
  if (size < 20 || size % 4) {
    cldm_ptx_log_printf(log,
                        "malformed SPIR-V%s: %zu bytes (a module is a whole number of "
                        "32-bit words, at least the 5-word header)\n",
                        which, size);
    return CLDM_PTX_E_MALFORMED;
  }
  size_t nw = size / 4;
  uint32_t *words = malloc(size);
  if (!words)
    return CLDM_PTX_E_NOMEM;
  memcpy(words, spirv, size);
  if (words[0] == SPIRV_MAGIC_SWAPPED) {
    for (size_t i = 0; i < nw; i++)
      words[i] = __builtin_bswap32(words[i]);
  } else if (words[0] != SPIRV_MAGIC) {
    cldm_ptx_log_printf(log, "malformed SPIR-V%s: magic number 0x%08x\n", which, words[0]);
    free(words);
    return CLDM_PTX_E_MALFORMED;
  }
  *out = words;
  *num_words = nw;
  return CLDM_PTX_OK;
}

/* Translates `n` modules linked together (one for translate). */
static cldm_ptx_status translate_modules(const void *const *spirv, const size_t *sizes, size_t n,
                                         const cldm_ptx_target *target, char **ptx,
                                         size_t *ptx_size, char **log_out) {
  cldm_ptx_log log = {0};
  cldm_ptx_status st = CLDM_PTX_OK;
  uint32_t **words = NULL;
  size_t *num_words = NULL;
  if (ptx)
    *ptx = NULL;
  if (ptx_size)
    *ptx_size = 0;
  if (log_out)
    *log_out = NULL;
  if (!spirv || !sizes || !n || !target || !ptx || !ptx_size) {
    cldm_ptx_log_printf(&log, "invalid arguments: spirv, target, ptx and ptx_size must not "
                              "be NULL, and there must be a module\n");
    st = CLDM_PTX_E_INVALID_ARG;
    goto done;
  }
  words = calloc(n, sizeof *words);
  num_words = calloc(n, sizeof *num_words);
  if (!words || !num_words) {
    st = CLDM_PTX_E_NOMEM;
    goto done;
  }
  for (size_t m = 0; m < n && !st; m++)
    st = load_words(spirv[m], sizes[m], m, n, &words[m], &num_words[m], &log);
  if (st)
    goto done;

  char sm[16], isa[16], libclc_id[4200];
  target_for(target->cc_major, target->cc_minor, sm, isa);
  int optimize = !opt_disabled(target->options);
  cldm_ptx_log_printf(&log, "cldm-ptx: %s, PTX ISA %s (compute capability %u.%u), %s\n", sm, isa,
                      target->cc_major, target->cc_minor,
                      optimize ? "optimised (O2)" : "not optimised (-cl-opt-disable)");
  if (n > 1)
    cldm_ptx_log_printf(&log, "cldm-ptx: %zu modules linked\n", n);
  st = cldm_ptx_libclc_identity(libclc_id, sizeof libclc_id, &log);
  if (st)
    goto done;
  cldm_ptx_key key;
  unsigned maxnreg = allocator_maxnreg();
  make_key(&key, words, num_words, n, libclc_id, sm, isa, optimize, maxnreg);
  const char *from;
  if (cldm_ptx_cache_get(&key, ptx, ptx_size, &from)) {
    cldm_ptx_log_printf(&log, "cldm-ptx: cached translation (%s)\n", from);
    goto done;
  }
  cldm_ptx_cache_count_miss();
  for (size_t m = 0; m < n && !st; m++) {
    st = cldm_ptx_check_spirv(words[m], num_words[m], &log);
    uint32_t *fixed = NULL;
    size_t nfixed;
    if (!st)
      st = cldm_ptx_fix_spirv(words[m], num_words[m], &fixed, &nfixed, &log);
    if (!st && fixed) {
      free(words[m]);
      words[m] = fixed;
      num_words[m] = nfixed;
    }
  }
  if (st)
    goto done;
  double t0 = now_ms();
  pthread_mutex_lock(&translate_lock);
  cldm_ptx_codegen_opts o = {sm, isa, optimize, NULL, 0, maxnreg};
  st = cldm_ptx_libclc_load(&o.libclc, &o.libclc_size, NULL, 0, &log);
  if (!st)
    st = cldm_ptx_codegen((const uint32_t *const *)words, num_words, n, &o, ptx, ptx_size, &log);
  pthread_mutex_unlock(&translate_lock);
  if (!st) {
    cldm_ptx_log_printf(&log, "cldm-ptx: translated in %.0f ms, %zu bytes of PTX\n", now_ms() - t0,
                        *ptx_size);
    cldm_ptx_cache_put(&key, *ptx, *ptx_size, &log);
  }
done:
  for (size_t m = 0; words && m < n; m++)
    free(words[m]);
  free(words);
  free(num_words);
  if (st && ptx && *ptx) {
    free(*ptx);
    *ptx = NULL;
    *ptx_size = 0;
  }
  if (st == CLDM_PTX_E_NOMEM)
    cldm_ptx_log_printf(&log, "out of memory\n");
  if (log.oom)
    cldm_ptx_log_printf(&log, "(log truncated)\n");
  if (log_out)
    *log_out = cldm_ptx_log_take(&log);
  else
    cldm_ptx_log_free(&log);
  return st;
}

static cldm_ptx_status translate(const void *spirv, size_t size, const cldm_ptx_target *target,
                                 char **ptx, size_t *ptx_size, char **log_out) {
  return translate_modules(&spirv, &size, 1, target, ptx, ptx_size, log_out);
}

static void free_result(void *p) { free(p); }

static const char *status_name(cldm_ptx_status s) {
  switch (s) {
  case CLDM_PTX_OK:
    return "CLDM_PTX_OK";
  case CLDM_PTX_E_INVALID_ARG:
    return "CLDM_PTX_E_INVALID_ARG";
  case CLDM_PTX_E_MALFORMED:
    return "CLDM_PTX_E_MALFORMED";
  case CLDM_PTX_E_UNSUPPORTED:
    return "CLDM_PTX_E_UNSUPPORTED";
  case CLDM_PTX_E_TRANSLATE:
    return "CLDM_PTX_E_TRANSLATE";
  case CLDM_PTX_E_LINK:
    return "CLDM_PTX_E_LINK";
  case CLDM_PTX_E_LIBCLC:
    return "CLDM_PTX_E_LIBCLC";
  case CLDM_PTX_E_CODEGEN:
    return "CLDM_PTX_E_CODEGEN";
  case CLDM_PTX_E_NOMEM:
    return "CLDM_PTX_E_NOMEM";
  }
  return "CLDM_PTX_E_UNKNOWN";
}

static const cldm_ptx_api api = {
    .api_version = CLDM_PTX_API_VERSION,
    .size = sizeof(cldm_ptx_api),
    .version_string = version_string,
    .translate = translate,
    .free_result = free_result,
    .status_name = status_name,
    .target_for = target_for,
    .cache_stats = cldm_ptx_cache_stats_get,
    .cache_clear = cldm_ptx_cache_clear_all,
    .translate_linked = translate_modules,
};

__attribute__((visibility("default"))) const cldm_ptx_api *cldm_ptx_get_api(uint32_t version) {
  return version == CLDM_PTX_API_VERSION ? &api : NULL;
}
