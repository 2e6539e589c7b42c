/*
 * callee.c — the names spec 2.2 reserves for Import-linkage functions, and what a call of each
 * means: C's malloc, free, calloc, realloc and aligned_alloc (the instructions of spec 2.1, with
 * their operands in order), and C++'s global operator new and delete as clang mangles them
 * (Itanium ABI) for HIP device code and C++ for OpenCL:
 *
 *   _Z nw|na  <size> [St11align_val_t] [<nothrow>]          operator new / new[]
 *   _Z dl|da  <ptr> [<size>] [St11align_val_t] [<nothrow>]  operator delete / delete[]
 *     <size>    m (64-bit size_t) or j (32-bit)
 *     <ptr>     Pv, or PU3AS1v / PU3AS4v (C++ for OpenCL: a global or generic void *)
 *     <nothrow> RKSt9nothrow_t, or RU3AS<n>KSt9nothrow_t (a reference, in any address space)
 *
 * new is malloc(size), or with an alignment aligned_alloc(align, size) (note the order: C++
 * passes the size first); delete is free(ptr), its size and alignment unused. A new without
 * std::nothrow_t is a throwing new: clang marks its result nonnull, so a NULL it returned would
 * be used; the lowering stops the work-item instead (spec 2.2). Any other name, such as the
 * placement forms (_ZnwmPv), is not an allocation function.
 */
#include <string.h>

#include "internal.h"

/* Consumes `token` at *p: 1 if it was there. */
static int eat(const char **p, const char *token) {
  size_t n = strlen(token);
  if (strncmp(*p, token, n))
    return 0;
  *p += n;
  return 1;
}

/* Consumes "U3AS<digit>" at *p; *space gets the digit's value. */
static int eat_space(const char **p, unsigned *space) {
  if (strncmp(*p, "U3AS", 4) || (*p)[4] < '0' || (*p)[4] > '9')
    return 0;
  *space = (unsigned)((*p)[4] - '0');
  *p += 5;
  return 1;
}

static int eat_size(const char **p) { return eat(p, "m") || eat(p, "j"); }

static int eat_ptr(const char **p) {
  unsigned space = 0;
  const char *s = *p;
  if (eat(&s, "Pv") ||
      (eat(&s, "P") && eat_space(&s, &space) && (space == 1 || space == 4) && eat(&s, "v"))) {
    *p = s;
    return 1;
  }
  return 0;
}

static int eat_nothrow(const char **p) {
  unsigned space;
  const char *s = *p;
  if (!eat(&s, "R"))
    return 0;
  eat_space(&s, &space);
  if (!eat(&s, "KSt9nothrow_t"))
    return 0;
  *p = s;
  return 1;
}

/* Parameter `role` for the next parameter of c. */
static void param(cldm_spirv_callee *c, unsigned role) { c->role[c->nparams++] = (uint8_t)role; }

static int cxx_operator(const char *name, cldm_spirv_callee *c) {
  const char *p = name;
  int is_new = eat(&p, "_Znw") || eat(&p, "_Zna");
  if (!is_new && !eat(&p, "_Zdl") && !eat(&p, "_Zda"))
    return 0;
  memset(c, 0, sizeof *c);
  c->cxx = 1;
  if (is_new) {
    if (!eat_size(&p))
      return 0;
    param(c, CLDM_SPIRV_EXT_ROLE_INT);
    c->op = CLDM_SPIRV_EXT_MALLOC;
    c->arg[0] = 0;
    if (eat(&p, "St11align_val_t")) { /* aligned_alloc(align, size) from new(size, align) */
      param(c, CLDM_SPIRV_EXT_ROLE_INT);
      c->op = CLDM_SPIRV_EXT_ALIGNED_ALLOC;
      c->arg[0] = 1;
      c->arg[1] = 0;
    }
    c->throws = 1;
    if (eat_nothrow(&p)) {
      param(c, CLDM_SPIRV_CALLEE_ROLE_TAG);
      c->throws = 0;
    }
  } else {
    if (!eat_ptr(&p))
      return 0;
    param(c, CLDM_SPIRV_EXT_ROLE_PTR);
    c->op = CLDM_SPIRV_EXT_FREE;
    c->arg[0] = 0;
    if (eat_size(&p))
      param(c, CLDM_SPIRV_EXT_ROLE_INT);
    if (eat(&p, "St11align_val_t"))
      param(c, CLDM_SPIRV_EXT_ROLE_INT);
    if (eat_nothrow(&p))
      param(c, CLDM_SPIRV_CALLEE_ROLE_TAG);
  }
  return *p == '\0';
}

int cldm_spirv_callee_of(const char *name, cldm_spirv_callee *c) {
  for (unsigned op = 1; op <= CLDM_SPIRV_EXT_MAX; op++) {
    if (!cldm_spirv_ext_names[op] || strcmp(name, cldm_spirv_ext_names[op]))
      continue;
    memset(c, 0, sizeof *c);
    c->op = (uint8_t)op;
    c->nparams = cldm_spirv_ext_noperands[op];
    for (unsigned i = 0; i < c->nparams; i++) {
      c->role[i] = cldm_spirv_ext_roles[op][i];
      c->arg[i] = (uint8_t)i;
    }
    return 1;
  }
  return cxx_operator(name, c);
}
