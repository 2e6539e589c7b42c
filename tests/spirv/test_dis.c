/*
 * test_dis.c — the listing (layer/spirv/src/dis.c): SPV_EXT_device_malloc instructions by
 * name, enumerants and strings, the --malloc-only view with word offsets, errors reported.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cldm_spirv_dis.h"
#include "internal.h"
#include "spirv_test.h"

static char *listing(const void *bytes, size_t size, unsigned flags, cldm_spirv_status *st) {
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  *st = cldm_spirv_disassemble(bytes, size, f, flags, NULL);
  fclose(f);
  return text;
}

static void extinst_by_name(void **state) {
  size_t size;
  uint32_t *in = st_data("alloc64.ext.spv", &size);
  cldm_spirv_status st;
  char *text = listing(in, size, CLDM_SPIRV_DIS_HEADER, &st);
  assert_int_equal(st, CLDM_SPIRV_OK);
  assert_non_null(strstr(text, "; SPIR-V\n; Version: 1.0\n"));
  assert_non_null(strstr(text, "OpMemoryModel Physical64 OpenCL\n"));
  assert_non_null(strstr(text, "OpCapability Kernel\n"));
  assert_non_null(strstr(text, "OpEntryPoint Kernel %"));
  char line[128];
  size_t at = st_find_op(in, size / 4, SpvOpExtInst, 0); /* malloc(%ulong_16) */
  snprintf(line, sizeof line, "%%%u = OpExtInst %%%u %%%u malloc %%%u\n", in[at + 2], in[at + 1],
           in[at + 3], in[at + 5]);
  assert_non_null(strstr(text, line));
  snprintf(line, sizeof line, "%%%u = OpExtInstImport \"SPV_EXT_device_malloc\"\n", in[at + 3]);
  assert_non_null(strstr(text, line));
  free(text);
  /* only the set's instructions, each with its word offset */
  text = listing(in, size, CLDM_SPIRV_DIS_ONLY_MALLOC, &st);
  assert_int_equal(st, CLDM_SPIRV_OK);
  size_t lines = 0;
  for (char *p = text; *p; p++)
    lines += *p == '\n';
  assert_int_equal(lines, 8); /* the import and 7 instructions */
  snprintf(line, sizeof line, "%zu: %%%u = OpExtInst", at, in[at + 2]);
  assert_non_null(strstr(text, line));
  assert_non_null(strstr(text, " calloc "));
  assert_non_null(strstr(text, " realloc "));
  assert_non_null(strstr(text, " aligned_alloc "));
  free(text);
  free(in);
}

static void import_calls_and_errors(void **state) {
  size_t size;
  uint32_t *in = st_data("alloc64.spv", &size);
  cldm_spirv_status st;
  char *text = listing(in, size, CLDM_SPIRV_DIS_ONLY_MALLOC, &st);
  assert_int_equal(st, CLDM_SPIRV_OK);
  size_t calls = 0, len = strlen(text);
  for (size_t i = 0; i + 14 <= len; i++)
    calls += !memcmp(text + i, "OpFunctionCall", 14);
  assert_int_equal(calls, 7);
  free(text);
  /* decorations print strings and enumerants by name */
  text = listing(in, size, 0, &st);
  assert_non_null(strstr(text, "LinkageAttributes \"malloc\" Import\n"));
  assert_non_null(strstr(text, "FuncParamAttr NoCapture\n"));
  free(text);
  in[0] = 7;
  text = listing(in, size, 0, &st);
  assert_int_equal(st, CLDM_SPIRV_E_MALFORMED);
  free(text);
  free(in);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(extinst_by_name),
      cmocka_unit_test(import_calls_and_errors),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
