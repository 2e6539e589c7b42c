/*
 * test_operands.c — the grammar-driven operand walker (layer/spirv/src/operands.c): strings,
 * enumerants with parameters, bit enums, OpSwitch literal widths, OpExtInst operands from the
 * set's grammar, OpSpecConstantOp, and the malformed cases (operand missing, words left over,
 * unterminated string, unknown opcode).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "spirv_test.h"

typedef struct seen {
  cldm_spirv_opnd o[32];
  size_t n;
} seen;

static cldm_spirv_status record(void *ctx, const cldm_spirv_module *m, uint32_t ii,
                                const cldm_spirv_opnd *o, cldm_spirv_error *err) {
  seen *s = ctx;
  if (s->n < 32)
    s->o[s->n++] = *o;
  return CLDM_SPIRV_OK;
}

/* Parses text, walks the n-th instruction with opcode op. */
static cldm_spirv_status walk_nth(const char *text, uint32_t op, unsigned nth, seen *s,
                                  cldm_spirv_error *err) {
  size_t size;
  uint32_t *w = st_asm(text, &size);
  cldm_spirv_module m;
  assert_int_equal(cldm_spirv_module_parse(&m, w, size, err), CLDM_SPIRV_OK);
  uint32_t ii = 0, k = 0;
  for (; ii < m.ninst; ii++)
    if (m.inst[ii].op == op && k++ == nth)
      break;
  assert_true(ii < m.ninst);
  memset(s, 0, sizeof *s);
  cldm_spirv_status st = cldm_spirv_walk(&m, ii, record, s, err);
  cldm_spirv_module_free(&m);
  free(w);
  return st;
}

static void expect(const seen *s, size_t i, uint32_t kind, uint32_t pos, uint32_t len, int is_id) {
  assert_true(i < s->n);
  assert_int_equal(s->o[i].kind, kind);
  assert_int_equal(s->o[i].pos, pos);
  assert_int_equal(s->o[i].len, len);
  assert_int_equal(s->o[i].is_id, is_id);
}

static const char head[] =
    "OpCapability Addresses\nOpCapability Kernel\nOpCapability Linkage\nOpCapability Int64\n"
    "%std = OpExtInstImport \"OpenCL.std\"\n"
    "OpMemoryModel Physical64 OpenCL\n"
    "OpDecorate %f LinkageAttributes \"malloc\" Import\n"
    "%void = OpTypeVoid\n%uint = OpTypeInt 32 0\n%ulong = OpTypeInt 64 0\n"
    "%v4 = OpTypeVector %uint 4\n"
    "%p = OpTypePointer CrossWorkgroup %uint\n"
    "%c0 = OpConstant %uint 0\n%c1 = OpConstant %ulong 1\n"
    "%ft = OpTypeFunction %void %p %ulong\n";

static void decoration_with_string_and_enum(void **state) {
  char text[2048];
  snprintf(text, sizeof text,
           "%s%%f = OpFunction %%void None %%ft\n%%a = OpFunctionParameter %%p\n"
           "%%b = OpFunctionParameter %%ulong\nOpFunctionEnd\n",
           head);
  seen s;
  assert_int_equal(walk_nth(text, SpvOpDecorate, 0, &s, NULL), CLDM_SPIRV_OK);
  assert_int_equal(s.n, 4);
  expect(&s, 0, CLDM_SPIRV_KIND_IdRef, 1, 1, 1);
  expect(&s, 1, CLDM_SPIRV_KIND_Decoration, 2, 1, 0);
  expect(&s, 2, CLDM_SPIRV_KIND_LiteralString, 3, 2, 0); /* "malloc\0" = 7 bytes */
  expect(&s, 3, CLDM_SPIRV_KIND_LinkageType, 5, 1, 0);
  /* OpTypeVector: result, component type id, literal count */
  assert_int_equal(walk_nth(text, SpvOpTypeVector, 0, &s, NULL), CLDM_SPIRV_OK);
  assert_int_equal(s.n, 3);
  assert_int_equal(s.o[0].role, CLDM_SPIRV_ROLE_RESULT);
  expect(&s, 1, CLDM_SPIRV_KIND_IdRef, 2, 1, 1);
  expect(&s, 2, CLDM_SPIRV_KIND_LiteralInteger, 3, 1, 0);
  /* 64-bit OpConstant: the literal takes the rest */
  assert_int_equal(walk_nth(text, SpvOpConstant, 1, &s, NULL), CLDM_SPIRV_OK);
  assert_int_equal(s.n, 3);
  assert_int_equal(s.o[0].role, CLDM_SPIRV_ROLE_TYPE);
  expect(&s, 2, CLDM_SPIRV_KIND_LiteralContextDependentNumber, 3, 2, 0);
}

static const char body[] = "%%f = OpFunction %%void None %%ft\n%%a = OpFunctionParameter %%p\n"
                           "%%b = OpFunctionParameter %%ulong\n%%l = OpLabel\n"
                           "%%x = OpLoad %%uint %%a Volatile|Aligned 4\n"
                           "%%y = OpExtInst %%v4 %%std vloadn %%b %%a 4\n"
                           "OpSwitch %%b %%d 1 %%e 8589934592 %%d\n"
                           "%%e = OpLabel\nOpBranch %%d\n%%d = OpLabel\nOpReturn\nOpFunctionEnd\n";

static void memory_access_extinst_switch(void **state) {
  char text[4096], b[1024];
  snprintf(b, sizeof b, body);
  snprintf(text, sizeof text, "%s%s", head, b);
  seen s;
  /* OpLoad: type, result, pointer, MemoryAccess bits, Aligned's literal */
  assert_int_equal(walk_nth(text, SpvOpLoad, 0, &s, NULL), CLDM_SPIRV_OK);
  assert_int_equal(s.n, 5);
  expect(&s, 2, CLDM_SPIRV_KIND_IdRef, 3, 1, 1);
  expect(&s, 3, CLDM_SPIRV_KIND_MemoryAccess, 4, 1, 0);
  expect(&s, 4, CLDM_SPIRV_KIND_LiteralInteger, 5, 1, 0);
  /* OpenCL.std vloadn: offset and pointer are ids, n is a literal (from the set's grammar) */
  assert_int_equal(walk_nth(text, SpvOpExtInst, 0, &s, NULL), CLDM_SPIRV_OK);
  assert_int_equal(s.n, 7);
  expect(&s, 2, CLDM_SPIRV_KIND_IdRef, 3, 1, 1);
  expect(&s, 3, CLDM_SPIRV_KIND_LiteralExtInstInteger, 4, 1, 0);
  expect(&s, 4, CLDM_SPIRV_KIND_IdRef, 5, 1, 1);
  expect(&s, 5, CLDM_SPIRV_KIND_IdRef, 6, 1, 1);
  expect(&s, 6, CLDM_SPIRV_KIND_LiteralInteger, 7, 1, 0);
  /* OpSwitch on a 64-bit selector: case literals are two words */
  assert_int_equal(walk_nth(text, SpvOpSwitch, 0, &s, NULL), CLDM_SPIRV_OK);
  assert_int_equal(s.n, 6);
  expect(&s, 2, CLDM_SPIRV_KIND_LiteralInteger, 3, 2, 0);
  expect(&s, 3, CLDM_SPIRV_KIND_IdRef, 5, 1, 1);
  expect(&s, 4, CLDM_SPIRV_KIND_LiteralInteger, 6, 2, 0);
  expect(&s, 5, CLDM_SPIRV_KIND_IdRef, 8, 1, 1);
}

static void spec_constant_op(void **state) {
  char text[2048];
  snprintf(text, sizeof text,
           "%s%%s = OpSpecConstant %%uint 3\n%%t = OpSpecConstantOp %%uint IAdd %%s %%c0\n", head);
  seen s;
  assert_int_equal(walk_nth(text, SpvOpSpecConstantOp, 0, &s, NULL), CLDM_SPIRV_OK);
  assert_int_equal(s.n, 5);
  expect(&s, 2, CLDM_SPIRV_KIND_LiteralSpecConstantOpInteger, 3, 1, 0);
  expect(&s, 3, CLDM_SPIRV_KIND_IdRef, 4, 1, 1);
  expect(&s, 4, CLDM_SPIRV_KIND_IdRef, 5, 1, 1);
}

/* Builds a module whose last global instruction is replaced by raw words. */
static cldm_spirv_status walk_raw(const uint32_t *inst, uint32_t wc, cldm_spirv_error *err) {
  size_t size;
  uint32_t *w = st_asm("OpCapability Kernel\nOpMemoryModel Physical64 OpenCL\n", &size);
  uint32_t *m2 = malloc(size + wc * 4);
  memcpy(m2, w, size);
  memcpy((char *)m2 + size, inst, wc * 4);
  m2[3] = 100;
  cldm_spirv_module m;
  assert_int_equal(cldm_spirv_module_parse(&m, m2, size + wc * 4, err), CLDM_SPIRV_OK);
  seen s;
  cldm_spirv_status st = cldm_spirv_walk(&m, m.ninst - 1, record, &s, err);
  cldm_spirv_module_free(&m);
  free(m2);
  free(w);
  return st;
}

static void malformed_operands(void **state) {
  cldm_spirv_error err;
  /* OpTypeInt without its signedness word (module: 5 header + 2 + 3 words before it) */
  uint32_t int3[] = {SpvOpTypeInt | 3u << 16, 7, 32};
  assert_int_equal(walk_raw(int3, 3, &err), CLDM_SPIRV_E_MALFORMED);
  assert_string_equal(err.message,
                      "word 10: OpTypeInt has 3 words: operand LiteralInteger is missing");
  /* OpTypeVoid with a word left over */
  uint32_t void3[] = {SpvOpTypeVoid | 3u << 16, 7, 99};
  assert_int_equal(walk_raw(void3, 3, &err), CLDM_SPIRV_E_MALFORMED);
  assert_string_equal(err.message, "word 12: OpTypeVoid has 3 words, but its operands end after 2");
  /* OpName whose string has no NUL within the instruction */
  uint32_t name[] = {SpvOpTypeOpaque | 3u << 16, 7, 0x41414141};
  assert_int_equal(walk_raw(name, 3, &err), CLDM_SPIRV_E_MALFORMED);
  assert_string_equal(err.message,
                      "word 12: OpTypeOpaque: literal string is not NUL-terminated within the "
                      "instruction");
  /* an opcode the grammar does not know */
  uint32_t unknown[] = {0xFFF0u | 2u << 16, 7};
  assert_int_equal(walk_raw(unknown, 2, &err), CLDM_SPIRV_E_UNSUPPORTED);
  assert_string_equal(err.message, "word 10: unknown opcode 65520 (not in the SPIR-V grammar this "
                                   "engine was built with)");
}

static void id_positions(void **state) {
  char text[4096], b[1024];
  snprintf(b, sizeof b, body);
  snprintf(text, sizeof text, "%s%s", head, b);
  size_t size;
  uint32_t *w = st_asm(text, &size);
  cldm_spirv_module m;
  assert_int_equal(cldm_spirv_module_parse(&m, w, size, NULL), CLDM_SPIRV_OK);
  for (uint32_t ii = 0; ii < m.ninst; ii++) {
    if (m.inst[ii].op != SpvOpSwitch)
      continue;
    uint16_t pos[16];
    size_t n;
    int opaque;
    assert_int_equal(cldm_spirv_id_positions(&m, ii, pos, &n, &opaque, NULL), CLDM_SPIRV_OK);
    assert_int_equal(n, 4); /* selector, default, two targets */
    assert_int_equal(pos[0], 1);
    assert_int_equal(pos[1], 2);
    assert_int_equal(pos[2], 5);
    assert_int_equal(pos[3], 8);
    assert_int_equal(opaque, 0);
  }
  cldm_spirv_module_free(&m);
  free(w);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(decoration_with_string_and_enum),
      cmocka_unit_test(memory_access_extinst_switch),
      cmocka_unit_test(spec_constant_op),
      cmocka_unit_test(malformed_operands),
      cmocka_unit_test(id_positions),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
