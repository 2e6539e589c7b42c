/*
 * test_module.c — pass 1 (layer/spirv/src/module.c): header, byte order, instruction split,
 * logical layout, result ids, function structure; every malformed case asserts its message
 * and word offset.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "spirv_test.h"

static const char minimal[] = "OpCapability Addresses\n"
                              "OpCapability Kernel\n"
                              "OpMemoryModel Physical64 OpenCL\n"
                              "OpEntryPoint Kernel %k \"k\"\n"
                              "OpName %k \"k\"\n"
                              "%void = OpTypeVoid\n"
                              "%ft = OpTypeFunction %void\n"
                              "%k = OpFunction %void None %ft\n"
                              "%l = OpLabel\n"
                              "OpReturn\n"
                              "OpFunctionEnd\n";

/* Parses `words`, expects failure with status and message, frees. */
static void expect_error(const void *words, size_t size, cldm_spirv_status status,
                         const char *message) {
  cldm_spirv_module m;
  cldm_spirv_error err;
  cldm_spirv_status st = cldm_spirv_module_parse(&m, words, size, &err);
  cldm_spirv_module_free(&m);
  assert_int_equal(st, status);
  assert_int_equal(err.status, status);
  if (strcmp(err.message, message))
    fail_msg("message\n  got:      %s\n  expected: %s", err.message, message);
}

static void expect_asm_error(const char *text, cldm_spirv_status status, const char *message) {
  size_t size;
  uint32_t *w = st_asm(text, &size);
  expect_error(w, size, status, message);
  free(w);
}

static void parse_minimal(void **state) {
  size_t size;
  uint32_t *w = st_asm(minimal, &size);
  cldm_spirv_module m;
  cldm_spirv_error err;
  assert_int_equal(cldm_spirv_module_parse(&m, w, size, &err), CLDM_SPIRV_OK);
  assert_int_equal(m.ninst, 11);
  assert_int_equal(m.bound, w[3]);
  assert_int_equal(m.addressing, SpvAddressingModelPhysical64);
  assert_int_equal(m.memory_model, SpvMemoryModelOpenCL);
  /* sections: 2 capabilities, memory model, entry point, name, 2 types, function */
  assert_int_equal(m.sec[CLDM_SPIRV_SEC_CAPABILITY], 0);
  assert_int_equal(m.sec[CLDM_SPIRV_SEC_MEMORYMODEL], 2);
  assert_int_equal(m.sec[CLDM_SPIRV_SEC_ENTRYPOINT], 3);
  assert_int_equal(m.sec[CLDM_SPIRV_SEC_DEBUG_B], 4);
  assert_int_equal(m.sec[CLDM_SPIRV_SEC_GLOBAL], 5);
  assert_int_equal(m.sec[CLDM_SPIRV_SEC_FUNCTION], 7);
  assert_int_equal(m.sec[CLDM_SPIRV_SEC_COUNT], 11);
  assert_int_equal(m.nfn, 1);
  assert_int_equal(m.fn[0].nparams, 0);
  assert_int_equal(m.fn[0].begin, 7);
  assert_int_equal(m.fn[0].body, 8);
  assert_int_equal(m.fn[0].end, 10);
  assert_int_equal(m.nep, 1);
  assert_string_equal(m.ep[0].name, "k");
  assert_int_equal(m.ep[0].fn, 0);
  char name[16];
  assert_string_equal(cldm_spirv_name_of(&m, m.fn[0].id, name, sizeof name), "k");
  assert_int_equal(cldm_spirv_def_op(&m, m.fn[0].type_id), SpvOpTypeFunction);
  assert_int_equal(cldm_spirv_fn_index(&m, m.fn[0].id), 0);
  assert_int_equal(cldm_spirv_fn_index(&m, m.fn[0].type_id), CLDM_SPIRV_NONE);
  assert_null(cldm_spirv_def(&m, m.bound, NULL));
  assert_null(cldm_spirv_def(&m, 0, NULL));
  cldm_spirv_module_free(&m);
  free(w);
}

static void byte_swapped_input(void **state) {
  size_t size;
  uint32_t *w = st_asm(minimal, &size);
  uint32_t *s = malloc(size);
  for (size_t i = 0; i < size / 4; i++)
    s[i] = __builtin_bswap32(w[i]);
  cldm_spirv_module m;
  cldm_spirv_error err;
  assert_int_equal(cldm_spirv_module_parse(&m, s, size, &err), CLDM_SPIRV_OK);
  assert_int_equal(m.nw, size / 4);
  assert_memory_equal(m.w, w, size); /* host order inside */
  cldm_spirv_module_free(&m);
  free(s);
  free(w);
}

static void bad_magic(void **state) {
  size_t size;
  uint32_t *w = st_asm(minimal, &size);
  w[0] = 0xDEADBEEF;
  expect_error(w, size, CLDM_SPIRV_E_MALFORMED,
               "word 0: bad magic number 0xdeadbeef (SPIR-V is 0x07230203)");
  free(w);
}

static void truncated(void **state) {
  size_t size;
  uint32_t *w = st_asm(minimal, &size);
  char msg[160];
  /* not a whole number of words */
  snprintf(msg, sizeof msg, "word %zu: module size %zu bytes is not a multiple of 4 (truncated?)",
           (size - 2) / 4, size - 2);
  expect_error(w, size - 2, CLDM_SPIRV_E_MALFORMED, msg);
  /* shorter than the header */
  expect_error(w, 12, CLDM_SPIRV_E_MALFORMED,
               "word 0: module of 12 bytes is shorter than the 5-word header");
  expect_error(NULL, 0, CLDM_SPIRV_E_MALFORMED,
               "word 0: module of 0 bytes is shorter than the 5-word header");
  /* cut inside OpFunction (5 words): its word count runs past the end */
  size_t fn = st_find_op(w, size / 4, SpvOpFunction, 0);
  snprintf(msg, sizeof msg,
           "word %zu: OpFunction word count 5 runs past the end of the module (3 words left)", fn);
  expect_error(w, (fn + 3) * 4, CLDM_SPIRV_E_MALFORMED, msg);
  /* last word (OpFunctionEnd) missing */
  snprintf(msg, sizeof msg, "word %zu: module ends inside a function (missing OpFunctionEnd)",
           size / 4 - 1);
  expect_error(w, size - 4, CLDM_SPIRV_E_MALFORMED, msg);
  free(w);
}

static void word_count_zero_and_past_end(void **state) {
  size_t size;
  uint32_t *w = st_asm(minimal, &size);
  size_t name = st_find_op(w, size / 4, SpvOpName, 0);
  uint32_t saved = w[name];
  w[name] &= 0xFFFFu;
  char msg[160];
  snprintf(msg, sizeof msg, "word %zu: OpName (opcode 5) has word count 0", name);
  expect_error(w, size, CLDM_SPIRV_E_MALFORMED, msg);
  w[name] = saved;
  size_t end = size / 4 - 1; /* OpFunctionEnd */
  w[end] = SpvOpFunctionEnd | 2u << 16;
  snprintf(msg, sizeof msg,
           "word %zu: OpFunctionEnd word count 2 runs past the end of the module (1 words left)",
           end);
  expect_error(w, size, CLDM_SPIRV_E_MALFORMED, msg);
  free(w);
}

static void ids_and_bound(void **state) {
  size_t size;
  uint32_t *w = st_asm(minimal, &size);
  uint32_t bound = w[3];
  size_t v = st_find_op(w, size / 4, SpvOpTypeVoid, 0);
  size_t ft = st_find_op(w, size / 4, SpvOpTypeFunction, 0);
  char msg[160];
  /* result id >= bound */
  uint32_t saved = w[v + 1];
  w[v + 1] = bound;
  snprintf(msg, sizeof msg, "word %zu: OpTypeVoid: result id %u is not below the id bound %u",
           v + 1, bound, bound);
  expect_error(w, size, CLDM_SPIRV_E_MALFORMED, msg);
  w[v + 1] = saved;
  /* result type >= bound */
  size_t fn = st_find_op(w, size / 4, SpvOpFunction, 0);
  saved = w[fn + 1];
  w[fn + 1] = bound + 7;
  snprintf(msg, sizeof msg, "word %zu: OpFunction: result type id %u is not below the id bound %u",
           fn + 1, bound + 7, bound);
  expect_error(w, size, CLDM_SPIRV_E_MALFORMED, msg);
  w[fn + 1] = saved;
  /* an id defined twice */
  w[ft + 1] = w[v + 1];
  snprintf(msg, sizeof msg, "word %zu: OpTypeFunction: id %%%u is already defined at word %zu",
           ft + 1, w[v + 1], v);
  expect_error(w, size, CLDM_SPIRV_E_MALFORMED, msg);
  free(w);
  /* header fields */
  w = st_asm(minimal, &size);
  w[3] = 0;
  expect_error(w, size, CLDM_SPIRV_E_MALFORMED, "word 3: id bound is 0");
  w[3] = CLDM_SPIRV_MAX_BOUND + 1;
  snprintf(msg, sizeof msg, "word 3: id bound %u is larger than the supported %u",
           CLDM_SPIRV_MAX_BOUND + 1, CLDM_SPIRV_MAX_BOUND);
  expect_error(w, size, CLDM_SPIRV_E_UNSUPPORTED, msg);
  w[3] = bound;
  w[1] = 0x00010600;
  expect_error(w, size, CLDM_SPIRV_E_UNSUPPORTED,
               "word 1: SPIR-V version word 0x00010600 (1.6) is not supported (1.0-1.5)");
  for (uint32_t minor = 0; minor <= 5; minor++) {
    cldm_spirv_module m;
    w[1] = 0x00010000 | minor << 8;
    assert_int_equal(cldm_spirv_module_parse(&m, w, size, NULL), CLDM_SPIRV_OK);
    cldm_spirv_module_free(&m);
  }
  free(w);
}

static void layout_order(void **state) {
  expect_asm_error("OpCapability Addresses\nOpCapability Kernel\n"
                   "OpMemoryModel Physical64 OpenCL\n%void = OpTypeVoid\nOpName %void \"v\"\n",
                   CLDM_SPIRV_E_MALFORMED,
                   "word 14: OpName is out of the logical layout order: it belongs to the debug "
                   "names section, which ends before the types, constants and global variables");
  expect_asm_error("OpCapability Addresses\n%void = OpTypeVoid\n", CLDM_SPIRV_E_MALFORMED,
                   "word 7: OpTypeVoid before OpMemoryModel (the module has none)");
  expect_asm_error("OpCapability Addresses\nOpCapability Kernel\n", CLDM_SPIRV_E_MALFORMED,
                   "word 9: module has no OpMemoryModel");
  expect_asm_error("OpCapability Kernel\nOpMemoryModel Physical64 OpenCL\n"
                   "OpMemoryModel Physical64 OpenCL\n",
                   CLDM_SPIRV_E_MALFORMED, "word 10: second OpMemoryModel");
}

static void function_structure(void **state) {
  static const char head[] = "OpCapability Addresses\nOpCapability Kernel\n"
                             "OpMemoryModel Physical64 OpenCL\n"
                             "%void = OpTypeVoid\n%ft = OpTypeFunction %void\n";
  char text[1024];
  size_t base = 5 + 2 + 2 + 3 + 2 + 3; /* header + instructions above */
  char msg[160];
  snprintf(text, sizeof text, "%s%%f = OpFunction %%void None %%ft\n%%l = OpLabel\nOpFunctionEnd\n",
           head);
  snprintf(msg, sizeof msg, "word %zu: OpFunctionEnd inside a block: the block has no terminator",
           base + 7);
  expect_asm_error(text, CLDM_SPIRV_E_MALFORMED, msg);
  snprintf(text, sizeof text, "%s%%f = OpFunction %%void None %%ft\nOpReturn\nOpFunctionEnd\n",
           head);
  snprintf(msg, sizeof msg, "word %zu: OpReturn outside a block", base + 5);
  expect_asm_error(text, CLDM_SPIRV_E_MALFORMED, msg);
  snprintf(text, sizeof text,
           "%s%%f = OpFunction %%void None %%ft\n%%l = OpLabel\n%%m = OpLabel\nOpReturn\n"
           "OpFunctionEnd\n",
           head);
  snprintf(msg, sizeof msg,
           "word %zu: OpLabel inside a block: the previous block has no terminator", base + 7);
  expect_asm_error(text, CLDM_SPIRV_E_MALFORMED, msg);
  snprintf(text, sizeof text,
           "%s%%f = OpFunction %%void None %%ft\n%%g = OpFunction %%void None %%ft\n"
           "OpFunctionEnd\n",
           head);
  snprintf(msg, sizeof msg, "word %zu: OpFunction inside another function (missing OpFunctionEnd)",
           base + 5);
  expect_asm_error(text, CLDM_SPIRV_E_MALFORMED, msg);
  snprintf(text, sizeof text, "%sOpFunctionEnd\n", head);
  snprintf(msg, sizeof msg, "word %zu: OpFunctionEnd outside a function", base);
  expect_asm_error(text, CLDM_SPIRV_E_MALFORMED, msg);
  /* entry point naming something that is not a function */
  expect_asm_error("OpCapability Kernel\nOpMemoryModel Physical64 OpenCL\n"
                   "OpEntryPoint Kernel %void \"k\"\n%void = OpTypeVoid\n",
                   CLDM_SPIRV_E_MALFORMED, "word 12: OpEntryPoint \"k\": %1 is not a function");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(parse_minimal),
      cmocka_unit_test(byte_swapped_input),
      cmocka_unit_test(bad_magic),
      cmocka_unit_test(truncated),
      cmocka_unit_test(word_count_zero_and_past_end),
      cmocka_unit_test(ids_and_bound),
      cmocka_unit_test(layout_order),
      cmocka_unit_test(function_structure),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
