/*
 * operands.c — the operand walker: given an instruction, visits its operands in order using
 * the grammar tables generated from SPIRV-Headers (gen/gen_tables.py). It knows the few places
 * where the grammar is context dependent:
 *   - OpConstant / OpSpecConstant: the literal takes the rest of the instruction;
 *   - OpSwitch: each case literal is as wide as the selector's integer type;
 *   - OpExtInst: operands come from the imported set's grammar (OpenCL.std, debug info,
 *     SPV_EXT_device_malloc); NonSemantic.* sets have only ids; other sets are opaque;
 *   - OpSpecConstantOp: operands of the wrapped opcode;
 *   - enumerants with parameters (Decoration, MemoryAccess, ...), bit enums bit by bit.
 * Every operand is checked to lie inside the instruction and no word may be left over.
 */
#include <string.h>

#include "internal.h"

typedef struct walker {
  const cldm_spirv_module *m;
  uint32_t ii;
  const uint32_t *w;
  uint32_t wc, pos;
  const char *opname;
  cldm_spirv_opnd_fn fn;
  void *ctx;
  cldm_spirv_error *err;
} walker;

static cldm_spirv_status emit(walker *k, uint32_t kind, uint32_t len, int is_id, int role) {
  if (len > k->wc - k->pos)
    return cldm_spirv_fail(k->err, CLDM_SPIRV_E_MALFORMED, k->m->inst[k->ii].off + k->pos,
                           "%s: operand runs past the instruction's word count %u", k->opname,
                           k->wc);
  cldm_spirv_opnd o = {.kind = (uint16_t)kind,
                       .role = (uint8_t)role,
                       .is_id = (uint8_t)is_id,
                       .pos = (uint16_t)k->pos,
                       .len = (uint16_t)len};
  k->pos += len;
  return k->fn ? k->fn(k->ctx, k->m, k->ii, &o, k->err) : CLDM_SPIRV_OK;
}

static cldm_spirv_status missing(walker *k, uint32_t kind) {
  return cldm_spirv_fail(k->err, CLDM_SPIRV_E_MALFORMED, k->m->inst[k->ii].off,
                         "%s has %u words: operand %s is missing", k->opname, k->wc,
                         kind < CLDM_SPIRV_KIND_COUNT ? cldm_spirv_kinds[kind].name : "?");
}

static cldm_spirv_status walk_list(walker *k, const cldm_spirv_operand_desc *ops, uint32_t n,
                                   int depth);

/* Width in words of an OpSwitch case literal: that of the selector's type. */
static uint32_t switch_literal_words(walker *k) {
  uint32_t sel = k->wc > 1 ? k->w[1] : 0;
  uint32_t type = (sel && sel < k->m->bound) ? k->m->ids[sel].type : 0;
  return cldm_spirv_int_width(k->m, type) > 32 ? 2 : 1;
}

static cldm_spirv_status walk_kind(walker *k, uint32_t kind, int depth) {
  if (depth > 8)
    return cldm_spirv_fail(k->err, CLDM_SPIRV_E_MALFORMED, k->m->inst[k->ii].off,
                           "%s: operand grammar nests too deeply", k->opname);
  const cldm_spirv_kind_desc *kd = &cldm_spirv_kinds[kind];
  cldm_spirv_status st;
  switch (kd->category) {
  case CLDM_SPIRV_CAT_ID:
    return emit(k, kind, 1, 1, CLDM_SPIRV_ROLE_OPERAND);
  case CLDM_SPIRV_CAT_LITERAL:
    if (kind == CLDM_SPIRV_KIND_LiteralString) {
      size_t len = cldm_spirv_string_len(k->w + k->pos, k->wc - k->pos);
      if (len == SIZE_MAX)
        return cldm_spirv_fail(k->err, CLDM_SPIRV_E_MALFORMED, k->m->inst[k->ii].off + k->pos,
                               "%s: literal string is not NUL-terminated within the instruction",
                               k->opname);
      return emit(k, kind, (uint32_t)(len / 4 + 1), 0, CLDM_SPIRV_ROLE_OPERAND);
    }
    if (kind == CLDM_SPIRV_KIND_LiteralContextDependentNumber)
      return emit(k, kind, k->wc - k->pos, 0, CLDM_SPIRV_ROLE_OPERAND);
    return emit(k, kind, 1, 0, CLDM_SPIRV_ROLE_OPERAND);
  case CLDM_SPIRV_CAT_COMPOSITE:
    for (int b = 0; b < 2; b++) {
      uint32_t base = (uint32_t)kd->base[b];
      if (kd->base[b] < 0)
        continue;
      if (k->pos >= k->wc)
        return missing(k, base);
      if (base == CLDM_SPIRV_KIND_LiteralInteger && k->m->inst[k->ii].op == SpvOpSwitch)
        st = emit(k, base, switch_literal_words(k), 0, CLDM_SPIRV_ROLE_OPERAND);
      else
        st = walk_kind(k, base, depth + 1);
      if (st)
        return st;
    }
    return CLDM_SPIRV_OK;
  case CLDM_SPIRV_CAT_VALUE_ENUM: {
    uint32_t value = k->w[k->pos];
    st = emit(k, kind, 1, 0, CLDM_SPIRV_ROLE_OPERAND);
    if (st)
      return st;
    const cldm_spirv_enumerant_desc *e = cldm_spirv_enumerant(kind, value);
    return e ? walk_list(k, &cldm_spirv_operand_descs[e->params], e->nparams, depth + 1)
             : CLDM_SPIRV_OK;
  }
  case CLDM_SPIRV_CAT_BIT_ENUM: {
    uint32_t value = k->w[k->pos];
    st = emit(k, kind, 1, 0, CLDM_SPIRV_ROLE_OPERAND);
    if (st)
      return st;
    for (uint32_t bit = 0; bit < 32; bit++) {
      if (!(value >> bit & 1u))
        continue;
      const cldm_spirv_enumerant_desc *e = cldm_spirv_enumerant(kind, 1u << bit);
      if (e && e->nparams) {
        st = walk_list(k, &cldm_spirv_operand_descs[e->params], e->nparams, depth + 1);
        if (st)
          return st;
      }
    }
    return CLDM_SPIRV_OK;
  }
  }
  return CLDM_SPIRV_OK;
}

static cldm_spirv_status walk_list(walker *k, const cldm_spirv_operand_desc *ops, uint32_t n,
                                   int depth) {
  for (uint32_t i = 0; i < n; i++) {
    cldm_spirv_status st;
    switch (ops[i].quant) {
    case CLDM_SPIRV_QUANT_ONE:
      if (k->pos >= k->wc)
        return missing(k, ops[i].kind);
      st = walk_kind(k, ops[i].kind, depth);
      if (st)
        return st;
      break;
    case CLDM_SPIRV_QUANT_OPTIONAL:
      if (k->pos < k->wc && (st = walk_kind(k, ops[i].kind, depth)))
        return st;
      break;
    default:
      while (k->pos < k->wc)
        if ((st = walk_kind(k, ops[i].kind, depth)))
          return st;
      break;
    }
  }
  return CLDM_SPIRV_OK;
}

/* OpExtInst: Set and Instruction, then the set's own operand grammar. */
static cldm_spirv_status walk_extinst(walker *k) {
  cldm_spirv_status st;
  if (k->pos + 2 > k->wc)
    return missing(k, CLDM_SPIRV_KIND_IdRef);
  uint32_t set_id = k->w[k->pos], number = k->w[k->pos + 1];
  if ((st = emit(k, CLDM_SPIRV_KIND_IdRef, 1, 1, CLDM_SPIRV_ROLE_OPERAND)) ||
      (st = emit(k, CLDM_SPIRV_KIND_LiteralExtInstInteger, 1, 0, CLDM_SPIRV_ROLE_OPERAND)))
    return st;
  uint32_t set = CLDM_SPIRV_EXTSET_UNKNOWN;
  if (cldm_spirv_def_op(k->m, set_id) == SpvOpExtInstImport)
    set = k->m->ids[set_id].aux;
  if (set == CLDM_SPIRV_EXTSET_NONSEMANTIC || set == CLDM_SPIRV_EXTSET_DEVICE_MALLOC) {
    /* NonSemantic sets have only ids; ours too (counts are checked by detect.c, spec 2.1). */
    while (k->pos < k->wc)
      if ((st = emit(k, CLDM_SPIRV_KIND_IdRef, 1, 1, CLDM_SPIRV_ROLE_OPERAND)))
        return st;
    return CLDM_SPIRV_OK;
  }
  const cldm_spirv_extinst_desc *e = cldm_spirv_extinst(set, number);
  if (!e)
    return k->pos < k->wc
               ? emit(k, CLDM_SPIRV_KIND_OPAQUE, k->wc - k->pos, 0, CLDM_SPIRV_ROLE_OPERAND)
               : CLDM_SPIRV_OK;
  return walk_list(k, &cldm_spirv_operand_descs[e->operands], e->noperands, 0);
}

/* OpSpecConstantOp: the wrapped opcode's operands (without its result type and id). */
static cldm_spirv_status walk_spec_op(walker *k) {
  if (k->pos >= k->wc)
    return missing(k, CLDM_SPIRV_KIND_LiteralSpecConstantOpInteger);
  uint32_t inner = k->w[k->pos];
  cldm_spirv_status st =
      emit(k, CLDM_SPIRV_KIND_LiteralSpecConstantOpInteger, 1, 0, CLDM_SPIRV_ROLE_OPERAND);
  if (st)
    return st;
  const cldm_spirv_opcode_desc *d = cldm_spirv_opdesc(inner);
  if (!d)
    return cldm_spirv_fail(k->err, CLDM_SPIRV_E_UNSUPPORTED, k->m->inst[k->ii].off + k->pos - 1,
                           "OpSpecConstantOp wraps unknown opcode %u", inner);
  return walk_list(k, &cldm_spirv_operand_descs[d->operands], d->noperands, 0);
}

cldm_spirv_status cldm_spirv_walk(const cldm_spirv_module *m, uint32_t ii, cldm_spirv_opnd_fn fn,
                                  void *ctx, cldm_spirv_error *err) {
  const cldm_spirv_inst *in = &m->inst[ii];
  const cldm_spirv_opcode_desc *d = cldm_spirv_opdesc(in->op);
  if (!d)
    return cldm_spirv_fail(err, CLDM_SPIRV_E_UNSUPPORTED, in->off,
                           "unknown opcode %u (not in the SPIR-V grammar this engine was built "
                           "with)",
                           in->op);
  walker k = {.m = m,
              .ii = ii,
              .w = m->w + in->off,
              .wc = in->wc,
              .pos = 1,
              .opname = d->name,
              .fn = fn,
              .ctx = ctx,
              .err = err};
  cldm_spirv_status st;
  if ((d->flags & CLDM_SPIRV_OPF_TYPE) &&
      (st = emit(&k, CLDM_SPIRV_KIND_IdResultType, 1, 1, CLDM_SPIRV_ROLE_TYPE)))
    return st;
  if ((d->flags & CLDM_SPIRV_OPF_RESULT) &&
      (st = emit(&k, CLDM_SPIRV_KIND_IdResult, 1, 1, CLDM_SPIRV_ROLE_RESULT)))
    return st;
  if (in->op == SpvOpExtInst)
    st = walk_extinst(&k);
  else if (in->op == SpvOpSpecConstantOp)
    st = walk_spec_op(&k);
  else
    st = walk_list(&k, &cldm_spirv_operand_descs[d->operands], d->noperands, 0);
  if (st)
    return st;
  if (k.pos != k.wc)
    return cldm_spirv_fail(err, CLDM_SPIRV_E_MALFORMED, in->off + k.pos,
                           "%s has %u words, but its operands end after %u", d->name, k.wc, k.pos);
  return CLDM_SPIRV_OK;
}

typedef struct collect {
  uint16_t *pos;
  size_t n;
  int opaque;
} collect;

static cldm_spirv_status collect_id(void *ctx, const cldm_spirv_module *m, uint32_t ii,
                                    const cldm_spirv_opnd *o, cldm_spirv_error *err) {
  collect *c = ctx;
  if (o->is_id)
    c->pos[c->n++] = o->pos;
  if (o->kind == CLDM_SPIRV_KIND_OPAQUE)
    c->opaque = 1;
  return CLDM_SPIRV_OK;
}

cldm_spirv_status cldm_spirv_id_positions(const cldm_spirv_module *m, uint32_t ii, uint16_t *pos,
                                          size_t *n, int *has_opaque, cldm_spirv_error *err) {
  collect c = {.pos = pos};
  cldm_spirv_status st = cldm_spirv_walk(m, ii, collect_id, &c, err);
  *n = c.n;
  if (has_opaque)
    *has_opaque = c.opaque;
  return st;
}
