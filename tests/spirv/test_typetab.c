/*
 * test_typetab.c — the type/constant hash (layer/spirv/src/typetab.c): lookup, first
 * declaration wins, growth, and which declarations a module contributes (no spec constants,
 * nothing decorated).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "spirv_test.h"

static void add_and_find(void **state) {
  cldm_spirv_typetab t = {0};
  uint32_t int32[] = {SpvOpTypeInt | 3u << 16, 32, 0};
  uint32_t int64[] = {SpvOpTypeInt | 3u << 16, 64, 0};
  assert_int_equal(cldm_spirv_typetab_find(&t, int32, 3), 0);
  assert_int_equal(cldm_spirv_typetab_add(&t, int32, 3, 7), 0);
  assert_int_equal(cldm_spirv_typetab_add(&t, int32, 3, 9), 0); /* first wins */
  assert_int_equal(cldm_spirv_typetab_find(&t, int32, 3), 7);
  assert_int_equal(cldm_spirv_typetab_find(&t, int64, 3), 0);
  assert_int_equal(cldm_spirv_typetab_find(&t, int32, 2), 0); /* length is part of the key */
  /* growth: many constants */
  for (uint32_t i = 0; i < 20000; i++) {
    uint32_t k[] = {SpvOpConstant | 3u << 16, 5, i};
    assert_int_equal(cldm_spirv_typetab_add(&t, k, 3, 100 + i), 0);
  }
  for (uint32_t i = 0; i < 20000; i++) {
    uint32_t k[] = {SpvOpConstant | 3u << 16, 5, i};
    assert_int_equal(cldm_spirv_typetab_find(&t, k, 3), 100 + i);
  }
  assert_int_equal(cldm_spirv_typetab_find(&t, int32, 3), 7);
  cldm_spirv_typetab_free(&t);
}

static void unifiable(void **state) {
  assert_true(cldm_spirv_typetab_unifiable(SpvOpTypeInt));
  assert_true(cldm_spirv_typetab_unifiable(SpvOpTypePointer));
  assert_true(cldm_spirv_typetab_unifiable(SpvOpTypeFunction));
  assert_true(cldm_spirv_typetab_unifiable(SpvOpConstantNull));
  assert_true(cldm_spirv_typetab_unifiable(SpvOpTypeStruct));
  assert_false(cldm_spirv_typetab_unifiable(SpvOpTypeOpaque));
  assert_false(cldm_spirv_typetab_unifiable(SpvOpSpecConstant));
  assert_false(cldm_spirv_typetab_unifiable(SpvOpVariable));
  assert_false(cldm_spirv_typetab_unifiable(SpvOpUndef));
}

static void fill_from_module(void **state) {
  size_t size;
  uint32_t *w = st_asm("OpCapability Addresses\nOpCapability Kernel\n"
                       "OpMemoryModel Physical64 OpenCL\n"
                       "OpDecorate %dec SpecId 3\n"
                       "%uint = OpTypeInt 32 0\n%s = OpTypeStruct %uint\n"
                       "%c1 = OpConstant %uint 1\n%dec = OpSpecConstant %uint 2\n"
                       "%ptr = OpTypePointer CrossWorkgroup %s\n",
                       &size);
  cldm_spirv_module m;
  assert_int_equal(cldm_spirv_module_parse(&m, w, size, NULL), CLDM_SPIRV_OK);
  uint8_t *dec = cldm_spirv_decorated_ids(&m);
  assert_non_null(dec);
  uint32_t uint_id = w[st_find_op(w, size / 4, SpvOpTypeInt, 0) + 1];
  uint32_t s_id = w[st_find_op(w, size / 4, SpvOpTypeStruct, 0) + 1];
  uint32_t c1_id = w[st_find_op(w, size / 4, SpvOpConstant, 0) + 2];
  uint32_t dec_id = w[st_find_op(w, size / 4, SpvOpSpecConstant, 0) + 2];
  uint32_t ptr_id = w[st_find_op(w, size / 4, SpvOpTypePointer, 0) + 1];
  assert_int_equal(dec[dec_id], 1);
  assert_int_equal(dec[uint_id], 0);
  cldm_spirv_typetab t = {0};
  assert_int_equal(cldm_spirv_typetab_fill(&t, &m, dec), 0);
  uint32_t k_uint[] = {SpvOpTypeInt | 3u << 16, 32, 0};
  uint32_t k_c1[] = {SpvOpConstant | 3u << 16, uint_id, 1};
  uint32_t k_struct[] = {SpvOpTypeStruct | 2u << 16, uint_id};
  uint32_t k_spec[] = {SpvOpSpecConstant | 3u << 16, uint_id, 2};
  uint32_t k_ptr[] = {SpvOpTypePointer | 3u << 16, SpvStorageClassCrossWorkgroup, s_id};
  assert_int_equal(cldm_spirv_typetab_find(&t, k_uint, 3), uint_id);
  assert_int_equal(cldm_spirv_typetab_find(&t, k_c1, 3), c1_id);
  assert_int_equal(cldm_spirv_typetab_find(&t, k_struct, 2), s_id);
  assert_int_equal(cldm_spirv_typetab_find(&t, k_spec, 3), 0);
  assert_int_equal(cldm_spirv_typetab_find(&t, k_ptr, 3), ptr_id);
  assert_int_equal(t.n, 4);
  cldm_spirv_typetab_free(&t);
  free(dec);
  cldm_spirv_module_free(&m);
  free(w);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(add_and_find),
      cmocka_unit_test(unifiable),
      cmocka_unit_test(fill_from_module),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
