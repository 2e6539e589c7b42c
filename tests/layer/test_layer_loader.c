/*
 * test_layer_loader.c — layer_init.c under the real loaders (ocl-icd and the Khronos loader, on
 * the stub ICD): with CLDM_LOG=warn the layer names, once, the ICD loader that initialised it,
 * and that is the libOpenCL.so.1 the process has mapped; at the default level it says nothing
 * of it. The loader may initialise its layers as the library loads, before main, so each case
 * runs this program again as a child (argv[1] "child") whose stderr it reads from the start.
 */
#define _GNU_SOURCE
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "cldm_test_util.h"
#include "cldm_cl_device.h"

#define ANNOUNCE " loaded by the ICD loader "

/* The child: the calls of a short application (platforms, a device, a context made and
 * released), then the loader it has mapped on stdout, resolved. */
static int child(void) {
  cl_platform_id platform;
  cl_device_id device = cldm_cl_find_device(NULL, NULL, &platform);
  if (!device)
    return 2;
  cl_int err;
  cl_context c = clCreateContext(NULL, 1, &device, NULL, NULL, &err);
  if (err != CL_SUCCESS || clReleaseContext(c) != CL_SUCCESS)
    return 3;
  char why[4200], path[4096], real[PATH_MAX];
  if (!cldm_test_loader_matches(why, sizeof(why))) {
    fprintf(stderr, "%s\n", why);
    return 4;
  }
  if (!cldm_test_loaded_loader(path, sizeof(path)) || !realpath(path, real))
    return 5;
  printf("%s\n", real);
  return 0;
}

/* What file `fd` holds, NUL-terminated (malloc'd). */
static char *read_fd(int fd) {
  off_t n = lseek(fd, 0, SEEK_END);
  char *text = calloc(1, (size_t)n + 1);
  assert_non_null(text);
  assert_int_equal(pread(fd, text, (size_t)n, 0), n);
  return text;
}

/* Runs the child with CLDM_LOG=`level` (unset if NULL); its stdout and stderr (malloc'd). */
static void run_child(const char *level, char **out, char **err) {
  char out_path[] = "/tmp/cldm-loader-out-XXXXXX", err_path[] = "/tmp/cldm-loader-err-XXXXXX";
  int fo = mkstemp(out_path), fe = mkstemp(err_path);
  assert_true(fo >= 0 && fe >= 0);
  fflush(NULL);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    if (level)
      setenv("CLDM_LOG", level, 1);
    else
      unsetenv("CLDM_LOG");
    dup2(fo, 1);
    dup2(fe, 2);
    execl("/proc/self/exe", "test_layer_loader", "child", (char *)NULL);
    _exit(127);
  }
  int status = 0;
  assert_int_equal(waitpid(pid, &status, 0), pid);
  *out = read_fd(fo);
  *err = read_fd(fe);
  close(fo);
  close(fe);
  unlink(out_path);
  unlink(err_path);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    fail_msg("child: status %#x, stderr:\n%s", status, *err);
}

static size_t count(const char *text, const char *word) {
  size_t n = 0;
  for (const char *p = text; (p = strstr(p, word)); p += strlen(word))
    n++;
  return n;
}

static void test_loader_named_once(void **state) {
  char *out, *err;
  run_child("warn", &out, &err);
  if (count(err, ANNOUNCE) != 1)
    fail_msg("want one line naming the loader, stderr:\n%s", err);
  char *named = strstr(err, ANNOUNCE) + strlen(ANNOUNCE), real[PATH_MAX];
  named[strcspn(named, "\n")] = '\0';
  if (!realpath(named, real))
    fail_msg("the line names %s, which does not exist", named);
  out[strcspn(out, "\n")] = '\0';
  assert_string_equal(real, out); /* the loader the process mapped */
  print_message("named: %s\n", named);
  free(out);
  free(err);
}

static void test_quiet_by_default(void **state) {
  char *out, *err;
  run_child(NULL, &out, &err);
  assert_int_equal(count(err, ANNOUNCE), 0);
  free(out);
  free(err);
}

int main(int argc, char **argv) {
  if (argc > 1 && !strcmp(argv[1], "child"))
    return child();
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_loader_named_once),
      cmocka_unit_test(test_quiet_by_default),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
