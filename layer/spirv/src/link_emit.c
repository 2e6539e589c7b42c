/*
 * link_emit.c — writes the allocator module into the output (second half of linking, see
 * link.c): each instruction with its ids mapped; capabilities and extensions merged without
 * duplicates; instructions unified with the user's, names and decorations of dropped ids,
 * OpSource/OpModuleProcessed, entry points and execution modes, and Export linkage (except
 * llvm-spirv's "spirv." intrinsic stand-ins) left out; names the user's module already gives to
 * a function or global renamed "<name>.cldm" (llvm-spirv's reader merges equal names); functions
 * with their blocks in reverse post-order (blockorder.c), so that they validate whatever order
 * their producer chose.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define afail cldm_spirv_fail_allocator_at

/* Appends instruction ii of the allocator with every id mapped. */
static cldm_spirv_status emit_mapped(cldm_spirv_link *l, cldm_spirv_buf *b, uint32_t ii,
                                     uint16_t *pos, cldm_spirv_error *err) {
  const cldm_spirv_module *a = l->a;
  size_t n;
  int opaque;
  cldm_spirv_status st = cldm_spirv_id_positions(a, ii, pos, &n, &opaque, err);
  if (st)
    return cldm_spirv_fail_allocator(err, st);
  if (opaque)
    return afail(err, a->inst[ii].off,
                 "%s uses an extended instruction set or number the engine cannot remap",
                 cldm_spirv_opname(a->inst[ii].op));
  size_t at = b->n;
  cldm_spirv_out_copy(b, a, ii);
  if (b->failed)
    return CLDM_SPIRV_OK; /* reported by cldm_spirv_out_finish */
  for (size_t i = 0; i < n; i++)
    b->w[at + pos[i]] = l->map[b->w[at + pos[i]]];
  return CLDM_SPIRV_OK;
}

static int has_extension(const cldm_spirv_buf *b, const uint32_t *w, uint32_t wc) {
  for (size_t i = 0; i < b->n; i += b->w[i] >> 16)
    if ((b->w[i] >> 16) == wc && !memcmp(b->w + i, w, wc * sizeof *w))
      return 1;
  return 0;
}

/* Is instruction ii one the output does not carry? */
static int skipped(const cldm_spirv_link *l, uint32_t ii, unsigned sec) {
  const cldm_spirv_module *a = l->a;
  const uint32_t *w = cldm_spirv_iw(a, ii);
  uint32_t op = a->inst[ii].op, wc = a->inst[ii].wc;
  switch (sec) {
  case CLDM_SPIRV_SEC_MEMORYMODEL:
  case CLDM_SPIRV_SEC_ENTRYPOINT:
  case CLDM_SPIRV_SEC_EXECMODE:
  case CLDM_SPIRV_SEC_DEBUG_C:
    return 1;
  case CLDM_SPIRV_SEC_DEBUG_A:
    return op != SpvOpString;
  case CLDM_SPIRV_SEC_DEBUG_B:
    return wc >= 2 && l->unified[w[1]];
  case CLDM_SPIRV_SEC_ANNOTATION:
    if (op != SpvOpGroupDecorate && op != SpvOpGroupMemberDecorate && wc >= 2 && l->unified[w[1]])
      return 1;
    if (op == SpvOpDecorate && wc >= 4 && w[2] == SpvDecorationLinkageAttributes) {
      char prefix[8];
      cldm_spirv_string(w + 3, wc - 3, prefix, sizeof prefix);
      return strncmp(prefix, "spirv.", 6) != 0; /* Export stripped, intrinsics' kept */
    }
    return op != SpvOpGroupDecorate && op != SpvOpGroupMemberDecorate && wc >= 2 &&
           l->unified[w[1]];
  default: {
    uint32_t rp = cldm_spirv_result_pos(a, ii);
    return op == SpvOpExtInstImport ? l->unified[w[1]] : (rp && l->unified[w[rp]]);
  }
  }
}

/* 1 if id names a function or a module-scope variable of m. */
static int global_object(const cldm_spirv_module *m, uint32_t id) {
  uint32_t op = cldm_spirv_def_op(m, id);
  return op == SpvOpFunction ||
         (op == SpvOpVariable && m->ids[id].def - 1 < m->sec[CLDM_SPIRV_SEC_FUNCTION]);
}

/* 1 if the user's module names a function or global variable like allocator OpName ii. */
static int name_taken(const cldm_spirv_link *l, uint32_t ii) {
  const cldm_spirv_module *a = l->a, *u = l->u;
  const uint32_t *w = cldm_spirv_iw(a, ii);
  uint32_t wc = a->inst[ii].wc;
  if (a->inst[ii].op != SpvOpName || wc < 3 || !global_object(a, w[1]))
    return 0;
  size_t len = cldm_spirv_string_len(w + 2, wc - 2);
  char prefix[8];
  cldm_spirv_string(w + 2, wc - 2, prefix, sizeof prefix);
  if (len == SIZE_MAX || len == 0 || !strncmp(prefix, "spirv.", 6))
    return 0;
  for (uint32_t j = u->sec[CLDM_SPIRV_SEC_DEBUG_B]; j < u->sec[CLDM_SPIRV_SEC_DEBUG_C]; j++) {
    const uint32_t *v = cldm_spirv_iw(u, j);
    if (u->inst[j].op == SpvOpName && u->inst[j].wc == wc && !memcmp(v + 2, w + 2, (wc - 2) * 4) &&
        global_object(u, v[1]))
      return 1;
  }
  return 0;
}

static void emit_renamed(const cldm_spirv_link *l, cldm_spirv_buf *b, uint32_t ii) {
  const cldm_spirv_module *a = l->a;
  const uint32_t *w = cldm_spirv_iw(a, ii);
  uint32_t wc = a->inst[ii].wc;
  size_t len = cldm_spirv_string_len(w + 2, wc - 2);
  char *name = malloc(len + 8);
  if (!name) {
    b->failed = 1;
    return;
  }
  cldm_spirv_string(w + 2, wc - 2, name, len + 1);
  strcat(name, ".cldm");
  size_t at = cldm_spirv_buf_begin(b, SpvOpName);
  cldm_spirv_buf_push(b, l->map[w[1]]);
  cldm_spirv_buf_string(b, name, strlen(name));
  cldm_spirv_buf_end(b, at);
  free(name);
}

static cldm_spirv_status emit_function(cldm_spirv_link *l, cldm_spirv_buf *b,
                                       const cldm_spirv_function *f, uint16_t *pos,
                                       cldm_spirv_error *err) {
  const cldm_spirv_module *a = l->a;
  if (!f->body)
    return afail(err, a->inst[f->begin].off, "function %%%u has no body", f->id);
  cldm_spirv_status st = CLDM_SPIRV_OK;
  for (uint32_t ii = f->begin; ii < f->body; ii++)
    if ((st = emit_mapped(l, b, ii, pos, err)))
      return st;
  uint32_t nblocks = 0;
  for (uint32_t ii = f->body; ii < f->end; ii++)
    nblocks += a->inst[ii].op == SpvOpLabel;
  uint32_t *order = malloc(nblocks * sizeof *order), n = 0;
  if (!order || cldm_spirv_blockorder(a, f, order, &n)) {
    free(order);
    return cldm_spirv_fail(err, CLDM_SPIRV_E_NOMEM, 0, "out of memory");
  }
  for (uint32_t k = 0; k < n && !st; k++)
    for (uint32_t ii = order[k];
         !st && ii < f->end && (ii == order[k] || a->inst[ii].op != SpvOpLabel); ii++)
      st = emit_mapped(l, b, ii, pos, err);
  free(order);
  if (!st)
    st = emit_mapped(l, b, f->end, pos, err);
  return st;
}

cldm_spirv_status cldm_spirv_link_emit(cldm_spirv_link *l, cldm_spirv_out *o,
                                       cldm_spirv_error *err) {
  const cldm_spirv_module *a = l->a;
  uint16_t *pos = malloc(0x10000 * sizeof *pos);
  if (!pos)
    return cldm_spirv_fail(err, CLDM_SPIRV_E_NOMEM, 0, "out of memory");
  cldm_spirv_status st = CLDM_SPIRV_OK;
  for (unsigned s = 0; s < CLDM_SPIRV_SEC_FUNCTION && !st; s++) {
    for (uint32_t ii = a->sec[s]; ii < a->sec[s + 1] && !st; ii++) {
      const uint32_t *w = cldm_spirv_iw(a, ii);
      if (s == CLDM_SPIRV_SEC_CAPABILITY) {
        if (a->inst[ii].wc >= 2)
          cldm_spirv_out_capability(o, w[1]);
      } else if (s == CLDM_SPIRV_SEC_EXTENSION) {
        if (!has_extension(&o->sec[s], w, a->inst[ii].wc))
          cldm_spirv_out_copy(&o->sec[s], a, ii);
      } else if (s == CLDM_SPIRV_SEC_DEBUG_B && !skipped(l, ii, s) && name_taken(l, ii)) {
        emit_renamed(l, &o->sec[s], ii);
      } else if (!skipped(l, ii, s)) {
        st = emit_mapped(l, &o->sec[s], ii, pos, err);
      }
    }
  }
  for (uint32_t f = 0; f < a->nfn && !st; f++)
    if (!l->shared_fn[f])
      st = emit_function(l, &o->sec[CLDM_SPIRV_SEC_FUNCTION], &a->fn[f], pos, err);
  free(pos);
  return st;
}
