/*
 * detect.c — finds what spec 2 defines in a module and checks it:
 *   phase A (cldm_spirv_detect_uses): OpExtInstImport "SPV_EXT_device_malloc" (spec 2.1),
 *     OpExtension of the same name, and functions declared with LinkageAttributes Import named
 *     malloc/free/calloc/realloc/aligned_alloc or C++'s operator new and delete (spec 2.2,
 *     callee.c), whose signatures are checked;
 *   phase B (cldm_spirv_detect_sites): every OpExtInst of the set and every call of such a
 *     declaration, with instruction number, operand count and operand/result types checked
 *     against the table of spec 2.1 (for C++'s operators: against their parameters).
 * A function of one of these names that the module defines is the module's own: only
 * declarations (no body) with Import linkage are allocation functions.
 * Names and numbers come from spec/extinst.spv-ext-device-malloc.grammar.json (generated
 * cldm_spirv_ext_malloc.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

int cldm_spirv_linkage(const cldm_spirv_module *m, uint32_t ii, uint32_t *target, uint32_t *type,
                       char *name, size_t cap) {
  const uint32_t *w = cldm_spirv_iw(m, ii);
  uint32_t wc = m->inst[ii].wc;
  if (m->inst[ii].op != SpvOpDecorate || wc < 5 || w[2] != SpvDecorationLinkageAttributes)
    return 0;
  size_t words = cldm_spirv_string_len(w + 3, wc - 3);
  if (words == SIZE_MAX || 3 + words / 4 + 1 >= wc)
    return 0;
  words = words / 4 + 1;
  *target = w[1];
  *type = w[3 + words];
  if (name)
    cldm_spirv_string(w + 3, wc - 3, name, cap);
  return 1;
}

static int is_int(const cldm_spirv_module *m, uint32_t type) {
  uint32_t width = cldm_spirv_int_width(m, type);
  return width == 32 || width == 64;
}

static int is_heap_ptr(const cldm_spirv_module *m, uint32_t type) {
  uint32_t storage;
  return cldm_spirv_pointer(m, type, &storage, NULL) &&
         (storage == SpvStorageClassCrossWorkgroup || storage == SpvStorageClassGeneric);
}

static int type_ok(const cldm_spirv_module *m, uint32_t type, unsigned role) {
  if (role == CLDM_SPIRV_CALLEE_ROLE_TAG)
    return cldm_spirv_pointer(m, type, NULL, NULL);
  return role == CLDM_SPIRV_EXT_ROLE_PTR ? is_heap_ptr(m, type) : is_int(m, type);
}

static const char *role_text(unsigned role) {
  return role == CLDM_SPIRV_CALLEE_ROLE_TAG ? "a pointer"
         : role == CLDM_SPIRV_EXT_ROLE_PTR  ? "a CrossWorkgroup or Generic pointer"
                                            : "a 32- or 64-bit integer";
}

const char *cldm_spirv_linkage_name(const cldm_spirv_module *m, uint32_t f, char *dst, size_t cap) {
  dst[0] = '\0';
  for (uint32_t ii = m->sec[CLDM_SPIRV_SEC_ANNOTATION]; ii < m->sec[CLDM_SPIRV_SEC_GLOBAL]; ii++) {
    uint32_t target, type;
    if (cldm_spirv_linkage(m, ii, &target, &type, dst, cap) && target == m->fn[f].id)
      return dst;
  }
  dst[0] = '\0';
  return dst;
}

static cldm_spirv_status check_result(const cldm_spirv_module *m, unsigned op, uint32_t type,
                                      size_t word, const char *what, cldm_spirv_error *err) {
  if (cldm_spirv_ext_returns_void[op]) {
    if (cldm_spirv_def_op(m, type) != SpvOpTypeVoid)
      return cldm_spirv_fail(err, CLDM_SPIRV_E_INVALID, word,
                             "%s: result type %%%u is not OpTypeVoid (spec 2.1)", what, type);
  } else if (!is_heap_ptr(m, type)) {
    return cldm_spirv_fail(err, CLDM_SPIRV_E_INVALID, word,
                           "%s: result type %%%u is not a CrossWorkgroup or Generic pointer "
                           "(spec 2.1)",
                           what, type);
  }
  return CLDM_SPIRV_OK;
}

/* spec 2.2: the declaration's parameters and result follow spec 2.1's table (C++'s operators:
 * their own parameters, callee.c). */
static cldm_spirv_status check_declaration(const cldm_spirv_module *m, uint32_t f,
                                           const cldm_spirv_callee *c, const char *name,
                                           cldm_spirv_error *err) {
  const cldm_spirv_function *fn = &m->fn[f];
  size_t word = m->inst[fn->begin].off;
  char what[128];
  snprintf(what, sizeof what, "Import-linkage function \"%s\" (%%%u)", name, fn->id);
  if (fn->body)
    return cldm_spirv_fail(err, CLDM_SPIRV_E_INVALID, word,
                           "%s has a body; Import-linkage functions are declarations (spec 2.2)",
                           what);
  if (fn->nparams != c->nparams)
    return cldm_spirv_fail(err, CLDM_SPIRV_E_INVALID, word,
                           "%s has %u parameters, spec 2.2 requires %u", what, fn->nparams,
                           c->nparams);
  for (uint32_t i = 0; i < fn->nparams; i++) {
    const cldm_spirv_inst *p = &m->inst[fn->begin + 1 + i];
    uint32_t type = p->wc >= 3 ? m->w[p->off + 1] : 0;
    unsigned role = c->role[i];
    if (!type_ok(m, type, role)) {
      char operand[32] = "";
      if (!c->cxx)
        snprintf(operand, sizeof operand, " (%s)", cldm_spirv_ext_operand_names[c->op][i]);
      return cldm_spirv_fail(err, CLDM_SPIRV_E_INVALID, p->off,
                             "%s: parameter %u%s has type %%%u, not %s (spec 2.2)", what, i + 1,
                             operand, type, role_text(role));
    }
  }
  return check_result(m, c->op, fn->result_type, word, what, err);
}

static int has_capability(const cldm_spirv_module *m, uint32_t cap) {
  for (uint32_t ii = m->sec[CLDM_SPIRV_SEC_CAPABILITY]; ii < m->sec[CLDM_SPIRV_SEC_EXTENSION]; ii++)
    if (m->inst[ii].wc >= 2 && cldm_spirv_iw(m, ii)[1] == cap)
      return 1;
  return 0;
}

cldm_spirv_status cldm_spirv_detect_module_rules(const cldm_spirv_module *m,
                                                 cldm_spirv_error *err) {
  if (!has_capability(m, SpvCapabilityKernel))
    return cldm_spirv_fail(err, CLDM_SPIRV_E_UNSUPPORTED, CLDM_SPIRV_HEADER_WORDS,
                           "module uses " CLDM_SPIRV_EXT_MALLOC_SET_NAME
                           " without the Kernel capability (spec 2.1)");
  if (m->addressing != SpvAddressingModelPhysical32 &&
      m->addressing != SpvAddressingModelPhysical64)
    return cldm_spirv_fail(
        err, CLDM_SPIRV_E_UNSUPPORTED, m->inst[m->sec[CLDM_SPIRV_SEC_MEMORYMODEL]].off + 1,
        "addressing model %u: spec 2.1 requires Physical32 or Physical64", m->addressing);
  return CLDM_SPIRV_OK;
}

cldm_spirv_status cldm_spirv_detect_uses(const cldm_spirv_module *m, cldm_spirv_detect *d,
                                         unsigned which, cldm_spirv_error *err) {
  memset(d, 0, sizeof *d);
  d->drop = calloc(m->bound, 1);
  d->import_op = calloc(m->nfn ? m->nfn : 1, 1);
  d->callee = calloc(m->nfn ? m->nfn : 1, sizeof *d->callee);
  if (!d->drop || !d->import_op || !d->callee)
    return cldm_spirv_fail(err, CLDM_SPIRV_E_NOMEM, 0, "out of memory");
  for (uint32_t ii = m->sec[CLDM_SPIRV_SEC_EXTENSION]; ii < m->sec[CLDM_SPIRV_SEC_EXTINSTIMPORT];
       ii++)
    if (m->inst[ii].op == SpvOpExtension &&
        cldm_spirv_string_eq(cldm_spirv_iw(m, ii) + 1, m->inst[ii].wc - 1u,
                             CLDM_SPIRV_EXT_MALLOC_SET_NAME))
      d->allocates = 1;
  for (uint32_t ii = m->sec[CLDM_SPIRV_SEC_EXTINSTIMPORT]; ii < m->sec[CLDM_SPIRV_SEC_MEMORYMODEL];
       ii++) {
    uint32_t id = cldm_spirv_iw(m, ii)[1];
    if (m->inst[ii].op == SpvOpExtInstImport && m->ids[id].aux == CLDM_SPIRV_EXTSET_DEVICE_MALLOC) {
      d->allocates = 1;
      d->forms |= CLDM_SPIRV_FORM_EXTINST;
      d->drop[id] = 1;
      if (!d->set_id)
        d->set_id = id;
    }
  }
  for (uint32_t ii = m->sec[CLDM_SPIRV_SEC_ANNOTATION]; ii < m->sec[CLDM_SPIRV_SEC_GLOBAL]; ii++) {
    uint32_t target, type;
    char name[CLDM_SPIRV_CALLEE_NAME_MAX];
    cldm_spirv_callee c;
    if (!cldm_spirv_linkage(m, ii, &target, &type, name, sizeof name) ||
        type != SpvLinkageTypeImport || !cldm_spirv_callee_of(name, &c) ||
        (c.cxx && !(which & CLDM_SPIRV_DETECT_CXX)))
      continue;
    uint32_t f = cldm_spirv_fn_index(m, target);
    if (f == CLDM_SPIRV_NONE || d->import_op[f])
      continue;
    cldm_spirv_status st = check_declaration(m, f, &c, name, err);
    if (st)
      return st;
    d->import_op[f] = c.op;
    d->callee[f] = c;
    d->drop[target] = 1;
    for (uint32_t i = 0; i < m->fn[f].nparams; i++) {
      const cldm_spirv_inst *p = &m->inst[m->fn[f].begin + 1 + i];
      if (p->wc >= 3)
        d->drop[m->w[p->off + 2]] = 1;
    }
    d->nimport_fns++;
    d->allocates = 1;
    d->forms |= c.cxx ? CLDM_SPIRV_FORM_CXX : CLDM_SPIRV_FORM_IMPORT;
  }
  return CLDM_SPIRV_OK;
}

static cldm_spirv_status add_site(cldm_spirv_detect *d, uint32_t ii, uint32_t f, unsigned op,
                                  unsigned form, int throws, size_t *cap, cldm_spirv_error *err) {
  if (d->nsites == *cap) {
    size_t n = *cap ? *cap * 2 : 16;
    cldm_spirv_site *s = realloc(d->sites, n * sizeof *s);
    if (!s)
      return cldm_spirv_fail(err, CLDM_SPIRV_E_NOMEM, 0, "out of memory");
    d->sites = s;
    *cap = n;
  }
  d->sites[d->nsites++] = (cldm_spirv_site){
      .ii = ii, .fn = f, .op = (uint8_t)op, .form = (uint8_t)form, .throws = (uint8_t)throws};
  d->nthrowing += throws != 0;
  return CLDM_SPIRV_OK;
}

/* Operand types of a site; args are the operand words (after set/number or callee), roles
 * their roles (`names`: the operands' names in spec 2.1, NULL for C++'s operators). */
static cldm_spirv_status check_args(const cldm_spirv_module *m, const uint8_t *roles,
                                    uint32_t nroles, const char *const *names, const uint32_t *args,
                                    uint32_t nargs, size_t word, const char *what,
                                    cldm_spirv_error *err) {
  if (nargs != nroles)
    return cldm_spirv_fail(err, CLDM_SPIRV_E_INVALID, word,
                           "%s: expects %u operands, has %u (spec 2.%u)", what, nroles, nargs,
                           names ? 1u : 2u);
  for (uint32_t i = 0; i < nargs; i++) {
    unsigned role = roles[i];
    uint32_t id = args[i];
    uint32_t type = id && id < m->bound ? m->ids[id].type : 0;
    if (!type_ok(m, type, role)) {
      if (names)
        return cldm_spirv_fail(err, CLDM_SPIRV_E_INVALID, word,
                               "%s: %s operand %%%u is not %s (spec 2.1)", what, names[i], id,
                               role_text(role));
      return cldm_spirv_fail(err, CLDM_SPIRV_E_INVALID, word,
                             "%s: argument %u (%%%u) is not %s (spec 2.2)", what, i + 1, id,
                             role_text(role));
    }
  }
  return CLDM_SPIRV_OK;
}

static cldm_spirv_status extinst_site(const cldm_spirv_module *m, cldm_spirv_detect *d, uint32_t ii,
                                      uint32_t f, size_t *cap, cldm_spirv_error *err) {
  const uint32_t *w = cldm_spirv_iw(m, ii);
  uint32_t wc = m->inst[ii].wc, off = m->inst[ii].off;
  if (wc < 5)
    return cldm_spirv_fail(err, CLDM_SPIRV_E_MALFORMED, off, "OpExtInst has %u words, needs 5", wc);
  uint32_t number = w[4];
  if (number == 0 || number > CLDM_SPIRV_EXT_MAX || !cldm_spirv_ext_names[number])
    return cldm_spirv_fail(err, CLDM_SPIRV_E_INVALID, off + 4,
                           "OpExtInst " CLDM_SPIRV_EXT_MALLOC_SET_NAME
                           ": unknown instruction number %u (spec 2.1 defines 1-%u)",
                           number, (unsigned)CLDM_SPIRV_EXT_MAX);
  if (f == CLDM_SPIRV_NONE)
    return cldm_spirv_fail(err, CLDM_SPIRV_E_INVALID, off,
                           "OpExtInst " CLDM_SPIRV_EXT_MALLOC_SET_NAME " %s outside a function",
                           cldm_spirv_ext_names[number]);
  char what[80];
  snprintf(what, sizeof what, "OpExtInst " CLDM_SPIRV_EXT_MALLOC_SET_NAME " %s",
           cldm_spirv_ext_names[number]);
  cldm_spirv_status st = check_result(m, number, w[1], off + 1, what, err);
  if (!st)
    st = check_args(m, cldm_spirv_ext_roles[number], cldm_spirv_ext_noperands[number],
                    cldm_spirv_ext_operand_names[number], w + 5, wc - 5, off, what, err);
  if (!st)
    st = add_site(d, ii, f, number, CLDM_SPIRV_SITE_EXTINST, 0, cap, err);
  return st;
}

static cldm_spirv_status call_site(const cldm_spirv_module *m, cldm_spirv_detect *d, uint32_t ii,
                                   uint32_t f, uint32_t callee, size_t *cap,
                                   cldm_spirv_error *err) {
  const uint32_t *w = cldm_spirv_iw(m, ii);
  uint32_t wc = m->inst[ii].wc, off = m->inst[ii].off;
  const cldm_spirv_callee *c = &d->callee[callee];
  char what[128], name[CLDM_SPIRV_CALLEE_NAME_MAX];
  snprintf(what, sizeof what, "call of Import-linkage %s",
           cldm_spirv_linkage_name(m, callee, name, sizeof name));
  cldm_spirv_status st = check_result(m, c->op, w[1], off + 1, what, err);
  if (!st)
    st = check_args(m, c->role, c->nparams, c->cxx ? NULL : cldm_spirv_ext_operand_names[c->op],
                    w + 4, wc - 4, off, what, err);
  if (!st)
    st = add_site(d, ii, f, c->op, CLDM_SPIRV_SITE_IMPORT, c->throws, cap, err);
  return st;
}

cldm_spirv_status cldm_spirv_detect_sites(const cldm_spirv_module *m, cldm_spirv_detect *d,
                                          cldm_spirv_error *err) {
  size_t cap = 0;
  cldm_spirv_status st;
  if (d->forms & CLDM_SPIRV_FORM_EXTINST)
    for (uint32_t ii = m->sec[CLDM_SPIRV_SEC_GLOBAL]; ii < m->sec[CLDM_SPIRV_SEC_FUNCTION]; ii++)
      if (m->inst[ii].op == SpvOpExtInst && m->inst[ii].wc >= 4 &&
          cldm_spirv_iw(m, ii)[3] < m->bound && d->drop[cldm_spirv_iw(m, ii)[3]] &&
          (st = extinst_site(m, d, ii, CLDM_SPIRV_NONE, &cap, err)))
        return st;
  for (uint32_t f = 0; f < m->nfn; f++) {
    if (!m->fn[f].body)
      continue;
    for (uint32_t ii = m->fn[f].body; ii < m->fn[f].end; ii++) {
      const uint32_t *w = cldm_spirv_iw(m, ii);
      uint32_t op = m->inst[ii].op;
      if (op == SpvOpExtInst && m->inst[ii].wc >= 4 && w[3] < m->bound && d->drop[w[3]] &&
          cldm_spirv_def_op(m, w[3]) == SpvOpExtInstImport) {
        if ((st = extinst_site(m, d, ii, f, &cap, err)))
          return st;
      } else if (op == SpvOpFunctionCall && m->inst[ii].wc >= 4) {
        uint32_t callee = cldm_spirv_fn_index(m, w[3]);
        if (callee != CLDM_SPIRV_NONE && d->import_op[callee] &&
            (st = call_site(m, d, ii, f, callee, &cap, err)))
          return st;
      }
    }
  }
  return CLDM_SPIRV_OK;
}

void cldm_spirv_detect_free(cldm_spirv_detect *d) {
  free(d->import_op);
  free(d->callee);
  free(d->drop);
  free(d->sites);
  memset(d, 0, sizeof *d);
}
