/*
 * ptx_spirv_fix.c — valid SPIR-V that LLVMSPIRVLib 15 cannot take, rewritten into equivalent
 * SPIR-V it can. Debian builds the translator with assertions on, so such input would abort
 * the whole process rather than fail:
 *   - OpConstantNull of a scalar type (bool, integer, float; clang-22 emits these): its
 *     validate() accepts only composite, pointer, event and opaque types. Rewritten as
 *     OpConstantFalse / OpConstant 0 (same result id, same type);
 *   - OpNop, OpSourceContinued, OpNoLine: no meaning for the translation, but "unimplemented"
 *     in LLVMSPIRVLib 15, which then exits. Dropped.
 * Runs after ptx_check.c, so the module is well-formed (every word count in bounds).
 */
#include <stdlib.h>
#include <string.h>

#include <spirv/unified1/spirv.h>

#include "ptx_internal.h"

enum {
  OP_TYPE_BOOL = SpvOpTypeBool,
  OP_TYPE_INT = SpvOpTypeInt,
  OP_TYPE_FLOAT = SpvOpTypeFloat,
  OP_CONSTANT_FALSE = SpvOpConstantFalse,
  OP_CONSTANT = SpvOpConstant,
  OP_CONSTANT_NULL = SpvOpConstantNull
};

static int dropped(uint32_t op) {
  return op == SpvOpNop || op == SpvOpSourceContinued || op == SpvOpNoLine;
}

typedef struct scalar {
  uint32_t id;
  uint32_t op, width; /* OpTypeBool / OpTypeInt / OpTypeFloat, bit width */
} scalar;

static int by_id(const void *a, const void *b) {
  uint32_t x = ((const scalar *)a)->id, y = ((const scalar *)b)->id;
  return x < y ? -1 : x > y;
}

cldm_ptx_status cldm_ptx_fix_spirv(const uint32_t *words, size_t num_words, uint32_t **out,
                                   size_t *out_words, cldm_ptx_log *log) {
  *out = NULL;
  *out_words = 0;
  size_t ns = 0, cap = 16, extra = 0, nulls = 0;
  scalar *types = malloc(cap * sizeof *types);
  if (!types)
    goto nomem;
  for (size_t i = 5; i < num_words; i += words[i] >> 16) {
    uint32_t wc = words[i] >> 16, op = words[i] & 0xffffu;
    if (wc == 0)
      break; /* ruled out by the check; never loop */
    if ((op == OP_TYPE_BOOL && wc >= 2) ||
        ((op == OP_TYPE_INT || op == OP_TYPE_FLOAT) && wc >= 3)) {
      if (ns == cap) {
        scalar *t = realloc(types, 2 * cap * sizeof *types);
        if (!t)
          goto nomem;
        types = t;
        cap *= 2;
      }
      types[ns].id = words[i + 1];
      types[ns].op = op;
      types[ns].width = op == OP_TYPE_BOOL ? 1 : words[i + 2];
      ns++;
    }
  }
  qsort(types, ns, sizeof *types, by_id);
  /* How much longer the module gets. */
  size_t drops = 0;
  for (size_t i = 5; i < num_words; i += words[i] >> 16) {
    uint32_t wc = words[i] >> 16;
    if (wc == 0)
      break;
    drops += dropped(words[i] & 0xffffu);
    if ((words[i] & 0xffffu) != OP_CONSTANT_NULL || wc != 3)
      continue;
    scalar key = {words[i + 1], 0, 0};
    const scalar *t = bsearch(&key, types, ns, sizeof *types, by_id);
    if (!t)
      continue;
    nulls++;
    extra += t->op == OP_TYPE_BOOL ? 0 : t->width > 32 ? 2 : 1;
  }
  if (!nulls && !drops) {
    free(types);
    return CLDM_PTX_OK;
  }
  uint32_t *o = malloc((num_words + extra) * sizeof *o);
  if (!o)
    goto nomem;
  memcpy(o, words, 5 * sizeof *o);
  size_t k = 5;
  for (size_t i = 5; i < num_words;) {
    uint32_t wc = words[i] >> 16;
    if (wc == 0)
      break;
    const scalar *t = NULL;
    if (dropped(words[i] & 0xffffu)) {
      i += wc;
      continue;
    }
    if ((words[i] & 0xffffu) == OP_CONSTANT_NULL && wc == 3) {
      scalar key = {words[i + 1], 0, 0};
      t = bsearch(&key, types, ns, sizeof *types, by_id);
    }
    if (!t) {
      memcpy(o + k, words + i, wc * sizeof *o);
      k += wc;
    } else if (t->op == OP_TYPE_BOOL) {
      o[k++] = 3u << 16 | OP_CONSTANT_FALSE;
      o[k++] = words[i + 1];
      o[k++] = words[i + 2];
    } else {
      uint32_t n = t->width > 32 ? 2 : 1;
      o[k++] = (3u + n) << 16 | OP_CONSTANT;
      o[k++] = words[i + 1];
      o[k++] = words[i + 2];
      for (uint32_t j = 0; j < n; j++)
        o[k++] = 0;
    }
    i += wc;
  }
  free(types);
  *out = o;
  *out_words = k;
  if (nulls)
    cldm_ptx_log_printf(log,
                        "cldm-ptx: %zu scalar OpConstantNull rewritten as OpConstant for "
                        "LLVMSPIRVLib\n",
                        nulls);
  return CLDM_PTX_OK;
nomem:
  free(types);
  return CLDM_PTX_E_NOMEM;
}
