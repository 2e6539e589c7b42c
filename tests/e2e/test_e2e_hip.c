/*
 * test_e2e_hip.c — HIP device code that uses new, new[], delete and delete[] (spec 2.2), compiled
 * for SPIR-V by clang's HIP front end (kernels/new_hip.hip) and run through OpenCL on pocl with
 * the layer: hip-tests' device allocation scenarios with new/delete, written for this project
 * (per-thread arrays of char, short, int, float, double and a struct; one thread allocating for
 * its block; an array made by one kernel, written by a second and deleted by a third, the three
 * from different programs, and launched from different host threads; a structure with a member
 * array; an array of unions; allocation in __device__ functions), each checked on the host and
 * followed by an empty heap; and a thread whose new finds no room stopping (the run has
 * CLDM_BAD_ALLOC=report). A HIP block is a work-group: GRID groups of BLOCK work-items. The
 * kernels with barriers after a throwing new need pocl's "cbs" work-group method (spec 2.2),
 * which the registered runs set.
 */
#include <float.h>
#include <limits.h>
#include <pthread.h>
#include <string.h>

#include "e2e_util.h"

#define GRID 8
#define BLOCK 32
#define ITEMS (GRID * BLOCK)
#define PER_THREAD 128       /* elements per thread, as hip-tests */
#define PER_THREAD_STRUCT 64 /* ... of the struct */
#define DEVICE_FUNC_WORDS 8  /* new_hip.hip */

/* new_hip.hip's simple_struct and test_union, laid out as the device lays them out */
typedef struct simple_struct {
  int i;
  double d;
  float f;
  short s;
  signed char c;
  char bytes[8];
} simple_struct;

typedef union test_union {
  int i;
  double d;
  float f;
  short s;
  signed char c;
} test_union;

typedef struct type_case {
  const char *suffix;
  size_t size;
  const void *value; /* the value the kernels write */
} type_case;

static const signed char v_char = SCHAR_MAX;
static const short v_short = SHRT_MAX;
static const int v_int = INT_MAX;
static const float v_float = FLT_MAX;
static const double v_double = DBL_MAX;

static const type_case types[] = {
    {"char", sizeof(signed char), &v_char}, {"short", sizeof(short), &v_short},
    {"int", sizeof(int), &v_int},           {"float", sizeof(float), &v_float},
    {"double", sizeof(double), &v_double},
};

static e2e t;
static cl_program prog;

static int setup(void **state) {
  (void)state;
  e2e_open(&t);
  prog = e2e_program(&t, "new_hip");
  return 0;
}

static int teardown(void **state) {
  (void)state;
  clReleaseProgram(prog);
  e2e_close(&t);
  return 0;
}

static cl_kernel kernel_of(cl_program p, const char *prefix, const char *suffix) {
  char name[64];
  snprintf(name, sizeof name, "%s%s", prefix, suffix);
  return e2e_kernel(p, name);
}

/* Runs k over GRID blocks of BLOCK threads. */
static void launch(cl_kernel k) {
  size_t global = ITEMS, local = BLOCK;
  cl_int err = clEnqueueNDRangeKernel(t.queue, k, 1, NULL, &global, &local, 0, NULL, NULL);
  if (err != CL_SUCCESS)
    fail_msg("clEnqueueNDRangeKernel = %d", err);
  assert_int_equal(clFinish(t.queue), CL_SUCCESS);
}

static void *read_all(cl_mem m, size_t bytes) {
  void *host = malloc(bytes);
  assert_non_null(host);
  assert_int_equal(clEnqueueReadBuffer(t.queue, m, CL_TRUE, 0, bytes, host, 0, NULL, NULL),
                   CL_SUCCESS);
  return host;
}

/* Every one of n elements of `size` bytes at host equals value. */
static void assert_all(const char *what, const void *host, size_t n, size_t size,
                       const void *value) {
  for (size_t i = 0; i < n; i++)
    if (memcmp((const char *)host + i * size, value, size))
      fail_msg("%s: element %zu differs", what, i);
}

static void assert_heap_empty(void) {
  assert_int_equal(e2e_heap_stat(&t, NULL, CL_DEVICE_HEAP_INFO_LIVE_ALLOCATIONS_EXT), 0);
  assert_int_equal(e2e_heap_stat(&t, NULL, CL_DEVICE_HEAP_INFO_INVALID_FREES_EXT), 0);
  assert_int_equal(e2e_heap_stat(&t, NULL, CL_DEVICE_HEAP_INFO_BAD_ALLOCS_EXT), 0);
}

static void run_per_thread(const char *suffix, size_t size, const void *value, cl_uint count) {
  cl_kernel k = kernel_of(prog, "per_thread_", suffix);
  cl_mem out = e2e_buffer(&t, ITEMS * count * size);
  assert_int_equal(clSetKernelArg(k, 0, sizeof(cl_mem), &out), CL_SUCCESS);
  assert_int_equal(clSetKernelArg(k, 1, sizeof(count), &count), CL_SUCCESS);
  launch(k);
  void *host = read_all(out, ITEMS * count * size);
  assert_all(suffix, host, ITEMS * (size_t)count, size, value);
  assert_heap_empty();
  free(host);
  clReleaseMemObject(out);
  clReleaseKernel(k);
}

/* New_PerThread: primitive types, then the struct */
static void test_per_thread(void **state) {
  (void)state;
  for (size_t i = 0; i < sizeof types / sizeof *types; i++)
    run_per_thread(types[i].suffix, types[i].size, types[i].value, PER_THREAD);
  simple_struct sample = {INT_MAX, DBL_MAX, FLT_MAX, SHRT_MAX, SCHAR_MAX, {1, 2, 3, 4, 5, 6, 7, 8}};
  /* the host copy's padding is not what the device leaves: compare the members */
  cl_kernel k = e2e_kernel(prog, "per_thread_struct");
  cl_uint count = PER_THREAD_STRUCT;
  cl_mem out = e2e_buffer(&t, ITEMS * count * sizeof(simple_struct));
  assert_int_equal(clSetKernelArg(k, 0, sizeof(cl_mem), &out), CL_SUCCESS);
  assert_int_equal(clSetKernelArg(k, 1, sizeof(count), &count), CL_SUCCESS);
  launch(k);
  simple_struct *host = read_all(out, ITEMS * count * sizeof(simple_struct));
  for (size_t i = 0; i < ITEMS * (size_t)count; i++)
    if (host[i].i != sample.i || host[i].d != sample.d || host[i].f != sample.f ||
        host[i].s != sample.s || host[i].c != sample.c ||
        memcmp(host[i].bytes, sample.bytes, sizeof sample.bytes))
      fail_msg("struct element %zu differs", i);
  assert_heap_empty();
  free(host);
  clReleaseMemObject(out);
  clReleaseKernel(k);
}

/* New_InOneThread_AccessInAllThreads: thread 0 allocates for the block */
static void test_one_thread_for_block(void **state) {
  (void)state;
  for (size_t i = 0; i < sizeof types / sizeof *types; i++) {
    cl_kernel k = kernel_of(prog, "block_", types[i].suffix);
    cl_mem out = e2e_buffer(&t, ITEMS * types[i].size),
           slots = e2e_buffer(&t, GRID * sizeof(cl_ulong));
    assert_int_equal(clSetKernelArg(k, 0, sizeof(cl_mem), &out), CL_SUCCESS);
    assert_int_equal(clSetKernelArg(k, 1, sizeof(cl_mem), &slots), CL_SUCCESS);
    launch(k);
    void *host = read_all(out, ITEMS * types[i].size);
    assert_all(types[i].suffix, host, ITEMS, types[i].size, types[i].value);
    assert_heap_empty();
    free(host);
    clReleaseMemObject(out);
    clReleaseMemObject(slots);
    clReleaseKernel(k);
  }
}

/* The three kernels of the across-kernels scenarios, each from its own program. */
typedef struct across {
  cl_program programs[3];
  cl_kernel alloc, write, free_;
  cl_mem slot, out;
} across;

static void across_open(across *a, const type_case *c, int separate_programs) {
  for (int i = 0; i < 3; i++) {
    a->programs[i] = separate_programs || i == 0 ? e2e_program(&t, "new_hip") : a->programs[0];
    if (i && !separate_programs)
      clRetainProgram(a->programs[0]);
  }
  a->alloc = kernel_of(a->programs[0], "across_alloc_", c->suffix);
  a->write = kernel_of(a->programs[1], "across_write_", c->suffix);
  a->free_ = kernel_of(a->programs[2], "across_free_", c->suffix);
  a->slot = e2e_buffer(&t, sizeof(cl_ulong));
  a->out = e2e_buffer(&t, ITEMS * c->size);
  assert_int_equal(clSetKernelArg(a->alloc, 0, sizeof(cl_mem), &a->slot), CL_SUCCESS);
  assert_int_equal(clSetKernelArg(a->write, 0, sizeof(cl_mem), &a->slot), CL_SUCCESS);
  assert_int_equal(clSetKernelArg(a->free_, 0, sizeof(cl_mem), &a->out), CL_SUCCESS);
  assert_int_equal(clSetKernelArg(a->free_, 1, sizeof(cl_mem), &a->slot), CL_SUCCESS);
}

static void across_close(across *a, const type_case *c) {
  void *host = read_all(a->out, ITEMS * c->size);
  assert_all(c->suffix, host, ITEMS, c->size, c->value);
  assert_heap_empty();
  free(host);
  clReleaseKernel(a->alloc);
  clReleaseKernel(a->write);
  clReleaseKernel(a->free_);
  for (int i = 0; i < 3; i++)
    clReleaseProgram(a->programs[i]);
  clReleaseMemObject(a->slot);
  clReleaseMemObject(a->out);
}

/* New_AcrossKernels, and New_MulCodeObj: the array lives across launches and programs */
static void test_across_kernels(void **state) {
  (void)state;
  for (int separate = 0; separate < 2; separate++)
    for (size_t i = 0; i < sizeof types / sizeof *types; i++) {
      across a;
      across_open(&a, &types[i], separate);
      launch(a.alloc);
      assert_int_equal(e2e_heap_stat(&t, NULL, CL_DEVICE_HEAP_INFO_LIVE_ALLOCATIONS_EXT), 1);
      launch(a.write);
      launch(a.free_);
      across_close(&a, &types[i]);
    }
}

static void *launch_thread(void *k) {
  size_t global = ITEMS, local = BLOCK;
  intptr_t err =
      clEnqueueNDRangeKernel(t.queue, (cl_kernel)k, 1, NULL, &global, &local, 0, NULL, NULL);
  return (void *)err;
}

/* New_MulKernels_MulThreads: each kernel enqueued from its own host thread, one after another */
static void test_kernels_from_threads(void **state) {
  (void)state;
  for (size_t i = 0; i < sizeof types / sizeof *types; i++) {
    across a;
    across_open(&a, &types[i], 1);
    cl_kernel order[3] = {a.alloc, a.write, a.free_};
    for (int k = 0; k < 3; k++) {
      pthread_t th;
      void *err;
      assert_int_equal(pthread_create(&th, NULL, launch_thread, order[k]), 0);
      assert_int_equal(pthread_join(th, &err), 0);
      assert_int_equal((intptr_t)err, CL_SUCCESS);
    }
    assert_int_equal(clFinish(t.queue), CL_SUCCESS);
    across_close(&a, &types[i]);
  }
}

/* New_ComplexStructure: a structure and its member array, per block */
static void test_complex_structure(void **state) {
  (void)state;
  cl_kernel k = e2e_kernel(prog, "complex_struct");
  cl_mem result = e2e_buffer(&t, GRID * sizeof(int)),
         slots = e2e_buffer(&t, GRID * sizeof(cl_ulong));
  assert_int_equal(clSetKernelArg(k, 0, sizeof(cl_mem), &result), CL_SUCCESS);
  assert_int_equal(clSetKernelArg(k, 1, sizeof(cl_mem), &slots), CL_SUCCESS);
  launch(k);
  assert_int_equal(e2e_read_u32_sum(&t, result, GRID), GRID);
  assert_heap_empty();
  clReleaseMemObject(result);
  clReleaseMemObject(slots);
  clReleaseKernel(k);
}

/* New_Union: an array of unions per block, each thread writing another member */
static void test_unions(void **state) {
  (void)state;
  cl_kernel k = e2e_kernel(prog, "union_block");
  cl_mem out = e2e_buffer(&t, ITEMS * sizeof(test_union)),
         slots = e2e_buffer(&t, GRID * sizeof(cl_ulong));
  assert_int_equal(clSetKernelArg(k, 0, sizeof(cl_mem), &out), CL_SUCCESS);
  assert_int_equal(clSetKernelArg(k, 1, sizeof(cl_mem), &slots), CL_SUCCESS);
  launch(k);
  test_union *u = read_all(out, ITEMS * sizeof(test_union));
  for (int i = 0; i < ITEMS; i++) {
    int ok = i % 5 == 0   ? u[i].i == INT_MAX
             : i % 5 == 1 ? u[i].d == DBL_MAX
             : i % 5 == 2 ? u[i].f == FLT_MAX
             : i % 5 == 3 ? u[i].s == SHRT_MAX
                          : u[i].c == SCHAR_MAX;
    if (!ok)
      fail_msg("union %d differs", i);
  }
  assert_heap_empty();
  free(u);
  clReleaseMemObject(out);
  clReleaseMemObject(slots);
  clReleaseKernel(k);
}

/* New_DeviceFunc: allocation, use and delete[] in __device__ functions */
static void test_device_functions(void **state) {
  (void)state;
  cl_kernel k = e2e_kernel(prog, "device_func");
  cl_mem out = e2e_buffer(&t, ITEMS * DEVICE_FUNC_WORDS * sizeof(int));
  assert_int_equal(clSetKernelArg(k, 0, sizeof(cl_mem), &out), CL_SUCCESS);
  launch(k);
  int *v = read_all(out, ITEMS * DEVICE_FUNC_WORDS * sizeof(int));
  for (int i = 0; i < ITEMS * DEVICE_FUNC_WORDS; i++)
    assert_int_equal(v[i], i / DEVICE_FUNC_WORDS);
  assert_heap_empty();
  free(v);
  clReleaseMemObject(out);
  clReleaseKernel(k);
}

/* a thread whose new[] (in a __device__ function) finds no room stops; the others go on */
static void test_stop(void **state) {
  (void)state;
  cl_kernel k = e2e_kernel(prog, "stop_on_full");
  cl_mem out = e2e_buffer(&t, ITEMS * sizeof(int));
  cl_ulong big = (cl_ulong)1 << 40;
  assert_int_equal(clSetKernelArg(k, 0, sizeof(cl_mem), &out), CL_SUCCESS);
  assert_int_equal(clSetKernelArg(k, 1, sizeof(big), &big), CL_SUCCESS);
  e2e_stderr cap;
  e2e_stderr_begin(&cap);
  launch(k);
  char *err = e2e_stderr_end(&cap);
  int *v = read_all(out, ITEMS * sizeof(int));
  for (int i = 0; i < ITEMS; i++)
    assert_int_equal(v[i], i % 4 == 1 ? 0 : i + 1);
  char want[128];
  snprintf(want, sizeof want, "kernel stop_on_full: %d work-items stopped", ITEMS / 4);
  if (!strstr(err, want))
    fail_msg("expected \"%s\" in:\n%s", want, err);
  assert_int_equal(e2e_heap_stat(&t, NULL, CL_DEVICE_HEAP_INFO_BAD_ALLOCS_EXT), ITEMS / 4);
  assert_int_equal(e2e_heap_stat(&t, NULL, CL_DEVICE_HEAP_INFO_LIVE_ALLOCATIONS_EXT), 0);
  free(err);
  free(v);
  clReleaseMemObject(out);
  clReleaseKernel(k);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_per_thread),        cmocka_unit_test(test_one_thread_for_block),
      cmocka_unit_test(test_across_kernels),    cmocka_unit_test(test_kernels_from_threads),
      cmocka_unit_test(test_complex_structure), cmocka_unit_test(test_unions),
      cmocka_unit_test(test_device_functions),  cmocka_unit_test(test_stop),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
