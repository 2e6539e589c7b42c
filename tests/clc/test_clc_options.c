/*
 * test_clc_options.c — clc_options.c: which build options reach opencl-clang (the ones that
 * change the module and are safe; never -x or -triple, which abort it), the OpenCL C version
 * they select, and the library's extra options (the device's names as -cl-ext, OpenCL C 3.0
 * features only for 3.0, also as macros).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "clc_internal.h"

static void expect_filter(const char *in, const char *want, int want_opt_disable) {
  int opt_disable = -1;
  char *got = cldm_clc_filter_options(in, &opt_disable);
  assert_non_null(got);
  assert_string_equal(got, want);
  assert_int_equal(opt_disable, want_opt_disable);
  free(got);
}

static void test_filter(void **state) {
  expect_filter(NULL, "", 0);
  expect_filter("", "", 0);
  expect_filter("-DX=1 -D Y -I /tmp -Iinc -cl-std=CL2.0", "-DX=1 -D Y -I /tmp -Iinc -cl-std=CL2.0",
                0);
  /* what would abort the front end or means nothing to it is left out, arguments too */
  expect_filter("-x cl -triple spir64 -target-triple x -s name.cl -O2 -bogus -cl-opt-disable",
                "-cl-opt-disable", 1);
  expect_filter("  -cl-mad-enable\t-w  -Werror -cl-fast-relaxed-math -cl-kernel-arg-info ",
                "-cl-mad-enable -w -Werror -cl-fast-relaxed-math", 0);
  /* quotes group blanks into one word */
  expect_filter("-DMSG=\"a b\" -x \"c l\" -DZ", "-DMSG=\"a b\" -DZ", 0);
  /* a separate option at the end without its argument */
  expect_filter("-DA -D", "-DA", 0);
  expect_filter("-cl-std=CL3.1 -cl-std=CLC++2021", "-cl-std=CLC++2021", 0);
}

static void test_std(void **state) {
  assert_int_equal(cldm_clc_options_std(""), 120);
  assert_int_equal(cldm_clc_options_std("-cl-std=CL2.0"), 200);
  assert_int_equal(cldm_clc_options_std("-cl-std=CL3.0 -DX"), 300);
  assert_int_equal(cldm_clc_options_std("-cl-std=CL3.0 -cl-std=CL1.1"), 110);
  assert_int_equal(cldm_clc_options_std("-cl-std=CLC++2021"), 300);
  /* C++ for OpenCL: the last -cl-std= decides */
  assert_int_equal(cldm_clc_options_cxx(""), 0);
  assert_int_equal(cldm_clc_options_cxx("-cl-std=CL3.0"), 0);
  assert_int_equal(cldm_clc_options_cxx("-cl-std=CLC++"), 1);
  assert_int_equal(cldm_clc_options_cxx("-DX -cl-std=CLC++1.0"), 1);
  assert_int_equal(cldm_clc_options_cxx("-cl-std=CLC++2021 -cl-std=CL2.0"), 0);
  assert_int_equal(cldm_clc_options_cxx("-cl-std=CL2.0 -cl-std=CLC++2021"), 1);
}

static void test_extra(void **state) {
  char *e =
      cldm_clc_extra_options("cl_khr_fp64 __opencl_c_fp64 bad-name  cl_nv_x", 120, "/inc", "h.h");
  assert_non_null(e);
  assert_non_null(strstr(e, "-no-opaque-pointers"));
  assert_non_null(strstr(e, "-D cl_ext_device_malloc=1"));
  assert_non_null(strstr(e, "-I/inc -include h.h"));
  assert_non_null(strstr(e, " -cl-ext=+cl_khr_fp64,+cl_nv_x"));
  assert_null(strstr(e, "fp64,+__opencl_c_fp64")); /* a 3.0 feature means nothing for 1.2 */
  assert_null(strstr(e, "bad-name"));
  free(e);
  e = cldm_clc_extra_options("cl_khr_fp64 __opencl_c_fp64", 300, "/inc", "h.h");
  assert_non_null(strstr(e, " -cl-ext=+cl_khr_fp64,+__opencl_c_fp64"));
  assert_non_null(strstr(e, " -D__opencl_c_fp64"));
  free(e);
  e = cldm_clc_extra_options(NULL, 300, "/inc", "h.h");
  assert_null(strstr(e, "-cl-ext"));
  free(e);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_filter),
      cmocka_unit_test(test_std),
      cmocka_unit_test(test_extra),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
