/*
 * ptx_libclc.c — where libclc's NVPTX library (nvptx64--nvidiacl.bc, Debian package libclc-15)
 * is, in this order:
 *   1. $CLDM_LIBCLC_DIR (if set, the file must be there: no silent fallback);
 *   2. next to libcldm-ptx.so (found with dladdr), then ../share/clc relative to it: the
 *      layout of a self-contained bundle (tools/nvidia/pack.sh);
 *   3. the directory compiled in (CLDM_PTX_LIBCLC_DEFAULT_DIR, Debian's /usr/lib/clc).
 * The file's bytes are kept for the process and re-read when its size or time changes.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "ptx_internal.h"

#ifndef CLDM_PTX_LIBCLC_DEFAULT_DIR
#define CLDM_PTX_LIBCLC_DEFAULT_DIR "/usr/lib/clc"
#endif
#define LIBCLC_FILE "nvptx64--nvidiacl.bc"

static struct {
  char path[4096];
  off_t size;
  long long mtime_ns;
  void *data;
} loaded;

static int exists(const char *path, struct stat *st) {
  return stat(path, st) == 0 && S_ISREG(st->st_mode);
}

static cldm_ptx_status locate(char *path, size_t size, struct stat *st, cldm_ptx_log *log) {
  const char *env = getenv("CLDM_LIBCLC_DIR");
  if (env && *env) {
    snprintf(path, size, "%s/%s", env, LIBCLC_FILE);
    if (exists(path, st))
      return CLDM_PTX_OK;
    cldm_ptx_log_printf(log, "libclc: %s not found (CLDM_LIBCLC_DIR=%s)\n", path, env);
    return CLDM_PTX_E_LIBCLC;
  }
  Dl_info info;
  if (dladdr((void *)&cldm_ptx_libclc_load, &info) && info.dli_fname) {
    char so[4096];
    snprintf(so, sizeof so, "%s", info.dli_fname);
    const char *dir = dirname(so);
    static const char *const rel[] = {"", "/../share/clc"};
    for (int i = 0; i < 2; i++) {
      snprintf(path, size, "%s%s/%s", dir, rel[i], LIBCLC_FILE);
      if (exists(path, st))
        return CLDM_PTX_OK;
    }
  }
  snprintf(path, size, "%s/%s", CLDM_PTX_LIBCLC_DEFAULT_DIR, LIBCLC_FILE);
  if (exists(path, st))
    return CLDM_PTX_OK;
  cldm_ptx_log_printf(log,
                      "libclc: %s not found next to libcldm-ptx.so nor in %s (install "
                      "libclc-15 or set CLDM_LIBCLC_DIR)\n",
                      LIBCLC_FILE, CLDM_PTX_LIBCLC_DEFAULT_DIR);
  return CLDM_PTX_E_LIBCLC;
}

static long long mtime_ns(const struct stat *st) {
  return (long long)st->st_mtim.tv_sec * 1000000000LL + st->st_mtim.tv_nsec;
}

cldm_ptx_status cldm_ptx_libclc_identity(char *identity, size_t identity_size, cldm_ptx_log *log) {
  char path[4096];
  struct stat st;
  cldm_ptx_status s = locate(path, sizeof path, &st, log);
  if (!s)
    snprintf(identity, identity_size, "%s:%lld:%lld", path, (long long)st.st_size, mtime_ns(&st));
  return s;
}

cldm_ptx_status cldm_ptx_libclc_load(const void **data, size_t *size, char *identity,
                                     size_t identity_size, cldm_ptx_log *log) {
  char path[4096];
  struct stat st;
  cldm_ptx_status s = locate(path, sizeof path, &st, log);
  if (s)
    return s;
  if (identity)
    snprintf(identity, identity_size, "%s:%lld:%lld", path, (long long)st.st_size, mtime_ns(&st));
  if (loaded.data && !strcmp(loaded.path, path) && loaded.size == st.st_size &&
      loaded.mtime_ns == mtime_ns(&st)) {
    *data = loaded.data;
    *size = (size_t)loaded.size;
    return CLDM_PTX_OK;
  }
  FILE *f = fopen(path, "rb");
  void *buf = st.st_size > 0 ? malloc((size_t)st.st_size) : NULL;
  size_t got = f && buf ? fread(buf, 1, (size_t)st.st_size, f) : 0;
  int e = errno;
  if (f)
    fclose(f);
  if (!buf || got != (size_t)st.st_size) {
    cldm_ptx_status why = st.st_size > 0 && !buf ? CLDM_PTX_E_NOMEM : CLDM_PTX_E_LIBCLC;
    cldm_ptx_log_printf(log, "libclc: cannot read %s: %s\n", path,
                        st.st_size <= 0           ? "empty file"
                        : why == CLDM_PTX_E_NOMEM ? "out of memory"
                                                  : strerror(e));
    free(buf);
    return why;
  }
  free(loaded.data);
  snprintf(loaded.path, sizeof loaded.path, "%s", path);
  loaded.size = st.st_size;
  loaded.mtime_ns = mtime_ns(&st);
  loaded.data = buf;
  *data = buf;
  *size = (size_t)st.st_size;
  return CLDM_PTX_OK;
}
