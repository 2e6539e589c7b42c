/*
 * typetab.c — an open-addressing hash of type and constant declarations, keyed by the
 * instruction without its result id. Linking uses it to unify the allocator's types and
 * constants with identical ones of the user's module (SPIR-V forbids duplicate non-aggregate
 * types); the rewrite uses it to find or create the few types and constants it needs.
 * Structs are unified too when undecorated (identical members, no Offset/CPacked/...): SPIR-V
 * would allow duplicates, but llvm-spirv's stand-ins for intrinsics returning structs
 * (spirv.llvm_umul_with_overflow_*) must have one type to be shared (link.c).
 * Keys are copied into the table's own arena, so callers may pass temporaries.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static uint32_t hash_words(const uint32_t *w, size_t n) {
  uint32_t h = 2166136261u; /* FNV-1a over the bytes of the words */
  for (size_t i = 0; i < n; i++)
    for (int k = 0; k < 4; k++) {
      h ^= (w[i] >> (8 * k)) & 0xFFu;
      h *= 16777619u;
    }
  return h ? h : 1;
}

uint32_t cldm_spirv_typetab_find(const cldm_spirv_typetab *t, const uint32_t *key, size_t len) {
  if (!t->cap)
    return 0;
  uint32_t h = hash_words(key, len);
  for (size_t i = h & (t->cap - 1);; i = (i + 1) & (t->cap - 1)) {
    const struct cldm_spirv_typetab_entry *e = &t->e[i];
    if (!e->hash)
      return 0;
    if (e->hash == h && e->len == len && !memcmp(t->keys.w + e->off, key, len * sizeof *key))
      return e->id;
  }
}

static int rehash(cldm_spirv_typetab *t) {
  size_t cap = t->cap ? t->cap * 2 : 256;
  struct cldm_spirv_typetab_entry *e = calloc(cap, sizeof *e);
  if (!e)
    return -1;
  for (size_t i = 0; i < t->cap; i++) {
    if (!t->e[i].hash)
      continue;
    size_t j = t->e[i].hash & (cap - 1);
    while (e[j].hash)
      j = (j + 1) & (cap - 1);
    e[j] = t->e[i];
  }
  free(t->e);
  t->e = e;
  t->cap = cap;
  return 0;
}

int cldm_spirv_typetab_add(cldm_spirv_typetab *t, const uint32_t *key, size_t len, uint32_t id) {
  if (cldm_spirv_typetab_find(t, key, len))
    return 0; /* first declaration wins */
  if ((t->n + 1) * 2 > t->cap && rehash(t))
    return -1;
  size_t off = t->keys.n;
  cldm_spirv_buf_push_n(&t->keys, key, len);
  if (t->keys.failed)
    return -1;
  uint32_t h = hash_words(key, len);
  size_t j = h & (t->cap - 1);
  while (t->e[j].hash)
    j = (j + 1) & (t->cap - 1);
  t->e[j] = (struct cldm_spirv_typetab_entry){h, (uint32_t)off, (uint32_t)len, id};
  t->n++;
  return 0;
}

void cldm_spirv_typetab_free(cldm_spirv_typetab *t) {
  free(t->e);
  cldm_spirv_buf_free(&t->keys);
  memset(t, 0, sizeof *t);
}

int cldm_spirv_typetab_unifiable(uint32_t opcode) {
  switch (opcode) {
  case SpvOpTypeVoid:
  case SpvOpTypeBool:
  case SpvOpTypeInt:
  case SpvOpTypeFloat:
  case SpvOpTypeVector:
  case SpvOpTypeMatrix:
  case SpvOpTypeImage:
  case SpvOpTypeSampler:
  case SpvOpTypeSampledImage:
  case SpvOpTypeArray:
  case SpvOpTypeRuntimeArray:
  case SpvOpTypeStruct:
  case SpvOpTypePointer:
  case SpvOpTypeFunction:
  case SpvOpTypeEvent:
  case SpvOpTypeDeviceEvent:
  case SpvOpTypeReserveId:
  case SpvOpTypeQueue:
  case SpvOpTypePipe:
  case SpvOpTypePipeStorage:
  case SpvOpTypeNamedBarrier:
  case SpvOpConstantTrue:
  case SpvOpConstantFalse:
  case SpvOpConstant:
  case SpvOpConstantComposite:
  case SpvOpConstantSampler:
  case SpvOpConstantNull:
    return 1;
  default:
    return 0;
  }
}

/* Key of instruction ii: its words without the result id (word 0 keeps opcode, new count). */
static size_t make_key(const cldm_spirv_module *m, uint32_t ii, uint32_t *key) {
  const uint32_t *w = cldm_spirv_iw(m, ii);
  uint32_t wc = m->inst[ii].wc, op = m->inst[ii].op;
  const cldm_spirv_opcode_desc *d = cldm_spirv_opdesc(op);
  uint32_t rpos = (d->flags & CLDM_SPIRV_OPF_TYPE) ? 2 : 1;
  size_t n = 0;
  key[n++] = op | (wc - 1) << 16;
  for (uint32_t i = 1; i < wc; i++)
    if (i != rpos)
      key[n++] = w[i];
  return n;
}

int cldm_spirv_typetab_fill(cldm_spirv_typetab *t, const cldm_spirv_module *m,
                            const uint8_t *decorated) {
  uint32_t *key = malloc(0x10000 * sizeof *key);
  if (!key)
    return -1;
  int rc = 0;
  for (uint32_t ii = m->sec[CLDM_SPIRV_SEC_GLOBAL]; ii < m->sec[CLDM_SPIRV_SEC_FUNCTION]; ii++) {
    uint32_t op = m->inst[ii].op;
    if (!cldm_spirv_typetab_unifiable(op))
      continue;
    const cldm_spirv_opcode_desc *d = cldm_spirv_opdesc(op);
    uint32_t id = cldm_spirv_iw(m, ii)[(d->flags & CLDM_SPIRV_OPF_TYPE) ? 2 : 1];
    if (decorated && decorated[id])
      continue;
    if (cldm_spirv_typetab_add(t, key, make_key(m, ii, key), id)) {
      rc = -1;
      break;
    }
  }
  free(key);
  return rc;
}

static void mark(uint8_t *dec, const cldm_spirv_module *m, uint32_t id) {
  if (id < m->bound)
    dec[id] = 1;
}

uint8_t *cldm_spirv_decorated_ids(const cldm_spirv_module *m) {
  uint8_t *dec = calloc(m->bound, 1);
  if (!dec)
    return NULL;
  for (uint32_t ii = m->sec[CLDM_SPIRV_SEC_ANNOTATION]; ii < m->sec[CLDM_SPIRV_SEC_GLOBAL]; ii++) {
    const uint32_t *w = cldm_spirv_iw(m, ii);
    uint32_t wc = m->inst[ii].wc;
    switch (m->inst[ii].op) {
    case SpvOpDecorate:
    case SpvOpDecorateId:
    case SpvOpDecorateString:
    case SpvOpMemberDecorate:
    case SpvOpMemberDecorateString:
      if (wc >= 2)
        mark(dec, m, w[1]);
      break;
    case SpvOpGroupDecorate:
      for (uint32_t i = 2; i < wc; i++)
        mark(dec, m, w[i]);
      break;
    case SpvOpGroupMemberDecorate:
      for (uint32_t i = 2; i < wc; i += 2)
        mark(dec, m, w[i]);
      break;
    default:
      break;
    }
  }
  return dec;
}
