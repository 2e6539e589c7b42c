/*
 * ptx_mangle.c — built-in function names from SPIR address-space mangling to NVPTX's.
 *
 * LLVMSPIRVLib names OpenCL built-ins the way clang mangles them for SPIR, where the vendor
 * qualifier U3AS<n> carries the SPIR number: 1 global, 2 constant, 3 local, 4 generic, none
 * for private. libclc's nvptx64--nvidiacl.bc was compiled for NVPTX, so its names carry NVPTX
 * numbers: 1 global, 3 local, 4 constant, none for generic (and private). Clang adds an address-
 * space-qualified type to the substitution table even when it prints no qualifier (compare
 * `_Z1gDv2_fPS_S1_S_` for g(float2, float2 *, float2 *, float2)), so dropping or renumbering
 * the qualifier text keeps every S<n>_ reference valid.
 *
 * The walk copies the name token by token, so that digits and letters inside source names
 * (`9ocl_event`, struct names) are never mistaken for qualifiers. Anything it does not
 * understand (template arguments with literals, ...) leaves the name unchanged.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "ptx_internal.h"

typedef struct out {
  char *s;
  size_t len, cap;
} out;

static int put(out *o, const char *p, size_t n) {
  if (o->len + n + 1 > o->cap) {
    size_t cap = (o->len + n + 1) * 2;
    char *s = realloc(o->s, cap);
    if (!s)
      return -1;
    o->s = s;
    o->cap = cap;
  }
  memcpy(o->s + o->len, p, n);
  o->len += n;
  o->s[o->len] = '\0';
  return 0;
}

/* Parses a decimal length at *p; returns -1 if none or absurd. */
static long number(const char **p) {
  if (!isdigit((unsigned char)**p))
    return -1;
  long n = 0;
  while (isdigit((unsigned char)**p)) {
    n = n * 10 + (**p - '0');
    if (n > 4096)
      return -1;
    (*p)++;
  }
  return n;
}

char *cldm_ptx_mangle_nvptx(const char *name) {
  if (!name || strncmp(name, "_Z", 2) != 0)
    return NULL;
  out o = {0};
  int changed = 0;
  const char *p = name + 2;
  if (put(&o, name, 2))
    goto fail;
  while (*p) {
    const char *start = p;
    if (isdigit((unsigned char)*p)) { /* <source-name> ::= <length> <identifier> */
      long n = number(&p);
      if (n < 0 || (long)strnlen(p, (size_t)n) < n)
        goto fail;
      p += n;
    } else if (*p == 'U') { /* vendor qualifier U<length><identifier> */
      p++;
      long n = number(&p);
      if (n < 0 || (long)strnlen(p, (size_t)n) < n)
        goto fail;
      if (n == 3 && !strncmp(p, "AS4", 3)) { /* SPIR generic -> NVPTX generic (unprinted) */
        p += 3;
        changed = 1;
        continue;
      }
      if (n == 3 && !strncmp(p, "AS2", 3)) { /* SPIR constant -> NVPTX constant */
        if (put(&o, "U3AS4", 5))
          goto fail;
        p += 3;
        changed = 1;
        continue;
      }
      p += n;
    } else if (*p == 'D' && p[1] == 'v') { /* vector: Dv<n>_ */
      p += 2;
      if (number(&p) < 0 || *p != '_')
        goto fail;
      p++;
    } else if (*p == 'D' && p[1]) { /* Dh, Da, Dn, ... */
      p += 2;
    } else if (*p == 'S' || *p == 'T') { /* S_, S<seq>_, T_, St, Sa, ... */
      p++;
      if (*p == '_' || isdigit((unsigned char)*p) || isupper((unsigned char)*p)) {
        while (*p && *p != '_')
          p++;
        if (*p != '_')
          goto fail;
        p++;
      } else if (start[0] == 'S' && *p && islower((unsigned char)*p)) {
        p++;
      } else {
        goto fail;
      }
    } else if (*p == 'L' || *p == 'X' || *p == 'J') { /* literals, expressions: not ours */
      goto fail;
    } else {
      p++;
    }
    if (put(&o, start, (size_t)(p - start)))
      goto fail;
  }
  if (!changed)
    goto fail;
  return o.s;
fail:
  free(o.s);
  return NULL;
}
