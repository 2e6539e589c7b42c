/*
 * check.c — pass 2: walks every operand of every instruction (operands.c) so that no later
 * step reads past an instruction or follows an id that is out of bound or never defined.
 * It also records where a function id is used other than as the callee of OpFunctionCall,
 * an entry point, an execution-mode target, a name/decoration target or a debug-info operand:
 * such a use takes the function's address (OpFunctionPointerINTEL, OpConstantFunctionPointerINTEL,
 * a store, ...), which callgraph.c rejects for allocating functions (spec 1.5).
 * Ids the output drops (detect.c: the set's import, Import-form declarations and their
 * parameters) may only appear where the rewrite removes them with their users; any other use
 * would leave the output referring to an id nobody defines.
 */
#include <stdlib.h>

#include "internal.h"

/* 1 if operand word `pos` of instruction op may name a function without taking its address. */
static int function_use_allowed(const cldm_spirv_module *m, uint32_t ii, uint32_t pos) {
  const uint32_t *w = cldm_spirv_iw(m, ii);
  switch (m->inst[ii].op) {
  case SpvOpFunctionCall:
    return pos == 3;
  case SpvOpEntryPoint:
    return pos == 2;
  case SpvOpExecutionMode:
  case SpvOpExecutionModeId:
  case SpvOpName:
  case SpvOpMemberName:
  case SpvOpDecorate:
  case SpvOpDecorateId:
  case SpvOpDecorateString:
  case SpvOpMemberDecorate:
  case SpvOpMemberDecorateString:
    return pos == 1;
  case SpvOpGroupDecorate:
  case SpvOpGroupMemberDecorate:
    return pos >= 2;
  case SpvOpExtInst: {
    uint32_t set = cldm_spirv_def_op(m, w[3]) == SpvOpExtInstImport ? m->ids[w[3]].aux : 0;
    return set == CLDM_SPIRV_EXTSET_OPENCL_DEBUGINFO_100 || set == CLDM_SPIRV_EXTSET_DEBUGINFO ||
           set == CLDM_SPIRV_EXTSET_NONSEMANTIC;
  }
  default:
    return 0;
  }
}

/* 1 if operand word pos of instruction ii is the target of a name or decoration. */
static int annotation_target(const cldm_spirv_module *m, uint32_t ii, uint32_t pos) {
  switch (m->inst[ii].op) {
  case SpvOpName:
  case SpvOpMemberName:
  case SpvOpDecorate:
  case SpvOpDecorateId:
  case SpvOpDecorateString:
  case SpvOpMemberDecorate:
  case SpvOpMemberDecorateString:
    return pos == 1;
  case SpvOpGroupDecorate:
  case SpvOpGroupMemberDecorate:
    return pos >= 2;
  default:
    return 0;
  }
}

/* A use of an id the output drops, other than the ones the rewrite removes. */
static cldm_spirv_status dropped_use(const cldm_spirv_module *m, uint32_t ii, uint32_t pos,
                                     uint32_t id, cldm_spirv_error *err) {
  uint32_t def = m->inst[m->ids[id].def - 1].op, op = m->inst[ii].op;
  if (annotation_target(m, ii, pos) || def == SpvOpFunction)
    return CLDM_SPIRV_OK; /* functions: calls are sites, other uses take the address */
  if (def == SpvOpExtInstImport && op == SpvOpExtInst && pos == 3)
    return CLDM_SPIRV_OK;
  return cldm_spirv_fail(
      err, def == SpvOpExtInstImport ? CLDM_SPIRV_E_INVALID : CLDM_SPIRV_E_MALFORMED,
      m->inst[ii].off + pos, "%s uses %%%u, %s", cldm_spirv_opname(op), id,
      def == SpvOpExtInstImport ? "the " CLDM_SPIRV_EXT_MALLOC_SET_NAME " import, as a value"
                                : "a parameter of an Import-linkage declaration, outside it");
}

static cldm_spirv_status check_operand(void *ctx, const cldm_spirv_module *m, uint32_t ii,
                                       const cldm_spirv_opnd *o, cldm_spirv_error *err) {
  const uint8_t *drop = ctx;
  if (!o->is_id || o->role == CLDM_SPIRV_ROLE_RESULT)
    return CLDM_SPIRV_OK;
  const cldm_spirv_inst *in = &m->inst[ii];
  uint32_t id = m->w[in->off + o->pos];
  const char *name = cldm_spirv_opname(in->op);
  if (id == 0 || id >= m->bound)
    return cldm_spirv_fail(err, CLDM_SPIRV_E_MALFORMED, in->off + o->pos,
                           "%s: id %u is not below the id bound %u", name, id, m->bound);
  if (!m->ids[id].def) {
    return cldm_spirv_fail(err, CLDM_SPIRV_E_MALFORMED, in->off + o->pos,
                           "%s: id %%%u is used but never defined", name, id);
  }
  if (drop && drop[id]) {
    cldm_spirv_status st = dropped_use(m, ii, o->pos, id, err);
    if (st)
      return st;
  }
  if (m->inst[m->ids[id].def - 1].op == SpvOpFunction && !function_use_allowed(m, ii, o->pos)) {
    uint32_t f = m->ids[id].aux;
    if (!m->fn_addr_taken[f])
      m->fn_addr_taken[f] = ii + 1;
  }
  return CLDM_SPIRV_OK;
}

cldm_spirv_status cldm_spirv_check(cldm_spirv_module *m, const uint8_t *drop,
                                   cldm_spirv_error *err) {
  free(m->fn_addr_taken);
  m->fn_addr_taken = calloc(m->nfn ? m->nfn : 1, sizeof *m->fn_addr_taken);
  if (!m->fn_addr_taken)
    return cldm_spirv_fail(err, CLDM_SPIRV_E_NOMEM, 0, "out of memory");
  for (uint32_t ii = 0; ii < m->ninst; ii++) {
    cldm_spirv_status st = cldm_spirv_walk(m, ii, check_operand, (void *)drop, err);
    if (st)
      return st;
  }
  return CLDM_SPIRV_OK;
}
