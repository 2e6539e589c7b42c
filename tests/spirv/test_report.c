/*
 * test_report.c — what the layer reads (layer/spirv/src/report.c): per kernel its name,
 * argument count, whether it takes the heap and where; the same from inspect and lower.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "spirv_test.h"

static void inspect_and_lower_agree(void **state) {
  const char *files[] = {"helper_two_kernels.O0.spir64.spv", "helper_two_kernels.O2.spir.ext.spv",
                         "many_args.O0.spir64.spv"};
  for (int f = 0; f < 3; f++) {
    size_t size, out_size;
    void *in = st_data(files[f], &size);
    cldm_spirv_report a, b;
    assert_int_equal(cldm_spirv_inspect(in, size, &a, NULL), CLDM_SPIRV_OK);
    void *out = st_lower(in, size, &out_size, &b);
    assert_int_equal(a.allocates, b.allocates);
    assert_int_equal(a.forms, b.forms);
    assert_int_equal(a.address_bits, b.address_bits);
    assert_int_equal(a.num_kernels, b.num_kernels);
    for (size_t i = 0; i < a.num_kernels; i++) {
      assert_string_equal(a.kernels[i].name, b.kernels[i].name);
      assert_int_equal(a.kernels[i].takes_heap, b.kernels[i].takes_heap);
      assert_int_equal(a.kernels[i].num_user_args, b.kernels[i].num_user_args);
      assert_int_equal(a.kernels[i].heap_arg_index, b.kernels[i].heap_arg_index);
    }
    /* the lowered module's own report: every argument visible, nothing allocates */
    cldm_spirv_report c;
    assert_int_equal(cldm_spirv_inspect(out, out_size, &c, NULL), CLDM_SPIRV_OK);
    assert_int_equal(c.allocates, 0);
    for (size_t i = 0; i < c.num_kernels; i++)
      assert_int_equal(c.kernels[i].num_user_args,
                       b.kernels[i].num_user_args + (unsigned)b.kernels[i].takes_heap);
    cldm_spirv_report_free(&a);
    cldm_spirv_report_free(&b);
    cldm_spirv_report_free(&c);
    free(out);
    free(in);
  }
}

static void kernels_in_entry_point_order(void **state) {
  size_t size;
  void *in = st_data("helper_two_kernels.O0.spir64.spv", &size);
  cldm_spirv_report r;
  assert_int_equal(cldm_spirv_inspect(in, size, &r, NULL), CLDM_SPIRV_OK);
  assert_int_equal(r.num_kernels, 4);
  const char *names[] = {"k_helper_a", "k_helper_b", "k_calls_kernel", "k_plain"};
  for (int i = 0; i < 4; i++) {
    assert_string_equal(r.kernels[i].name, names[i]);
    assert_int_equal(r.kernels[i].num_user_args, 2);
    assert_int_equal(r.kernels[i].takes_heap, i < 3);
    assert_int_equal(r.kernels[i].heap_arg_index, i < 3 ? 2u : UINT32_MAX);
  }
  cldm_spirv_report_free(&r);
  cldm_spirv_report_free(&r); /* idempotent */
  cldm_spirv_report_free(NULL);
  free(in);
}

/* Linking across modules (spec 1.5): exported functions that allocate, foreign imports. */
static void linkage_lists(void **state) {
  size_t size;
  void *in = st_data("helper_two_kernels.O0.spir64.spv", &size);
  cldm_spirv_report r;
  assert_int_equal(cldm_spirv_inspect(in, size, &r, NULL), CLDM_SPIRV_OK);
  /* llvm-spirv exports every function with external linkage, kernel bodies included */
  const char *want[] = {"sum_to", "k_helper_a", "k_helper_b", "k_calls_kernel"};
  assert_int_equal(r.num_heap_exports, 4);
  for (int i = 0; i < 4; i++) {
    int found = 0;
    for (size_t j = 0; j < r.num_heap_exports; j++)
      found += !strcmp(r.heap_exports[j], want[i]);
    assert_int_equal(found, 1);
  }
  for (size_t j = 0; j < r.num_heap_exports; j++)
    assert_string_not_equal(r.heap_exports[j], "k_plain"); /* exported, does not allocate */
  assert_int_equal(r.num_imports, 0); /* malloc/free are ours; builtins are variables */
  cldm_spirv_report_free(&r);
  free(in);
}

/* Appending (a linked program's report): kernels and allocating exports of each input, in
 * order, as copies; the destination's other fields untouched. */
static void append_merges_copies(void **state) {
  size_t size;
  void *in = st_data("helper_two_kernels.O0.spir64.spv", &size);
  cldm_spirv_report r;
  assert_int_equal(cldm_spirv_inspect(in, size, &r, NULL), CLDM_SPIRV_OK);
  cldm_spirv_report m;
  memset(&m, 0, sizeof m);
  assert_int_equal(cldm_spirv_report_append(&m, &r, NULL), CLDM_SPIRV_OK);
  assert_int_equal(cldm_spirv_report_append(&m, &r, NULL), CLDM_SPIRV_OK);
  assert_int_equal(m.num_kernels, 2 * r.num_kernels);
  assert_int_equal(m.num_heap_exports, 2 * r.num_heap_exports);
  for (size_t i = 0; i < m.num_kernels; i++) {
    const cldm_spirv_kernel *k = &r.kernels[i % r.num_kernels];
    assert_string_equal(m.kernels[i].name, k->name);
    assert_ptr_not_equal(m.kernels[i].name, k->name);
    assert_int_equal(m.kernels[i].takes_heap, k->takes_heap);
    assert_int_equal(m.kernels[i].num_user_args, k->num_user_args);
    assert_int_equal(m.kernels[i].heap_arg_index, k->heap_arg_index);
  }
  for (size_t i = 0; i < m.num_heap_exports; i++)
    assert_string_equal(m.heap_exports[i], r.heap_exports[i % r.num_heap_exports]);
  assert_int_equal(m.allocates, 0);
  assert_int_equal(m.num_imports, 0);
  cldm_spirv_report_free(&r); /* the copies outlive their source */
  assert_string_equal(m.kernels[0].name, "k_helper_a");
  cldm_spirv_report_free(&m);
  assert_int_equal(m.num_kernels, 0);
  free(in);
}

static void status_names(void **state) {
  assert_string_equal(cldm_spirv_status_name(CLDM_SPIRV_OK), "OK");
  assert_string_equal(cldm_spirv_status_name(CLDM_SPIRV_E_MALFORMED), "E_MALFORMED");
  assert_string_equal(cldm_spirv_status_name(CLDM_SPIRV_E_INVALID), "E_INVALID");
  assert_string_equal(cldm_spirv_status_name(CLDM_SPIRV_E_UNSUPPORTED), "E_UNSUPPORTED");
  assert_string_equal(cldm_spirv_status_name(CLDM_SPIRV_E_ALLOCATOR), "E_ALLOCATOR");
  assert_string_equal(cldm_spirv_status_name(CLDM_SPIRV_E_NOMEM), "E_NOMEM");
  assert_string_equal(cldm_spirv_status_name((cldm_spirv_status)99), "E_UNKNOWN");
  /* a failed inspect leaves an empty report */
  cldm_spirv_report r;
  uint32_t junk[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  assert_int_equal(cldm_spirv_inspect(junk, sizeof junk, &r, NULL), CLDM_SPIRV_E_MALFORMED);
  assert_int_equal(r.num_kernels, 0);
  assert_null(r.kernels);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(inspect_and_lower_agree),
      cmocka_unit_test(kernels_in_entry_point_order),
      cmocka_unit_test(linkage_lists),
      cmocka_unit_test(append_merges_copies),
      cmocka_unit_test(status_names),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
