/*
 * grammar.c — lookups in the grammar tables generated from SPIRV-Headers (gen/gen_tables.py):
 * opcode descriptions and names, enumerants of an operand kind, instructions of an extended
 * set. Depends on the tables alone, so every other part of the engine may use it (error
 * messages name opcodes, pass 1 needs the logical layout, the walker needs operand lists).
 */
#include "internal.h"

const cldm_spirv_opcode_desc *cldm_spirv_opdesc(uint32_t opcode) {
  if (opcode > CLDM_SPIRV_MAX_OPCODE || cldm_spirv_opcode_index[opcode] < 0)
    return NULL;
  return &cldm_spirv_opcodes[cldm_spirv_opcode_index[opcode]];
}

const char *cldm_spirv_opname(uint32_t opcode) {
  const cldm_spirv_opcode_desc *d = cldm_spirv_opdesc(opcode);
  return d ? d->name : "Op<unknown>";
}

const cldm_spirv_enumerant_desc *cldm_spirv_enumerant(uint32_t kind, uint32_t value) {
  if (kind >= CLDM_SPIRV_KIND_COUNT)
    return NULL;
  const cldm_spirv_kind_desc *k = &cldm_spirv_kinds[kind];
  size_t lo = k->first, hi = (size_t)k->first + k->count;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (cldm_spirv_enumerants[mid].value == value)
      return &cldm_spirv_enumerants[mid];
    if (cldm_spirv_enumerants[mid].value < value)
      lo = mid + 1;
    else
      hi = mid;
  }
  return NULL;
}

const cldm_spirv_extinst_desc *cldm_spirv_extinst(uint32_t set, uint32_t number) {
  if (set == 0 || set >= CLDM_SPIRV_EXTSET_COUNT)
    return NULL;
  const cldm_spirv_extset_desc *s = &cldm_spirv_extsets[set];
  size_t lo = 0, hi = s->ninst;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (s->inst[mid].number == number)
      return &s->inst[mid];
    if (s->inst[mid].number < number)
      lo = mid + 1;
    else
      hi = mid;
  }
  return NULL;
}
