/*
 * link.c — links the allocator module (device/, contract in device/include/cldm_device.h) into
 * a lowered module, as SPIRV-Tools' linker does for two modules: the allocator's ids are
 * shifted above the user's (and above ids the rewrite adds), types and constants identical to
 * one of the user's are unified with it (SPIR-V forbids duplicate non-aggregate types), extended
 * instruction imports are shared by name, capabilities and extensions merged, names and
 * decorations carried over. Its Export linkage is stripped: after linking, the allocator's
 * functions are ordinary internal functions of the module (no symbol can clash with the user's,
 * and a driver may inline them). Two exceptions keep readers built on llvm-spirv (pocl's)
 * working:
 *   - functions whose linkage name starts with "spirv." (llvm-spirv's stand-ins for LLVM
 *     intrinsics, e.g. spirv.llvm_umul_with_overflow_i64) keep their Export: the reader turns
 *     them back into intrinsic declarations, which LLVM requires to be external; if the user's
 *     module exports the same one with the same type, the allocator's copy is dropped and its
 *     calls go to the user's (the reader would merge the two by name anyway);
 *   - the reader names LLVM functions and globals by OpName and merges equal names, so an
 *     allocator function or global whose name the user's module also gives to a function or
 *     global is renamed "<name>.cldm".
 * Entry points, OpSource and OpModuleProcessed of the allocator are not carried. Its functions
 * are emitted with blocks in reverse post-order (blockorder.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static cldm_spirv_status afail(cldm_spirv_error *err, size_t word, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static cldm_spirv_status afail(cldm_spirv_error *err, size_t word, const char *fmt, ...) {
  char msg[200];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return cldm_spirv_fail(err, CLDM_SPIRV_E_ALLOCATOR, word, "allocator module: %s", msg);
}

/* heap / ptr: OpTypePointer CrossWorkgroup to an 8-bit integer (cldm_device.h) */
static int is_global_void_ptr(const cldm_spirv_module *a, uint32_t type) {
  uint32_t storage, pointee;
  return cldm_spirv_pointer(a, type, &storage, &pointee) &&
         storage == SpvStorageClassCrossWorkgroup && cldm_spirv_int_width(a, pointee) == 8;
}

static cldm_spirv_status check_export(cldm_spirv_link *l, unsigned op, uint32_t bits,
                                      cldm_spirv_error *err) {
  const cldm_spirv_module *a = &l->a;
  const cldm_spirv_function *f = &a->fn[l->fn_index[op]];
  size_t word = a->inst[f->begin].off;
  const char *name = cldm_spirv_ext_names[op];
  if (!f->body)
    return afail(err, word, "cldm_%s has no body", name);
  if (f->nparams != 1u + cldm_spirv_ext_noperands[op])
    return afail(err, word, "cldm_%s has %u parameters, the contract has %u", name, f->nparams,
                 1u + cldm_spirv_ext_noperands[op]);
  for (uint32_t i = 0; i < f->nparams; i++) {
    const cldm_spirv_inst *p = &a->inst[f->begin + 1 + i];
    uint32_t type = p->wc >= 3 ? a->w[p->off + 1] : 0;
    int ok = i == 0 || cldm_spirv_ext_roles[op][i - 1] == CLDM_SPIRV_EXT_ROLE_PTR
                 ? is_global_void_ptr(a, type)
                 : cldm_spirv_int_width(a, type) == bits;
    if (!ok)
      return afail(err, p->off, "cldm_%s parameter %u has the wrong type (contract: %s)", name,
                   i + 1, i == 0 ? "__global void *heap" :
                   cldm_spirv_ext_roles[op][i - 1] == CLDM_SPIRV_EXT_ROLE_PTR ? "__global void *"
                                                                              : "size_t");
  }
  if (cldm_spirv_ext_returns_void[op] ? cldm_spirv_def_op(a, f->result_type) != SpvOpTypeVoid
                                      : !is_global_void_ptr(a, f->result_type))
    return afail(err, word, "cldm_%s returns the wrong type (contract: %s)", name,
                 cldm_spirv_ext_returns_void[op] ? "void" : "__global void *");
  return CLDM_SPIRV_OK;
}

static cldm_spirv_status find_exports(cldm_spirv_link *l, const uint8_t *needed,
                                      cldm_spirv_error *err) {
  const cldm_spirv_module *a = &l->a;
  for (unsigned op = 0; op <= CLDM_SPIRV_EXT_MAX; op++)
    l->fn_index[op] = CLDM_SPIRV_NONE;
  for (uint32_t ii = a->sec[CLDM_SPIRV_SEC_ANNOTATION]; ii < a->sec[CLDM_SPIRV_SEC_GLOBAL]; ii++) {
    uint32_t target, type;
    char name[64];
    if (!cldm_spirv_linkage(a, ii, &target, &type, name, sizeof name))
      continue;
    if (type == SpvLinkageTypeImport)
      return afail(err, a->inst[ii].off, "imports \"%s\"; it must be self-contained", name);
    for (unsigned op = 1; op <= CLDM_SPIRV_EXT_MAX; op++)
      if (cldm_spirv_ext_names[op] && !strncmp(name, "cldm_", 5) &&
          !strcmp(name + 5, cldm_spirv_ext_names[op]) &&
          cldm_spirv_fn_index(a, target) != CLDM_SPIRV_NONE)
        l->fn_index[op] = cldm_spirv_fn_index(a, target);
  }
  uint32_t bits = a->addressing == SpvAddressingModelPhysical32 ? 32 : 64;
  for (unsigned op = 1; op <= CLDM_SPIRV_EXT_MAX; op++) {
    if (!needed[op] && op != CLDM_SPIRV_EXT_MALLOC)
      continue;
    if (l->fn_index[op] == CLDM_SPIRV_NONE)
      return afail(err, 0, "does not export cldm_%s (LinkageAttributes Export)",
                   cldm_spirv_ext_names[op]);
  }
  for (unsigned op = 1; op <= CLDM_SPIRV_EXT_MAX; op++) {
    cldm_spirv_status st;
    if (l->fn_index[op] != CLDM_SPIRV_NONE && (st = check_export(l, op, bits, err)))
      return st;
  }
  l->size_bits = bits;
  return CLDM_SPIRV_OK;
}

/* Result id position of instruction ii (0 if none). */
static uint32_t result_pos(const cldm_spirv_module *m, uint32_t ii) {
  const cldm_spirv_opcode_desc *d = cldm_spirv_opdesc(m->inst[ii].op);
  if (!d || !(d->flags & CLDM_SPIRV_OPF_RESULT))
    return 0;
  return (d->flags & CLDM_SPIRV_OPF_TYPE) ? 2 : 1;
}

/* The id of the user's OpExtInstImport with the same name as the allocator's ii, or 0. */
static uint32_t same_import(const cldm_spirv_module *u, const cldm_spirv_module *a, uint32_t ii) {
  const uint32_t *w = cldm_spirv_iw(a, ii);
  uint32_t wc = a->inst[ii].wc;
  for (uint32_t j = u->sec[CLDM_SPIRV_SEC_EXTINSTIMPORT]; j < u->sec[CLDM_SPIRV_SEC_MEMORYMODEL];
       j++) {
    const uint32_t *v = cldm_spirv_iw(u, j);
    if (u->inst[j].wc == wc && !memcmp(v + 2, w + 2, (wc - 2) * sizeof *w))
      return v[1];
  }
  return 0;
}

/* Unifies global ii with an identical user (or earlier) declaration if possible. */
static cldm_spirv_status unify(cldm_spirv_link *l, uint32_t ii, uint32_t rid, cldm_spirv_typetab *tt,
                               uint32_t *next_id, uint32_t *key, uint16_t *pos,
                               cldm_spirv_error *err) {
  const cldm_spirv_module *a = &l->a;
  const uint32_t *w = cldm_spirv_iw(a, ii);
  uint32_t wc = a->inst[ii].wc, rp = result_pos(a, ii);
  size_t n;
  cldm_spirv_status st = cldm_spirv_id_positions(a, ii, pos, &n, NULL, err);
  if (st)
    return st;
  int complete = 1;
  memcpy(key, w, wc * sizeof *w);
  for (size_t i = 0; i < n; i++) {
    if (pos[i] == rp)
      continue;
    uint32_t to = l->map[w[pos[i]]];
    complete &= to != 0;
    key[pos[i]] = to;
  }
  /* drop the result word to form the key */
  memmove(key + rp, key + rp + 1, (wc - rp - 1) * sizeof *key);
  key[0] = a->inst[ii].op | (wc - 1) << 16;
  uint32_t found = complete ? cldm_spirv_typetab_find(tt, key, wc - 1) : 0;
  if (found) {
    l->map[rid] = found;
    l->unified[rid] = 1;
    return CLDM_SPIRV_OK;
  }
  l->map[rid] = (*next_id)++;
  if (complete && cldm_spirv_typetab_add(tt, key, wc - 1, l->map[rid]))
    return cldm_spirv_fail(err, CLDM_SPIRV_E_NOMEM, 0, "out of memory");
  return CLDM_SPIRV_OK;
}

/* Linkage name (decoded into buf) of an Export of m's id, or NULL. */
static const char *export_name(const cldm_spirv_module *m, uint32_t id, char *buf, size_t cap) {
  for (uint32_t ii = m->sec[CLDM_SPIRV_SEC_ANNOTATION]; ii < m->sec[CLDM_SPIRV_SEC_GLOBAL]; ii++) {
    uint32_t target, type;
    if (cldm_spirv_linkage(m, ii, &target, &type, buf, cap) && target == id &&
        type == SpvLinkageTypeExport)
      return buf;
  }
  return NULL;
}

/* The user's function exported as `name` ("spirv." stand-in) with type `type`, or 0. */
static uint32_t user_stand_in(const cldm_spirv_module *u, const char *name, uint32_t type) {
  for (uint32_t ii = u->sec[CLDM_SPIRV_SEC_ANNOTATION]; ii < u->sec[CLDM_SPIRV_SEC_GLOBAL]; ii++) {
    uint32_t target, ltype;
    char buf[128];
    if (!cldm_spirv_linkage(u, ii, &target, &ltype, buf, sizeof buf) ||
        ltype != SpvLinkageTypeExport || strcmp(buf, name))
      continue;
    uint32_t f = cldm_spirv_fn_index(u, target);
    if (f != CLDM_SPIRV_NONE && u->fn[f].type_id == type && u->fn[f].body)
      return target;
  }
  return 0;
}

/* An allocator function that is an llvm-spirv intrinsic stand-in the user also has: map it to
 * the user's and drop all of its own ids. Returns 1 if so. */
static int share_stand_in(cldm_spirv_link *l, uint32_t f) {
  const cldm_spirv_module *a = &l->a;
  const cldm_spirv_function *fn = &a->fn[f];
  char name[128];
  if (!export_name(a, fn->id, name, sizeof name) || strncmp(name, "spirv.", 6))
    return 0;
  uint32_t same = user_stand_in(l->u, name, l->map[fn->type_id]);
  if (!same)
    return 0;
  l->map[fn->id] = same;
  l->shared_fn[f] = 1;
  for (uint32_t ii = fn->begin; ii <= fn->end; ii++) {
    const cldm_spirv_opcode_desc *d = cldm_spirv_opdesc(a->inst[ii].op);
    if (d && (d->flags & CLDM_SPIRV_OPF_RESULT))
      l->unified[cldm_spirv_iw(a, ii)[(d->flags & CLDM_SPIRV_OPF_TYPE) ? 2 : 1]] = 1;
  }
  return 1;
}

static cldm_spirv_status map_ids(cldm_spirv_link *l, const cldm_spirv_module *u,
                                 cldm_spirv_typetab *tt, uint32_t *next_id,
                                 cldm_spirv_error *err) {
  const cldm_spirv_module *a = &l->a;
  uint32_t *key = malloc(0x10000 * sizeof *key);
  uint16_t *pos = malloc(0x10000 * sizeof *pos);
  cldm_spirv_status st = CLDM_SPIRV_OK;
  if (!key || !pos)
    st = cldm_spirv_fail(err, CLDM_SPIRV_E_NOMEM, 0, "out of memory");
  for (uint32_t ii = 0; ii < a->ninst && !st; ii++) {
    const uint32_t *w = cldm_spirv_iw(a, ii);
    uint32_t op = a->inst[ii].op, rp = result_pos(a, ii);
    if (op == SpvOpTypeForwardPointer && a->inst[ii].wc >= 2 && !l->map[w[1]])
      l->map[w[1]] = (*next_id)++;
    if (!rp)
      continue;
    uint32_t rid = w[rp];
    if (op == SpvOpFunction && share_stand_in(l, a->ids[rid].aux)) {
      ii = a->fn[a->ids[rid].aux].end; /* the function's own ids are dropped */
      continue;
    }
    if (l->map[rid])
      continue;
    uint32_t same = op == SpvOpExtInstImport ? same_import(u, a, ii) : 0;
    if (same) {
      l->map[rid] = same;
      l->unified[rid] = 1;
    } else if (cldm_spirv_section_of(a, ii) == CLDM_SPIRV_SEC_GLOBAL &&
               cldm_spirv_typetab_unifiable(op) && !l->decorated[rid]) {
      st = unify(l, ii, rid, tt, next_id, key, pos, err);
    } else {
      l->map[rid] = (*next_id)++;
    }
  }
  free(key);
  free(pos);
  return st;
}

cldm_spirv_status cldm_spirv_link_prepare(cldm_spirv_link *l, const uint32_t *words, size_t n,
                                          const cldm_spirv_module *u, cldm_spirv_typetab *tt,
                                          uint32_t *next_id, const uint8_t *needed,
                                          cldm_spirv_error *err) {
  memset(l, 0, sizeof *l);
  l->u = u;
  cldm_spirv_status st = cldm_spirv_module_parse(&l->a, words, n * sizeof *words, err);
  if (!st)
    st = cldm_spirv_check(&l->a, NULL, err);
  if (st)
    return cldm_spirv_fail_allocator(err, st);
  const cldm_spirv_module *a = &l->a;
  if (a->addressing != u->addressing)
    return afail(err, 0, "its addressing model %u differs from the module's %u", a->addressing,
                 u->addressing);
  if (a->memory_model != u->memory_model)
    return afail(err, 0, "its memory model %u differs from the module's %u", a->memory_model,
                 u->memory_model);
  if ((st = find_exports(l, needed, err)))
    return st;
  l->map = calloc(a->bound, sizeof *l->map);
  l->unified = calloc(a->bound, 1);
  l->shared_fn = calloc(a->nfn ? a->nfn : 1, 1);
  l->decorated = cldm_spirv_decorated_ids(a);
  if (!l->map || !l->unified || !l->decorated || !l->shared_fn)
    return cldm_spirv_fail(err, CLDM_SPIRV_E_NOMEM, 0, "out of memory");
  if ((st = map_ids(l, u, tt, next_id, err)))
    return st;
  for (unsigned op = 1; op <= CLDM_SPIRV_EXT_MAX; op++) {
    if (l->fn_index[op] == CLDM_SPIRV_NONE)
      continue;
    const cldm_spirv_function *f = &a->fn[l->fn_index[op]];
    l->fn[op] = l->map[f->id];
    l->ret[op] = l->map[f->result_type];
    for (uint32_t i = 0; i < f->nparams && i < 3; i++)
      l->param[op][i] = l->map[a->w[a->inst[f->begin + 1 + i].off + 1]];
  }
  /* module-scope variables: SPIR-V 1.4+ entry points list every one their call tree uses */
  l->globals = malloc(((size_t)a->sec[CLDM_SPIRV_SEC_FUNCTION] + 1) * sizeof *l->globals);
  if (!l->globals)
    return cldm_spirv_fail(err, CLDM_SPIRV_E_NOMEM, 0, "out of memory");
  for (uint32_t ii = a->sec[CLDM_SPIRV_SEC_GLOBAL]; ii < a->sec[CLDM_SPIRV_SEC_FUNCTION]; ii++)
    if (a->inst[ii].op == SpvOpVariable && a->inst[ii].wc >= 4)
      l->globals[l->nglobals++] = l->map[cldm_spirv_iw(a, ii)[2]];
  l->heap_type = l->param[CLDM_SPIRV_EXT_MALLOC][0];
  l->size_type = l->param[CLDM_SPIRV_EXT_MALLOC][1];
  return CLDM_SPIRV_OK;
}

/* Appends instruction ii of the allocator with every id mapped. */
static cldm_spirv_status emit_mapped(cldm_spirv_link *l, cldm_spirv_buf *b, uint32_t ii,
                                     uint16_t *pos, cldm_spirv_error *err) {
  const cldm_spirv_module *a = &l->a;
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
  const cldm_spirv_module *a = &l->a;
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
    if (op != SpvOpGroupDecorate && op != SpvOpGroupMemberDecorate && wc >= 2 &&
        l->unified[w[1]])
      return 1;
    if (op == SpvOpDecorate && wc >= 4 && w[2] == SpvDecorationLinkageAttributes) {
      char prefix[8];
      cldm_spirv_string(w + 3, wc - 3, prefix, sizeof prefix);
      return strncmp(prefix, "spirv.", 6) != 0; /* Export stripped, intrinsics' kept */
    }
    return op != SpvOpGroupDecorate && op != SpvOpGroupMemberDecorate && wc >= 2 &&
           l->unified[w[1]];
  default: {
    uint32_t rp = result_pos(a, ii);
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
  const cldm_spirv_module *a = &l->a, *u = l->u;
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
  const cldm_spirv_module *a = &l->a;
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
  const cldm_spirv_module *a = &l->a;
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
    for (uint32_t ii = order[k]; !st && ii < f->end && (ii == order[k] || a->inst[ii].op != SpvOpLabel);
         ii++)
      st = emit_mapped(l, b, ii, pos, err);
  free(order);
  if (!st)
    st = emit_mapped(l, b, f->end, pos, err);
  return st;
}

cldm_spirv_status cldm_spirv_link_emit(cldm_spirv_link *l, cldm_spirv_out *o,
                                       cldm_spirv_error *err) {
  const cldm_spirv_module *a = &l->a;
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

void cldm_spirv_link_free(cldm_spirv_link *l) {
  cldm_spirv_module_free(&l->a);
  free(l->map);
  free(l->unified);
  free(l->shared_fn);
  free(l->globals);
  free(l->decorated);
  memset(l, 0, sizeof *l);
}
