/*
 * test_link.c — linking the allocator (layer/spirv/src/link.c): types and constants unified
 * with the user's (no duplicates), capabilities merged, imports shared, exports stripped and
 * Linkage dropped when nothing needs it; every allocator problem reported as E_ALLOCATOR; a
 * parsed allocator (cldm_spirv_allocator_parse) lowers exactly as its words do, also from
 * several threads at once; and the real allocator modules of device/ link into
 * modules that validate.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "spirv_test.h"
#include "cldm_device.h"

static void unified_and_merged(void **state) {
  size_t size, out_size;
  void *in = st_data("existing_types.O0.spir64.spv", &size);
  void *out = st_lower(in, size, &out_size, NULL);
  st_assert_valid(out, out_size, "existing_types lowered");
  st_listing *l = st_dis(out, out_size);
  st_assert_unique_types(l);
  assert_int_equal(st_count(l, "= OpTypeInt 8 0"), 1);
  assert_int_equal(st_count(l, "= OpTypeInt 64 0"), 1);
  assert_int_equal(st_count(l, "= OpTypeVoid"), 1);
  assert_int_equal(st_count(l, "OpCapability Int64"), 1);
  assert_int_equal(st_count(l, "OpCapability Kernel"), 1);
  assert_true(st_count(l, "OpExtInstImport \"OpenCL.std\"") <= 1);
  /* names carried, exports stripped: the user module keeps its own Export of the kernel */
  assert_int_equal(st_count(l, "\"cldm_malloc\" Export"), 0);
  assert_int_equal(st_count(l, "\"cldm_free\" Export"), 0);
  /* llvm-spirv's intrinsic stand-ins keep their Export (pocl's reader needs it); the user's
   * module (at -O2) has the allocator's spirv.llvm_umul_with_overflow_i64 too: one copy left */
  assert_int_equal(st_count(l, "LinkageAttributes \"spirv.llvm_umul_with_overflow_i64\" Export"),
                   1);

  assert_true(st_count(l, "\"cldm_malloc\"") >= 1); /* its OpName */
  assert_int_equal(st_count(l, "LinkageAttributes \"k_types\" Export"), 1);
  assert_int_equal(st_count(l, "OpCapability Linkage"), 1);
  st_listing_free(l);
  free(out);
  free(in);
}

/* An allocator of nothing but the five exports (each returns NULL or nothing). */
static const char plain_allocator[] =
    "OpCapability Addresses\nOpCapability Linkage\nOpCapability Kernel\nOpCapability Int64\n"
    "OpCapability Int8\nOpMemoryModel Physical64 OpenCL\n"
    "OpDecorate %m LinkageAttributes \"cldm_malloc\" Export\n"
    "OpDecorate %f LinkageAttributes \"cldm_free\" Export\n"
    "OpDecorate %c LinkageAttributes \"cldm_calloc\" Export\n"
    "OpDecorate %r LinkageAttributes \"cldm_realloc\" Export\n"
    "OpDecorate %a LinkageAttributes \"cldm_aligned_alloc\" Export\n"
    "%void = OpTypeVoid\n%uchar = OpTypeInt 8 0\n%ulong = OpTypeInt 64 0\n"
    "%p = OpTypePointer CrossWorkgroup %uchar\n%null = OpConstantNull %p\n"
    "%f1 = OpTypeFunction %p %p %ulong\n%f2 = OpTypeFunction %p %p %ulong %ulong\n"
    "%f3 = OpTypeFunction %void %p %p\n%f4 = OpTypeFunction %p %p %p %ulong\n"
    "%m = OpFunction %p None %f1\n%m1 = OpFunctionParameter %p\n%m2 = OpFunctionParameter %ulong\n"
    "%ml = OpLabel\nOpReturnValue %null\nOpFunctionEnd\n"
    "%f = OpFunction %void None %f3\n%f1_ = OpFunctionParameter %p\n%f2_ = OpFunctionParameter %p\n"
    "%fl = OpLabel\nOpReturn\nOpFunctionEnd\n"
    "%c = OpFunction %p None %f2\n%c1 = OpFunctionParameter %p\n%c2 = OpFunctionParameter %ulong\n"
    "%c3 = OpFunctionParameter %ulong\n%cl = OpLabel\nOpReturnValue %null\nOpFunctionEnd\n"
    "%r = OpFunction %p None %f4\n%r1 = OpFunctionParameter %p\n%r2 = OpFunctionParameter %p\n"
    "%r3 = OpFunctionParameter %ulong\n%rl = OpLabel\nOpReturnValue %null\nOpFunctionEnd\n"
    "%a = OpFunction %p None %f2\n%a1 = OpFunctionParameter %p\n%a2 = OpFunctionParameter %ulong\n"
    "%a3 = OpFunctionParameter %ulong\n%al = OpLabel\nOpReturnValue %null\nOpFunctionEnd\n";

static void shared_stand_in(void **state) {
  size_t size, out_size;
  void *in = st_data("existing_types.O2.spir64.spv", &size);
  st_listing *before = st_dis(in, size);
  assert_int_equal(st_count(before, "\"spirv.llvm_umul_with_overflow_i64\" Export"), 1);
  size_t user_functions = st_count(before, "= OpFunction ") - 2; /* minus malloc, free */
  st_listing_free(before);
  void *out = st_lower(in, size, &out_size, NULL);
  st_listing *l = st_dis(out, out_size);
  /* the user's copy, which the allocator's calls share, is made an ordinary function
   * (layer/spirv/src/umul.c): no stand-in is left for llvm-spirv's reader to misread */
  assert_int_equal(st_count(l, "\"spirv.llvm_umul_with_overflow_i64\""), 0);
  size_t names = 0, defs = 0;
  for (size_t i = 0; i < l->n; i++) {
    names +=
        !strncmp(l->line[i], "OpName ", 7) && strstr(l->line[i], "\"cldm.umul_with_overflow_i64\"");
    defs += strstr(l->line[i], "= OpFunction ") != NULL;
  }
  assert_int_equal(names, 1);
  /* the user's functions and the allocator's, but the stand-in only once */
  st_listing *alloc = st_dis(st_bump_allocator()->words64, st_bump_allocator()->num_words64 * 4);
  assert_int_equal(defs, user_functions + st_count(alloc, "= OpFunction ") - 1);
  st_listing_free(alloc);
  st_assert_unique_types(l);
  st_listing_free(l);
  free(out);
  free(in);
}

static void linkage_dropped(void **state) {
  /* alloc64.spvasm's only linkage decorations are the Import-form declarations, and the
   * allocator's exports are stripped: nothing needs Linkage any more */
  size_t size, asize, out_size;
  uint32_t *aw = st_asm(plain_allocator, &asize);
  cldm_spirv_allocator a = {.words64 = aw, .num_words64 = asize / 4};
  void *in = st_data("alloc64.spv", &size), *out = NULL;
  assert_int_equal(cldm_spirv_lower(in, size, &a, &out, &out_size, NULL, NULL), CLDM_SPIRV_OK);
  free(aw);
  st_assert_valid(out, out_size, "alloc64 lowered");
  st_listing *l = st_dis(out, out_size);
  assert_int_equal(st_count(l, "LinkageAttributes"), 0);
  assert_int_equal(st_count(l, "OpCapability Linkage"), 0);
  st_assert_no_trace(l);
  st_assert_unique_types(l);
  st_listing_free(l);
  free(out);
  free(in);
}

static void expect_allocator_error(const cldm_spirv_allocator *a, const char *input,
                                   const char *message) {
  size_t size, out_size;
  void *in = !strncmp(input, "Op", 2) ? st_asm(input, &size) : st_data(input, &size), *out = NULL;
  cldm_spirv_error err;
  assert_int_equal(cldm_spirv_lower(in, size, a, &out, &out_size, NULL, &err),
                   CLDM_SPIRV_E_ALLOCATOR);
  assert_null(out);
  if (strcmp(err.message, message))
    fail_msg("message\n  got:      %s\n  expected: %s", err.message, message);
  free(in);
}

static void allocator_errors(void **state) {
  const cldm_spirv_allocator *bump = st_bump_allocator();
  cldm_spirv_allocator a = {.words32 = bump->words32, .num_words32 = bump->num_words32};
  expect_allocator_error(&a, "alloc64.spv", "word 0: no allocator module for Physical64 was given");
  expect_allocator_error(NULL, "alloc32.spv",
                         "word 0: no allocator module for Physical32 was given");
  /* the Physical32 allocator handed over as the Physical64 one */
  a.words64 = bump->words32;
  a.num_words64 = bump->num_words32;
  expect_allocator_error(&a, "alloc64.spv",
                         "word 0: allocator module: its addressing model 1 differs from the "
                         "module's 2");
  /* malformed allocator */
  uint32_t *copy = malloc(bump->num_words64 * 4);
  memcpy(copy, bump->words64, bump->num_words64 * 4);
  copy[0] = 0x12345678;
  a.words64 = copy;
  a.num_words64 = bump->num_words64;
  expect_allocator_error(&a, "alloc64.spv",
                         "word 0: allocator module: bad magic number 0x12345678 (SPIR-V is "
                         "0x07230203)");
  /* cldm_malloc's export renamed */
  memcpy(copy, bump->words64, bump->num_words64 * 4);
  for (size_t i = 5; i + 3 < bump->num_words64; i++)
    if (!memcmp(&copy[i], "cldm_malloc", 12))
      memcpy(&copy[i], "cldm_mallod", 12);
  expect_allocator_error(&a, "alloc64.spv",
                         "word 0: allocator module: does not export cldm_malloc "
                         "(LinkageAttributes Export)");
  free(copy);
}

/* needs only cldm_malloc */
static const char only_malloc[] =
    "OpCapability Addresses\nOpCapability Kernel\nOpCapability Linkage\nOpCapability Int64\n"
    "OpCapability Int8\nOpMemoryModel Physical64 OpenCL\nOpEntryPoint Kernel %k \"k\"\n"
    "OpDecorate %malloc LinkageAttributes \"malloc\" Import\n"
    "%void = OpTypeVoid\n%uchar = OpTypeInt 8 0\n%ulong = OpTypeInt 64 0\n"
    "%p = OpTypePointer CrossWorkgroup %uchar\n%fm = OpTypeFunction %p %ulong\n"
    "%fk = OpTypeFunction %void %p\n%c16 = OpConstant %ulong 16\n"
    "%malloc = OpFunction %p None %fm\n%size = OpFunctionParameter %ulong\nOpFunctionEnd\n"
    "%k = OpFunction %void None %fk\n%out = OpFunctionParameter %p\n%l = OpLabel\n"
    "%m = OpFunctionCall %p %malloc %c16\nOpReturn\nOpFunctionEnd\n";

static void allocator_contract(void **state) {
  /* cldm_malloc taking a 32-bit size in a Physical64 allocator; cldm_free importing a helper */
  size_t asize;
  uint32_t *a64 = st_asm(
      "OpCapability Addresses\nOpCapability Linkage\nOpCapability Kernel\nOpCapability Int8\n"
      "OpMemoryModel Physical64 OpenCL\n"
      "OpDecorate %m LinkageAttributes \"cldm_malloc\" Export\n"
      "%void = OpTypeVoid\n%uchar = OpTypeInt 8 0\n%uint = OpTypeInt 32 0\n"
      "%p = OpTypePointer CrossWorkgroup %uchar\n%fm = OpTypeFunction %p %p %uint\n"
      "%m = OpFunction %p None %fm\n%h = OpFunctionParameter %p\n%s = OpFunctionParameter %uint\n"
      "%l = OpLabel\nOpReturnValue %h\nOpFunctionEnd\n",
      &asize);
  size_t at = st_find_op(a64, asize / 4, SpvOpFunctionParameter, 1);
  char msg[200];
  snprintf(msg, sizeof msg,
           "word %zu: allocator module: cldm_malloc parameter 2 has the wrong type (contract: "
           "size_t)",
           at);
  cldm_spirv_allocator a = {.words64 = a64, .num_words64 = asize / 4};
  expect_allocator_error(&a, only_malloc, msg);
  free(a64);
  a64 = st_asm("OpCapability Addresses\nOpCapability Linkage\nOpCapability Kernel\n"
               "OpMemoryModel Physical64 OpenCL\n"
               "OpDecorate %f LinkageAttributes \"helper\" Import\n"
               "%void = OpTypeVoid\n%fv = OpTypeFunction %void\n"
               "%f = OpFunction %void None %fv\nOpFunctionEnd\n",
               &asize);
  a.words64 = a64;
  a.num_words64 = asize / 4;
  at = st_find_op(a64, asize / 4, SpvOpDecorate, 0);
  snprintf(msg, sizeof msg,
           "word %zu: allocator module: imports \"helper\"; it must be self-contained (only "
           "cldm_target_* functions, which a target backend provides, may be imported)",
           at);
  expect_allocator_error(&a, only_malloc, msg);
  free(a64);
}

/* plain_allocator with a constant table in UniformConstant storage that cldm_malloc reads */
static const char table_allocator[] =
    "OpCapability Addresses\nOpCapability Linkage\nOpCapability Kernel\nOpCapability Int64\n"
    "OpCapability Int8\nOpMemoryModel Physical64 OpenCL\n"
    "OpDecorate %m LinkageAttributes \"cldm_malloc\" Export\n"
    "OpDecorate %f LinkageAttributes \"cldm_free\" Export\n"
    "%void = OpTypeVoid\n%uchar = OpTypeInt 8 0\n%ulong = OpTypeInt 64 0\n"
    "%p = OpTypePointer CrossWorkgroup %uchar\n%null = OpConstantNull %p\n"
    "%pt = OpTypePointer UniformConstant %ulong\n%c7 = OpConstant %ulong 7\n"
    "%table = OpVariable %pt UniformConstant %c7\n"
    "%f1 = OpTypeFunction %p %p %ulong\n%f3 = OpTypeFunction %void %p %p\n"
    "%m = OpFunction %p None %f1\n%m1 = OpFunctionParameter %p\n%m2 = OpFunctionParameter %ulong\n"
    "%ml = OpLabel\n%t = OpLoad %ulong %table\n"
    "%r = OpInBoundsPtrAccessChain %p %m1 %t\nOpReturnValue %r\nOpFunctionEnd\n"
    "%f = OpFunction %void None %f3\n%f1_ = OpFunctionParameter %p\n%f2_ = OpFunctionParameter %p\n"
    "%fl = OpLabel\nOpReturn\nOpFunctionEnd\n";

static void allocator_globals_in_interface(void **state) {
  size_t size, asize, out_size;
  uint32_t *aw = st_asm(table_allocator, &asize);
  cldm_spirv_allocator a = {.words64 = aw, .num_words64 = asize / 4};
  const char *files[] = {"kernel_alloc.O0.spir64.v14.spv", "kernel_alloc.O0.spir64.spv"};
  for (int i = 0; i < 2; i++) {
    void *in = st_data(files[i], &size), *out = NULL;
    assert_int_equal(cldm_spirv_lower(in, size, &a, &out, &out_size, NULL, NULL), CLDM_SPIRV_OK);
    char msg[2048];
    if (st_validate_env(out, out_size, i == 0 ? "spv1.4" : "opencl2.2", msg, sizeof msg))
      fail_msg("%s lowered with a table allocator: %s", files[i], msg);
    st_listing *l = st_dis(out, out_size);
    char table[16] = "";
    for (size_t k = 0; k < l->n; k++)
      if (strstr(l->line[k], "= OpVariable") && strstr(l->line[k], " UniformConstant"))
        sscanf(l->line[k], "%15s", table);
    assert_string_not_equal(table, "");
    char with_table[32];
    snprintf(with_table, sizeof with_table, " %s", table);
    size_t listed = 0;
    for (size_t k = 0; k < l->n; k++)
      if (!strncmp(l->line[k], "OpEntryPoint", 12) && strstr(l->line[k], with_table)) {
        assert_non_null(strstr(l->line[k], "\"k_malloc\"")); /* not k_plain */
        listed++;
      }
    assert_int_equal(listed, i == 0 ? 1 : 0); /* only SPIR-V 1.4+ lists it */
    st_listing_free(l);
    free(out);
    free(in);
  }
  free(aw);
}

/* Inputs lowered with the parsed bump allocator and with its words. */
static const char *const parsed_inputs[] = {"alloc64.spv",
                                            "alloc32.spv",
                                            "helper_two_kernels.O0.spir64.spv",
                                            "helper_two_kernels.O0.spir.spv",
                                            "calloc_realloc.O2.spir64.spv",
                                            "kernel_alloc.O0.spir64.v14.spv",
                                            "existing_types.O2.spir64.spv"};
#define NUM_PARSED_INPUTS (sizeof parsed_inputs / sizeof parsed_inputs[0])

typedef struct parsed_job {
  const cldm_spirv_allocator *allocator;
  void *in[NUM_PARSED_INPUTS], *expected[NUM_PARSED_INPUTS];
  size_t in_size[NUM_PARSED_INPUTS], expected_size[NUM_PARSED_INPUTS];
  int mismatches;
} parsed_job;

/* Lowers every input a few times with job->allocator; counts outputs that differ. */
static void *lower_all(void *arg) {
  parsed_job *job = arg;
  int bad = 0;
  for (int round = 0; round < 3; round++)
    for (size_t i = 0; i < NUM_PARSED_INPUTS; i++) {
      void *out = NULL;
      size_t out_size = 0;
      if (cldm_spirv_lower(job->in[i], job->in_size[i], job->allocator, &out, &out_size, NULL,
                           NULL) != CLDM_SPIRV_OK ||
          out_size != job->expected_size[i] || memcmp(out, job->expected[i], out_size))
        bad++;
      free(out);
    }
  __atomic_add_fetch(&job->mismatches, bad, __ATOMIC_RELAXED);
  return NULL;
}

static void parsed_allocator_as_words(void **state) {
  const cldm_spirv_allocator *bump = st_bump_allocator();
  cldm_spirv_parsed_allocator *p32 = NULL, *p64 = NULL;
  assert_int_equal(cldm_spirv_allocator_parse(bump->words32, bump->num_words32, &p32, NULL),
                   CLDM_SPIRV_OK);
  assert_int_equal(cldm_spirv_allocator_parse(bump->words64, bump->num_words64, &p64, NULL),
                   CLDM_SPIRV_OK);
  assert_non_null(p32);
  assert_non_null(p64);
  cldm_spirv_allocator parsed = {.parsed32 = p32, .parsed64 = p64};
  parsed_job job = {.allocator = &parsed};
  for (size_t i = 0; i < NUM_PARSED_INPUTS; i++) {
    job.in[i] = st_data(parsed_inputs[i], &job.in_size[i]);
    cldm_spirv_report a, b;
    job.expected[i] = st_lower(job.in[i], job.in_size[i], &job.expected_size[i], &a);
    void *out = NULL;
    size_t out_size = 0;
    assert_int_equal(
        cldm_spirv_lower(job.in[i], job.in_size[i], &parsed, &out, &out_size, &b, NULL),
        CLDM_SPIRV_OK);
    assert_int_equal(out_size, job.expected_size[i]);
    assert_memory_equal(out, job.expected[i], out_size);
    assert_int_equal(a.num_kernels, b.num_kernels);
    for (size_t k = 0; k < a.num_kernels; k++)
      assert_int_equal(a.kernels[k].heap_arg_index, b.kernels[k].heap_arg_index);
    cldm_spirv_report_free(&a);
    cldm_spirv_report_free(&b);
    free(out);
  }
  /* four threads share the two parsed allocators */
  pthread_t th[4];
  for (int t = 0; t < 4; t++)
    assert_int_equal(pthread_create(&th[t], NULL, lower_all, &job), 0);
  for (int t = 0; t < 4; t++)
    pthread_join(th[t], NULL);
  assert_int_equal(job.mismatches, 0);
  /* the parsed form is used instead of the words (here: the wrong ones) */
  cldm_spirv_allocator mixed = {
      .words64 = bump->words32, .num_words64 = bump->num_words32, .parsed32 = p32, .parsed64 = p64};
  job.allocator = &mixed;
  lower_all(&job);
  assert_int_equal(job.mismatches, 0);
  /* the errors lowering with the words gives */
  cldm_spirv_allocator only32 = {.parsed32 = p32};
  expect_allocator_error(&only32, "alloc64.spv",
                         "word 0: no allocator module for Physical64 was given");
  cldm_spirv_allocator swapped = {.parsed64 = p32};
  expect_allocator_error(&swapped, "alloc64.spv",
                         "word 0: allocator module: its addressing model 1 differs from the "
                         "module's 2");
  uint32_t *copy = malloc(bump->num_words64 * 4);
  memcpy(copy, bump->words64, bump->num_words64 * 4);
  copy[0] = 0x12345678;
  cldm_spirv_parsed_allocator *bad = p64;
  cldm_spirv_error err;
  assert_int_equal(cldm_spirv_allocator_parse(copy, bump->num_words64, &bad, &err),
                   CLDM_SPIRV_E_ALLOCATOR);
  assert_null(bad);
  assert_string_equal(err.message, "word 0: allocator module: bad magic number 0x12345678 "
                                   "(SPIR-V is 0x07230203)");
  free(copy);
  for (size_t i = 0; i < NUM_PARSED_INPUTS; i++) {
    free(job.in[i]);
    free(job.expected[i]);
  }
  cldm_spirv_allocator_free(p32);
  cldm_spirv_allocator_free(p64);
  cldm_spirv_allocator_free(NULL);
}

static void real_allocator_modules(void **state) {
  size_t count;
  const cldm_device_module *mods = cldm_device_modules(&count);
  assert_true(count >= 2);
  for (size_t i = 0; i < count; i++) {
    const char *input =
        mods[i].address_bits == 32 ? "calloc_realloc.O2.spir.spv" : "calloc_realloc.O2.spir64.spv";
    const char *base = mods[i].address_bits == 32 ? "helper_two_kernels.O0.spir.spv"
                                                  : "helper_two_kernels.O0.spir64.spv";
    cldm_spirv_allocator a = {0};
    if (mods[i].address_bits == 32) {
      a.words32 = mods[i].words;
      a.num_words32 = mods[i].num_words;
    } else {
      a.words64 = mods[i].words;
      a.num_words64 = mods[i].num_words;
    }
    for (int k = 0; k < 2; k++) {
      size_t size, out_size;
      void *in = st_data(k ? input : base, &size), *out = NULL;
      cldm_spirv_error err;
      if (cldm_spirv_lower(in, size, &a, &out, &out_size, NULL, &err))
        fail_msg("%s with %s: %s", k ? input : base, mods[i].name, err.message);
      char what[128];
      snprintf(what, sizeof what, "%s lowered with %s", k ? input : base, mods[i].name);
      /* O0 inputs validate; O2 ones may not: clang-15 -O2 + llvm-spirv-15 lay out blocks
       * before their dominators (SPIR-V spec 2.16.1), and lowering reorders only the
       * allocator's blocks */
      if (k == 0)
        st_assert_valid(out, out_size, what);
      st_listing *l = st_dis(out, out_size);
      st_assert_unique_types(l);
      st_assert_no_trace(l);
      /* the nv variant's target functions stay imported (the PTX backend defines them) */
      size_t imports = 0;
      for (size_t j = 0; j < l->n; j++)
        imports +=
            strstr(l->line[j], "LinkageAttributes \"cldm_target_") && strstr(l->line[j], " Import");
      if (mods[i].features & CLDM_DEVICE_FEATURE_TARGET_PTX)
        assert_true(imports >= 1);
      else
        assert_int_equal(imports, 0);
      st_listing_free(l);
      free(out);
      free(in);
    }
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(unified_and_merged),        cmocka_unit_test(shared_stand_in),
      cmocka_unit_test(linkage_dropped),           cmocka_unit_test(allocator_errors),
      cmocka_unit_test(allocator_contract),        cmocka_unit_test(allocator_globals_in_interface),
      cmocka_unit_test(parsed_allocator_as_words), cmocka_unit_test(real_allocator_modules),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
