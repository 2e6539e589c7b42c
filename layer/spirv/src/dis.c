/*
 * dis.c — cldm_spirv_disassemble: a listing in spirv-dis's style (raw ids), driven by the
 * same operand walker as everything else, so whatever the engine can parse it can print.
 * Extended instructions print by name for every set the engine has a grammar for, including
 * SPV_EXT_device_malloc, which no SPIRV-Tools release knows.
 */
#include <stdio.h>
#include <string.h>

#include "cldm_spirv_dis.h"
#include "internal.h"

typedef struct printer {
  FILE *out;
} printer;

static void print_string(FILE *out, const uint32_t *w, uint32_t nw) {
  size_t len = cldm_spirv_string_len(w, nw);
  fputc('"', out);
  for (size_t i = 0; i < len; i++) {
    unsigned char c = (unsigned char)(w[i / 4] >> (8 * (i % 4)));
    if (c == '"' || c == '\\')
      fprintf(out, "\\%c", c);
    else if (c < 0x20 || c == 0x7F)
      fprintf(out, "\\x%02x", c);
    else
      fputc(c, out);
  }
  fputc('"', out);
}

static void print_enum(FILE *out, uint32_t kind, uint32_t value) {
  const cldm_spirv_kind_desc *k = &cldm_spirv_kinds[kind];
  if (k->category == CLDM_SPIRV_CAT_VALUE_ENUM) {
    const cldm_spirv_enumerant_desc *e = cldm_spirv_enumerant(kind, value);
    if (e)
      fputs(e->name, out);
    else
      fprintf(out, "%u", value);
    return;
  }
  if (value == 0) {
    const cldm_spirv_enumerant_desc *e = cldm_spirv_enumerant(kind, 0);
    fputs(e ? e->name : "0", out);
    return;
  }
  int first = 1;
  for (uint32_t bit = 0; bit < 32; bit++) {
    if (!(value >> bit & 1u))
      continue;
    const cldm_spirv_enumerant_desc *e = cldm_spirv_enumerant(kind, 1u << bit);
    if (!first)
      fputc('|', out);
    first = 0;
    if (e)
      fputs(e->name, out);
    else
      fprintf(out, "0x%x", 1u << bit);
  }
}

static void print_number(FILE *out, const cldm_spirv_module *m, const uint32_t *w,
                         const cldm_spirv_opnd *o) {
  uint32_t type = w[1]; /* OpConstant's result type */
  uint32_t tw;
  const uint32_t *t = cldm_spirv_def(m, type, &tw);
  int is_float = t && (t[0] & 0xFFFFu) == SpvOpTypeFloat;
  if (o->len == 1 && is_float) {
    float f;
    memcpy(&f, &w[o->pos], sizeof f);
    fprintf(out, "%.9g", (double)f);
  } else if (o->len == 2 && is_float) {
    uint64_t v = (uint64_t)w[o->pos + 1] << 32 | w[o->pos];
    double d;
    memcpy(&d, &v, sizeof d);
    fprintf(out, "%.17g", d);
  } else if (o->len == 2) {
    fprintf(out, "%llu", (unsigned long long)((uint64_t)w[o->pos + 1] << 32 | w[o->pos]));
  } else {
    for (uint32_t i = 0; i < o->len; i++)
      fprintf(out, i ? " %u" : "%u", w[o->pos + i]);
  }
}

static cldm_spirv_status print_operand(void *ctx, const cldm_spirv_module *m, uint32_t ii,
                                       const cldm_spirv_opnd *o, cldm_spirv_error *err) {
  printer *p = ctx;
  const uint32_t *w = cldm_spirv_iw(m, ii);
  if (o->role == CLDM_SPIRV_ROLE_RESULT)
    return CLDM_SPIRV_OK;
  fputc(' ', p->out);
  if (o->is_id) {
    fprintf(p->out, "%%%u", w[o->pos]);
  } else if (o->kind == CLDM_SPIRV_KIND_LiteralString) {
    print_string(p->out, w + o->pos, o->len);
  } else if (o->kind == CLDM_SPIRV_KIND_LiteralExtInstInteger) {
    uint32_t set = cldm_spirv_def_op(m, w[3]) == SpvOpExtInstImport ? m->ids[w[3]].aux : 0;
    const cldm_spirv_extinst_desc *e = cldm_spirv_extinst(set, w[o->pos]);
    if (e)
      fputs(e->name, p->out);
    else
      fprintf(p->out, "%u", w[o->pos]);
  } else if (o->kind == CLDM_SPIRV_KIND_LiteralSpecConstantOpInteger) {
    fputs(cldm_spirv_opname(w[o->pos]) + 2, p->out);
  } else if (o->kind < CLDM_SPIRV_KIND_COUNT &&
             cldm_spirv_kinds[o->kind].category >= CLDM_SPIRV_CAT_VALUE_ENUM) {
    print_enum(p->out, o->kind, w[o->pos]);
  } else if (o->kind == CLDM_SPIRV_KIND_LiteralContextDependentNumber) {
    print_number(p->out, m, w, o);
  } else {
    for (uint32_t i = 0; i < o->len; i++)
      fprintf(p->out, i ? " %u" : "%u", w[o->pos + i]);
  }
  return CLDM_SPIRV_OK;
}

static int is_malloc_use(const cldm_spirv_module *m, const cldm_spirv_detect *d, uint32_t ii) {
  const uint32_t *w = cldm_spirv_iw(m, ii);
  uint32_t op = m->inst[ii].op, wc = m->inst[ii].wc;
  if (op == SpvOpExtInst && wc >= 4)
    return w[3] < m->bound && m->ids[w[3]].aux == CLDM_SPIRV_EXTSET_DEVICE_MALLOC &&
           cldm_spirv_def_op(m, w[3]) == SpvOpExtInstImport;
  if (op == SpvOpFunctionCall && wc >= 4) {
    uint32_t f = cldm_spirv_fn_index(m, w[3]);
    return f != CLDM_SPIRV_NONE && d->import_op[f];
  }
  if (op == SpvOpExtInstImport && wc >= 2)
    return m->ids[w[1]].aux == CLDM_SPIRV_EXTSET_DEVICE_MALLOC;
  return 0;
}

cldm_spirv_status cldm_spirv_disassemble(const void *bytes, size_t size, FILE *out, unsigned flags,
                                         cldm_spirv_error *err) {
  cldm_spirv_error_clear(err);
  cldm_spirv_module m;
  cldm_spirv_detect d = {0};
  cldm_spirv_status st = cldm_spirv_module_parse(&m, bytes, size, err);
  if (!st)
    st = cldm_spirv_detect_uses(&m, &d, CLDM_SPIRV_DETECT_CXX, err);
  if (st) {
    cldm_spirv_module_free(&m);
    cldm_spirv_detect_free(&d);
    return st;
  }
  if (flags & CLDM_SPIRV_DIS_HEADER)
    fprintf(out, "; SPIR-V\n; Version: %u.%u\n; Generator: 0x%08x\n; Bound: %u\n; Schema: 0\n",
            (m.version >> 16) & 0xFFu, (m.version >> 8) & 0xFFu, m.generator, m.bound);
  printer p = {.out = out};
  for (uint32_t ii = 0; ii < m.ninst && !st; ii++) {
    const uint32_t *w = cldm_spirv_iw(&m, ii);
    if ((flags & CLDM_SPIRV_DIS_ONLY_MALLOC) && !is_malloc_use(&m, &d, ii))
      continue;
    if (flags & CLDM_SPIRV_DIS_ONLY_MALLOC)
      fprintf(out, "%u: ", m.inst[ii].off);
    const cldm_spirv_opcode_desc *desc = cldm_spirv_opdesc(m.inst[ii].op);
    if (!desc) {
      fprintf(out, "Op%u", m.inst[ii].op);
      for (uint32_t i = 1; i < m.inst[ii].wc; i++)
        fprintf(out, " 0x%x", w[i]);
      fputc('\n', out);
      continue;
    }
    if (desc->flags & CLDM_SPIRV_OPF_RESULT)
      fprintf(out, "%%%u = ", w[(desc->flags & CLDM_SPIRV_OPF_TYPE) ? 2 : 1]);
    fputs(desc->name, out);
    st = cldm_spirv_walk(&m, ii, print_operand, &p, err);
    fputc('\n', out);
  }
  cldm_spirv_detect_free(&d);
  cldm_spirv_module_free(&m);
  return st;
}
