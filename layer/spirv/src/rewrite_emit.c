/*
 * rewrite_emit.c — the user's functions written out, lowered (spec 3.2 steps 3-4, spec 2.2):
 * the heap parameter (and the stop flag, rewrite.c) after the parameters, calls of allocating
 * functions passing them on, every allocation site replaced by its call (rewrite.c).
 *
 * Stops. A throwing operator new returns a pointer the compiler assumed non-null, so the
 * work-item must not go on when it is NULL: the lowering makes it stop, by leaving every
 * function on its way up to the kernel (C++ would unwind std::bad_alloc to std::terminate).
 * At a call of a throwing operator new (a stop point, stops.c):
 *
 *       %p = <the allocator's call, the result cast>       ; the block, up to the site
 *       %u = OpConvertPtrToU %size_t %raw
 *       %z = OpIEqual %bool %u %0
 *            OpBranchConditional %z %stop %cont
 *   %stop = OpLabel
 *            OpFunctionCall %void %cldm_new_failed %heap   ; counted in the heap
 *            OpStore %flag %1                              ; (not in a root: no caller reads it)
 *            OpReturn | OpReturnValue %undef
 *   %cont = OpLabel                                        ; the rest of the block
 *
 * and at a call of a function that may stop, after the call: OpLoad %flag, OpINotEqual 0, the
 * same branch to a block that returns. A root of the stops (a kernel, callgraph.c) that may stop
 * holds the flag in a variable, stored 0 after its first block's variables. Like any return
 * before a barrier, a stop there leaves the work-group's barrier to the others (spec 2.2). Splitting a block moves its
 * terminator to its last part, whose label (reserved by the plan, r->relabel) replaces the
 * block's in the OpPhi of its successors. Block order is never looked at: each point is split
 * in place.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

void cldm_spirv_rewrite_name(cldm_spirv_out *o, uint32_t id, const char *name) {
  cldm_spirv_buf *b = &o->sec[CLDM_SPIRV_SEC_DEBUG_B];
  size_t at = cldm_spirv_buf_begin(b, SpvOpName);
  cldm_spirv_buf_push(b, id);
  cldm_spirv_buf_string(b, name, strlen(name));
  cldm_spirv_buf_end(b, at);
}

/* The state of one function being written. */
typedef struct fn_emit {
  cldm_spirv_rewrite *r;
  cldm_spirv_buf *b;
  uint32_t f, heap, flag;
  uint32_t stop;  /* index of the function's next stop point in r->stops */
  uint32_t undef; /* OpUndef of the result type (0: not made yet) */
  int stops;      /* the function may stop */
} fn_emit;

static void emit_label(cldm_spirv_buf *b, uint32_t id) {
  cldm_spirv_buf_inst(b, SpvOpLabel, &id, 1);
}

uint32_t cldm_spirv_rewrite_undef(cldm_spirv_rewrite *r, uint32_t type) {
  uint32_t ops[2] = {type, (*r->next_id)++};
  cldm_spirv_buf_inst(r->globals, SpvOpUndef, ops, 2);
  return ops[1];
}

/* Returns from e's function: OpReturn, or OpReturnValue of an OpUndef of its result type. */
static void emit_return(fn_emit *e) {
  cldm_spirv_rewrite *r = e->r;
  uint32_t type = r->m->fn[e->f].result_type;
  if (cldm_spirv_def_op(r->m, type) == SpvOpTypeVoid) {
    cldm_spirv_buf_inst(e->b, SpvOpReturn, NULL, 0);
    return;
  }
  if (!e->undef)
    e->undef = cldm_spirv_rewrite_undef(r, type);
  cldm_spirv_buf_inst(e->b, SpvOpReturnValue, &e->undef, 1);
}

/* Branches to the stop point's stop block when `cond` holds: it counts (a failed new), sets
 * the flag for the caller and returns; the code after goes on in the stop point's
 * continuation. */
static void emit_stop(fn_emit *e, uint32_t cond, int failed_new) {
  cldm_spirv_rewrite *r = e->r;
  const cldm_spirv_stop *sp = &r->stops[e->stop++];
  uint32_t br[3] = {cond, sp->stop, sp->cont};
  cldm_spirv_buf_inst(e->b, SpvOpBranchConditional, br, 3);
  emit_label(e->b, sp->stop);
  if (failed_new) {
    uint32_t call[2] = {r->l->new_failed, e->heap};
    cldm_spirv_rewrite_op(e->b, SpvOpFunctionCall, r->void_type, (*r->next_id)++, call, 2);
    if (!r->is_root[e->f]) {
      uint32_t st[2] = {e->flag, r->flag_one};
      cldm_spirv_buf_inst(e->b, SpvOpStore, st, 2);
    }
  }
  emit_return(e);
  emit_label(e->b, sp->cont);
}

/* After a throwing operator new whose allocator result is `raw`: stop if it is NULL. */
static void emit_new_check(fn_emit *e, uint32_t raw) {
  cldm_spirv_rewrite *r = e->r;
  uint32_t u =
      cldm_spirv_rewrite_op(e->b, SpvOpConvertPtrToU, r->l->size_type, (*r->next_id)++, &raw, 1);
  uint32_t cmp[2] = {u, r->size_zero};
  uint32_t z = cldm_spirv_rewrite_op(e->b, SpvOpIEqual, r->bool_type, (*r->next_id)++, cmp, 2);
  emit_stop(e, z, 1);
}

/* The flag as a condition: 1 if the work-item stopped. */
static uint32_t emit_flag_set(fn_emit *e) {
  cldm_spirv_rewrite *r = e->r;
  uint32_t v = cldm_spirv_rewrite_op(e->b, SpvOpLoad, r->flag_type, (*r->next_id)++, &e->flag, 1);
  uint32_t cmp[2] = {v, r->flag_zero};
  return cldm_spirv_rewrite_op(e->b, SpvOpINotEqual, r->bool_type, (*r->next_id)++, cmp, 2);
}

/* OpPhi with every parent block that stops split replaced by the label of its last part. */
static void emit_phi(fn_emit *e, uint32_t ii) {
  const cldm_spirv_module *m = e->r->m;
  const uint32_t *w = cldm_spirv_iw(m, ii);
  uint32_t wc = m->inst[ii].wc;
  size_t at = cldm_spirv_buf_begin(e->b, SpvOpPhi);
  for (uint32_t i = 1; i < wc; i++) {
    uint32_t word = w[i];
    if (i >= 4 && (i & 1) == 0 && word < m->bound && e->r->relabel[word])
      word = e->r->relabel[word];
    cldm_spirv_buf_push(e->b, word);
  }
  cldm_spirv_buf_end(e->b, at);
}

/* A call of an allocating function: the heap (and the stop flag) appended. */
static void emit_call(fn_emit *e, uint32_t ii, int callee_stops) {
  const cldm_spirv_module *m = e->r->m;
  size_t c = cldm_spirv_buf_begin(e->b, SpvOpFunctionCall);
  cldm_spirv_buf_push_n(e->b, cldm_spirv_iw(m, ii) + 1, m->inst[ii].wc - 1u);
  cldm_spirv_buf_push(e->b, e->heap);
  if (callee_stops)
    cldm_spirv_buf_push(e->b, e->flag);
  cldm_spirv_buf_end(e->b, c);
  if (callee_stops)
    emit_stop(e, emit_flag_set(e), 0);
}

/* A kernel that may stop: its flag variable, right after the first block's label. */
static void emit_flag_variable(fn_emit *e) {
  uint32_t var[3] = {e->r->flag_ptr_type, e->flag, SpvStorageClassFunction};
  cldm_spirv_buf_inst(e->b, SpvOpVariable, var, 3);
}

static void emit_body(fn_emit *e, size_t *site, cldm_spirv_out *o) {
  cldm_spirv_rewrite *r = e->r;
  const cldm_spirv_module *m = r->m;
  const cldm_spirv_function *fn = &m->fn[e->f];
  int store_flag = 0; /* a root's flag: 0 once the first block's variables are declared */
  for (uint32_t ii = fn->begin + 1 + fn->nparams; ii <= fn->end; ii++) {
    uint32_t op = m->inst[ii].op;
    if (store_flag && op != SpvOpVariable && op != SpvOpLine && op != SpvOpNoLine) {
      uint32_t st[2] = {e->flag, r->flag_zero};
      cldm_spirv_buf_inst(e->b, SpvOpStore, st, 2);
      store_flag = 0;
    }
    if (*site < r->d->nsites && r->d->sites[*site].ii == ii) {
      const cldm_spirv_site *s = &r->d->sites[(*site)++];
      uint32_t raw = cldm_spirv_rewrite_site(r, e->b, s, e->heap);
      if (s->throws)
        emit_new_check(e, raw);
      continue;
    }
    const uint32_t *w = cldm_spirv_iw(m, ii);
    if (op == SpvOpFunctionCall) {
      uint32_t callee = cldm_spirv_fn_index(m, w[3]);
      if (callee != CLDM_SPIRV_NONE && r->cg->allocates[callee]) {
        /* a root that may stop is called only by its wrapper, which returns at once */
        emit_call(e, ii, e->stops && r->cg->throws[callee] && !r->is_root[callee]);
        continue;
      }
    }
    if (op == SpvOpPhi && e->stops) {
      emit_phi(e, ii);
      continue;
    }
    cldm_spirv_out_copy(e->b, m, ii);
    if (op == SpvOpLabel && ii == fn->body && e->stops && r->is_root[e->f]) {
      emit_flag_variable(e);
      cldm_spirv_rewrite_name(o, e->flag, CLDM_SPIRV_STOP_FLAG_NAME);
      store_flag = 1;
    }
  }
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
  fn_emit e = {.r = r, .b = b, .f = f, .heap = r->fn_heap[f]};
  e.stops = r->fn_flag && r->fn_flag[f];
  if (e.stops) {
    e.flag = r->fn_flag[f];
    while (e.stop < r->nstops && r->stops[e.stop].ii < fn->begin)
      e.stop++;
  }
  size_t at = b->n;
  cldm_spirv_out_copy(b, m, fn->begin);
  if (!b->failed)
    b->w[at + 4] = r->fn_type[f];
  for (uint32_t i = 0; i < fn->nparams; i++)
    cldm_spirv_out_copy(b, m, fn->begin + 1 + i);
  uint32_t param[2] = {r->l->heap_type, e.heap};
  cldm_spirv_buf_inst(b, SpvOpFunctionParameter, param, 2);
  cldm_spirv_rewrite_name(o, e.heap, CLDM_SPIRV_HEAP_PARAM_NAME);
  if (e.stops && !r->is_root[f]) {
    uint32_t flag[2] = {r->flag_ptr_type, e.flag};
    cldm_spirv_buf_inst(b, SpvOpFunctionParameter, flag, 2);
    cldm_spirv_rewrite_name(o, e.flag, CLDM_SPIRV_STOP_FLAG_NAME);
  }
  emit_body(&e, site, o);
}

cldm_spirv_status cldm_spirv_rewrite_functions(cldm_spirv_rewrite *r, cldm_spirv_out *o,
                                               cldm_spirv_error *err) {
  const cldm_spirv_module *m = r->m;
  size_t site = 0;
  for (uint32_t f = 0; f < m->nfn; f++) {
    if (r->d->import_op[f])
      continue; /* Import-form declaration: resolved by the allocator */
    cldm_spirv_buf *b = m->fn[f].body ? &o->sec[CLDM_SPIRV_SEC_FUNCTION] : &o->decls;
    if (cldm_spirv_umul_stand_in(m, f))
      cldm_spirv_umul_emit(r, b, f, o);
    else
      emit_function(r, b, f, &site, o);
  }
  if (site != r->d->nsites)
    return cldm_spirv_fail(err, CLDM_SPIRV_E_INVALID, m->inst[r->d->sites[site].ii].off,
                           "allocation site outside an allocating function (internal error)");
  return CLDM_SPIRV_OK;
}
