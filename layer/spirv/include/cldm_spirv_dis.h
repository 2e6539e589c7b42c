/*
 * cldm_spirv_dis.h — a text listing of a SPIR-V module, for tools and tests (layer/spirv).
 * Unlike spirv-dis it knows SPV_EXT_device_malloc (spirv-dis rejects modules importing an
 * unknown set), so lowered, raised and original modules can all be read.
 */
#ifndef CLDM_SPIRV_DIS_H
#define CLDM_SPIRV_DIS_H

#include <stdio.h>

#include "cldm_spirv.h"

#ifdef __cplusplus
extern "C" {
#endif

enum {
  CLDM_SPIRV_DIS_HEADER = 1u << 0,     /* print the header as "; Version: ..." comments */
  CLDM_SPIRV_DIS_ONLY_MALLOC = 1u << 1 /* print only instructions of SPV_EXT_device_malloc
                                          and calls of Import-form malloc/free/... */
};

/* Writes one line per instruction: "%<id> = Op<Name> <operands>", ids as %N, enumerants and
 * extended instructions by name, strings quoted, each line prefixed by "<word offset>: " when
 * CLDM_SPIRV_DIS_ONLY_MALLOC is set. Returns OK, or the first error found (what precedes it has
 * been printed). */
cldm_spirv_status cldm_spirv_disassemble(const void *bytes, size_t size, FILE *out, unsigned flags,
                                         cldm_spirv_error *err);

#ifdef __cplusplus
}
#endif
#endif /* CLDM_SPIRV_DIS_H */
