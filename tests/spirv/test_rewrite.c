/*
 * test_rewrite.c — the rewrite of the user's functions (layer/spirv/src/rewrite.c,
 * rewrite_emit.c), read back with spirv-dis: heap parameter last and named, calls pass it on,
 * sites become calls of the allocator with sizes widened (OpUConvert) or saturated (64-bit
 * size, 32-bit allocator), Generic pointers cast both ways, and each site's result id kept.
 * C++'s operators (spec 2.2): new, nothrow new and delete lowered; the stops of throwing new
 * (the flag parameter of a helper, the flag variable of a kernel and of llvm-spirv's body of a
 * kernel, each stop counted and returned from, a loop's OpPhi naming the split latch), and the
 * call of such a body by anything but its wrapper refused.
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
  char needle[256];
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

/* A kernel k whose loop calls helper, which news (throwing); a nothrow new and deletes; and
 * "wrapped", an entry point that only calls the function of its own name (llvm-spirv's
 * wrapper), which news. `extra` goes before the functions' end (a caller of the body). */
static const char stops_text[] =
    "OpCapability Addresses\nOpCapability Kernel\nOpCapability Linkage\nOpCapability Int64\n"
    "OpCapability Int8\nOpCapability GenericPointer\nOpMemoryModel Physical64 OpenCL\n"
    "OpEntryPoint Kernel %k \"k\"\nOpEntryPoint Kernel %w \"wrapped\"\n"
    "OpName %helper \"helper\"\nOpName %body \"wrapped\"\n"
    "OpDecorate %new LinkageAttributes \"_Znwm\" Import\n"
    "OpDecorate %del LinkageAttributes \"_ZdlPv\" Import\n"
    "OpDecorate %nt LinkageAttributes \"_ZnwmRKSt9nothrow_t\" Import\n"
    "%void = OpTypeVoid\n%uchar = OpTypeInt 8 0\n%uint = OpTypeInt 32 0\n"
    "%ulong = OpTypeInt 64 0\n%bool = OpTypeBool\n%g = OpTypePointer Generic %uchar\n"
    "%p = OpTypePointer CrossWorkgroup %uint\n%tag = OpTypeStruct %uchar\n"
    "%tagp = OpTypePointer Function %tag\n%fnew = OpTypeFunction %g %ulong\n"
    "%fdel = OpTypeFunction %void %g\n%fnt = OpTypeFunction %g %ulong %tagp\n"
    "%fk = OpTypeFunction %void %p %ulong\n%c0 = OpConstant %ulong 0\n"
    "%c1 = OpConstant %ulong 1\n%u1 = OpConstant %uint 1\n"
    "%new = OpFunction %g None %fnew\n%new_n = OpFunctionParameter %ulong\nOpFunctionEnd\n"
    "%del = OpFunction %void None %fdel\n%del_p = OpFunctionParameter %g\nOpFunctionEnd\n"
    "%nt = OpFunction %g None %fnt\n%nt_n = OpFunctionParameter %ulong\n"
    "%nt_t = OpFunctionParameter %tagp\nOpFunctionEnd\n"
    "%helper = OpFunction %g None %fnew\n%hn = OpFunctionParameter %ulong\n%hl = OpLabel\n"
    "%hp = OpFunctionCall %g %new %hn\nOpReturnValue %hp\nOpFunctionEnd\n"
    "%k = OpFunction %void None %fk\n%out = OpFunctionParameter %p\n"
    "%n = OpFunctionParameter %ulong\n%entry = OpLabel\n%tv = OpVariable %tagp Function\n"
    "OpBranch %loop\n%loop = OpLabel\n%i = OpPhi %ulong %c0 %entry %inext %loop\n"
    "%q = OpFunctionCall %g %helper %n\n%d1 = OpFunctionCall %void %del %q\n"
    "%inext = OpIAdd %ulong %i %c1\n%more = OpULessThan %bool %inext %n\n"
    "OpBranchConditional %more %loop %done\n%done = OpLabel\n"
    "%r = OpFunctionCall %g %nt %n %tv\n%d2 = OpFunctionCall %void %del %r\n"
    "OpStore %out %u1\nOpReturn\nOpFunctionEnd\n"
    "%body = OpFunction %void None %fk\n%bo = OpFunctionParameter %p\n"
    "%bn = OpFunctionParameter %ulong\n%bl = OpLabel\n%bp = OpFunctionCall %g %new %bn\n"
    "%bd = OpFunctionCall %void %del %bp\nOpReturn\nOpFunctionEnd\n"
    "%w = OpFunction %void None %fk\n%wo = OpFunctionParameter %p\n"
    "%wn = OpFunctionParameter %ulong\n%wl = OpLabel\n"
    "%wc = OpFunctionCall %void %body %wo %wn\nOpReturn\nOpFunctionEnd\n";

/* 1 if type id is OpTypePointer Function to a 32-bit integer (the stop flag). */
static int is_flag_type(const st_listing *l, const char *type) {
  const char *def = st_def(l, type);
  char pointee[16];
  if (!def || sscanf(def, "%*s = OpTypePointer Function %15s", pointee) != 1)
    return 0;
  const char *p = st_def(l, pointee);
  return p && strstr(p, "OpTypeInt 32");
}

static void cxx_stops(void **state) {
  (void)state;
  size_t size, out_size;
  uint32_t *in = st_asm(stops_text, &size);
  cldm_spirv_report r;
  void *out = st_lower(in, size, &out_size, &r);
  st_assert_valid(out, out_size, "stops"); /* the OpPhi names the split latch */
  for (size_t i = 0; i < r.num_kernels; i++)
    assert_true(r.kernels[i].takes_heap && r.kernels[i].throwing_new);
  cldm_spirv_report_free(&r);
  st_listing *l = st_dis(out, out_size);
  char types[8][16], helper[16], body_id[16], failed[16];
  /* no operator is left; the helper has the flag after the heap, the kernel and the body
   * (a root: llvm-spirv's reader takes it for the kernel) keep their parameters + heap */
  assert_int_equal(st_count(l, "LinkageAttributes \"_Z"), 0);
  id_of(l, "helper", helper);
  assert_int_equal(st_function_params(l, helper, types, 8), 3);
  assert_true(st_is_heap_type(l, types[1]));
  assert_true(is_flag_type(l, types[2]));
  assert_int_equal(st_kernel_params(l, "k", types, 8), 3);
  assert_true(st_is_heap_type(l, types[2]));
  id_of(l, "wrapped", body_id); /* the first OpName "wrapped": the body */
  assert_int_equal(st_function_params(l, body_id, types, 8), 3);
  assert_true(st_is_heap_type(l, types[2]));
  /* flags: the helper's parameter, the variables of k and of the body */
  assert_int_equal(st_count(l, "\"__cldm_stop\""), 3);
  /* each throwing new is counted (helper, body); the nothrow one is not */
  id_of(l, "cldm_new_failed", failed);
  size_t calls = 0;
  for (size_t i = 0; i < l->n; i++)
    calls += strstr(l->line[i], "OpFunctionCall") && strstr(l->line[i], failed) &&
             !strstr(l->line[i], "= OpFunction ");
  assert_int_equal(calls, 2);
  /* k checks the flag after calling helper, and returns if it is set */
  size_t b, e;
  char kid[16] = "";
  for (size_t i = 0; i < l->n; i++)
    if (!strncmp(l->line[i], "OpEntryPoint Kernel ", 20) && strstr(l->line[i], "\"k\""))
      sscanf(l->line[i] + 20, "%15s", kid);
  body(l, kid, &b, &e);
  assert_int_equal(count_in(l, b, e, "OpINotEqual"), 1);
  assert_int_equal(count_in(l, b, e, "OpReturn"), 2);
  assert_int_equal(count_in(l, b, e, "OpStore"), 2); /* flag = 0, *out = 1 */
  st_listing_free(l);
  free(out);
  free(in);
}

/* A function other than its wrapper calls llvm-spirv's body of a kernel that may stop: it could
 * not see the stop (refused). */
static void cxx_root_called(void **state) {
  (void)state;
  char text[8192];
  snprintf(text, sizeof text, "%s%s", stops_text,
           "%other = OpFunction %void None %fk\n%oo = OpFunctionParameter %p\n"
           "%on = OpFunctionParameter %ulong\n%ol = OpLabel\n"
           "%oc = OpFunctionCall %void %body %oo %on\nOpReturn\nOpFunctionEnd\n");
  size_t size;
  uint32_t *in = st_asm(text, &size);
  void *out = NULL;
  size_t out_size;
  cldm_spirv_error err;
  assert_int_equal(cldm_spirv_lower(in, size, st_bump_allocator(), &out, &out_size, NULL, &err),
                   CLDM_SPIRV_E_UNSUPPORTED);
  if (!strstr(err.message, "may stop at a throwing operator new"))
    fail_msg("message: %s", err.message);
  assert_null(out);
  free(in);
}

/* The same module with the wrapped kernel's name 200 characters long (mangled C++ and HIP
 * kernel names are): its body is still a root and its wrapper's call still allowed. */
static void cxx_stops_long_name(void **state) {
  (void)state;
  char name[201], text[16384];
  memset(name, 'x', 200);
  name[200] = '\0';
  size_t n = 0;
  for (const char *p = stops_text; *p;) /* every "wrapped" becomes the long name */
    if (!strncmp(p, "\"wrapped\"", 9)) {
      n += (size_t)snprintf(text + n, sizeof text - n, "\"%s\"", name);
      p += 9;
    } else
      text[n++] = *p++;
  text[n] = '\0';
  size_t size, out_size;
  uint32_t *in = st_asm(text, &size);
  cldm_spirv_report r;
  void *out = st_lower(in, size, &out_size, &r);
  st_assert_valid(out, out_size, "stops, long name");
  cldm_spirv_report_free(&r);
  st_listing *l = st_dis(out, out_size);
  char types[8][16], body_id[16];
  id_of(l, name, body_id); /* the body: a root, its parameters + heap, no flag */
  assert_int_equal(st_function_params(l, body_id, types, 8), 3);
  assert_true(st_is_heap_type(l, types[2]));
  st_listing_free(l);
  free(out);
  free(in);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(helper_and_sizes), cmocka_unit_test(saturation_and_generic),
      cmocka_unit_test(result_ids_kept),  cmocka_unit_test(cxx_stops),
      cmocka_unit_test(cxx_root_called),  cmocka_unit_test(cxx_stops_long_name),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
