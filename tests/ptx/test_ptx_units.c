/*
 * test_ptx_units.c — the PTX backend's pure helpers: built-in name re-mangling from SPIR
 * address-space numbers to NVPTX's (ptx_mangle.c; expected names are clang-15's own manglings
 * of the same declarations for spir64 and nvptx64-nvidia-nvcl) and SHA-256 (layer/common/cldm_sha256.c,
 * FIPS 180-4 test vectors).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ptx_internal.h"

static void expect_mangle(const char *spir, const char *nvptx) {
  char *got = cldm_ptx_mangle_nvptx(spir);
  if (!nvptx) {
    if (got)
      fail_msg("%s: expected unchanged, got %s", spir ? spir : "(null)", got);
    return;
  }
  if (!got)
    fail_msg("%s: expected %s, got unchanged", spir, nvptx);
  assert_string_equal(got, nvptx);
  free(got);
}

static void test_mangle_constant(void **state) {
  (void)state;
  expect_mangle("_Z6vload4mPU3AS2Kf", "_Z6vload4mPU3AS4Kf");
  expect_mangle("_Z1fPU3AS2fS0_", "_Z1fPU3AS4fS0_"); /* f(constant float *, constant float *) */
}

static void test_mangle_generic(void **state) {
  (void)state;
  expect_mangle("_Z5fractfPU3AS4f", "_Z5fractfPf");
  /* substitutions stay valid: clang counts the unprinted NVPTX generic qualifier too */
  expect_mangle("_Z1fDv2_fPU3AS4S_S1_S1_", "_Z1fDv2_fPS_S1_S1_");
  expect_mangle("_Z1ffPU3AS4fS0_Dv2_fS1_", "_Z1ffPfS0_Dv2_fS1_");
  expect_mangle("_Z1fiPU3AS4KiS0_Dv2_iS1_PU3AS4S1_", "_Z1fiPKiS0_Dv2_iS1_PS1_");
  expect_mangle("_Z7vstore4Dv4_imPU3AS4i", "_Z7vstore4Dv4_imPi");
}

static void test_mangle_unchanged(void **state) {
  (void)state;
  expect_mangle("_Z10atomic_addPU3AS1Vii", NULL); /* global and local: same numbers */
  expect_mangle("_Z13get_global_idj", NULL);
  expect_mangle("_Z21async_work_group_copyPU3AS3cPU3AS1Kcm9ocl_event", NULL);
  expect_mangle("__to_global", NULL);
  expect_mangle("get_global_id", NULL);
  expect_mangle("_Z1f6xU3AS4", NULL); /* a type named xU3AS4, no qualifier */
  expect_mangle("_Z6xU3AS4v", NULL);  /* a function named xU3AS4 */
}

static void test_mangle_not_understood(void **state) {
  (void)state;
  expect_mangle("_Z5fra", NULL);             /* source name longer than the string */
  expect_mangle("_Z1fILi5EEvPU3AS4i", NULL); /* template literal: left alone */
  expect_mangle("_Z1fDv", NULL);
  expect_mangle("_Z1fU3AS", NULL);
  expect_mangle("", NULL);
  expect_mangle(NULL, NULL);
}

static void hex(const uint8_t d[32], char out[65]) {
  for (int i = 0; i < 32; i++)
    snprintf(out + 2 * i, 3, "%02x", d[i]);
}

static void expect_sha(const void *data, size_t n, const char *want) {
  cldm_sha256 s;
  uint8_t d[32];
  char h[65];
  cldm_sha256_init(&s);
  cldm_sha256_update(&s, data, n);
  cldm_sha256_final(&s, d);
  hex(d, h);
  assert_string_equal(h, want);
}

static void test_sha256(void **state) {
  (void)state;
  expect_sha("", 0, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  expect_sha("abc", 3, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  const char *two = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
  expect_sha(two, strlen(two), "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  /* one million 'a', fed in uneven pieces */
  char *a = malloc(1000000);
  assert_non_null(a);
  memset(a, 'a', 1000000);
  cldm_sha256 s;
  uint8_t d[32];
  char h[65];
  cldm_sha256_init(&s);
  for (size_t done = 0, step = 1; done < 1000000; done += step, step = step * 3 % 1009 + 1) {
    if (done + step > 1000000)
      step = 1000000 - done;
    cldm_sha256_update(&s, a + done, step);
  }
  cldm_sha256_final(&s, d);
  hex(d, h);
  assert_string_equal(h, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
  free(a);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_mangle_constant),  cmocka_unit_test(test_mangle_generic),
      cmocka_unit_test(test_mangle_unchanged), cmocka_unit_test(test_mangle_not_understood),
      cmocka_unit_test(test_sha256),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
