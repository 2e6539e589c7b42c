/*
 * lower.c — the public entry points cldm_spirv_inspect and cldm_spirv_lower: the pipeline
 *   parse (module.c) -> detect uses (detect.c) -> [module does not allocate: stop, the caller
 *   passes its input on unchanged (spec 1.5)] -> check every operand (check.c) -> allocation
 *   sites (detect.c) -> call graph (callgraph.c) -> link the allocator (link.c; parsed once by
 *   the caller, or here from its words) -> rewrite the user's functions (rewrite.c,
 *   rewrite_emit.c) -> write the sections in layout order (out.c).
 * A module that does not allocate is only checked as far as pass 1 goes: the engine must not
 * reject what it would not change.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

typedef struct analysis {
  cldm_spirv_module m;
  cldm_spirv_detect d;
  cldm_spirv_callgraph cg;
} analysis;

static void analysis_free(analysis *a) {
  cldm_spirv_callgraph_free(&a->cg);
  cldm_spirv_detect_free(&a->d);
  cldm_spirv_module_free(&a->m);
}

static cldm_spirv_status analyze(analysis *a, const void *bytes, size_t size,
                                 cldm_spirv_error *err) {
  memset(a, 0, sizeof *a);
  cldm_spirv_status st = cldm_spirv_module_parse(&a->m, bytes, size, err);
  if (!st)
    st = cldm_spirv_detect_uses(&a->m, &a->d, CLDM_SPIRV_DETECT_CXX, err);
  if (st || !a->d.allocates)
    return st;
  st = cldm_spirv_detect_module_rules(&a->m, err);
  if (!st)
    st = cldm_spirv_check(&a->m, a->d.drop, err);
  if (!st)
    st = cldm_spirv_detect_sites(&a->m, &a->d, err);
  if (!st)
    st = cldm_spirv_callgraph_build(&a->m, &a->d, &a->cg, err);
  for (uint32_t f = 0; !st && f < a->m.nfn; f++) {
    if (!cldm_spirv_umul_stand_in(&a->m, f))
      continue;
    /* its name, its Export linkage and its body's names go (umul.c) */
    a->d.drop[a->m.fn[f].id] = 1;
    for (uint32_t ii = a->m.fn[f].body; ii < a->m.fn[f].end; ii++) {
      uint32_t rp = cldm_spirv_result_pos(&a->m, ii);
      if (rp)
        a->d.drop[cldm_spirv_iw(&a->m, ii)[rp]] = 1;
    }
  }
  return st;
}

cldm_spirv_status cldm_spirv_inspect(const void *bytes, size_t size, cldm_spirv_report *report,
                                     cldm_spirv_error *err) {
  cldm_spirv_error_clear(err);
  if (report)
    memset(report, 0, sizeof *report);
  analysis a;
  cldm_spirv_status st = analyze(&a, bytes, size, err);
  if (!st)
    st = cldm_spirv_report_fill(report, &a.m, &a.d, &a.cg, err);
  analysis_free(&a);
  return st;
}

static int starts_with(const char *s, const char *prefix) {
  return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* llvm-spirv's "kernel_arg_type.<kernel>.<t1>,<t2>," and "kernel_arg_type_qual.<kernel>.,,"
 * strings describe each kernel argument; its reader (pocl's front end) turns them into
 * per-argument metadata, which must count the hidden argument too. */
static void emit_debug_string(cldm_spirv_buf *b, const cldm_spirv_module *m, uint32_t ii,
                              const uint8_t *allocating) {
  const uint32_t *w = cldm_spirv_iw(m, ii);
  uint32_t wc = m->inst[ii].wc;
  size_t len =
      m->inst[ii].op == SpvOpString && wc >= 3 ? cldm_spirv_string_len(w + 2, wc - 2) : SIZE_MAX;
  char *s = len != SIZE_MAX && len < 0x40000 ? malloc(len + 16) : NULL;
  const char *append = NULL;
  if (s) {
    cldm_spirv_string(w + 2, wc - 2, s, len + 1);
    for (uint32_t e = 0; e < m->nep && !append; e++) {
      if (!allocating[m->ep[e].fn])
        continue;
      static const char *const pre[2] = {"kernel_arg_type.", "kernel_arg_type_qual."};
      for (int k = 0; k < 2 && !append; k++) {
        size_t pl = strlen(pre[k]), nl = strlen(m->ep[e].name);
        if (starts_with(s, pre[k]) && !strncmp(s + pl, m->ep[e].name, nl) && s[pl + nl] == '.')
          append = k == 0 ? "char*," : ",";
      }
    }
  }
  if (!append) {
    cldm_spirv_out_copy(b, m, ii);
  } else {
    strcat(s, append);
    size_t at = cldm_spirv_buf_begin(b, SpvOpString);
    cldm_spirv_buf_push(b, w[1]);
    cldm_spirv_buf_string(b, s, strlen(s));
    cldm_spirv_buf_end(b, at);
  }
  free(s);
}

/* OpEntryPoint of an allocating kernel in a SPIR-V 1.4+ output: its interface also lists the
 * allocator's module-scope variables, which its call tree now reaches. */
static void emit_entry_point(cldm_spirv_buf *b, const analysis *a, uint32_t ii,
                             const cldm_spirv_link *l, uint32_t version) {
  const cldm_spirv_module *m = &a->m;
  uint32_t e = 0;
  while (e < m->nep && m->ep[e].ii != ii)
    e++;
  if (version < 0x00010400 || !l->nglobals || e == m->nep || !a->cg.allocates[m->ep[e].fn]) {
    cldm_spirv_out_copy(b, m, ii);
    return;
  }
  size_t at = cldm_spirv_buf_begin(b, SpvOpEntryPoint);
  cldm_spirv_buf_push_n(b, cldm_spirv_iw(m, ii) + 1, m->inst[ii].wc - 1u);
  cldm_spirv_buf_push_n(b, l->globals, l->nglobals);
  cldm_spirv_buf_end(b, at);
}

/* The user's module-level sections, minus what spec 3.2 removes. */
static void emit_user_sections(cldm_spirv_out *o, const analysis *a, const cldm_spirv_link *l,
                               uint32_t version) {
  const cldm_spirv_module *m = &a->m;
  for (unsigned s = 0; s < CLDM_SPIRV_SEC_FUNCTION; s++) {
    for (uint32_t ii = m->sec[s]; ii < m->sec[s + 1]; ii++) {
      const uint32_t *w = cldm_spirv_iw(m, ii);
      uint32_t op = m->inst[ii].op, wc = m->inst[ii].wc;
      if (op == SpvOpCapability && wc >= 2)
        cldm_spirv_out_capability(o, w[1]);
      else if (op == SpvOpExtension &&
               cldm_spirv_string_eq(w + 1, wc - 1, CLDM_SPIRV_EXT_MALLOC_SET_NAME))
        continue;
      else if (op == SpvOpExtInstImport && a->d.drop[w[1]])
        continue;
      else if (op == SpvOpEntryPoint)
        emit_entry_point(&o->sec[s], a, ii, l, version);
      else if (s == CLDM_SPIRV_SEC_DEBUG_A)
        emit_debug_string(&o->sec[s], m, ii, a->cg.allocates);
      else if (s >= CLDM_SPIRV_SEC_EXECMODE && s <= CLDM_SPIRV_SEC_ANNOTATION)
        cldm_spirv_out_copy_filtered(&o->sec[s], m, ii, a->d.drop);
      else
        cldm_spirv_out_copy(&o->sec[s], m, ii);
    }
  }
}

static cldm_spirv_status lower_module(analysis *a, const cldm_spirv_allocator *allocator,
                                      void **out, size_t *out_size, cldm_spirv_error *err) {
  const cldm_spirv_module *m = &a->m;
  unsigned bits = m->addressing == SpvAddressingModelPhysical32 ? 32 : 64;
  const cldm_spirv_parsed_allocator *pa = !allocator   ? NULL
                                          : bits == 32 ? allocator->parsed32
                                                       : allocator->parsed64;
  const uint32_t *aw = !allocator ? NULL : bits == 32 ? allocator->words32 : allocator->words64;
  size_t an = !allocator ? 0 : bits == 32 ? allocator->num_words32 : allocator->num_words64;
  if (!pa && (!aw || !an))
    return cldm_spirv_fail(err, CLDM_SPIRV_E_ALLOCATOR, 0,
                           "no allocator module for Physical%u was given", bits);
  uint8_t needed[CLDM_SPIRV_EXT_MAX + 1] = {0};
  for (uint32_t i = 0; i < a->d.nsites; i++)
    needed[a->d.sites[i].op] = 1;

  cldm_spirv_typetab tt = {0};
  cldm_spirv_link l = {0};
  cldm_spirv_out o = {0};
  cldm_spirv_buf globals = {0};
  cldm_spirv_rewrite r = {
      .m = m, .d = &a->d, .cg = &a->cg, .l = &l, .tt = &tt, .globals = &globals};
  uint32_t next_id = m->bound;
  r.next_id = &next_id;
  uint8_t *decorated = cldm_spirv_decorated_ids(m);
  cldm_spirv_parsed_allocator *own = NULL; /* parsed here from the words, for this call only */
  cldm_spirv_status st = CLDM_SPIRV_OK;
  if (!decorated || cldm_spirv_typetab_fill(&tt, m, decorated))
    st = cldm_spirv_fail(err, CLDM_SPIRV_E_NOMEM, 0, "out of memory");
  if (!st && !pa && !(st = cldm_spirv_allocator_parse(aw, an, &own, err)))
    pa = own;
  if (!st)
    st = cldm_spirv_link_prepare(&l, pa, m, &tt, &next_id, needed, a->d.nthrowing != 0, err);
  if (!st)
    st = cldm_spirv_rewrite_plan(&r, err);
  o.version = l.a && l.a->version > m->version ? l.a->version : m->version;
  if (!st) {
    emit_user_sections(&o, a, &l, o.version);
    st = cldm_spirv_rewrite_functions(&r, &o, err);
  }
  if (!st)
    st = cldm_spirv_link_emit(&l, &o, err);
  if (!st && next_id > CLDM_SPIRV_MAX_BOUND)
    st = cldm_spirv_fail(err, CLDM_SPIRV_E_UNSUPPORTED, 3,
                         "the lowered module would need id bound %u, more than the supported %u",
                         next_id, CLDM_SPIRV_MAX_BOUND);
  if (!st) {
    cldm_spirv_buf_append(&o.sec[CLDM_SPIRV_SEC_GLOBAL], &globals);
    cldm_spirv_out_fix_linkage(&o);
    o.generator = m->generator;
    o.bound = next_id;
    st = cldm_spirv_out_finish(&o, out, out_size, err);
  }
  free(decorated);
  cldm_spirv_buf_free(&globals);
  cldm_spirv_rewrite_free(&r);
  cldm_spirv_out_free(&o);
  cldm_spirv_link_free(&l);
  cldm_spirv_allocator_free(own);
  cldm_spirv_typetab_free(&tt);
  return st;
}

cldm_spirv_status cldm_spirv_lower(const void *bytes, size_t size,
                                   const cldm_spirv_allocator *allocator, void **out,
                                   size_t *out_size, cldm_spirv_report *report,
                                   cldm_spirv_error *err) {
  cldm_spirv_error_clear(err);
  if (out)
    *out = NULL;
  if (out_size)
    *out_size = 0;
  if (report)
    memset(report, 0, sizeof *report);
  if (!out || !out_size)
    return cldm_spirv_fail(err, CLDM_SPIRV_E_INVALID, 0, "out and out_size must not be NULL");
  analysis a;
  cldm_spirv_status st = analyze(&a, bytes, size, err);
  if (!st && a.d.allocates)
    st = lower_module(&a, allocator, out, out_size, err);
  if (!st)
    st = cldm_spirv_report_fill(report, &a.m, &a.d, &a.cg, err);
  if (st) {
    free(*out);
    *out = NULL;
    *out_size = 0;
  }
  analysis_free(&a);
  return st;
}
