/*
 * raise.c — cldm_spirv_raise: the Import-linkage form (spec 2.2) into the OpExtInst form
 * (spec 2.1). Each call of an Import-form declaration becomes `OpExtInst %type %set <number>
 * args...` with the same result id; the declarations, their names and decorations go; an
 * OpExtInstImport "SPV_EXT_device_malloc" is added unless the module already has one (a module
 * may mix both forms). This is how compiler writers get canonical modules from clang +
 * llvm-spirv, and how the tests make OpExtInst-form inputs (spirv-as cannot assemble an unknown
 * set). C++'s operator new and delete are left as they are: the set has no instruction that
 * stops a work-item as a throwing new must (spec 2.2), and the lowering takes both forms.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static cldm_spirv_status copy_input(const void *bytes, size_t size, void **out, size_t *out_size,
                                    cldm_spirv_error *err) {
  *out = malloc(size ? size : 1);
  if (!*out)
    return cldm_spirv_fail(err, CLDM_SPIRV_E_NOMEM, 0, "out of memory");
  memcpy(*out, bytes, size);
  *out_size = size;
  return CLDM_SPIRV_OK;
}

static cldm_spirv_status no_address_taken(const cldm_spirv_module *m, const cldm_spirv_detect *d,
                                          cldm_spirv_error *err) {
  for (uint32_t e = 0; e < m->nep; e++)
    if (d->import_op[m->ep[e].fn])
      return cldm_spirv_fail(err, CLDM_SPIRV_E_UNSUPPORTED, m->inst[m->ep[e].ii].off,
                             "entry point \"%s\" is the Import-linkage declaration of %s",
                             m->ep[e].name, cldm_spirv_ext_names[d->import_op[m->ep[e].fn]]);
  for (uint32_t f = 0; f < m->nfn; f++)
    if (d->import_op[f] && m->fn_addr_taken[f]) {
      uint32_t ii = m->fn_addr_taken[f] - 1;
      return cldm_spirv_fail(err, CLDM_SPIRV_E_UNSUPPORTED, m->inst[ii].off,
                             "%s takes the address of Import-linkage %s (%%%u): it cannot be "
                             "raised to an instruction",
                             cldm_spirv_opname(m->inst[ii].op),
                             cldm_spirv_ext_names[d->import_op[f]], m->fn[f].id);
    }
  return CLDM_SPIRV_OK;
}

static void emit_sections(cldm_spirv_out *o, const cldm_spirv_module *m, const cldm_spirv_detect *d,
                          uint32_t set) {
  for (unsigned s = 0; s < CLDM_SPIRV_SEC_FUNCTION; s++) {
    for (uint32_t ii = m->sec[s]; ii < m->sec[s + 1]; ii++) {
      if (m->inst[ii].op == SpvOpCapability && m->inst[ii].wc >= 2)
        cldm_spirv_out_capability(o, cldm_spirv_iw(m, ii)[1]);
      else if (s >= CLDM_SPIRV_SEC_EXECMODE && s <= CLDM_SPIRV_SEC_ANNOTATION)
        cldm_spirv_out_copy_filtered(&o->sec[s], m, ii, d->drop);
      else
        cldm_spirv_out_copy(&o->sec[s], m, ii);
    }
    if (s == CLDM_SPIRV_SEC_EXTINSTIMPORT && set == m->bound) {
      cldm_spirv_buf *b = &o->sec[s];
      size_t at = cldm_spirv_buf_begin(b, SpvOpExtInstImport);
      cldm_spirv_buf_push(b, set);
      cldm_spirv_buf_string(b, CLDM_SPIRV_EXT_MALLOC_SET_NAME,
                            strlen(CLDM_SPIRV_EXT_MALLOC_SET_NAME));
      cldm_spirv_buf_end(b, at);
    }
  }
}

static void emit_functions(cldm_spirv_out *o, const cldm_spirv_module *m,
                           const cldm_spirv_detect *d, uint32_t set) {
  uint32_t site = 0;
  for (uint32_t f = 0; f < m->nfn; f++) {
    const cldm_spirv_function *fn = &m->fn[f];
    if (d->import_op[f])
      continue;
    cldm_spirv_buf *b = fn->body ? &o->sec[CLDM_SPIRV_SEC_FUNCTION] : &o->decls;
    for (uint32_t ii = fn->begin; ii <= fn->end; ii++) {
      while (site < d->nsites && d->sites[site].ii < ii)
        site++;
      const cldm_spirv_site *s = site < d->nsites ? &d->sites[site] : NULL;
      if (!s || s->ii != ii || s->form != CLDM_SPIRV_SITE_IMPORT) {
        cldm_spirv_out_copy(b, m, ii);
        continue;
      }
      const uint32_t *w = cldm_spirv_iw(m, ii);
      size_t at = cldm_spirv_buf_begin(b, SpvOpExtInst);
      uint32_t head[4] = {w[1], w[2], set, s->op};
      cldm_spirv_buf_push_n(b, head, 4);
      cldm_spirv_buf_push_n(b, w + 4, m->inst[ii].wc - 4u);
      cldm_spirv_buf_end(b, at);
    }
  }
}

cldm_spirv_status cldm_spirv_raise(const void *bytes, size_t size, void **out, size_t *out_size,
                                   cldm_spirv_error *err) {
  cldm_spirv_error_clear(err);
  if (!out || !out_size)
    return cldm_spirv_fail(err, CLDM_SPIRV_E_INVALID, 0, "out and out_size must not be NULL");
  *out = NULL;
  *out_size = 0;
  cldm_spirv_module m;
  cldm_spirv_detect d = {0};
  cldm_spirv_out o = {0};
  cldm_spirv_status st = cldm_spirv_module_parse(&m, bytes, size, err);
  if (!st)
    st = cldm_spirv_detect_uses(&m, &d, 0, err);
  if (!st && !(d.forms & CLDM_SPIRV_FORM_IMPORT)) {
    st = copy_input(bytes, size, out, out_size, err);
    goto done;
  }
  if (!st)
    st = cldm_spirv_detect_module_rules(&m, err);
  if (!st)
    st = cldm_spirv_check(&m, d.drop, err);
  if (!st)
    st = cldm_spirv_detect_sites(&m, &d, err);
  if (!st)
    st = no_address_taken(&m, &d, err);
  if (st)
    goto done;
  uint32_t set = d.set_id ? d.set_id : m.bound;
  if (set == m.bound && m.bound + 1 > CLDM_SPIRV_MAX_BOUND) {
    st = cldm_spirv_fail(err, CLDM_SPIRV_E_UNSUPPORTED, 3,
                         "the raised module would need id bound %u, more than the supported %u",
                         m.bound + 1, CLDM_SPIRV_MAX_BOUND);
    goto done;
  }
  emit_sections(&o, &m, &d, set);
  emit_functions(&o, &m, &d, set);
  cldm_spirv_out_fix_linkage(&o);
  o.version = m.version;
  o.generator = m.generator;
  o.bound = set == m.bound ? m.bound + 1 : m.bound;
  st = cldm_spirv_out_finish(&o, out, out_size, err);
done:
  cldm_spirv_out_free(&o);
  cldm_spirv_detect_free(&d);
  cldm_spirv_module_free(&m);
  return st;
}
