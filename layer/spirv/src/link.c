/*
 * link.c — prepares linking of the allocator module (device/, contract in
 * device/include/cldm_device.h) into a lowered module, as SPIRV-Tools' linker does for two
 * modules: the allocator's ids are
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
 *   - functions it imports named cldm_target_* (the "nv" variant: the PTX backend links their
 *     definitions) keep their Import linkage, so the lowered module imports them in turn;
 *   - the reader names LLVM functions and globals by OpName and merges equal names, so an
 *     allocator function or global whose name the user's module also gives to a function or
 *     global is renamed "<name>.cldm".
 * This file parses the allocator once (cldm_spirv_allocator_parse: passes 1 and 2, decorated
 * ids), then, per lowering, checks it against the user's module and its contract and maps its
 * ids; link_emit.c writes it out.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define afail cldm_spirv_fail_allocator_at

/* heap / ptr: OpTypePointer CrossWorkgroup to an 8-bit integer (cldm_device.h) */
static int is_global_void_ptr(const cldm_spirv_module *a, uint32_t type) {
  uint32_t storage, pointee;
  return cldm_spirv_pointer(a, type, &storage, &pointee) &&
         storage == SpvStorageClassCrossWorkgroup && cldm_spirv_int_width(a, pointee) == 8;
}

static cldm_spirv_status check_export(cldm_spirv_link *l, unsigned op, uint32_t bits,
                                      cldm_spirv_error *err) {
  const cldm_spirv_module *a = l->a;
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
                   i + 1,
                   i == 0 ? "__global void *heap"
                   : cldm_spirv_ext_roles[op][i - 1] == CLDM_SPIRV_EXT_ROLE_PTR ? "__global void *"
                                                                                : "size_t");
  }
  if (cldm_spirv_ext_returns_void[op] ? cldm_spirv_def_op(a, f->result_type) != SpvOpTypeVoid
                                      : !is_global_void_ptr(a, f->result_type))
    return afail(err, word, "cldm_%s returns the wrong type (contract: %s)", name,
                 cldm_spirv_ext_returns_void[op] ? "void" : "__global void *");
  return CLDM_SPIRV_OK;
}

/* cldm_new_failed(heap) -> void: counts a throwing operator new that failed (spec 2.2). */
static cldm_spirv_status check_new_failed(const cldm_spirv_module *a, uint32_t f,
                                          cldm_spirv_error *err) {
  const cldm_spirv_function *fn = &a->fn[f];
  const cldm_spirv_inst *p = &a->inst[fn->begin + 1];
  if (!fn->body || fn->nparams != 1 || p->wc < 3 || !is_global_void_ptr(a, a->w[p->off + 1]) ||
      cldm_spirv_def_op(a, fn->result_type) != SpvOpTypeVoid)
    return afail(err, a->inst[fn->begin].off,
                 "cldm_new_failed does not match the contract (void (__global void *heap))");
  return CLDM_SPIRV_OK;
}

static cldm_spirv_status find_exports(cldm_spirv_link *l, const uint8_t *needed,
                                      int need_new_failed, cldm_spirv_error *err) {
  const cldm_spirv_module *a = l->a;
  uint32_t new_failed = CLDM_SPIRV_NONE;
  for (unsigned op = 0; op <= CLDM_SPIRV_EXT_MAX; op++)
    l->fn_index[op] = CLDM_SPIRV_NONE;
  for (uint32_t ii = a->sec[CLDM_SPIRV_SEC_ANNOTATION]; ii < a->sec[CLDM_SPIRV_SEC_GLOBAL]; ii++) {
    uint32_t target, type;
    char name[64];
    if (!cldm_spirv_linkage(a, ii, &target, &type, name, sizeof name))
      continue;
    if (type == SpvLinkageTypeImport &&
        strncmp(name, CLDM_SPIRV_TARGET_PREFIX, sizeof(CLDM_SPIRV_TARGET_PREFIX) - 1))
      return afail(err, a->inst[ii].off,
                   "imports \"%s\"; it must be self-contained (only " CLDM_SPIRV_TARGET_PREFIX
                   "* functions, which a target backend provides, may be imported)",
                   name);
    if (type == SpvLinkageTypeImport)
      continue;
    if (!strcmp(name, "cldm_new_failed"))
      new_failed = cldm_spirv_fn_index(a, target);
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
  if (need_new_failed && new_failed == CLDM_SPIRV_NONE)
    return afail(err, 0,
                 "does not export cldm_new_failed (LinkageAttributes Export), which a "
                 "throwing operator new needs");
  if (new_failed != CLDM_SPIRV_NONE) {
    cldm_spirv_status st = check_new_failed(a, new_failed, err);
    if (st)
      return st;
    l->new_failed = a->fn[new_failed].id; /* mapped once the ids are */
  }
  l->size_bits = bits;
  return CLDM_SPIRV_OK;
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
static cldm_spirv_status unify(cldm_spirv_link *l, uint32_t ii, uint32_t rid,
                               cldm_spirv_typetab *tt, uint32_t *next_id, uint32_t *key,
                               uint16_t *pos, cldm_spirv_error *err) {
  const cldm_spirv_module *a = l->a;
  const uint32_t *w = cldm_spirv_iw(a, ii);
  uint32_t wc = a->inst[ii].wc, rp = cldm_spirv_result_pos(a, ii);
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
  const cldm_spirv_module *a = l->a;
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
                                 cldm_spirv_typetab *tt, uint32_t *next_id, cldm_spirv_error *err) {
  const cldm_spirv_module *a = l->a;
  uint32_t *key = malloc(0x10000 * sizeof *key);
  uint16_t *pos = malloc(0x10000 * sizeof *pos);
  cldm_spirv_status st = CLDM_SPIRV_OK;
  if (!key || !pos)
    st = cldm_spirv_fail(err, CLDM_SPIRV_E_NOMEM, 0, "out of memory");
  for (uint32_t ii = 0; ii < a->ninst && !st; ii++) {
    const uint32_t *w = cldm_spirv_iw(a, ii);
    uint32_t op = a->inst[ii].op, rp = cldm_spirv_result_pos(a, ii);
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

cldm_spirv_status cldm_spirv_allocator_parse(const uint32_t *words, size_t num_words,
                                             cldm_spirv_parsed_allocator **out,
                                             cldm_spirv_error *err) {
  cldm_spirv_error_clear(err);
  if (!out)
    return cldm_spirv_fail(err, CLDM_SPIRV_E_INVALID, 0, "out must not be NULL");
  *out = NULL;
  cldm_spirv_parsed_allocator *pa = calloc(1, sizeof *pa);
  if (!pa)
    return cldm_spirv_fail(err, CLDM_SPIRV_E_NOMEM, 0, "out of memory");
  cldm_spirv_status st = cldm_spirv_module_parse(&pa->a, words, num_words * sizeof *words, err);
  if (!st)
    st = cldm_spirv_check(&pa->a, NULL, err);
  if (st) {
    cldm_spirv_allocator_free(pa);
    return cldm_spirv_fail_allocator(err, st);
  }
  if (!(pa->decorated = cldm_spirv_decorated_ids(&pa->a))) {
    cldm_spirv_allocator_free(pa);
    return cldm_spirv_fail(err, CLDM_SPIRV_E_NOMEM, 0, "out of memory");
  }
  *out = pa;
  return CLDM_SPIRV_OK;
}

void cldm_spirv_allocator_free(cldm_spirv_parsed_allocator *allocator) {
  if (!allocator)
    return;
  cldm_spirv_module_free(&allocator->a);
  free(allocator->decorated);
  free(allocator);
}

cldm_spirv_status cldm_spirv_link_prepare(cldm_spirv_link *l, const cldm_spirv_parsed_allocator *pa,
                                          const cldm_spirv_module *u, cldm_spirv_typetab *tt,
                                          uint32_t *next_id, const uint8_t *needed,
                                          int need_new_failed, cldm_spirv_error *err) {
  memset(l, 0, sizeof *l);
  l->u = u;
  l->a = &pa->a;
  l->decorated = pa->decorated;
  cldm_spirv_status st;
  const cldm_spirv_module *a = l->a;
  if (a->addressing != u->addressing)
    return afail(err, 0, "its addressing model %u differs from the module's %u", a->addressing,
                 u->addressing);
  if (a->memory_model != u->memory_model)
    return afail(err, 0, "its memory model %u differs from the module's %u", a->memory_model,
                 u->memory_model);
  if ((st = find_exports(l, needed, need_new_failed, err)))
    return st;
  l->map = calloc(a->bound, sizeof *l->map);
  l->unified = calloc(a->bound, 1);
  l->shared_fn = calloc(a->nfn ? a->nfn : 1, 1);
  if (!l->map || !l->unified || !l->shared_fn)
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
  if (l->new_failed)
    l->new_failed = l->map[l->new_failed];
  l->heap_type = l->param[CLDM_SPIRV_EXT_MALLOC][0];
  l->size_type = l->param[CLDM_SPIRV_EXT_MALLOC][1];
  return CLDM_SPIRV_OK;
}

void cldm_spirv_link_free(cldm_spirv_link *l) {
  free(l->map);
  free(l->unified);
  free(l->shared_fn);
  free(l->globals);
  memset(l, 0, sizeof *l); /* the parsed allocator is the caller's */
}
