/*
 * test_raise.c — cldm_spirv_raise (layer/spirv/src/raise.c): Import-linkage calls become
 * OpExtInst of SPV_EXT_device_malloc with the same result ids; declarations, their names and
 * decorations go; modules without the Import form come back byte for byte; mixed modules reuse
 * their import; taken addresses are refused. Checked with a word scanner of the test's own.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "spirv_test.h"

static size_t count_op(const uint32_t *w, size_t n, uint32_t op) {
  size_t c = 0;
  while (st_find_op(w, n, op, (unsigned)c))
    c++;
  return c;
}

/* Id of OpExtInstImport "SPV_EXT_device_malloc" (0 if none) and how many there are. */
static uint32_t set_import(const uint32_t *w, size_t n, unsigned *count) {
  uint32_t id = 0;
  *count = 0;
  for (unsigned k = 0;; k++) {
    size_t at = st_find_op(w, n, SpvOpExtInstImport, k);
    if (!at)
      break;
    if (!memcmp(&w[at + 2], "SPV_EXT_device_malloc", 22)) {
      id = w[at + 1];
      (*count)++;
    }
  }
  return id;
}

static int has_linkage_name(const uint32_t *w, size_t n, const char *name) {
  for (unsigned k = 0;; k++) {
    size_t at = st_find_op(w, n, SpvOpDecorate, k);
    if (!at)
      return 0;
    if (w[at + 2] == SpvDecorationLinkageAttributes && !strcmp((const char *)&w[at + 3], name))
      return 1;
  }
}

static void import_to_extinst(void **state) {
  size_t size, out_size;
  uint32_t *in = st_data("alloc64.spv", &size);
  uint32_t *out = st_raise(in, size, &out_size);
  size_t n = out_size / 4;
  unsigned imports;
  uint32_t set = set_import(out, n, &imports);
  assert_int_equal(imports, 1);
  assert_int_equal(set, in[3]);        /* a new id at the old bound */
  assert_int_equal(out[3], in[3] + 1); /* bound grown by one */
  /* 7 calls became 7 OpExtInst of the set; the 5 declarations are gone */
  assert_int_equal(count_op(out, n, SpvOpExtInst), 7);
  assert_int_equal(count_op(out, n, SpvOpFunction), 3);
  assert_int_equal(count_op(in, size / 4, SpvOpFunction), 8);
  static const char *const names[] = {"malloc", "free", "calloc", "realloc", "aligned_alloc"};
  for (int i = 0; i < 5; i++) {
    assert_true(has_linkage_name(in, size / 4, names[i]));
    assert_false(has_linkage_name(out, n, names[i]));
  }
  /* names/decorations of the declarations and their parameters are gone */
  assert_int_equal(count_op(out, n, SpvOpName), count_op(in, size / 4, SpvOpName) - 2);
  assert_int_equal(count_op(in, size / 4, SpvOpDecorate), 6);
  assert_int_equal(count_op(out, n, SpvOpDecorate), 0);
  /* nothing else links: Linkage is dropped */
  for (unsigned k = 0;; k++) {
    size_t at = st_find_op(out, n, SpvOpCapability, k);
    if (!at)
      break;
    assert_int_not_equal(out[at + 1], SpvCapabilityLinkage);
  }
  /* same result ids, in the same order, with the set's numbers */
  static const uint32_t numbers[] = {1, 3, 4, 5, 2, 2, 2};
  unsigned site = 0;
  for (unsigned k = 0;; k++) {
    size_t at = st_find_op(in, size / 4, SpvOpFunctionCall, k);
    if (!at)
      break;
    if (in[at + 1] == 0)
      continue;
    size_t ext = st_find_op(out, n, SpvOpExtInst, site);
    if (!ext || out[ext + 2] != in[at + 2])
      continue; /* a call of the helper */
    assert_int_equal(out[ext + 3], set);
    assert_int_equal(out[ext + 4], numbers[site]);
    assert_memory_equal(&out[ext + 5], &in[at + 4], ((in[at] >> 16) - 4) * 4);
    site++;
  }
  assert_int_equal(site, 7);
  free(out);
  free(in);
}

static void identical_copy(void **state) {
  const char *files[] = {"alloc64.ext.spv", "bump_alloc.spir64.spv"};
  for (int i = 0; i < 2; i++) {
    size_t size, out_size;
    void *in = st_data(files[i], &size);
    void *out = st_raise(in, size, &out_size);
    assert_int_equal(out_size, size);
    assert_memory_equal(out, in, size);
    free(out);
    free(in);
  }
}

/* C++'s operators stay calls: the set has no instruction that stops a work-item as a throwing
 * new must (spec 2.2); a module with only them is copied, C names beside them are raised. */
static void cxx_left_to_lowering(void **state) {
  static const char text[] =
      "OpCapability Addresses\nOpCapability Kernel\nOpCapability Linkage\nOpCapability Int64\n"
      "OpCapability Int8\nOpMemoryModel Physical64 OpenCL\nOpEntryPoint Kernel %k \"k\"\n"
      "OpDecorate %new LinkageAttributes \"_Znwm\" Import\n"
      "OpDecorate %free LinkageAttributes \"free\" Import\n"
      "%void = OpTypeVoid\n%uchar = OpTypeInt 8 0\n%ulong = OpTypeInt 64 0\n"
      "%p = OpTypePointer CrossWorkgroup %uchar\n%fnew = OpTypeFunction %p %ulong\n"
      "%ff = OpTypeFunction %void %p\n%fk = OpTypeFunction %void\n%c16 = OpConstant %ulong 16\n"
      "%new = OpFunction %p None %fnew\n%n = OpFunctionParameter %ulong\nOpFunctionEnd\n"
      "%free = OpFunction %void None %ff\n%x = OpFunctionParameter %p\nOpFunctionEnd\n"
      "%k = OpFunction %void None %fk\n%l = OpLabel\n%m = OpFunctionCall %p %new %c16\n"
      "%f = OpFunctionCall %void %free %m\nOpReturn\nOpFunctionEnd\n";
  size_t size, out_size;
  uint32_t *in = st_asm(text, &size);
  uint32_t *out = st_raise(in, size, &out_size);
  cldm_spirv_report r;
  assert_int_equal(cldm_spirv_inspect(out, out_size, &r, NULL), CLDM_SPIRV_OK);
  assert_int_equal(r.forms, CLDM_SPIRV_FORM_EXTINST | CLDM_SPIRV_FORM_CXX);
  assert_true(r.kernels[0].throwing_new);
  cldm_spirv_report_free(&r);
  assert_int_not_equal(st_find_op(out, out_size / 4, SpvOpExtInst, 0), 0); /* the free */
  assert_int_equal(st_find_op(out, out_size / 4, SpvOpExtInst, 1), 0);
  free(out);
  free(in);
}

static const char mixed[] =
    "OpCapability Addresses\nOpCapability Kernel\nOpCapability Linkage\nOpCapability Int64\n"
    "OpCapability Int8\n%set = OpExtInstImport \"SPV_EXT_device_malloc\"\n"
    "OpMemoryModel Physical64 OpenCL\nOpEntryPoint Kernel %k \"k\"\n"
    "OpDecorate %free LinkageAttributes \"free\" Import\n"
    "OpDecorate %k LinkageAttributes \"k\" Export\n"
    "%void = OpTypeVoid\n%uchar = OpTypeInt 8 0\n%ulong = OpTypeInt 64 0\n"
    "%p = OpTypePointer CrossWorkgroup %uchar\n%ff = OpTypeFunction %void %p\n"
    "%c16 = OpConstant %ulong 16\n"
    "%free = OpFunction %void None %ff\n%x = OpFunctionParameter %p\nOpFunctionEnd\n"
    "%k = OpFunction %void None %ff\n%out = OpFunctionParameter %p\n%l = OpLabel\n"
    "%m = OpExtInst %p %set 1 %c16\n%f = OpFunctionCall %void %free %m\n"
    "OpReturn\nOpFunctionEnd\n";

static void mixed_forms(void **state) {
  size_t size, out_size;
  uint32_t *in = st_asm_ext(mixed, &size);
  uint32_t *out = st_raise(in, size, &out_size);
  unsigned imports;
  uint32_t set = set_import(out, out_size / 4, &imports);
  assert_int_equal(imports, 1);
  assert_int_equal(set, set_import(in, size / 4, &imports)); /* reused */
  assert_int_equal(out[3], in[3]);                           /* no new id */
  assert_int_equal(count_op(out, out_size / 4, SpvOpExtInst), 2);
  /* the kernel's Export remains, so Linkage stays */
  assert_true(has_linkage_name(out, out_size / 4, "k"));
  cldm_spirv_report r;
  assert_int_equal(cldm_spirv_inspect(out, out_size, &r, NULL), CLDM_SPIRV_OK);
  assert_int_equal(r.forms, CLDM_SPIRV_FORM_EXTINST);
  assert_int_equal(r.kernels[0].takes_heap, 1);
  cldm_spirv_report_free(&r);
  free(out);
  free(in);
}

static void refused(void **state) {
  size_t size;
  uint32_t *in = st_asm(
      "OpCapability Addresses\nOpCapability Kernel\nOpCapability Linkage\nOpCapability Int64\n"
      "OpCapability Int8\nOpCapability FunctionPointersINTEL\n"
      "OpExtension \"SPV_INTEL_function_pointers\"\nOpMemoryModel Physical64 OpenCL\n"
      "OpDecorate %malloc LinkageAttributes \"malloc\" Import\n"
      "%uchar = OpTypeInt 8 0\n%ulong = OpTypeInt 64 0\n"
      "%p = OpTypePointer CrossWorkgroup %uchar\n%fm = OpTypeFunction %p %ulong\n"
      "%pf = OpTypePointer Function %fm\n%fp = OpConstantFunctionPointerINTEL %pf %malloc\n"
      "%malloc = OpFunction %p None %fm\n%s = OpFunctionParameter %ulong\nOpFunctionEnd\n",
      &size);
  size_t at = st_find_op(in, size / 4, SpvOpConstantFunctionPointerINTEL, 0);
  char msg[200];
  snprintf(msg, sizeof msg,
           "word %zu: OpConstantFunctionPointerINTEL takes the address of Import-linkage malloc "
           "(%%%u): it cannot be raised to an instruction",
           at, in[at + 3]);
  void *out = (void *)1;
  size_t out_size;
  cldm_spirv_error err;
  assert_int_equal(cldm_spirv_raise(in, size, &out, &out_size, &err), CLDM_SPIRV_E_UNSUPPORTED);
  assert_null(out);
  assert_string_equal(err.message, msg);
  free(in);
  /* an entry point on malloc's declaration */
  in = st_asm("OpCapability Addresses\nOpCapability Kernel\nOpCapability Linkage\n"
              "OpCapability Int64\nOpCapability Int8\nOpMemoryModel Physical64 OpenCL\n"
              "OpEntryPoint Kernel %malloc \"k\"\n"
              "OpDecorate %malloc LinkageAttributes \"malloc\" Import\n"
              "%uchar = OpTypeInt 8 0\n%ulong = OpTypeInt 64 0\n"
              "%p = OpTypePointer CrossWorkgroup %uchar\n%fm = OpTypeFunction %p %ulong\n"
              "%malloc = OpFunction %p None %fm\n%s = OpFunctionParameter %ulong\nOpFunctionEnd\n",
              &size);
  at = st_find_op(in, size / 4, SpvOpEntryPoint, 0);
  snprintf(msg, sizeof msg,
           "word %zu: entry point \"k\" is the Import-linkage declaration of malloc", at);
  assert_int_equal(cldm_spirv_raise(in, size, &out, &out_size, &err), CLDM_SPIRV_E_UNSUPPORTED);
  assert_string_equal(err.message, msg);
  in[0] = 0;
  assert_int_equal(cldm_spirv_raise(in, size, &out, &out_size, &err), CLDM_SPIRV_E_MALFORMED);
  assert_string_equal(err.message, "word 0: bad magic number 0x00000000 (SPIR-V is 0x07230203)");
  free(in);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(import_to_extinst),    cmocka_unit_test(identical_copy),
      cmocka_unit_test(mixed_forms),          cmocka_unit_test(refused),
      cmocka_unit_test(cxx_left_to_lowering),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
