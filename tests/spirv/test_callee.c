/*
 * test_callee.c — the names of spec 2.2 and what a call of each means
 * (layer/spirv/src/callee.c): C's five names, and every form of C++'s global operator new and
 * delete that clang emits for HIP and C++ for OpenCL (sizes of both widths, aligned, nothrow,
 * sized delete, address-space-mangled pointers and references), with the instruction, the
 * parameters' roles and which parameter is which operand; names that are no allocation
 * function (placement new, misspellings, trailing parameters).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "spirv_test.h"

enum { I = CLDM_SPIRV_EXT_ROLE_INT, P = CLDM_SPIRV_EXT_ROLE_PTR, T = CLDM_SPIRV_CALLEE_ROLE_TAG };

typedef struct name_case {
  const char *name;
  unsigned op, cxx, throws, nparams;
  uint8_t role[CLDM_SPIRV_CALLEE_MAX_PARAMS];
  uint8_t arg[CLDM_SPIRV_EXT_MAX_OPERANDS];
} name_case;

static const name_case cases[] = {
    {"malloc", CLDM_SPIRV_EXT_MALLOC, 0, 0, 1, {I}, {0}},
    {"free", CLDM_SPIRV_EXT_FREE, 0, 0, 1, {P}, {0}},
    {"calloc", CLDM_SPIRV_EXT_CALLOC, 0, 0, 2, {I, I}, {0, 1}},
    {"realloc", CLDM_SPIRV_EXT_REALLOC, 0, 0, 2, {P, I}, {0, 1}},
    {"aligned_alloc", CLDM_SPIRV_EXT_ALIGNED_ALLOC, 0, 0, 2, {I, I}, {0, 1}},
    /* new, new[]: malloc(size); throwing */
    {"_Znwm", CLDM_SPIRV_EXT_MALLOC, 1, 1, 1, {I}, {0}},
    {"_Znam", CLDM_SPIRV_EXT_MALLOC, 1, 1, 1, {I}, {0}},
    {"_Znwj", CLDM_SPIRV_EXT_MALLOC, 1, 1, 1, {I}, {0}},
    {"_Znaj", CLDM_SPIRV_EXT_MALLOC, 1, 1, 1, {I}, {0}},
    /* aligned: aligned_alloc(align, size) from new(size, align) */
    {"_ZnwmSt11align_val_t", CLDM_SPIRV_EXT_ALIGNED_ALLOC, 1, 1, 2, {I, I}, {1, 0}},
    {"_ZnamSt11align_val_t", CLDM_SPIRV_EXT_ALIGNED_ALLOC, 1, 1, 2, {I, I}, {1, 0}},
    {"_ZnwjSt11align_val_t", CLDM_SPIRV_EXT_ALIGNED_ALLOC, 1, 1, 2, {I, I}, {1, 0}},
    /* nothrow: NULL comes back */
    {"_ZnwmRKSt9nothrow_t", CLDM_SPIRV_EXT_MALLOC, 1, 0, 2, {I, T}, {0}},
    {"_ZnamRKSt9nothrow_t", CLDM_SPIRV_EXT_MALLOC, 1, 0, 2, {I, T}, {0}},
    {"_ZnwmRU3AS4KSt9nothrow_t", CLDM_SPIRV_EXT_MALLOC, 1, 0, 2, {I, T}, {0}},
    {"_ZnamRU3AS2KSt9nothrow_t", CLDM_SPIRV_EXT_MALLOC, 1, 0, 2, {I, T}, {0}},
    {"_ZnwmSt11align_val_tRKSt9nothrow_t",
     CLDM_SPIRV_EXT_ALIGNED_ALLOC,
     1,
     0,
     3,
     {I, I, T},
     {1, 0}},
    {"_ZnwjSt11align_val_tRU3AS4KSt9nothrow_t",
     CLDM_SPIRV_EXT_ALIGNED_ALLOC,
     1,
     0,
     3,
     {I, I, T},
     {1, 0}},
    /* delete, delete[]: free(ptr), whatever else they take */
    {"_ZdlPv", CLDM_SPIRV_EXT_FREE, 1, 0, 1, {P}, {0}},
    {"_ZdaPv", CLDM_SPIRV_EXT_FREE, 1, 0, 1, {P}, {0}},
    {"_ZdlPvm", CLDM_SPIRV_EXT_FREE, 1, 0, 2, {P, I}, {0}},
    {"_ZdaPvj", CLDM_SPIRV_EXT_FREE, 1, 0, 2, {P, I}, {0}},
    {"_ZdlPvSt11align_val_t", CLDM_SPIRV_EXT_FREE, 1, 0, 2, {P, I}, {0}},
    {"_ZdlPvmSt11align_val_t", CLDM_SPIRV_EXT_FREE, 1, 0, 3, {P, I, I}, {0}},
    {"_ZdaPvmSt11align_val_t", CLDM_SPIRV_EXT_FREE, 1, 0, 3, {P, I, I}, {0}},
    {"_ZdlPvRKSt9nothrow_t", CLDM_SPIRV_EXT_FREE, 1, 0, 2, {P, T}, {0}},
    {"_ZdlPU3AS4v", CLDM_SPIRV_EXT_FREE, 1, 0, 1, {P}, {0}},
    {"_ZdaPU3AS4v", CLDM_SPIRV_EXT_FREE, 1, 0, 1, {P}, {0}},
    {"_ZdlPU3AS4vm", CLDM_SPIRV_EXT_FREE, 1, 0, 2, {P, I}, {0}},
    {"_ZdaPU3AS4vm", CLDM_SPIRV_EXT_FREE, 1, 0, 2, {P, I}, {0}},
    {"_ZdlPU3AS4vSt11align_val_t", CLDM_SPIRV_EXT_FREE, 1, 0, 2, {P, I}, {0}},
    {"_ZdlPU3AS4vmSt11align_val_t", CLDM_SPIRV_EXT_FREE, 1, 0, 3, {P, I, I}, {0}},
    {"_ZdlPU3AS1v", CLDM_SPIRV_EXT_FREE, 1, 0, 1, {P}, {0}},
};

static void names(void **state) {
  (void)state;
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    const name_case *c = &cases[i];
    cldm_spirv_callee got;
    if (!cldm_spirv_callee_of(c->name, &got))
      fail_msg("%s: not an allocation function", c->name);
    if (got.op != c->op || got.cxx != c->cxx || got.throws != c->throws ||
        got.nparams != c->nparams)
      fail_msg("%s: op %u cxx %u throws %u params %u", c->name, got.op, got.cxx, got.throws,
               got.nparams);
    for (unsigned p = 0; p < c->nparams; p++)
      if (got.role[p] != c->role[p])
        fail_msg("%s: parameter %u has role %u, not %u", c->name, p, got.role[p], c->role[p]);
    for (unsigned o = 0; o < cldm_spirv_ext_noperands[c->op]; o++)
      if (got.arg[o] != c->arg[o])
        fail_msg("%s: operand %u is parameter %u, not %u", c->name, o, got.arg[o], c->arg[o]);
  }
}

static void not_names(void **state) {
  (void)state;
  static const char *const others[] = {
      "",
      "mallocx",
      "Malloc",
      "_Znw",
      "_Znwx",
      "_ZnwmPv",
      "_ZnamPv",
      "_Znwmm",
      "_ZdlPvPv",
      "_ZdlPU3AS3v",
      "_ZdlPU3ASv",
      "_ZdlP",
      "_Zdl",
      "_Zdlv",
      "_ZnwmSt11align_val",
      "_ZnwmRKSt9",
      "_Znwm_",
      "_ZnwmRKSt9nothrow_tm",
      "_ZdlPvSt11align_val_tm",
      "new",
      "_Z6mallocm",
      "operator new",
  };
  for (size_t i = 0; i < sizeof others / sizeof *others; i++) {
    cldm_spirv_callee got;
    if (cldm_spirv_callee_of(others[i], &got))
      fail_msg("\"%s\" taken for an allocation function", others[i]);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(names), cmocka_unit_test(not_names)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
