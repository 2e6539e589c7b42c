/*
 * rewrite.c — lowering of the user's functions (spec 3.2 steps 3-4):
 *   - every allocating function gets a trailing OpFunctionParameter, the heap (a CrossWorkgroup
 *     pointer to i8, the allocator's first parameter type), named "__cldm_heap", and a new
 *     OpTypeFunction; entry points are such functions too, so the heap is the kernel's LAST
 *     argument; llvm-spirv's wrappers (entry point calling the kernel body) need nothing special;
 *   - every call of an allocating function passes the caller's heap on;
 *   - every allocation site (OpExtInst of the set, call of an Import-form function) becomes
 *     OpFunctionCall of cldm_<op>(heap, ...): sizes converted to the allocator's width
 *     (OpUConvert; a 64-bit size for a 32-bit allocator saturates to 0xFFFFFFFF, which no heap
 *     can satisfy, instead of wrapping), pointers cast to `__global void *` (OpBitcast,
 *     OpGenericCastToPtr for Generic), the result cast back to the user's pointer type
 *     (OpBitcast, OpPtrCastToGeneric). The site's result id is kept on the last instruction, so
 *     its uses, names and decorations stay valid.
 * Block order is never looked at: each site is replaced in place.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

uint32_t cldm_spirv_rewrite_type(cldm_spirv_rewrite *r, uint32_t opcode, const uint32_t *ops,
                                 size_t n) {
  uint32_t small[8];
  uint32_t *key = n + 1 <= sizeof small / sizeof *small ? small : malloc((n + 1) * sizeof *key);
  if (!key) {
    r->globals->failed = 1;
    return 0;
  }
  key[0] = opcode | (uint32_t)(n + 1) << 16;
  if (n)
    memcpy(key + 1, ops, n * sizeof *ops);
  uint32_t id = cldm_spirv_typetab_find(r->tt, key, n + 1);
  if (!id) {
    id = (*r->next_id)++;
    if (cldm_spirv_typetab_add(r->tt, key, n + 1, id))
      r->globals->failed = 1;
    size_t at = cldm_spirv_buf_begin(r->globals, opcode);
    cldm_spirv_buf_push(r->globals, id);
    cldm_spirv_buf_push_n(r->globals, ops, n);
    cldm_spirv_buf_end(r->globals, at);
  }
  if (key != small)
    free(key);
  return id;
}

uint32_t cldm_spirv_rewrite_constant(cldm_spirv_rewrite *r, uint32_t type, uint32_t lo, uint32_t hi,
                                     int wide) {
  uint32_t n = wide ? 4 : 3;
  uint32_t key[4] = {SpvOpConstant | n << 16, type, lo, hi};
  uint32_t id = cldm_spirv_typetab_find(r->tt, key, n);
  if (id)
    return id;
  id = (*r->next_id)++;
  if (cldm_spirv_typetab_add(r->tt, key, n, id))
    r->globals->failed = 1;
  uint32_t ops[4] = {type, id, lo, hi};
  cldm_spirv_buf_inst(r->globals, SpvOpConstant, ops, n);
  return id;
}

cldm_spirv_status cldm_spirv_rewrite_plan(cldm_spirv_rewrite *r, cldm_spirv_error *err) {
  const cldm_spirv_module *m = r->m;
  r->fn_type = calloc(m->nfn ? m->nfn : 1, sizeof *r->fn_type);
  r->fn_heap = calloc(m->nfn ? m->nfn : 1, sizeof *r->fn_heap);
  if (!r->fn_type || !r->fn_heap)
    return cldm_spirv_fail(err, CLDM_SPIRV_E_NOMEM, 0, "out of memory");
  for (uint32_t f = 0; f < m->nfn; f++) {
    if (!r->cg->allocates[f])
      continue;
    uint32_t wc;
    const uint32_t *t = cldm_spirv_def(m, m->fn[f].type_id, &wc);
    if (!t || (t[0] & 0xFFFFu) != SpvOpTypeFunction || wc < 3)
      return cldm_spirv_fail(err, CLDM_SPIRV_E_MALFORMED, m->inst[m->fn[f].begin].off + 4,
                             "OpFunction %%%u: function type %%%u is not an OpTypeFunction",
                             m->fn[f].id, m->fn[f].type_id);
    uint32_t *ops = malloc(wc * sizeof *ops);
    if (!ops)
      return cldm_spirv_fail(err, CLDM_SPIRV_E_NOMEM, 0, "out of memory");
    memcpy(ops, t + 2, (wc - 2) * sizeof *ops); /* return type, parameter types */
    ops[wc - 2] = r->l->heap_type;
    r->fn_type[f] = cldm_spirv_rewrite_type(r, SpvOpTypeFunction, ops, wc - 1);
    free(ops);
    r->fn_heap[f] = (*r->next_id)++;
  }
  return CLDM_SPIRV_OK;
}

/* Emits `op type result args...` into b and returns result. */
static uint32_t op3(cldm_spirv_buf *b, uint32_t op, uint32_t type, uint32_t result,
                    const uint32_t *args, size_t n) {
  size_t at = cldm_spirv_buf_begin(b, op);
  cldm_spirv_buf_push(b, type);
  cldm_spirv_buf_push(b, result);
  cldm_spirv_buf_push_n(b, args, n);
  cldm_spirv_buf_end(b, at);
  return result;
}

/* A size, count or alignment converted to the allocator's width. */
static uint32_t convert_int(cldm_spirv_rewrite *r, cldm_spirv_buf *b, uint32_t arg,
                            uint32_t to_type) {
  const cldm_spirv_module *m = r->m;
  uint32_t from_type = m->ids[arg].type;
  uint32_t from = cldm_spirv_int_width(m, from_type), to = r->l->size_bits;
  if (from == to)
    return arg;
  if (from < to)
    return op3(b, SpvOpUConvert, to_type, (*r->next_id)++, &arg, 1);
  /* 64 -> 32: (size >> 32) != 0 ? 0xFFFFFFFF : (uint)size */
  uint32_t c32 = cldm_spirv_rewrite_constant(r, from_type, 32, 0, 1);
  uint32_t c0 = cldm_spirv_rewrite_constant(r, from_type, 0, 0, 1);
  uint32_t cmax = cldm_spirv_rewrite_constant(r, to_type, 0xFFFFFFFFu, 0, 0);
  uint32_t tbool = cldm_spirv_rewrite_type(r, SpvOpTypeBool, NULL, 0);
  uint32_t a1[2] = {arg, c32};
  uint32_t hi = op3(b, SpvOpShiftRightLogical, from_type, (*r->next_id)++, a1, 2);
  uint32_t a2[2] = {hi, c0};
  uint32_t big = op3(b, SpvOpINotEqual, tbool, (*r->next_id)++, a2, 2);
  uint32_t lo = op3(b, SpvOpUConvert, to_type, (*r->next_id)++, &arg, 1);
  uint32_t a3[3] = {big, cmax, lo};
  return op3(b, SpvOpSelect, to_type, (*r->next_id)++, a3, 3);
}

/* A user pointer (CrossWorkgroup or Generic, spec 2.1) as `__global void *`. */
static uint32_t convert_ptr(cldm_spirv_rewrite *r, cldm_spirv_buf *b, uint32_t arg,
                            uint32_t to_type) {
  const cldm_spirv_module *m = r->m;
  uint32_t from_type = m->ids[arg].type, storage = 0, pointee = 0;
  if (from_type == to_type)
    return arg;
  cldm_spirv_pointer(m, from_type, &storage, &pointee);
  if (storage == SpvStorageClassGeneric) {
    uint32_t ops[2] = {SpvStorageClassCrossWorkgroup, pointee};
    uint32_t global = cldm_spirv_rewrite_type(r, SpvOpTypePointer, ops, 2);
    arg = op3(b, SpvOpGenericCastToPtr, global, (*r->next_id)++, &arg, 1);
    if (global == to_type)
      return arg;
  }
  return op3(b, SpvOpBitcast, to_type, (*r->next_id)++, &arg, 1);
}

/* The allocator's `__global void *` (id `value`) as the user's result type, into id result. */
static void convert_result(cldm_spirv_rewrite *r, cldm_spirv_buf *b, uint32_t value,
                           uint32_t value_type, uint32_t type, uint32_t result) {
  uint32_t storage = 0, pointee = 0;
  cldm_spirv_pointer(r->m, type, &storage, &pointee);
  if (storage != SpvStorageClassGeneric) {
    op3(b, SpvOpBitcast, type, result, &value, 1);
    return;
  }
  uint32_t ops[2] = {SpvStorageClassCrossWorkgroup, pointee};
  uint32_t global = cldm_spirv_rewrite_type(r, SpvOpTypePointer, ops, 2);
  if (global != value_type)
    value = op3(b, SpvOpBitcast, global, (*r->next_id)++, &value, 1);
  op3(b, SpvOpPtrCastToGeneric, type, result, &value, 1);
}

static void lower_site(cldm_spirv_rewrite *r, cldm_spirv_buf *b, const cldm_spirv_site *s,
                       uint32_t heap) {
  const cldm_spirv_module *m = r->m;
  const uint32_t *w = cldm_spirv_iw(m, s->ii);
  uint32_t wc = m->inst[s->ii].wc;
  const uint32_t *args = s->form == CLDM_SPIRV_SITE_EXTINST ? w + 5 : w + 4;
  uint32_t nargs = s->form == CLDM_SPIRV_SITE_EXTINST ? wc - 5 : wc - 4;
  unsigned op = s->op;
  uint32_t call[2 + CLDM_SPIRV_EXT_MAX_OPERANDS];
  call[0] = r->l->fn[op];
  call[1] = heap;
  for (uint32_t i = 0; i < nargs && i < CLDM_SPIRV_EXT_MAX_OPERANDS; i++)
    call[2 + i] = cldm_spirv_ext_roles[op][i] == CLDM_SPIRV_EXT_ROLE_PTR
                      ? convert_ptr(r, b, args[i], r->l->param[op][1 + i])
                      : convert_int(r, b, args[i], r->l->param[op][1 + i]);
  uint32_t type = w[1], result = w[2], ret = r->l->ret[op];
  if (cldm_spirv_ext_returns_void[op] || type == ret) {
    op3(b, SpvOpFunctionCall, ret, result, call, 2 + nargs);
    return;
  }
  uint32_t value = op3(b, SpvOpFunctionCall, ret, (*r->next_id)++, call, 2 + nargs);
  convert_result(r, b, value, ret, type, result);
}

static void emit_heap_name(cldm_spirv_out *o, uint32_t id) {
  cldm_spirv_buf *b = &o->sec[CLDM_SPIRV_SEC_DEBUG_B];
  size_t at = cldm_spirv_buf_begin(b, SpvOpName);
  cldm_spirv_buf_push(b, id);
  cldm_spirv_buf_string(b, CLDM_SPIRV_HEAP_PARAM_NAME, strlen(CLDM_SPIRV_HEAP_PARAM_NAME));
  cldm_spirv_buf_end(b, at);
}

static void emit_function(cldm_spirv_rewrite *r, cldm_spirv_buf *b, uint32_t f, size_t *site,
                          cldm_spirv_out *o) {
  const cldm_spirv_module *m = r->m;
  const cldm_spirv_function *fn = &m->fn[f];
  if (!r->cg->allocates[f]) {
    for (uint32_t ii = fn->begin; ii <= fn->end; ii++)
      cldm_spirv_out_copy(b, m, ii);
    return;
  }
  uint32_t heap = r->fn_heap[f];
  size_t at = b->n;
  cldm_spirv_out_copy(b, m, fn->begin);
  if (!b->failed)
    b->w[at + 4] = r->fn_type[f];
  for (uint32_t i = 0; i < fn->nparams; i++)
    cldm_spirv_out_copy(b, m, fn->begin + 1 + i);
  uint32_t param[2] = {r->l->heap_type, heap};
  cldm_spirv_buf_inst(b, SpvOpFunctionParameter, param, 2);
  emit_heap_name(o, heap);
  for (uint32_t ii = fn->begin + 1 + fn->nparams; ii <= fn->end; ii++) {
    if (*site < r->d->nsites && r->d->sites[*site].ii == ii) {
      lower_site(r, b, &r->d->sites[(*site)++], heap);
      continue;
    }
    const uint32_t *w = cldm_spirv_iw(m, ii);
    if (m->inst[ii].op == SpvOpFunctionCall) {
      uint32_t callee = cldm_spirv_fn_index(m, w[3]);
      if (callee != CLDM_SPIRV_NONE && r->cg->allocates[callee]) {
        size_t c = cldm_spirv_buf_begin(b, SpvOpFunctionCall);
        cldm_spirv_buf_push_n(b, w + 1, m->inst[ii].wc - 1u);
        cldm_spirv_buf_push(b, heap);
        cldm_spirv_buf_end(b, c);
        continue;
      }
    }
    cldm_spirv_out_copy(b, m, ii);
  }
}

cldm_spirv_status cldm_spirv_rewrite_functions(cldm_spirv_rewrite *r, cldm_spirv_out *o,
                                               cldm_spirv_error *err) {
  const cldm_spirv_module *m = r->m;
  size_t site = 0;
  for (uint32_t f = 0; f < m->nfn; f++) {
    if (r->d->import_op[f])
      continue; /* Import-form declaration: resolved by the allocator */
    cldm_spirv_buf *b = m->fn[f].body ? &o->sec[CLDM_SPIRV_SEC_FUNCTION] : &o->decls;
    emit_function(r, b, f, &site, o);
  }
  if (site != r->d->nsites)
    return cldm_spirv_fail(err, CLDM_SPIRV_E_INVALID, m->inst[r->d->sites[site].ii].off,
                           "allocation site outside an allocating function (internal error)");
  return CLDM_SPIRV_OK;
}

void cldm_spirv_rewrite_free(cldm_spirv_rewrite *r) {
  free(r->fn_type);
  free(r->fn_heap);
  r->fn_type = r->fn_heap = NULL;
}
