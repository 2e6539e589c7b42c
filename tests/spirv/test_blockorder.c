/*
 * test_blockorder.c — reverse post-order of blocks (layer/spirv/src/blockorder.c), and its
 * purpose: an allocator whose blocks are laid out before their dominators (as clang-15 -O2 +
 * llvm-spirv-15 sometimes emit, against SPIR-V spec 2.16.1's rule that blocks appear before
 * the blocks they dominate; pocl accepts such modules, spirv-val does not) still yields a
 * lowered module that validates.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "spirv_test.h"

/* entry -> b; c (after entry, before b) is dominated by b; u is unreachable; s switches on a
 * 64-bit value to t (case literal of two words) or c. */
static const char function[] =
    "OpCapability Addresses\nOpCapability Kernel\nOpCapability Int64\n"
    "OpMemoryModel Physical64 OpenCL\n"
    "OpName %entry \"entry\"\nOpName %b \"b\"\nOpName %c \"c\"\nOpName %u \"u\"\n"
    "OpName %s \"s\"\nOpName %t \"t\"\n"
    "%void = OpTypeVoid\n%ulong = OpTypeInt 64 0\n%fv = OpTypeFunction %void %ulong\n"
    "%f = OpFunction %void None %fv\n%x = OpFunctionParameter %ulong\n"
    "%entry = OpLabel\nOpBranch %s\n"
    "%c = OpLabel\nOpReturn\n"
    "%u = OpLabel\nOpBranch %c\n"
    "%t = OpLabel\nOpBranch %b\n"
    "%b = OpLabel\nOpBranch %c\n"
    "%s = OpLabel\nOpSwitch %x %c 4294967296 %t\n"
    "OpFunctionEnd\n";

static void reverse_post_order(void **state) {
  size_t size;
  uint32_t *w = st_asm(function, &size);
  cldm_spirv_module m;
  assert_int_equal(cldm_spirv_module_parse(&m, w, size, NULL), CLDM_SPIRV_OK);
  uint32_t order[8], n = 0;
  assert_int_equal(cldm_spirv_blockorder(&m, &m.fn[0], order, &n), 0);
  assert_int_equal(n, 6);
  const char *expected[] = {"entry", "s", "t", "b", "c", "u"};
  for (uint32_t i = 0; i < n; i++) {
    char name[16];
    assert_int_equal(m.inst[order[i]].op, SpvOpLabel);
    cldm_spirv_name_of(&m, cldm_spirv_iw(&m, order[i])[1], name, sizeof name);
    assert_string_equal(name, expected[i]);
  }
  cldm_spirv_module_free(&m);
  free(w);
}

/* An allocator exporting cldm_malloc and cldm_free; cldm_malloc's block %b3 uses %off, defined
 * in %b2, which the layout puts after it: spirv-val rejects the allocator as it is. */
static const char bad_allocator[] =
    "OpCapability Addresses\nOpCapability Linkage\nOpCapability Kernel\nOpCapability Int64\n"
    "OpCapability Int8\nOpMemoryModel Physical64 OpenCL\n"
    "OpDecorate %cldm_malloc LinkageAttributes \"cldm_malloc\" Export\n"
    "OpDecorate %cldm_free LinkageAttributes \"cldm_free\" Export\n"
    "%void = OpTypeVoid\n%uchar = OpTypeInt 8 0\n%ulong = OpTypeInt 64 0\n"
    "%p = OpTypePointer CrossWorkgroup %uchar\n%fm = OpTypeFunction %p %p %ulong\n"
    "%ff = OpTypeFunction %void %p %p\n%c64 = OpConstant %ulong 64\n"
    "%cldm_malloc = OpFunction %p None %fm\n%heap = OpFunctionParameter %p\n"
    "%size = OpFunctionParameter %ulong\n"
    "%e = OpLabel\nOpBranch %b2\n"
    "%b3 = OpLabel\n%r = OpInBoundsPtrAccessChain %p %heap %off\nOpReturnValue %r\n"
    "%b2 = OpLabel\n%off = OpIAdd %ulong %size %c64\nOpBranch %b3\n"
    "OpFunctionEnd\n"
    "%cldm_free = OpFunction %void None %ff\n%h2 = OpFunctionParameter %p\n"
    "%q = OpFunctionParameter %p\n%fe = OpLabel\nOpReturn\nOpFunctionEnd\n";

static void allocator_blocks_reordered(void **state) {
  size_t asize, size, out_size;
  uint32_t *a = st_asm(bad_allocator, &asize);
  char msg[1024];
  assert_int_equal(st_validate(a, asize, msg, sizeof msg), -1); /* the premise */
  assert_non_null(strstr(msg, "has not been defined"));
  void *in = st_data("kernel_alloc.O0.spir64.spv", &size);
  cldm_spirv_allocator alloc = {.words64 = a, .num_words64 = asize / 4};
  void *out = NULL;
  cldm_spirv_error err;
  assert_int_equal(cldm_spirv_lower(in, size, &alloc, &out, &out_size, NULL, &err), CLDM_SPIRV_OK);
  st_assert_valid(out, out_size, "module lowered with a badly ordered allocator");
  free(out);
  free(in);
  free(a);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(reverse_post_order),
      cmocka_unit_test(allocator_blocks_reordered),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
