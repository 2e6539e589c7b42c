/*
 * test_detect.c — spec 2 detection and validation (layer/spirv/src/detect.c): both forms,
 * the sites found, and each invalid use with its message: unknown instruction number, operand
 * count, operand and result types, Import declarations with wrong signatures or bodies; C++'s
 * operators (which sites throw, a module's own operator new left alone, not seen when raising,
 * a wrong signature).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "spirv_test.h"

#define HEAD                                                                                       \
  "OpCapability Addresses\nOpCapability Kernel\nOpCapability Linkage\nOpCapability Int64\n"        \
  "OpCapability Int8\nOpCapability Int16\nOpCapability GenericPointer\n"
#define TYPES                                                                                      \
  "%void = OpTypeVoid\n%uchar = OpTypeInt 8 0\n%ushort = OpTypeInt 16 0\n"                         \
  "%uint = OpTypeInt 32 0\n%ulong = OpTypeInt 64 0\n%float = OpTypeFloat 32\n"                     \
  "%p = OpTypePointer CrossWorkgroup %uchar\n%gp = OpTypePointer Generic %uint\n"                  \
  "%fk = OpTypeFunction %void %p\n"                                                                \
  "%c16 = OpConstant %ulong 16\n%c4 = OpConstant %uint 4\n%c2 = OpConstant %ushort 2\n"            \
  "%cf = OpConstant %float 1.5\n%null = OpConstantNull %gp\n"
#define KERNEL_BEGIN "%k = OpFunction %void None %fk\n%out = OpFunctionParameter %p\n%l = OpLabel\n"
#define KERNEL_END "OpReturn\nOpFunctionEnd\n"

/* OpExtInst form: every instruction of the set once, sizes of both widths, Generic results. */
static const char ext_all[] =
    HEAD "%set = OpExtInstImport \"SPV_EXT_device_malloc\"\n"
         "OpMemoryModel Physical64 OpenCL\nOpEntryPoint Kernel %k \"k\"\n" TYPES KERNEL_BEGIN
         "%a = OpExtInst %p %set 1 %c16\n"
         "%b = OpExtInst %gp %set 3 %c4 %c16\n"
         "%c = OpExtInst %p %set 4 %a %c4\n"
         "%d = OpExtInst %gp %set 5 %c16 %c16\n"
         "%e = OpExtInst %void %set 2 %c\n"
         "%f = OpExtInst %void %set 2 %null\n" KERNEL_END;

static cldm_spirv_status detect(const uint32_t *w, size_t size, cldm_spirv_module *m,
                                cldm_spirv_detect *d, cldm_spirv_error *err) {
  cldm_spirv_status st = cldm_spirv_module_parse(m, w, size, err);
  if (!st)
    st = cldm_spirv_detect_uses(m, d, CLDM_SPIRV_DETECT_CXX, err);
  if (!st && d->allocates)
    st = cldm_spirv_check(m, d->drop, err);
  if (!st && d->allocates)
    st = cldm_spirv_detect_sites(m, d, err);
  return st;
}

static void extinst_form(void **state) {
  size_t size;
  uint32_t *w = st_asm_ext(ext_all, &size);
  cldm_spirv_module m;
  cldm_spirv_detect d;
  assert_int_equal(detect(w, size, &m, &d, NULL), CLDM_SPIRV_OK);
  assert_int_equal(d.allocates, 1);
  assert_int_equal(d.forms, CLDM_SPIRV_FORM_EXTINST);
  assert_int_not_equal(d.set_id, 0);
  assert_int_equal(d.nsites, 6);
  static const uint8_t ops[] = {1, 3, 4, 5, 2, 2};
  for (unsigned i = 0; i < 6; i++) {
    assert_int_equal(d.sites[i].op, ops[i]);
    assert_int_equal(d.sites[i].form, CLDM_SPIRV_SITE_EXTINST);
    assert_int_equal(d.sites[i].fn, 0);
    assert_int_equal(m.inst[d.sites[i].ii].op, SpvOpExtInst);
  }
  cldm_spirv_detect_free(&d);
  cldm_spirv_module_free(&m);
  free(w);
}

static void import_form(void **state) {
  size_t size;
  void *w = st_data("alloc64.spv", &size);
  cldm_spirv_module m;
  cldm_spirv_detect d;
  assert_int_equal(detect(w, size, &m, &d, NULL), CLDM_SPIRV_OK);
  assert_int_equal(d.forms, CLDM_SPIRV_FORM_IMPORT);
  assert_int_equal(d.nimport_fns, 5);
  assert_int_equal(d.nsites, 7); /* malloc, calloc, realloc, aligned_alloc, 3 x free */
  for (unsigned i = 0; i < d.nsites; i++) {
    assert_int_equal(d.sites[i].form, CLDM_SPIRV_SITE_IMPORT);
    assert_int_equal(m.inst[d.sites[i].ii].op, SpvOpFunctionCall);
  }
  /* the declarations and their parameters are dropped from the output */
  for (uint32_t f = 0; f < m.nfn; f++)
    assert_int_equal(d.drop[m.fn[f].id], d.import_op[f] != 0);
  cldm_spirv_detect_free(&d);
  cldm_spirv_module_free(&m);
  free(w);
}

static void extension_alone_allocates(void **state) {
  size_t size;
  uint32_t *w = st_asm("OpCapability Addresses\nOpCapability Kernel\n"
                       "OpExtension \"SPV_EXT_device_malloc\"\n"
                       "OpMemoryModel Physical64 OpenCL\n",
                       &size);
  cldm_spirv_module m;
  cldm_spirv_detect d;
  assert_int_equal(detect(w, size, &m, &d, NULL), CLDM_SPIRV_OK);
  assert_int_equal(d.allocates, 1);
  assert_int_equal(d.forms, 0);
  assert_int_equal(d.nsites, 0);
  cldm_spirv_detect_free(&d);
  cldm_spirv_module_free(&m);
  free(w);
}

/* Concatenates the module text around a kernel body. */
static char *module_text(const char *mid, const char *decl, const char *body) {
  static char text[8192];
  snprintf(text, sizeof text, "%s%s%s%s%s%s%s", HEAD, mid, TYPES, decl, KERNEL_BEGIN, body,
           KERNEL_END);
  return text;
}

/* Expects cldm_spirv_inspect to fail on the ext-form kernel body with status and message;
 * fmt gets the word offset of the first OpExtInst plus delta, then the id in its word idw. */
static void expect_ext_error(const char *body, cldm_spirv_status status, unsigned delta,
                             unsigned idw, const char *fmt) {
  size_t size;
  uint32_t *w = st_asm_ext(module_text("%set = OpExtInstImport \"SPV_EXT_device_malloc\"\n"
                                       "OpMemoryModel Physical64 OpenCL\n"
                                       "OpEntryPoint Kernel %k \"k\"\n",
                                       "", body),
                           &size);
  size_t at = st_find_op(w, size / 4, SpvOpExtInst, 0);
  assert_int_not_equal(at, 0);
  char msg[256];
  snprintf(msg, sizeof msg, fmt, at + delta, w[at + idw]);
  cldm_spirv_error err;
  assert_int_equal(cldm_spirv_inspect(w, size, NULL, &err), status);
  if (strcmp(err.message, msg))
    fail_msg("message\n  got:      %s\n  expected: %s", err.message, msg);
  free(w);
}

static void invalid_extinst_uses(void **state) {
  expect_ext_error("%a = OpExtInst %p %set 9 %c16\n", CLDM_SPIRV_E_INVALID, 4, 0,
                   "word %zu: OpExtInst SPV_EXT_device_malloc: unknown instruction number 9 "
                   "(spec 2.1 defines 1-5)");
  expect_ext_error("%a = OpExtInst %p %set 0\n", CLDM_SPIRV_E_INVALID, 4, 0,
                   "word %zu: OpExtInst SPV_EXT_device_malloc: unknown instruction number 0 "
                   "(spec 2.1 defines 1-5)");
  expect_ext_error("%a = OpExtInst %p %set 3 %c16\n", CLDM_SPIRV_E_INVALID, 0, 0,
                   "word %zu: OpExtInst SPV_EXT_device_malloc calloc: expects 2 operands, has 1 "
                   "(spec 2.1)");
  expect_ext_error("%a = OpExtInst %p %set 1 %c16 %c16\n", CLDM_SPIRV_E_INVALID, 0, 0,
                   "word %zu: OpExtInst SPV_EXT_device_malloc malloc: expects 1 operands, has 2 "
                   "(spec 2.1)");
  expect_ext_error("%a = OpExtInst %p %set 1 %cf\n", CLDM_SPIRV_E_INVALID, 0, 5,
                   "word %zu: OpExtInst SPV_EXT_device_malloc malloc: Size operand %%%u is not a "
                   "32- or 64-bit integer (spec 2.1)");
  expect_ext_error("%a = OpExtInst %p %set 1 %c2\n", CLDM_SPIRV_E_INVALID, 0, 5,
                   "word %zu: OpExtInst SPV_EXT_device_malloc malloc: Size operand %%%u is not a "
                   "32- or 64-bit integer (spec 2.1)");
  expect_ext_error("%a = OpExtInst %p %set 5 %c16 %cf\n", CLDM_SPIRV_E_INVALID, 0, 6,
                   "word %zu: OpExtInst SPV_EXT_device_malloc aligned_alloc: Size operand %%%u is "
                   "not a 32- or 64-bit integer (spec 2.1)");
  expect_ext_error("%a = OpExtInst %void %set 2 %c16\n", CLDM_SPIRV_E_INVALID, 0, 5,
                   "word %zu: OpExtInst SPV_EXT_device_malloc free: Ptr operand %%%u is not a "
                   "CrossWorkgroup or Generic pointer (spec 2.1)");
  expect_ext_error("%a = OpExtInst %uint %set 1 %c16\n", CLDM_SPIRV_E_INVALID, 1, 1,
                   "word %zu: OpExtInst SPV_EXT_device_malloc malloc: result type %%%u is not a "
                   "CrossWorkgroup or Generic pointer (spec 2.1)");
  expect_ext_error("%a = OpExtInst %p %set 2 %out\n", CLDM_SPIRV_E_INVALID, 1, 1,
                   "word %zu: OpExtInst SPV_EXT_device_malloc free: result type %%%u is not "
                   "OpTypeVoid (spec 2.1)");
}

/* Import-form declaration `decl` named malloc; fmt gets the OpFunction's word offset, the
 * function id, the offset of its first parameter and that parameter's type id. */
static void expect_import_error(const char *decl, cldm_spirv_status status, const char *fmt) {
  size_t size;
  uint32_t *w = st_asm(module_text("OpMemoryModel Physical64 OpenCL\n"
                                   "OpEntryPoint Kernel %k \"k\"\n"
                                   "OpDecorate %fn LinkageAttributes \"malloc\" Import\n",
                                   decl, ""),
                       &size);
  size_t at = st_find_op(w, size / 4, SpvOpFunction, 0);
  size_t par = st_find_op(w, size / 4, SpvOpFunctionParameter, 0);
  char msg[256];
  snprintf(msg, sizeof msg, fmt, at, w[at + 2], par, w[par + 1], w[at + 1]);
  cldm_spirv_error err;
  assert_int_equal(cldm_spirv_inspect(w, size, NULL, &err), status);
  if (strcmp(err.message, msg))
    fail_msg("message\n  got:      %s\n  expected: %s", err.message, msg);
  free(w);
}

static void invalid_import_declarations(void **state) {
  expect_import_error("%ft = OpTypeFunction %p %float\n%fn = OpFunction %p None %ft\n"
                      "%x = OpFunctionParameter %float\nOpFunctionEnd\n",
                      CLDM_SPIRV_E_INVALID,
                      "word %3$zu: Import-linkage function \"malloc\" (%%%2$u): parameter 1 "
                      "(Size) has type %%%4$u, not a 32- or 64-bit integer (spec 2.2)");
  expect_import_error("%ft = OpTypeFunction %p %ulong %ulong\n%fn = OpFunction %p None %ft\n"
                      "%x = OpFunctionParameter %ulong\n%y = OpFunctionParameter %ulong\n"
                      "OpFunctionEnd\n",
                      CLDM_SPIRV_E_INVALID,
                      "word %1$zu: Import-linkage function \"malloc\" (%%%2$u) has 2 parameters, "
                      "spec 2.2 requires 1");
  expect_import_error("%ft = OpTypeFunction %uint %ulong\n%fn = OpFunction %uint None %ft\n"
                      "%x = OpFunctionParameter %ulong\nOpFunctionEnd\n",
                      CLDM_SPIRV_E_INVALID,
                      "word %1$zu: Import-linkage function \"malloc\" (%%%2$u): result type "
                      "%%%5$u is not a CrossWorkgroup or Generic pointer (spec 2.1)");
  expect_import_error("%ft = OpTypeFunction %p %ulong\n%fn = OpFunction %p None %ft\n"
                      "%x = OpFunctionParameter %ulong\n%fl = OpLabel\n%r = OpConvertUToPtr %p "
                      "%x\nOpReturnValue %r\nOpFunctionEnd\n",
                      CLDM_SPIRV_E_INVALID,
                      "word %1$zu: Import-linkage function \"malloc\" (%%%2$u) has a body; "
                      "Import-linkage functions are declarations (spec 2.2)");
}

/* C++'s operators: throwing new, nothrow new, delete of a generic pointer; the module's own
 * _Znam (a body, Export linkage) is its own function. */
static const char cxx_text[] =
    "OpCapability Addresses\nOpCapability Kernel\nOpCapability Linkage\nOpCapability Int64\n"
    "OpCapability Int8\nOpCapability GenericPointer\nOpMemoryModel Physical64 OpenCL\n"
    "OpEntryPoint Kernel %k \"k\"\n"
    "OpDecorate %new LinkageAttributes \"_Znwm\" Import\n"
    "OpDecorate %nt LinkageAttributes \"_ZnwmRU3AS4KSt9nothrow_t\" Import\n"
    "OpDecorate %del LinkageAttributes \"_ZdlPU3AS4v\" Import\n"
    "OpDecorate %own LinkageAttributes \"_Znam\" Export\n"
    "%void = OpTypeVoid\n%uchar = OpTypeInt 8 0\n%ulong = OpTypeInt 64 0\n"
    "%g = OpTypePointer Generic %uchar\n%tag = OpTypeStruct %uchar\n"
    "%tagp = OpTypePointer Generic %tag\n%fnew = OpTypeFunction %g %ulong\n"
    "%fnt = OpTypeFunction %g %ulong %tagp\n%fdel = OpTypeFunction %void %g\n"
    "%fk = OpTypeFunction %void %tagp\n%c8 = OpConstant %ulong 8\n%nullg = OpConstantNull %g\n"
    "%new = OpFunction %g None %fnew\n%a = OpFunctionParameter %ulong\nOpFunctionEnd\n"
    "%nt = OpFunction %g None %fnt\n%b = OpFunctionParameter %ulong\n"
    "%c = OpFunctionParameter %tagp\nOpFunctionEnd\n"
    "%del = OpFunction %void None %fdel\n%d = OpFunctionParameter %g\nOpFunctionEnd\n"
    "%own = OpFunction %g None %fnew\n%e = OpFunctionParameter %ulong\n%ol = OpLabel\n"
    "OpReturnValue %nullg\nOpFunctionEnd\n"
    "%k = OpFunction %void None %fk\n%t = OpFunctionParameter %tagp\n%kl = OpLabel\n"
    "%p = OpFunctionCall %g %new %c8\n%q = OpFunctionCall %g %nt %c8 %t\n"
    "%r = OpFunctionCall %g %own %c8\n%x = OpFunctionCall %void %del %p\n"
    "%y = OpFunctionCall %void %del %q\nOpReturn\nOpFunctionEnd\n";

static void cxx_operators(void **state) {
  (void)state;
  size_t size;
  uint32_t *w = st_asm(cxx_text, &size);
  cldm_spirv_module m;
  cldm_spirv_detect d;
  assert_int_equal(detect(w, size, &m, &d, NULL), CLDM_SPIRV_OK);
  assert_int_equal(d.forms, CLDM_SPIRV_FORM_CXX);
  assert_int_equal(d.nimport_fns, 3);
  assert_int_equal(d.nsites, 4); /* not the call of the module's own _Znam */
  static const uint8_t ops[] = {CLDM_SPIRV_EXT_MALLOC, CLDM_SPIRV_EXT_MALLOC, CLDM_SPIRV_EXT_FREE,
                                CLDM_SPIRV_EXT_FREE};
  static const uint8_t throws[] = {1, 0, 0, 0};
  for (unsigned i = 0; i < 4; i++) {
    assert_int_equal(d.sites[i].op, ops[i]);
    assert_int_equal(d.sites[i].throws, throws[i]);
  }
  assert_int_equal(d.nthrowing, 1);
  assert_int_equal(d.import_op[3], 0); /* _Znam, defined here */
  assert_false(d.drop[m.fn[3].id]);
  cldm_spirv_detect_free(&d);
  /* raising leaves the operators to the lowering: not seen without CLDM_SPIRV_DETECT_CXX */
  assert_int_equal(cldm_spirv_detect_uses(&m, &d, 0, NULL), CLDM_SPIRV_OK);
  assert_int_equal(d.allocates, 0);
  cldm_spirv_detect_free(&d);
  cldm_spirv_module_free(&m);
  free(w);
  /* a declaration whose parameters are not what its name says is refused, named */
  char text[4096];
  snprintf(text, sizeof text, "%s", cxx_text);
  char *at = strstr(text, "%fnew = OpTypeFunction %g %ulong");
  memcpy(at, "%fnew = OpTypeFunction %g %g    ", 32);
  at = strstr(text, "%a = OpFunctionParameter %ulong");
  memcpy(at, "%a = OpFunctionParameter %g    ", 31);
  at = strstr(text, "%e = OpFunctionParameter %ulong");
  memcpy(at, "%e = OpFunctionParameter %g    ", 31);
  w = st_asm(text, &size);
  cldm_spirv_error err;
  assert_int_equal(cldm_spirv_inspect(w, size, NULL, &err), CLDM_SPIRV_E_INVALID);
  if (!strstr(err.message, "Import-linkage function \"_Znwm\"") ||
      !strstr(err.message, "parameter 1 has type") || !strstr(err.message, "(spec 2.2)"))
    fail_msg("message: %s", err.message);
  free(w);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(extinst_form),
      cmocka_unit_test(import_form),
      cmocka_unit_test(extension_alone_allocates),
      cmocka_unit_test(invalid_extinst_uses),
      cmocka_unit_test(invalid_import_declarations),
      cmocka_unit_test(cxx_operators),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
