/*
 * rewrite.c — lowering of the user's functions (spec 3.2 steps 3-4), the plan and the sites;
 * rewrite_emit.c writes the functions out:
 *   - every allocating function gets a trailing OpFunctionParameter, the heap (a CrossWorkgroup
 *     pointer to i8, the allocator's first parameter type), named "__cldm_heap", and a new
 *     OpTypeFunction; entry points are such functions too, so the heap is the kernel's LAST
 *     argument; llvm-spirv's wrappers (entry point calling the kernel body) need nothing special;
 *   - every function that may stop at a throwing operator new (spec 2.2), other than a root of
 *     the stops (an entry point, or llvm-spirv's body of one: callgraph.c), also gets the stop
 *     flag after the heap: a Function-storage pointer to a 32-bit integer, the flag of the root
 *     that called it (a variable of the root's, 0 at its start); the labels of the blocks that
 *     stops split off are reserved here (rewrite_emit.c);
 *   - every allocation site (OpExtInst of the set, call of an Import-form function) becomes
 *     OpFunctionCall of cldm_<op>(heap, ...): sizes converted to the allocator's width
 *     (OpUConvert; a 64-bit size for a 32-bit allocator saturates to 0xFFFFFFFF, which no heap
 *     can satisfy, instead of wrapping), pointers cast to `__global void *` (OpBitcast,
 *     OpGenericCastToPtr for Generic), the result cast back to the user's pointer type
 *     (OpBitcast, OpPtrCastToGeneric). The site's result id is kept on the last instruction, so
 *     its uses, names and decorations stay valid. A call of a C++ operator passes the operands
 *     its callee maps (callee.c): aligned new(size, align) becomes aligned_alloc(align, size),
 *     delete's size and alignment are dropped.
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

/* 1 if instruction ii is a stop point: a call of a throwing operator new (site *site, advanced
 * past ii) or of a function that may stop, other than a root (its wrapper's call, after which
 * the wrapper returns: callgraph.c). */
static int stop_point(const cldm_spirv_rewrite *r, uint32_t ii, size_t *site) {
  const cldm_spirv_module *m = r->m;
  const cldm_spirv_detect *d = r->d;
  while (*site < d->nsites && d->sites[*site].ii < ii)
    (*site)++;
  if (*site < d->nsites && d->sites[*site].ii == ii)
    return d->sites[*site].throws;
  if (m->inst[ii].op != SpvOpFunctionCall || m->inst[ii].wc < 4)
    return 0;
  uint32_t callee = cldm_spirv_fn_index(m, cldm_spirv_iw(m, ii)[3]);
  return callee != CLDM_SPIRV_NONE && r->cg->throws[callee] && !r->cg->root[callee];
}

/* What stops need (spec 2.2): the flag's types and constants, per function that may stop its
 * flag's id, and every stop point with the labels of its two new blocks, each block it splits
 * recorded in r->relabel (its last part's label). */
static cldm_spirv_status plan_stops(cldm_spirv_rewrite *r, cldm_spirv_error *err) {
  const cldm_spirv_module *m = r->m;
  r->fn_flag = calloc(m->nfn ? m->nfn : 1, sizeof *r->fn_flag);
  r->relabel = calloc(m->bound, sizeof *r->relabel);
  if (!r->fn_flag || !r->relabel)
    return cldm_spirv_fail(err, CLDM_SPIRV_E_NOMEM, 0, "out of memory");
  r->is_root = r->cg->root;
  uint32_t u32[2] = {32, 0};
  r->flag_type = cldm_spirv_rewrite_type(r, SpvOpTypeInt, u32, 2);
  uint32_t ptr[2] = {SpvStorageClassFunction, r->flag_type};
  r->flag_ptr_type = cldm_spirv_rewrite_type(r, SpvOpTypePointer, ptr, 2);
  r->bool_type = cldm_spirv_rewrite_type(r, SpvOpTypeBool, NULL, 0);
  r->void_type = cldm_spirv_rewrite_type(r, SpvOpTypeVoid, NULL, 0);
  r->flag_zero = cldm_spirv_rewrite_constant(r, r->flag_type, 0, 0, 0);
  r->flag_one = cldm_spirv_rewrite_constant(r, r->flag_type, 1, 0, 0);
  r->size_zero = cldm_spirv_rewrite_constant(r, r->l->size_type, 0, 0, r->l->size_bits == 64);
  size_t site = 0, cap = 0;
  for (uint32_t f = 0; f < m->nfn; f++) {
    if (!r->cg->throws[f])
      continue;
    uint32_t first = r->nstops, block = 0;
    for (uint32_t ii = m->fn[f].body; ii < m->fn[f].end; ii++) {
      if (m->inst[ii].op == SpvOpLabel && m->inst[ii].wc >= 2)
        block = cldm_spirv_iw(m, ii)[1];
      if (!stop_point(r, ii, &site))
        continue;
      if (r->nstops == cap) {
        cap = cap ? 2 * cap : 16;
        cldm_spirv_stop *grown = realloc(r->stops, cap * sizeof *grown);
        if (!grown)
          return cldm_spirv_fail(err, CLDM_SPIRV_E_NOMEM, 0, "out of memory");
        r->stops = grown;
      }
      cldm_spirv_stop *sp = &r->stops[r->nstops++];
      *sp = (cldm_spirv_stop){.ii = ii, .cont = (*r->next_id)++, .stop = (*r->next_id)++};
      if (block < m->bound)
        r->relabel[block] = sp->cont; /* the last part's label wins */
    }
    /* a flag: the parameter of every function that may stop; a root's variable where it has
     * stop points of its own (a wrapper that only calls its body needs none) */
    if (!r->cg->root[f] || r->nstops > first)
      r->fn_flag[f] = (*r->next_id)++;
  }
  return CLDM_SPIRV_OK;
}

cldm_spirv_status cldm_spirv_rewrite_plan(cldm_spirv_rewrite *r, cldm_spirv_error *err) {
  const cldm_spirv_module *m = r->m;
  r->fn_type = calloc(m->nfn ? m->nfn : 1, sizeof *r->fn_type);
  r->fn_heap = calloc(m->nfn ? m->nfn : 1, sizeof *r->fn_heap);
  if (!r->fn_type || !r->fn_heap)
    return cldm_spirv_fail(err, CLDM_SPIRV_E_NOMEM, 0, "out of memory");
  cldm_spirv_status st = r->d->nthrowing ? plan_stops(r, err) : CLDM_SPIRV_OK;
  if (st)
    return st;
  for (uint32_t f = 0; f < m->nfn; f++) {
    if (!r->cg->allocates[f])
      continue;
    uint32_t wc;
    const uint32_t *t = cldm_spirv_def(m, m->fn[f].type_id, &wc);
    if (!t || (t[0] & 0xFFFFu) != SpvOpTypeFunction || wc < 3)
      return cldm_spirv_fail(err, CLDM_SPIRV_E_MALFORMED, m->inst[m->fn[f].begin].off + 4,
                             "OpFunction %%%u: function type %%%u is not an OpTypeFunction",
                             m->fn[f].id, m->fn[f].type_id);
    int flag = r->fn_flag && r->fn_flag[f] && !r->is_root[f];
    uint32_t *ops = malloc((wc + 1) * sizeof *ops);
    if (!ops)
      return cldm_spirv_fail(err, CLDM_SPIRV_E_NOMEM, 0, "out of memory");
    memcpy(ops, t + 2, (wc - 2) * sizeof *ops); /* return type, parameter types */
    ops[wc - 2] = r->l->heap_type;
    if (flag)
      ops[wc - 1] = r->flag_ptr_type;
    r->fn_type[f] = cldm_spirv_rewrite_type(r, SpvOpTypeFunction, ops, wc - 1 + (size_t)flag);
    free(ops);
    r->fn_heap[f] = (*r->next_id)++;
  }
  return CLDM_SPIRV_OK;
}

uint32_t cldm_spirv_rewrite_op(cldm_spirv_buf *b, uint32_t op, uint32_t type, uint32_t result,
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
    return cldm_spirv_rewrite_op(b, SpvOpUConvert, to_type, (*r->next_id)++, &arg, 1);
  /* 64 -> 32: (size >> 32) != 0 ? 0xFFFFFFFF : (uint)size */
  uint32_t c32 = cldm_spirv_rewrite_constant(r, from_type, 32, 0, 1);
  uint32_t c0 = cldm_spirv_rewrite_constant(r, from_type, 0, 0, 1);
  uint32_t cmax = cldm_spirv_rewrite_constant(r, to_type, 0xFFFFFFFFu, 0, 0);
  uint32_t tbool = cldm_spirv_rewrite_type(r, SpvOpTypeBool, NULL, 0);
  uint32_t a1[2] = {arg, c32};
  uint32_t hi = cldm_spirv_rewrite_op(b, SpvOpShiftRightLogical, from_type, (*r->next_id)++, a1, 2);
  uint32_t a2[2] = {hi, c0};
  uint32_t big = cldm_spirv_rewrite_op(b, SpvOpINotEqual, tbool, (*r->next_id)++, a2, 2);
  uint32_t lo = cldm_spirv_rewrite_op(b, SpvOpUConvert, to_type, (*r->next_id)++, &arg, 1);
  uint32_t a3[3] = {big, cmax, lo};
  return cldm_spirv_rewrite_op(b, SpvOpSelect, to_type, (*r->next_id)++, a3, 3);
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
    arg = cldm_spirv_rewrite_op(b, SpvOpGenericCastToPtr, global, (*r->next_id)++, &arg, 1);
    if (global == to_type)
      return arg;
  }
  return cldm_spirv_rewrite_op(b, SpvOpBitcast, to_type, (*r->next_id)++, &arg, 1);
}

/* The allocator's `__global void *` (id `value`) as the user's result type, into id result. */
static void convert_result(cldm_spirv_rewrite *r, cldm_spirv_buf *b, uint32_t value,
                           uint32_t value_type, uint32_t type, uint32_t result) {
  uint32_t storage = 0, pointee = 0;
  cldm_spirv_pointer(r->m, type, &storage, &pointee);
  if (storage != SpvStorageClassGeneric) {
    cldm_spirv_rewrite_op(b, SpvOpBitcast, type, result, &value, 1);
    return;
  }
  uint32_t ops[2] = {SpvStorageClassCrossWorkgroup, pointee};
  uint32_t global = cldm_spirv_rewrite_type(r, SpvOpTypePointer, ops, 2);
  if (global != value_type)
    value = cldm_spirv_rewrite_op(b, SpvOpBitcast, global, (*r->next_id)++, &value, 1);
  cldm_spirv_rewrite_op(b, SpvOpPtrCastToGeneric, type, result, &value, 1);
}

uint32_t cldm_spirv_rewrite_site(cldm_spirv_rewrite *r, cldm_spirv_buf *b, const cldm_spirv_site *s,
                                 uint32_t heap) {
  const cldm_spirv_module *m = r->m;
  const uint32_t *w = cldm_spirv_iw(m, s->ii);
  const uint32_t *args = s->form == CLDM_SPIRV_SITE_EXTINST ? w + 5 : w + 4;
  const cldm_spirv_callee *c =
      s->form == CLDM_SPIRV_SITE_IMPORT ? &r->d->callee[cldm_spirv_fn_index(m, w[3])] : NULL;
  unsigned op = s->op, nops = cldm_spirv_ext_noperands[op];
  uint32_t call[2 + CLDM_SPIRV_EXT_MAX_OPERANDS];
  call[0] = r->l->fn[op];
  call[1] = heap;
  for (uint32_t i = 0; i < nops && i < CLDM_SPIRV_EXT_MAX_OPERANDS; i++) {
    uint32_t arg = args[c ? c->arg[i] : i];
    call[2 + i] = cldm_spirv_ext_roles[op][i] == CLDM_SPIRV_EXT_ROLE_PTR
                      ? convert_ptr(r, b, arg, r->l->param[op][1 + i])
                      : convert_int(r, b, arg, r->l->param[op][1 + i]);
  }
  uint32_t type = w[1], result = w[2], ret = r->l->ret[op];
  if (cldm_spirv_ext_returns_void[op] || type == ret)
    return cldm_spirv_rewrite_op(b, SpvOpFunctionCall, ret, result, call, 2 + nops);
  uint32_t value =
      cldm_spirv_rewrite_op(b, SpvOpFunctionCall, ret, (*r->next_id)++, call, 2 + nops);
  convert_result(r, b, value, ret, type, result);
  return value;
}

void cldm_spirv_rewrite_free(cldm_spirv_rewrite *r) {
  free(r->fn_type);
  free(r->fn_heap);
  free(r->fn_flag);
  free(r->stops);
  free(r->relabel);
  r->fn_type = r->fn_heap = r->fn_flag = r->relabel = NULL;
  r->stops = NULL;
  r->nstops = 0;
  r->is_root = NULL;
}
