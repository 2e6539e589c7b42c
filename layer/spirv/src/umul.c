/*
 * umul.c — llvm-spirv's stand-in for llvm.umul.with.overflow.iN (a function with Export linkage
 * "spirv.llvm_umul_with_overflow_iN" and a body) replaced, in a lowered module, by an ordinary
 * internal function "cldm.umul_with_overflow_iN" that computes the same.
 *
 * Why: clang checks the size of every new T[n] whose n is known only at run time with
 * llvm.umul.with.overflow, so C++ code has one call per such new. llvm-spirv 15's reader (pocl's,
 * the PTX route's) turns the stand-in back into the intrinsic at the first call it translates
 * and leaves every later call calling a renamed declaration, "old_llvm.umul.with.overflow.i64",
 * which no library defines (the driver's link fails). Its body cannot simply be kept either:
 * llvm-spirv writes it as (a * b) / a != b, a division by 0 for a = 0. The replacement:
 *
 *   p  = a * b                      (OpIMul, modulo 2^N)
 *   nz = b != 0
 *   q  = p / (nz ? b : 1)           (never divides by 0)
 *   overflow = nz && q != a
 *   return {p, overflow}
 */
#include <stdio.h>
#include <string.h>

#include "internal.h"

#define UMUL_NAME "spirv.llvm_umul_with_overflow_i"

int cldm_spirv_umul_stand_in(const cldm_spirv_module *m, uint32_t f) {
  const cldm_spirv_function *fn = &m->fn[f];
  char name[64];
  cldm_spirv_linkage_name(m, f, name, sizeof name);
  if (!fn->body || fn->nparams != 2 || strncmp(name, UMUL_NAME, sizeof(UMUL_NAME) - 1))
    return 0;
  uint32_t wc, t[2];
  for (uint32_t i = 0; i < 2; i++) {
    const cldm_spirv_inst *p = &m->inst[fn->begin + 1 + i];
    t[i] = p->wc >= 3 ? m->w[p->off + 1] : 0;
  }
  const uint32_t *s = cldm_spirv_def(m, fn->result_type, &wc);
  return t[0] == t[1] && cldm_spirv_int_width(m, t[0]) && s &&
         (s[0] & 0xFFFFu) == SpvOpTypeStruct && wc == 4 && s[2] == t[0] &&
         cldm_spirv_def_op(m, s[3]) == SpvOpTypeBool;
}

void cldm_spirv_umul_emit(cldm_spirv_rewrite *r, cldm_spirv_buf *b, uint32_t f, cldm_spirv_out *o) {
  const cldm_spirv_module *m = r->m;
  const cldm_spirv_function *fn = &m->fn[f];
  uint32_t wc;
  const uint32_t *s = cldm_spirv_def(m, fn->result_type, &wc);
  uint32_t ret = fn->result_type, it = s[2], bt = s[3], width = cldm_spirv_int_width(m, it);
  uint32_t a = m->w[m->inst[fn->begin + 1].off + 2], bb = m->w[m->inst[fn->begin + 2].off + 2];
  uint32_t zero = cldm_spirv_rewrite_constant(r, it, 0, 0, width == 64);
  uint32_t one = cldm_spirv_rewrite_constant(r, it, 1, 0, width == 64);
  uint32_t undef = cldm_spirv_rewrite_undef(r, ret), label = (*r->next_id)++;
  uint32_t head[4] = {ret, fn->id, SpvFunctionControlMaskNone, fn->type_id};
  cldm_spirv_buf_inst(b, SpvOpFunction, head, 4);
  cldm_spirv_out_copy(b, m, fn->begin + 1);
  cldm_spirv_out_copy(b, m, fn->begin + 2);
  cldm_spirv_buf_inst(b, SpvOpLabel, &label, 1);
  uint32_t ab[2] = {a, bb};
  uint32_t p = cldm_spirv_rewrite_op(b, SpvOpIMul, it, (*r->next_id)++, ab, 2);
  uint32_t bz[2] = {bb, zero};
  uint32_t nz = cldm_spirv_rewrite_op(b, SpvOpINotEqual, bt, (*r->next_id)++, bz, 2);
  uint32_t sel[3] = {nz, bb, one};
  uint32_t d = cldm_spirv_rewrite_op(b, SpvOpSelect, it, (*r->next_id)++, sel, 3);
  uint32_t pd[2] = {p, d};
  uint32_t q = cldm_spirv_rewrite_op(b, SpvOpUDiv, it, (*r->next_id)++, pd, 2);
  uint32_t qa[2] = {q, a};
  uint32_t ne = cldm_spirv_rewrite_op(b, SpvOpINotEqual, bt, (*r->next_id)++, qa, 2);
  uint32_t both[2] = {nz, ne};
  uint32_t ov = cldm_spirv_rewrite_op(b, SpvOpLogicalAnd, bt, (*r->next_id)++, both, 2);
  uint32_t i0[3] = {p, undef, 0};
  uint32_t s0 = cldm_spirv_rewrite_op(b, SpvOpCompositeInsert, ret, (*r->next_id)++, i0, 3);
  uint32_t i1[3] = {ov, s0, 1};
  uint32_t s1 = cldm_spirv_rewrite_op(b, SpvOpCompositeInsert, ret, (*r->next_id)++, i1, 3);
  cldm_spirv_buf_inst(b, SpvOpReturnValue, &s1, 1);
  cldm_spirv_buf_inst(b, SpvOpFunctionEnd, NULL, 0);
  char name[48];
  snprintf(name, sizeof name, "cldm.umul_with_overflow_i%u", width);
  cldm_spirv_rewrite_name(o, fn->id, name);
}
