/*
 * ptx_validate.c — what kind of thing each id operand names, checked before LLVMSPIRVLib reads
 * the module. The translator trusts this: a type where a value belongs, a label outside a
 * branch, a value of another function or a type declared in terms of later types makes it
 * assert, recurse without end or corrupt its heap, none of which a library may do to its host
 * process. The engine's operand walk (operands.c) says where the ids are; this file says what
 * they may name:
 *   - a result type is a type;
 *   - in the types/constants/variables section, operands name earlier definitions (or a
 *     pointer announced by OpTypeForwardPointer), so no type contains itself; a type is made
 *     of types (an array's length is a constant), never names a function type (a struct with
 *     a member of function type sends LLVM's DataLayout into endless recursion); constants
 *     and variables are made of values;
 *   - in function bodies, value operands name values of the same function or module-scope
 *     values; labels appear only as branch, merge, switch and phi-parent targets; types only
 *     as OpFunction's function type; functions only as OpFunctionCall's callee; an extended
 *     instruction set only as OpExtInst's set;
 *   - the operands that memory instructions (loads, stores, copies, access chains, atomics,
 *     lifetimes, pointer casts and comparisons) read as addresses are pointers: an atomic add
 *     on an integer made LLVMSPIRVLib 15 use a freed function (ASan: a memmove of negative
 *     size inside readSpirv).
 * It is no validator (spirv-val rejects modules that clang-15 -O2 + llvm-spirv-15 emit and
 * drivers accept, e.g. blocks laid out before their dominators, so a full validation would
 * refuse real programs); it rules out the classes of damage seen when fuzzing the translator.
 */
#include <stdlib.h>

#include "internal.h"
#include "ptx_internal.h"

typedef struct vctx {
  cldm_ptx_log *log;
  uint8_t *forward;          /* per id: named by an OpTypeForwardPointer seen so far */
  uint32_t fn_begin, fn_end; /* instruction range of the current function, if any */
  int in_function;
  int skip_rest; /* operands of a debug/foreign extended instruction */
  int failed;    /* bad() logged a message */
} vctx;

static int is_type(uint32_t op) {
  return (op >= SpvOpTypeVoid && op <= SpvOpTypePipe) || op == SpvOpTypePipeStorage ||
         op == SpvOpTypeNamedBarrier;
}

/* 1 if operand word `pos` of instruction `op` is a block label. */
static int label_position(uint32_t op, uint32_t pos) {
  switch (op) {
  case SpvOpBranch:
  case SpvOpSelectionMerge:
    return pos == 1;
  case SpvOpLoopMerge:
    return pos == 1 || pos == 2;
  case SpvOpBranchConditional:
    return pos == 2 || pos == 3;
  case SpvOpSwitch:
    return pos >= 2; /* default, then the targets of (literal, label) pairs */
  case SpvOpPhi:
    return pos >= 4 && pos % 2 == 0; /* (value, parent) pairs from word 3 */
  default:
    return 0;
  }
}

/* Word position of the memory-semantics operand(s) of an atomic instruction, 0 if none (its
 * pointer is always two words before the first: pointer, scope, semantics). */
void cldm_ptx_atomic_semantics(uint32_t op, unsigned *first, unsigned *second) {
  *first = *second = 0;
  switch (op) {
  case SpvOpAtomicLoad:
  case SpvOpAtomicExchange:
  case SpvOpAtomicIIncrement:
  case SpvOpAtomicIDecrement:
  case SpvOpAtomicIAdd:
  case SpvOpAtomicISub:
  case SpvOpAtomicSMin:
  case SpvOpAtomicUMin:
  case SpvOpAtomicSMax:
  case SpvOpAtomicUMax:
  case SpvOpAtomicAnd:
  case SpvOpAtomicOr:
  case SpvOpAtomicXor:
  case SpvOpAtomicFlagTestAndSet:
  case SpvOpAtomicFMinEXT:
  case SpvOpAtomicFMaxEXT:
  case SpvOpAtomicFAddEXT:
    *first = 5; /* result type, result, pointer, scope, semantics */
    break;
  case SpvOpAtomicStore:
  case SpvOpAtomicFlagClear:
    *first = 3; /* pointer, scope, semantics */
    break;
  case SpvOpAtomicCompareExchange:
  case SpvOpAtomicCompareExchangeWeak:
    *first = 5;  /* equal */
    *second = 6; /* unequal */
    break;
  default:
    break;
  }
}

/* 1 if operand word `pos` of instruction `op` is an address (SPIR-V 1.6 unified spec, 3.42:
 * the "Pointer" operands of memory, atomic and conversion instructions). */
static int pointer_position(uint32_t op, uint32_t pos) {
  switch (op) {
  case SpvOpStore:
  case SpvOpLifetimeStart:
  case SpvOpLifetimeStop:
    return pos == 1;
  case SpvOpCopyMemory:
  case SpvOpCopyMemorySized:
    return pos == 1 || pos == 2;
  case SpvOpPtrEqual:
  case SpvOpPtrNotEqual:
  case SpvOpPtrDiff:
    return pos == 3 || pos == 4;
  case SpvOpLoad:
  case SpvOpAccessChain:
  case SpvOpInBoundsAccessChain:
  case SpvOpPtrAccessChain:
  case SpvOpInBoundsPtrAccessChain:
  case SpvOpGenericCastToPtr:
  case SpvOpGenericCastToPtrExplicit:
  case SpvOpPtrCastToGeneric:
  case SpvOpConvertPtrToU:
  case SpvOpGenericPtrMemSemantics:
    return pos == 3;
  default: {
    unsigned first, second;
    cldm_ptx_atomic_semantics(op, &first, &second); /* atomics: pointer, scope, semantics */
    return first && pos + 2u == first;
  }
  }
}

static cldm_ptx_status bad(vctx *v, const cldm_spirv_module *m, uint32_t ii, uint32_t id,
                           const char *what) {
  v->failed = 1;
  cldm_ptx_log_printf(v->log, "invalid SPIR-V: word %u: %s operand %%%u %s\n", m->inst[ii].off,
                      cldm_spirv_opname(m->inst[ii].op), id, what);
  return CLDM_PTX_E_MALFORMED;
}

static cldm_spirv_status on_operand(void *ctx, const cldm_spirv_module *m, uint32_t ii,
                                    const cldm_spirv_opnd *o, cldm_spirv_error *err) {
  vctx *v = ctx;
  (void)err;
  if (!o->is_id || o->role == CLDM_SPIRV_ROLE_RESULT || v->skip_rest)
    return CLDM_SPIRV_OK;
  uint32_t op = m->inst[ii].op, id = m->w[m->inst[ii].off + o->pos];
  uint32_t def = m->ids[id].def; /* the operand walk made sure it exists */
  uint32_t dop = m->inst[def - 1].op, d = def - 1;
  cldm_ptx_status st = CLDM_PTX_OK;
  if (o->role == CLDM_SPIRV_ROLE_TYPE) {
    if (!is_type(dop))
      st = bad(v, m, ii, id, "is no type, used as a result type");
  } else if (!v->in_function) {
    int forward = op == SpvOpTypeForwardPointer && o->pos == 1;
    if (d >= ii && !forward && !v->forward[id])
      st = bad(v, m, ii, id,
               "is defined later in the module (types and constants must be "
               "declared before use)");
    else if (forward || (d >= ii && v->forward[id]))
      ; /* a pointer type announced by OpTypeForwardPointer */
    else if (is_type(op) && !(op == SpvOpTypeArray && o->pos == 3) && !is_type(dop))
      st = bad(v, m, ii, id, "is no type, used in a type");
    else if (op == SpvOpTypePointer && dop == SpvOpTypeFunction)
      st = bad(v, m, ii, id, "is a function type: pointers to functions are not supported");
    else if (is_type(op) && dop == SpvOpTypeFunction)
      st = bad(v, m, ii, id, "is a function type, used in a type (only OpFunction names one)");
    else if (!is_type(op) && !m->ids[id].type)
      st = bad(v, m, ii, id, "has no type, used as a value");
  } else if (op == SpvOpExtInst && o->pos == 3) {
    if (dop != SpvOpExtInstImport)
      st = bad(v, m, ii, id, "is no extended instruction set");
    else if (m->ids[id].aux != CLDM_SPIRV_EXTSET_OPENCL_STD)
      v->skip_rest = 1; /* debug information: operands of every kind */
  } else if (dop == SpvOpLabel) {
    if (!label_position(op, o->pos))
      st = bad(v, m, ii, id, "is a block label, used as a value");
    else if (d < v->fn_begin || d > v->fn_end)
      st = bad(v, m, ii, id, "is a block of another function");
  } else if (label_position(op, o->pos)) {
    st = bad(v, m, ii, id, "should be a block label");
  } else if (is_type(dop)) {
    if (!(op == SpvOpFunction && o->pos == 4))
      st = bad(v, m, ii, id, "is a type, used as a value");
  } else if (dop == SpvOpFunction) {
    if (!(op == SpvOpFunctionCall && o->pos == 3))
      st = bad(v, m, ii, id,
               "is a function, used as a value (function pointers are not "
               "supported)");
  } else if (op == SpvOpFunctionCall && o->pos == 3) {
    st = bad(v, m, ii, id, "is called but is no function");
  } else if (!m->ids[id].type) {
    st = bad(v, m, ii, id, "has no type, used as a value");
  } else if (d >= m->sec[CLDM_SPIRV_SEC_FUNCTION] && (d < v->fn_begin || d > v->fn_end)) {
    st = bad(v, m, ii, id, "is a value of another function");
  } else if (pointer_position(op, o->pos) && !cldm_spirv_pointer(m, m->ids[id].type, NULL, NULL)) {
    st = bad(v, m, ii, id, "is no pointer, used as an address");
  }
  /* The engine's walker only knows its own statuses: report ours through a marker. */
  return st ? CLDM_SPIRV_E_INVALID : CLDM_SPIRV_OK;
}

cldm_ptx_status cldm_ptx_validate_ids(const struct cldm_spirv_module *m, cldm_ptx_log *log) {
  vctx v = {log, calloc(m->bound ? m->bound : 1, 1), 0, 0, 0, 0, 0};
  if (!v.forward)
    return CLDM_PTX_E_NOMEM;
  uint32_t f = 0;
  cldm_ptx_status st = CLDM_PTX_OK;
  uint32_t first = m->sec[CLDM_SPIRV_SEC_GLOBAL];
  for (uint32_t ii = first; ii < m->ninst && !st; ii++) {
    uint32_t op = m->inst[ii].op;
    while (f < m->nfn && m->fn[f].end < ii)
      f++;
    v.in_function = f < m->nfn && ii >= m->fn[f].begin;
    v.fn_begin = v.in_function ? m->fn[f].begin : 0;
    v.fn_end = v.in_function ? m->fn[f].end : 0;
    v.skip_rest = 0;
    if (op == SpvOpLine || op == SpvOpNoLine || op == SpvOpNop)
      continue;
    cldm_spirv_error err;
    if (cldm_spirv_walk(m, ii, on_operand, &v, &err)) {
      if (!v.failed)
        cldm_ptx_log_printf(log, "invalid SPIR-V: %s\n", err.message);
      st = CLDM_PTX_E_MALFORMED;
    }
    if (!st && op == SpvOpTypeForwardPointer && m->inst[ii].wc >= 2) {
      uint32_t id = m->w[m->inst[ii].off + 1];
      if (id < m->bound)
        v.forward[id] = 1;
    }
  }
  free(v.forward);
  return st;
}
