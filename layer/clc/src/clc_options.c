/*
 * clc_options.c — what the front end is given: the application's build options filtered to
 * those opencl-clang honours and survives, and the library's own extra options.
 *
 * opencl-clang (15) parses the options with its own table; options of that table it does not
 * expect are dangerous: `-x <lang>` other than spir and `-triple` trip assertions that abort
 * the process, and options the table does not know are silently dropped. So only options known
 * to change the module and to be safe are passed, as written; the driver sees the application's
 * options again when it builds the module (and rejects the ones it does not know, as it would
 * for a source program). Debug information (-g) is left out too: LLVMSPIRVLib 15 cannot put it
 * into SPIR-V 1.0 (it asserts).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clc_internal.h"

/* Options passed when they appear exactly so. */
static const char *const cldm_clc_flags[] = {
    "-w",
    "-Werror",
    "-cl-single-precision-constant",
    "-cl-denorms-are-zero",
    "-cl-fp32-correctly-rounded-divide-sqrt",
    "-cl-opt-disable",
    "-cl-mad-enable",
    "-cl-no-signed-zeros",
    "-cl-unsafe-math-optimizations",
    "-cl-finite-math-only",
    "-cl-fast-relaxed-math",
    "-cl-uniform-work-group-size",
    "-cl-no-subgroup-ifp",
    "-cl-std=CL1.1",
    "-cl-std=CL1.2",
    "-cl-std=CL2.0",
    "-cl-std=CL3.0",
    "-cl-std=CLC++",
    "-cl-std=CLC++1.0",
    "-cl-std=CLC++2021",
};

/* Options whose argument is the next word when not joined to them. */
static const char *const cldm_clc_separate[] = {"-D", "-I", "-x", "-triple", "-target-triple",
                                                "-s"};

/* Reads the next word of *p (blanks separate words, double quotes group), returning its start
 * and length; 0 at the end. */
static size_t cldm_clc_word(const char **p, const char **start) {
  const char *s = *p;
  while (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r')
    s++;
  *start = s;
  int quoted = 0;
  while (*s && (quoted || (*s != ' ' && *s != '\t' && *s != '\n' && *s != '\r'))) {
    if (*s == '"')
      quoted = !quoted;
    s++;
  }
  *p = s;
  return (size_t)(s - *start);
}

static int cldm_clc_is(const char *w, size_t n, const char *opt) {
  return strlen(opt) == n && !strncmp(w, opt, n);
}

static void cldm_clc_append(char **o, const char *w, size_t n, int first) {
  if (!first)
    *(*o)++ = ' ';
  memcpy(*o, w, n);
  *o += n;
}

char *cldm_clc_filter_options(const char *options, int *opt_disable) {
  const char *p = options ? options : "";
  char *out = malloc(strlen(p) + 1), *o = out;
  if (!out)
    return NULL;
  *opt_disable = 0;
  const char *w;
  size_t n;
  while ((n = cldm_clc_word(&p, &w)) != 0) {
    int separate = 0;
    for (size_t i = 0; i < sizeof(cldm_clc_separate) / sizeof(cldm_clc_separate[0]); i++)
      separate |= cldm_clc_is(w, n, cldm_clc_separate[i]);
    if (separate) { /* the option and its argument, kept for -D and -I only */
      const char *arg;
      size_t an = cldm_clc_word(&p, &arg);
      if (an && (cldm_clc_is(w, n, "-D") || cldm_clc_is(w, n, "-I"))) {
        cldm_clc_append(&o, w, n, o == out);
        cldm_clc_append(&o, arg, an, 0);
      }
      continue;
    }
    int keep = n > 2 && (!strncmp(w, "-D", 2) || !strncmp(w, "-I", 2));
    for (size_t i = 0; !keep && i < sizeof(cldm_clc_flags) / sizeof(cldm_clc_flags[0]); i++)
      keep = cldm_clc_is(w, n, cldm_clc_flags[i]);
    if (keep) {
      *opt_disable |= cldm_clc_is(w, n, "-cl-opt-disable");
      cldm_clc_append(&o, w, n, o == out);
    }
  }
  *o = '\0';
  return out;
}

/* 1 if `name` (n bytes) is an OpenCL C 3.0 feature name (__opencl_c_...). */
static int cldm_clc_is_feature(const char *name, size_t n) {
  return n > 11 && !strncmp(name, "__opencl_c_", 11);
}

int cldm_clc_options_std(const char *filtered) {
  int std = 120;
  const char *p = filtered ? filtered : "", *w;
  size_t n;
  while ((n = cldm_clc_word(&p, &w)) != 0) {
    if (cldm_clc_is(w, n, "-cl-std=CL1.1"))
      std = 110;
    else if (cldm_clc_is(w, n, "-cl-std=CL1.2"))
      std = 120;
    else if (cldm_clc_is(w, n, "-cl-std=CL2.0") || cldm_clc_is(w, n, "-cl-std=CLC++") ||
             cldm_clc_is(w, n, "-cl-std=CLC++1.0"))
      std = 200;
    else if (cldm_clc_is(w, n, "-cl-std=CL3.0") || cldm_clc_is(w, n, "-cl-std=CLC++2021"))
      std = 300;
  }
  return std;
}

int cldm_clc_options_cxx(const char *filtered) {
  int cxx = 0;
  const char *p = filtered ? filtered : "", *w;
  size_t n;
  while ((n = cldm_clc_word(&p, &w)) != 0)
    if (n > 8 && !strncmp(w, "-cl-std=", 8))
      cxx = n > 11 && !strncmp(w + 8, "CLC++", 5);
  return cxx;
}

char *cldm_clc_extra_options(const char *extensions, int opencl_c_std, const char *include_dir,
                             const char *header_name) {
  const char *list = extensions ? extensions : "";
  size_t cap = strlen(list) * 3 + strlen(include_dir) + strlen(header_name) + 256;
  char *out = malloc(cap);
  if (!out)
    return NULL;
  int n = snprintf(out, cap,
                   "-no-opaque-pointers -fno-builtin -D cl_ext_device_malloc=1 -I%s -include %s",
                   include_dir, header_name);
  size_t len = n > 0 ? (size_t)n : 0;
  int first = 1;
  for (const char *p = list; *p;) {
    while (*p == ' ')
      p++;
    size_t wn = strcspn(p, " ");
    int ok = wn > 0 && (opencl_c_std >= 300 || !cldm_clc_is_feature(p, wn));
    for (size_t i = 0; i < wn && ok; i++) {
      char c = p[i];
      ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
    }
    if (ok && len + wn + 16 < cap) {
      len +=
          (size_t)snprintf(out + len, cap - len, "%s+%.*s", first ? " -cl-ext=" : ",", (int)wn, p);
      first = 0;
    }
    p += wn;
  }
  /* OpenCL C 3.0 features are also defined as macros: opencl-clang undefines the optional
   * features opencl-c-base.h turns on unless they are given as -D__opencl_c_<feature>. */
  for (const char *p = opencl_c_std >= 300 ? list : ""; *p;) {
    while (*p == ' ')
      p++;
    size_t wn = strcspn(p, " ");
    int ok = cldm_clc_is_feature(p, wn);
    for (size_t i = 0; i < wn && ok; i++) {
      char c = p[i];
      ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
    }
    if (ok && len + wn + 16 < cap)
      len += (size_t)snprintf(out + len, cap - len, " -D%.*s", (int)wn, p);
    p += wn;
  }
  return out;
}
