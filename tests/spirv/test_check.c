/*
 * test_check.c — pass 2 (layer/spirv/src/check.c): operand ids in bound and defined, and
 * function ids used other than as callees (taken addresses). Also the policy that a module
 * that does not allocate is not held to pass 2.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "spirv_test.h"

/* An allocating module (Import form) with a load whose pointer operand tests mutate. */
static const char text[] =
    "OpCapability Addresses\nOpCapability Kernel\nOpCapability Linkage\nOpCapability Int64\n"
    "OpCapability Int8\n"
    "OpMemoryModel Physical64 OpenCL\n"
    "OpEntryPoint Kernel %k \"k\"\n"
    "OpDecorate %malloc LinkageAttributes \"malloc\" Import\n"
    "%void = OpTypeVoid\n%uchar = OpTypeInt 8 0\n%ulong = OpTypeInt 64 0\n"
    "%p = OpTypePointer CrossWorkgroup %uchar\n"
    "%fm = OpTypeFunction %p %ulong\n%fk = OpTypeFunction %void %p\n"
    "%c16 = OpConstant %ulong 16\n"
    "%malloc = OpFunction %p None %fm\n%size = OpFunctionParameter %ulong\nOpFunctionEnd\n"
    "%k = OpFunction %void None %fk\n%out = OpFunctionParameter %p\n%l = OpLabel\n"
    "%m = OpFunctionCall %p %malloc %c16\n"
    "%v = OpLoad %uchar %m\nOpStore %out %v\nOpReturn\nOpFunctionEnd\n";

static void operand_id_out_of_bound(void **state) {
  size_t size;
  uint32_t *w = st_asm(text, &size);
  size_t load = st_find_op(w, size / 4, SpvOpLoad, 0);
  uint32_t bound = w[3];
  w[load + 3] = bound + 5;
  char msg[160];
  snprintf(msg, sizeof msg, "word %zu: OpLoad: id %u is not below the id bound %u", load + 3,
           bound + 5, bound);
  cldm_spirv_error err;
  cldm_spirv_report r;
  assert_int_equal(cldm_spirv_inspect(w, size, &r, &err), CLDM_SPIRV_E_MALFORMED);
  assert_string_equal(err.message, msg);
  assert_int_equal(err.word_offset, load + 3);
  cldm_spirv_report_free(&r);
  void *out = (void *)1;
  size_t out_size = 1;
  assert_int_equal(cldm_spirv_lower(w, size, st_bump_allocator(), &out, &out_size, NULL, &err),
                   CLDM_SPIRV_E_MALFORMED);
  assert_null(out);
  assert_int_equal(out_size, 0);
  assert_string_equal(err.message, msg);
  free(w);
}

static void operand_id_undefined(void **state) {
  size_t size;
  uint32_t *w = st_asm(text, &size);
  size_t load = st_find_op(w, size / 4, SpvOpLoad, 0);
  uint32_t undefined = w[3];
  w[3] += 3; /* raise the bound so that the id is in bound but never defined */
  w[load + 3] = undefined;
  char msg[160];
  snprintf(msg, sizeof msg, "word %zu: OpLoad: id %%%u is used but never defined", load + 3,
           undefined);
  cldm_spirv_error err;
  assert_int_equal(cldm_spirv_inspect(w, size, NULL, &err), CLDM_SPIRV_E_MALFORMED);
  assert_string_equal(err.message, msg);
  free(w);
}

static void non_allocating_module_not_held_to_pass_2(void **state) {
  /* the same defect in a module that does not allocate: passed on unchanged (spec 1.5) */
  static const char plain[] =
      "OpCapability Addresses\nOpCapability Kernel\nOpCapability Int8\n"
      "OpMemoryModel Physical64 OpenCL\nOpEntryPoint Kernel %k \"k\"\n"
      "%void = OpTypeVoid\n%uchar = OpTypeInt 8 0\n%p = OpTypePointer CrossWorkgroup %uchar\n"
      "%fk = OpTypeFunction %void %p\n"
      "%k = OpFunction %void None %fk\n%out = OpFunctionParameter %p\n%l = OpLabel\n"
      "%v = OpLoad %uchar %out\nOpStore %out %v\nOpReturn\nOpFunctionEnd\n";
  size_t size;
  uint32_t *w = st_asm(plain, &size);
  w[st_find_op(w, size / 4, SpvOpLoad, 0) + 3] = w[3] + 9;
  cldm_spirv_error err;
  cldm_spirv_report r;
  void *out = (void *)1;
  size_t out_size = 1;
  assert_int_equal(cldm_spirv_lower(w, size, st_bump_allocator(), &out, &out_size, &r, &err),
                   CLDM_SPIRV_OK);
  assert_null(out);
  assert_int_equal(out_size, 0);
  assert_int_equal(r.allocates, 0);
  assert_int_equal(r.num_kernels, 1);
  assert_int_equal(r.kernels[0].takes_heap, 0);
  assert_int_equal(r.kernels[0].num_user_args, 1);
  assert_int_equal(r.kernels[0].heap_arg_index, UINT32_MAX);
  cldm_spirv_report_free(&r);
  free(w);
}

static void function_address_recorded(void **state) {
  static const char fp[] =
      "OpCapability Addresses\nOpCapability Kernel\nOpCapability FunctionPointersINTEL\n"
      "OpExtension \"SPV_INTEL_function_pointers\"\n"
      "OpMemoryModel Physical64 OpenCL\nOpEntryPoint Kernel %k \"k\"\n"
      "%void = OpTypeVoid\n%fv = OpTypeFunction %void\n%pf = OpTypePointer Function %fv\n"
      "%a = OpConstantFunctionPointerINTEL %pf %h\n"
      "%g = OpFunction %void None %fv\n%gl = OpLabel\nOpReturn\nOpFunctionEnd\n"
      "%h = OpFunction %void None %fv\n%hl = OpLabel\nOpReturn\nOpFunctionEnd\n"
      "%k = OpFunction %void None %fv\n%l = OpLabel\n"
      "%c = OpFunctionCall %void %g\n"
      "OpReturn\nOpFunctionEnd\n";
  size_t size;
  uint32_t *w = st_asm(fp, &size);
  cldm_spirv_module m;
  assert_int_equal(cldm_spirv_module_parse(&m, w, size, NULL), CLDM_SPIRV_OK);
  assert_int_equal(cldm_spirv_check(&m, NULL, NULL), CLDM_SPIRV_OK);
  assert_int_equal(m.nfn, 3);
  assert_int_equal(m.fn_addr_taken[0], 0);     /* g: only called */
  assert_int_not_equal(m.fn_addr_taken[1], 0); /* h: address taken */
  assert_int_equal(m.inst[m.fn_addr_taken[1] - 1].op, SpvOpConstantFunctionPointerINTEL);
  assert_int_equal(m.fn_addr_taken[2], 0); /* k: entry point */
  cldm_spirv_module_free(&m);
  free(w);
}

static void dropped_ids_used_elsewhere(void **state) {
  /* the parameter of malloc's Import declaration used in the kernel: lowering drops the
   * declaration, so this would dangle */
  char text2[2048];
  snprintf(text2, sizeof text2, "%s", text);
  char *at = strstr(text2, "%v = OpLoad %uchar %m\n");
  memcpy(at, "%v = OpLoad %uchar %m\n", strlen("%v = OpLoad %uchar %m\n"));
  char mutated[2200];
  *at = '\0';
  snprintf(mutated, sizeof mutated, "%s%%bad = OpIAdd %%ulong %%size %%c16\n%s", text2,
           strstr(text, "%v = OpLoad"));
  size_t size;
  uint32_t *w = st_asm(mutated, &size);
  size_t add = st_find_op(w, size / 4, SpvOpIAdd, 0);
  char msg[200];
  snprintf(msg, sizeof msg,
           "word %zu: OpIAdd uses %%%u, a parameter of an Import-linkage declaration, outside it",
           add + 3, w[add + 3]);
  cldm_spirv_error err;
  assert_int_equal(cldm_spirv_inspect(w, size, NULL, &err), CLDM_SPIRV_E_MALFORMED);
  assert_string_equal(err.message, msg);
  void *out = NULL;
  size_t out_size;
  assert_int_equal(cldm_spirv_raise(w, size, &out, &out_size, &err), CLDM_SPIRV_E_MALFORMED);
  assert_string_equal(err.message, msg);
  free(w);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(operand_id_out_of_bound),
      cmocka_unit_test(operand_id_undefined),
      cmocka_unit_test(non_allocating_module_not_held_to_pass_2),
      cmocka_unit_test(function_address_recorded),
      cmocka_unit_test(dropped_ids_used_elsewhere),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
