/*
 * test_rewrite.c — the rewrite of the user's functions (layer/spirv/src/rewrite.c), read back
 * with spirv-dis: heap parameter last and named, calls pass it on, sites become calls of the
 * allocator with sizes widened (OpUConvert) or saturated (64-bit size, 32-bit allocator),
 * Generic pointers cast both ways, and each site's result id kept.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "spirv_test.h"

/* Index range [*b, *e) of the lines of function %id. */
static void body(const st_listing *l, const char *id, size_t *b, size_t *e) {
  const char *def = st_def(l, id);
  assert_non_null(def);
  for (*b = 0; l->line[*b] != def; (*b)++)
    ;
  for (*e = *b; *e < l->n && strcmp(l->line[*e], "OpFunctionEnd"); (*e)++)
    ;
}

static size_t count_in(const st_listing *l, size_t b, size_t e, const char *needle) {
  size_t c = 0;
  for (size_t i = b; i < e; i++)
    c += strstr(l->line[i], needle) != NULL;
  return c;
}

/* "%<id>" of the function named `name` (OpName). */
static void id_of(const st_listing *l, const char *name, char *id) {
  char needle[64];
  snprintf(needle, sizeof needle, "\"%s\"", name);
  for (size_t i = 0; i < l->n; i++)
    if (!strncmp(l->line[i], "OpName ", 7) && strstr(l->line[i], needle)) {
      sscanf(l->line[i] + 7, "%15s", id);
      return;
    }
  fail_msg("no OpName %s", name);
}

static void check_alloc64(const char *file) {
  size_t size, out_size;
  void *in = st_data(file, &size);
  void *out = st_lower(in, size, &out_size, NULL);
  st_assert_valid(out, out_size, file);
  st_listing *l = st_dis(out, out_size);
  char types[8][16], helper[16], heap[16];
  /* helper(uint) -> helper(uint, heap); k_alloc(out) -> k_alloc(out, heap); k_plain as is */
  id_of(l, "helper", helper);
  assert_int_equal(st_function_params(l, helper, types, 8), 2);
  assert_true(st_is_heap_type(l, types[1]));
  assert_int_equal(st_kernel_params(l, "k_alloc", types, 8), 2);
  assert_true(st_is_heap_type(l, types[1]));
  assert_int_equal(st_kernel_params(l, "k_plain", types, 8), 1);
  assert_false(st_is_heap_type(l, types[0]));
  /* every heap parameter is named __cldm_heap */
  assert_int_equal(st_count(l, "\"__cldm_heap\""), 2);
  /* k_alloc passes its heap to helper */
  size_t b, e;
  const char *ep = NULL;
  for (size_t i = 0; i < l->n && !ep; i++)
    if (strstr(l->line[i], "OpEntryPoint Kernel") && strstr(l->line[i], "\"k_alloc\""))
      ep = l->line[i];
  char kid[16];
  sscanf(ep, "OpEntryPoint Kernel %15s", kid);
  body(l, kid, &b, &e);
  sscanf(l->line[b + 2], "%15s", heap);
  size_t calls = 0;
  for (size_t i = b; i < e; i++) {
    const char *c = strstr(l->line[i], "OpFunctionCall");
    char callee[16], last[16];
    if (!c || sscanf(c, "OpFunctionCall %*s %15s", callee) != 1 || strcmp(callee, helper))
      continue;
    const char *sp = strrchr(l->line[i], ' ');
    sscanf(sp + 1, "%15s", last);
    assert_string_equal(last, heap);
    calls++;
  }
  assert_int_equal(calls, 1);
  /* helper: calloc's two 32-bit operands widened to the allocator's 64-bit size_t, 7 calls */
  body(l, helper, &b, &e);
  assert_int_equal(count_in(l, b, e, "OpUConvert"), 2);
  assert_int_equal(count_in(l, b, e, "OpFunctionCall"), 7);
  st_assert_no_trace(l);
  st_listing_free(l);
  free(out);
  free(in);
}

static void helper_and_sizes(void **state) {
  check_alloc64("alloc64.spv");
  check_alloc64("alloc64.ext.spv");
}

static void saturation_and_generic(void **state) {
  const char *files[] = {"alloc32.spv", "alloc32.ext.spv"};
  for (int f = 0; f < 2; f++) {
    size_t size, out_size;
    void *in = st_data(files[f], &size);
    void *out = st_lower(in, size, &out_size, NULL);
    st_assert_valid(out, out_size, files[f]);
    st_listing *l = st_dis(out, out_size);
    char k[16];
    id_of(l, "k32", k);
    size_t b, e;
    body(l, k, &b, &e);
    /* malloc(ulong) on Physical32: (size >> 32) != 0 ? 0xFFFFFFFF : (uint)size */
    assert_int_equal(count_in(l, b, e, "OpShiftRightLogical"), 1);
    assert_int_equal(count_in(l, b, e, "OpINotEqual"), 1);
    assert_int_equal(count_in(l, b, e, "OpSelect"), 1);
    assert_int_equal(count_in(l, b, e, "OpUConvert"), 1);
    assert_true(st_count(l, "OpConstant %") >= 1);
    assert_int_equal(st_count(l, " 4294967295"), 1); /* the saturated value, once */
    /* aligned_alloc's Generic result, free's Generic argument */
    assert_int_equal(count_in(l, b, e, "OpPtrCastToGeneric"), 2); /* the user's own + one */
    assert_int_equal(count_in(l, b, e, "OpGenericCastToPtr"), 2);
    st_listing_free(l);
    free(out);
    free(in);
  }
}

static void result_ids_kept(void **state) {
  /* the n-th site's result id is defined in the output by the instruction that ends its
   * lowering: OpFunctionCall (same type), OpBitcast, or OpPtrCastToGeneric (Generic) */
  size_t size, out_size;
  uint32_t *in = st_data("alloc32.ext.spv", &size);
  void *out = st_lower(in, size, &out_size, NULL);
  st_listing *l = st_dis(out, out_size);
  for (unsigned n = 0;; n++) {
    size_t at = st_find_op(in, size / 4, SpvOpExtInst, n);
    if (!at)
      break;
    char id[16];
    snprintf(id, sizeof id, "%%%u", in[at + 2]);
    const char *def = st_def(l, id);
    assert_non_null(def);
    uint32_t number = in[at + 4];
    if (number == CLDM_SPIRV_EXT_ALIGNED_ALLOC)
      assert_non_null(strstr(def, "OpPtrCastToGeneric"));
    else
      assert_non_null(strstr(def, "OpFunctionCall"));
  }
  st_listing_free(l);
  free(out);
  free(in);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(helper_and_sizes),
      cmocka_unit_test(saturation_and_generic),
      cmocka_unit_test(result_ids_kept),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
