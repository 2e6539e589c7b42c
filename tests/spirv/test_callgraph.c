/*
 * test_callgraph.c — who allocates (layer/spirv/src/callgraph.c): propagation through calls,
 * non-allocating functions left alone, and the E_UNSUPPORTED cases with their messages:
 * recursion through allocating functions, taken addresses, entry points without a body.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "spirv_test.h"

static const char head[] =
    "OpCapability Addresses\nOpCapability Kernel\nOpCapability Linkage\nOpCapability Int64\n"
    "OpCapability Int8\n";
static const char types[] =
    "%void = OpTypeVoid\n%uchar = OpTypeInt 8 0\n%ulong = OpTypeInt 64 0\n"
    "%p = OpTypePointer CrossWorkgroup %uchar\n%fm = OpTypeFunction %p %ulong\n"
    "%fv = OpTypeFunction %void\n%c16 = OpConstant %ulong 16\n";
static const char malloc_decl[] =
    "%malloc = OpFunction %p None %fm\n%size = OpFunctionParameter %ulong\nOpFunctionEnd\n";

/* extra_head: entry points and names (after OpMemoryModel); lines starting with
 * OpCapability/OpExtension go before it. */
static uint32_t *module(const char *extra_head, const char *functions, size_t *size) {
  char pre[1024] = "", post[2048] = "", text[8192], copy[2048];
  snprintf(copy, sizeof copy, "%s", extra_head);
  for (char *line = strtok(copy, "\n"); line; line = strtok(NULL, "\n")) {
    char *dst =
        !strncmp(line, "OpCapability", 12) || !strncmp(line, "OpExtension", 11) ? pre : post;
    strcat(dst, line);
    strcat(dst, "\n");
  }
  /* decorations must follow names: move OpDecorate lines of post after our OpName */
  char names[2048] = "", decos[1024] = "";
  snprintf(copy, sizeof copy, "%s", post);
  for (char *line = strtok(copy, "\n"); line; line = strtok(NULL, "\n")) {
    strcat(!strncmp(line, "OpDecorate", 10) ? decos : names, line);
    strcat(!strncmp(line, "OpDecorate", 10) ? decos : names, "\n");
  }
  /* global lines of `functions` (before the first OpFunction) precede malloc's declaration */
  const char *first = strstr(functions, "= OpFunction ");
  while (first > functions && first[-1] != '\n')
    first--;
  snprintf(text, sizeof text,
           "%s%sOpMemoryModel Physical64 OpenCL\n%sOpName %%leaf \"leaf\"\n%s"
           "OpDecorate %%malloc LinkageAttributes \"malloc\" Import\n%s%.*s%s%s",
           head, pre, names, decos, types, (int)(first - functions), functions, malloc_decl, first);
  return st_asm(text, size);
}

/* Runs the analysis up to the call graph; returns its status. */
static cldm_spirv_status graph(const uint32_t *w, size_t size, cldm_spirv_module *m,
                               cldm_spirv_detect *d, cldm_spirv_callgraph *cg,
                               cldm_spirv_error *err) {
  memset(cg, 0, sizeof *cg);
  cldm_spirv_status st = cldm_spirv_module_parse(m, w, size, err);
  if (!st)
    st = cldm_spirv_detect_uses(m, d, CLDM_SPIRV_DETECT_CXX, err);
  if (!st)
    st = cldm_spirv_check(m, d->drop, err);
  if (!st)
    st = cldm_spirv_detect_sites(m, d, err);
  if (!st)
    st = cldm_spirv_callgraph_build(m, d, cg, err);
  return st;
}

static void release(cldm_spirv_module *m, cldm_spirv_detect *d, cldm_spirv_callgraph *cg) {
  cldm_spirv_callgraph_free(cg);
  cldm_spirv_detect_free(d);
  cldm_spirv_module_free(m);
}

static int allocates(const cldm_spirv_module *m, const cldm_spirv_callgraph *cg, const char *name) {
  char buf[32];
  for (uint32_t f = 0; f < m->nfn; f++)
    if (!strcmp(cldm_spirv_name_of(m, m->fn[f].id, buf, sizeof buf), name))
      return cg->allocates[f];
  fail_msg("no function %s", name);
  return -1;
}

static void propagation(void **state) {
  size_t size;
  uint32_t *w = module("OpEntryPoint Kernel %k \"k\"\nOpEntryPoint Kernel %plain \"plain\"\n"
                       "OpName %mid \"mid\"\nOpName %k \"k\"\nOpName %other \"other\"\n"
                       "OpName %plain \"plain\"\n",
                       "%leaf = OpFunction %void None %fv\n%l1 = OpLabel\n"
                       "%a = OpFunctionCall %p %malloc %c16\nOpReturn\nOpFunctionEnd\n"
                       "%mid = OpFunction %void None %fv\n%l2 = OpLabel\n"
                       "%b = OpFunctionCall %void %leaf\nOpReturn\nOpFunctionEnd\n"
                       "%other = OpFunction %void None %fv\n%l3 = OpLabel\nOpReturn\n"
                       "OpFunctionEnd\n"
                       "%k = OpFunction %void None %fv\n%l4 = OpLabel\n"
                       "%c = OpFunctionCall %void %other\n%d = OpFunctionCall %void %mid\n"
                       "OpReturn\nOpFunctionEnd\n"
                       "%plain = OpFunction %void None %fv\n%l5 = OpLabel\n"
                       "%e = OpFunctionCall %void %other\nOpReturn\nOpFunctionEnd\n",
                       &size);
  cldm_spirv_module m;
  cldm_spirv_detect d;
  cldm_spirv_callgraph cg;
  assert_int_equal(graph(w, size, &m, &d, &cg, NULL), CLDM_SPIRV_OK);
  assert_int_equal(allocates(&m, &cg, "leaf"), 1);
  assert_int_equal(allocates(&m, &cg, "mid"), 1);
  assert_int_equal(allocates(&m, &cg, "k"), 1);
  assert_int_equal(allocates(&m, &cg, "other"), 0);
  assert_int_equal(allocates(&m, &cg, "plain"), 0);
  assert_int_equal(cg.allocates[0], 0); /* malloc's declaration itself */
  release(&m, &d, &cg);
  free(w);
}

static void expect_graph_error(const char *extra_head, const char *functions,
                               cldm_spirv_status status, uint32_t op, unsigned nth,
                               const char *fmt) {
  size_t size;
  uint32_t *w = module(extra_head, functions, &size);
  size_t at = st_find_op(w, size / 4, op, nth);
  char msg[256];
  snprintf(msg, sizeof msg, fmt, at, at ? w[at + 2] : 0, at ? w[at + 3] : 0);
  cldm_spirv_module m;
  cldm_spirv_detect d;
  cldm_spirv_callgraph cg;
  cldm_spirv_error err;
  cldm_spirv_status st = graph(w, size, &m, &d, &cg, &err);
  if (st != status)
    fail_msg("status %d, message %s", st, err.message);
  if (strcmp(err.message, msg))
    fail_msg("message\n  got:      %s\n  expected: %s", err.message, msg);
  release(&m, &d, &cg);
  free(w);
}

static void recursion(void **state) {
  /* leaf -> leaf (direct): the call closes the cycle; fmt: offset, call result, callee */
  expect_graph_error("OpEntryPoint Kernel %k \"k\"\n",
                     "%leaf = OpFunction %void None %fv\n%l1 = OpLabel\n"
                     "%a = OpFunctionCall %p %malloc %c16\n%b = OpFunctionCall %void %leaf\n"
                     "OpReturn\nOpFunctionEnd\n"
                     "%k = OpFunction %void None %fv\n%l2 = OpLabel\n"
                     "%c = OpFunctionCall %void %leaf\nOpReturn\nOpFunctionEnd\n",
                     CLDM_SPIRV_E_UNSUPPORTED, SpvOpFunctionCall, 1,
                     "word %zu: recursion through allocating functions is not supported (spec "
                     "1.5): %%%3$u \"leaf\" calls %%%3$u \"leaf\", which reaches it again");
  /* recursion among functions that do not allocate is not our business */
  size_t size;
  uint32_t *w = module("OpEntryPoint Kernel %k \"k\"\n",
                       "%leaf = OpFunction %void None %fv\n%l1 = OpLabel\n"
                       "%b = OpFunctionCall %void %leaf\nOpReturn\nOpFunctionEnd\n"
                       "%k = OpFunction %void None %fv\n%l2 = OpLabel\n"
                       "%a = OpFunctionCall %p %malloc %c16\n"
                       "%c = OpFunctionCall %void %leaf\nOpReturn\nOpFunctionEnd\n",
                       &size);
  cldm_spirv_module m;
  cldm_spirv_detect d;
  cldm_spirv_callgraph cg;
  assert_int_equal(graph(w, size, &m, &d, &cg, NULL), CLDM_SPIRV_OK);
  assert_int_equal(allocates(&m, &cg, "leaf"), 0);
  release(&m, &d, &cg);
  free(w);
}

static void function_pointers(void **state) {
  static const char fp_head[] =
      "OpCapability FunctionPointersINTEL\nOpExtension \"SPV_INTEL_function_pointers\"\n"
      "OpEntryPoint Kernel %k \"k\"\n";
  char functions[2048];
  snprintf(functions, sizeof functions,
           "%%pf = OpTypePointer Function %%fv\n"
           "%%fptr = OpConstantFunctionPointerINTEL %%pf %%leaf\n"
           "%%leaf = OpFunction %%void None %%fv\n%%l1 = OpLabel\n"
           "%%a = OpFunctionCall %%p %%malloc %%c16\nOpReturn\nOpFunctionEnd\n"
           "%%k = OpFunction %%void None %%fv\n%%l2 = OpLabel\n"
           "%%c = OpFunctionCall %%void %%leaf\nOpReturn\nOpFunctionEnd\n");
  expect_graph_error(fp_head, functions, CLDM_SPIRV_E_UNSUPPORTED,
                     SpvOpConstantFunctionPointerINTEL, 0,
                     "word %zu: OpConstantFunctionPointerINTEL takes the address of allocating "
                     "function \"leaf\" (%%%3$u): function pointers to allocating functions are "
                     "not supported (spec 1.5)");
  /* the address of the Import-form malloc itself */
  expect_graph_error(fp_head,
                     "%pf = OpTypePointer Function %fm\n"
                     "%fptr = OpConstantFunctionPointerINTEL %pf %malloc\n"
                     "%leaf = OpFunction %void None %fv\n%l1 = OpLabel\nOpReturn\nOpFunctionEnd\n"
                     "%k = OpFunction %void None %fv\n%l2 = OpLabel\n"
                     "%a = OpFunctionCall %p %malloc %c16\nOpReturn\nOpFunctionEnd\n",
                     CLDM_SPIRV_E_UNSUPPORTED, SpvOpConstantFunctionPointerINTEL, 0,
                     "word %zu: OpConstantFunctionPointerINTEL takes the address of "
                     "Import-linkage malloc (%%%3$u): function pointers to allocating functions "
                     "are not supported (spec 1.5)");
  /* a pointer to a function that does not allocate is fine */
  size_t size;
  uint32_t *w = module(fp_head,
                       "%pf = OpTypePointer Function %fv\n"
                       "%fptr = OpConstantFunctionPointerINTEL %pf %leaf\n"
                       "%leaf = OpFunction %void None %fv\n%l1 = OpLabel\nOpReturn\n"
                       "OpFunctionEnd\n"
                       "%k = OpFunction %void None %fv\n%l2 = OpLabel\n"
                       "%a = OpFunctionCall %p %malloc %c16\nOpReturn\nOpFunctionEnd\n",
                       &size);
  cldm_spirv_module m;
  cldm_spirv_detect d;
  cldm_spirv_callgraph cg;
  assert_int_equal(graph(w, size, &m, &d, &cg, NULL), CLDM_SPIRV_OK);
  release(&m, &d, &cg);
  free(w);
}

static void entry_point_without_body(void **state) {
  /* an entry point on an Import-linkage declaration: nothing to give the heap to */
  expect_graph_error("OpEntryPoint Kernel %leaf \"kdecl\"\n"
                     "OpDecorate %leaf LinkageAttributes \"leaf\" Import\n",
                     "%leaf = OpFunction %void None %fv\nOpFunctionEnd\n"
                     "%k = OpFunction %void None %fv\n%l2 = OpLabel\n"
                     "%a = OpFunctionCall %p %malloc %c16\nOpReturn\nOpFunctionEnd\n",
                     CLDM_SPIRV_E_UNSUPPORTED, SpvOpEntryPoint, 0,
                     "word %zu: entry point \"kdecl\" (%%%2$u) has no function body to lower");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(propagation),
      cmocka_unit_test(recursion),
      cmocka_unit_test(function_pointers),
      cmocka_unit_test(entry_point_without_body),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
