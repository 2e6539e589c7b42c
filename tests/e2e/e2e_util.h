/*
 * e2e_util.h — shared set-up for the end-to-end tests (header-only): a context and in-order
 * queue on pocl's device, the extension's entry points looked up the way applications do,
 * programs built from SPIR-V files compiled at build time (CLDM_TEST_DATA_DIR/kernels), and
 * capture of the layer's stderr messages.
 */
#ifndef CLDM_E2E_UTIL_H
#define CLDM_E2E_UTIL_H

#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "cldm_test_util.h"
#include "cldm_cl_device.h"
#include "cldm_file.h"

typedef struct e2e {
  cl_platform_id platform;
  cl_device_id device;
  cl_context context;
  cl_command_queue queue;
  clSetDeviceHeapSizeEXT_fn set_heap_size;
  clGetDeviceHeapInfoEXT_fn heap_info;
  clEnqueueResetDeviceHeapEXT_fn reset_heap;
} e2e;

static inline void e2e_lookup(e2e *t) {
  t->device = cldm_cl_find_device(NULL, NULL, &t->platform);
  assert_non_null(t->device);
  t->set_heap_size = (clSetDeviceHeapSizeEXT_fn)clGetExtensionFunctionAddressForPlatform(
      t->platform, "clSetDeviceHeapSizeEXT");
  t->heap_info = (clGetDeviceHeapInfoEXT_fn)clGetExtensionFunctionAddressForPlatform(
      t->platform, "clGetDeviceHeapInfoEXT");
  t->reset_heap = (clEnqueueResetDeviceHeapEXT_fn)clGetExtensionFunctionAddressForPlatform(
      t->platform, "clEnqueueResetDeviceHeapEXT");
  assert_non_null(t->set_heap_size);
  assert_non_null(t->heap_info);
  assert_non_null(t->reset_heap);
}

static inline void e2e_open(e2e *t) {
  cl_int err;
  e2e_lookup(t);
  t->context = clCreateContext(NULL, 1, &t->device, NULL, NULL, &err);
  assert_int_equal(err, CL_SUCCESS);
  t->queue = clCreateCommandQueueWithProperties(t->context, t->device, NULL, &err);
  assert_int_equal(err, CL_SUCCESS);
}

static inline void e2e_close(e2e *t) {
  if (t->queue)
    assert_int_equal(clReleaseCommandQueue(t->queue), CL_SUCCESS);
  if (t->context)
    assert_int_equal(clReleaseContext(t->context), CL_SUCCESS);
  t->queue = NULL;
  t->context = NULL;
}

/* Reads a build-time file (relative to CLDM_TEST_DATA_DIR) into memory. */
static inline void *e2e_read_file(const char *rel, size_t *size) {
  const char *dir = getenv("CLDM_TEST_DATA_DIR");
  char path[4096];
  snprintf(path, sizeof(path), "%s/%s", dir ? dir : ".", rel);
  void *buf = cldm_file_read(path, size);
  if (!buf)
    fail_msg("cannot read %s", path);
  return buf;
}

/* Creates and builds a program from kernels/<name>.spv; fails the test on any error. */
static inline cl_program e2e_program(const e2e *t, const char *name) {
  char rel[256];
  snprintf(rel, sizeof(rel), "kernels/%s.spv", name);
  size_t size;
  void *il = e2e_read_file(rel, &size);
  cl_int err;
  cl_program p = clCreateProgramWithIL(t->context, il, size, &err);
  free(il);
  if (err != CL_SUCCESS)
    fail_msg("clCreateProgramWithIL(%s) = %d", name, err);
  err = clBuildProgram(p, 1, &t->device, "", NULL, NULL);
  if (err != CL_SUCCESS) {
    char log[8192] = "";
    clGetProgramBuildInfo(p, t->device, CL_PROGRAM_BUILD_LOG, sizeof(log) - 1, log, NULL);
    fail_msg("clBuildProgram(%s) = %d: %s", name, err, log);
  }
  return p;
}

static inline cl_kernel e2e_kernel(cl_program p, const char *name) {
  cl_int err;
  cl_kernel k = clCreateKernel(p, name, &err);
  if (err != CL_SUCCESS)
    fail_msg("clCreateKernel(%s) = %d", name, err);
  return k;
}

static inline cl_mem e2e_buffer(const e2e *t, size_t size) {
  cl_int err;
  cl_mem m = clCreateBuffer(t->context, CL_MEM_READ_WRITE, size, NULL, &err);
  assert_int_equal(err, CL_SUCCESS);
  uint8_t zero = 0;
  assert_int_equal(clEnqueueFillBuffer(t->queue, m, &zero, 1, 0, size, 0, NULL, NULL), CL_SUCCESS);
  return m;
}

static inline void e2e_run(const e2e *t, cl_kernel k, size_t global) {
  cl_int err = clEnqueueNDRangeKernel(t->queue, k, 1, NULL, &global, NULL, 0, NULL, NULL);
  if (err != CL_SUCCESS)
    fail_msg("clEnqueueNDRangeKernel = %d", err);
  assert_int_equal(clFinish(t->queue), CL_SUCCESS);
}

static inline cl_ulong e2e_heap_stat(const e2e *t, cl_command_queue q,
                                     cl_device_heap_info_ext name) {
  cl_ulong v = 0;
  assert_int_equal(t->heap_info(q ? q : t->queue, name, sizeof(v), &v, NULL), CL_SUCCESS);
  return v;
}

static inline uint32_t e2e_read_u32_sum(const e2e *t, cl_mem m, size_t count) {
  uint32_t *v = malloc(count * sizeof(*v));
  assert_int_equal(
      clEnqueueReadBuffer(t->queue, m, CL_TRUE, 0, count * sizeof(*v), v, 0, NULL, NULL),
      CL_SUCCESS);
  uint32_t s = 0;
  for (size_t i = 0; i < count; i++)
    s += v[i];
  free(v);
  return s;
}

/* Captures what is written to stderr between begin and end (the layer's messages). */
typedef struct e2e_stderr {
  int saved, fd;
  char path[64];
} e2e_stderr;

static inline void e2e_stderr_begin(e2e_stderr *c) {
  fflush(stderr);
  snprintf(c->path, sizeof(c->path), "/tmp/cldm-e2e-stderr-XXXXXX");
  c->fd = mkstemp(c->path);
  assert_true(c->fd >= 0);
  c->saved = dup(2);
  dup2(c->fd, 2);
}

/* Returns the captured text (malloc'd). */
static inline char *e2e_stderr_end(e2e_stderr *c) {
  fflush(stderr);
  dup2(c->saved, 2);
  close(c->saved);
  off_t n = lseek(c->fd, 0, SEEK_END);
  char *text = calloc(1, (size_t)n + 1);
  pread(c->fd, text, (size_t)n, 0);
  close(c->fd);
  unlink(c->path);
  return text;
}

/* Runs child(arg) in a forked process whose stderr is captured, and fails the test unless that
 * process ended by SIGABRT (the layer's abort after its report). Returns what the child wrote
 * on stderr (malloc'd). */
static inline char *e2e_child_aborts(void (*child)(void *), void *arg) {
  e2e_stderr cap;
  fflush(NULL);
  e2e_stderr_begin(&cap);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    child(arg);
    _exit(0);
  }
  int status = 0;
  pid_t waited = waitpid(pid, &status, 0);
  char *text = e2e_stderr_end(&cap);
  assert_int_equal(waited, pid);
  if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGABRT)
    fail_msg("the child did not abort (status %#x):\n%s", status, text);
  return text;
}

#endif
