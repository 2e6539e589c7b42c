/*
 * test_e2e.c — lowered modules built and run on pocl 6.0 (no layer: the test does the layer's
 * job by hand). For each case the module is lowered (Import form at -O0, OpExtInst form at
 * -O2, spir64), created with clCreateProgramWithIL, built, its kernel given the heap buffer at
 * the index the report names, run on 64 work-items that allocate, write, read and free, and
 * the results and heap counters checked on the host. Once with the stand-in bump allocator
 * (tests/spirv/data/bump_alloc.cl), once with device/'s allocator.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <CL/cl.h>

#include "spirv_test.h"
#include "cldm_cl_device.h"
#include "cldm_device.h"

#define GLOBAL 64
#define HEAP_BYTES (8u << 20)

static cl_context ctx;
static cl_device_id dev;
static cl_command_queue queue;

typedef enum { BUMP, DEVICE } allocator_kind;

typedef struct run_case {
  const char *source, *kernel;
  int n;
  long extra; /* third argument of k_size64 */
  int (*expect)(int gid, int n);
  int frees_per_item; /* balanced kernels free what they allocate */
} run_case;

static int sum_i(int g, int n) { return g * n * (n - 1) / 2; }
static int sum_1(int g, int n) { return n * (n - 1) / 2; }
static int sum_2(int g, int n) { return n * (n - 1); }
static int sum_3(int g, int n) { return 3 * n * (n - 1) / 2; }
static int sum_4(int g, int n) { return 2 * n * (n - 1); }
static int plain(int g, int n) { return 7 + n; }
static int same_n(int g, int n) { return n; }
static int thirty(int g, int n) { return 30; }
static int one(int g, int n) { return 1; }
static int zero(int g, int n) { return 0; }

static const run_case cases[] = {
    {"kernel_alloc", "k_malloc", 10, 0, sum_i, 1},
    {"kernel_alloc", "k_plain", 10, 0, plain, 0},
    {"helper_two_kernels", "k_helper_a", 10, 0, sum_1, 1},
    {"helper_two_kernels", "k_helper_b", 10, 0, sum_2, 1},
    {"helper_two_kernels", "k_calls_kernel", 10, 0, sum_1, 1},
    {"two_level", "k_two_level", 10, 0, sum_3, 1},
    {"calloc_realloc", "k_calloc", 10, 0, same_n, 1},
    {"calloc_realloc", "k_realloc", 10, 0, thirty, 2},
    {"calloc_realloc", "k_aligned", 10, 0, one, 1},
    {"generic", "k_generic", 10, 0, sum_4, 1},
    {"size32", "k_size32", 10, 0, same_n, 1},
    {"size64", "k_size64", 10, 0, one, 1},
    {"size64", "k_size64", 10, 1L << 40, zero, 0}, /* 1 TiB: NULL, not a wrapped size */
};

static int setup(void **state) {
  dev = cldm_cl_find_device(NULL, NULL, NULL);
  if (!dev) {
    fprintf(stderr, "no OpenCL device (OCL_ICD_VENDORS=%s)\n", getenv("OCL_ICD_VENDORS"));
    return -1;
  }
  char il[256] = "";
  clGetDeviceInfo(dev, CL_DEVICE_IL_VERSION, sizeof il, il, NULL);
  if (!strstr(il, "SPIR-V")) {
    fprintf(stderr, "device takes no SPIR-V (IL version '%s')\n", il);
    return -1;
  }
  cl_int e;
  ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &e);
  if (e)
    return -1;
  queue = clCreateCommandQueueWithProperties(ctx, dev, NULL, &e);
  return e ? -1 : 0;
}

static int teardown(void **state) {
  clReleaseCommandQueue(queue);
  clReleaseContext(ctx);
  return 0;
}

/* Allocator modules and a fresh heap buffer for each kind. */
static void allocator_for(allocator_kind kind, cldm_spirv_allocator *a, cl_mem *heap) {
  cl_int e;
  if (kind == BUMP) {
    *a = *st_bump_allocator();
    uint32_t *h = calloc(1, HEAP_BYTES);
    h[0] = 64;         /* next: the arena starts after the header */
    h[1] = HEAP_BYTES; /* limit */
    *heap = clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, HEAP_BYTES, h, &e);
    free(h);
    assert_int_equal(e, CL_SUCCESS);
    return;
  }
  char ext[8192] = "", ver[64] = "";
  clGetDeviceInfo(dev, CL_DEVICE_EXTENSIONS, sizeof ext, ext, NULL);
  clGetDeviceInfo(dev, CL_DEVICE_OPENCL_C_VERSION, sizeof ver, ver, NULL);
  unsigned features = 0;
  if (strstr(ver, "OpenCL C 2.") || strstr(ver, "OpenCL C 3."))
    features |= CLDM_DEVICE_FEATURE_CL20_ATOMICS | CLDM_DEVICE_FEATURE_GENERIC_AS;
  if (strstr(ext, "cl_khr_int64_base_atomics"))
    features |= CLDM_DEVICE_FEATURE_INT64_ATOMICS;
  if (strstr(ext, "cl_khr_subgroups"))
    features |= CLDM_DEVICE_FEATURE_SUBGROUPS;
  const cldm_device_module *m = cldm_device_module_select(64, features);
  assert_non_null(m);
  memset(a, 0, sizeof *a);
  a->words64 = m->words;
  a->num_words64 = m->num_words;
  uint64_t bytes = cldm_heap_buffer_size(HEAP_BYTES);
  size_t image = cldm_heap_image_size(bytes);
  void *img = calloc(1, image);
  assert_int_equal(cldm_heap_image_write(bytes, img, image), 0);
  *heap = clCreateBuffer(ctx, CL_MEM_READ_WRITE, bytes, NULL, &e);
  assert_int_equal(e, CL_SUCCESS);
  assert_int_equal(clEnqueueWriteBuffer(queue, *heap, CL_TRUE, 0, image, img, 0, NULL, NULL),
                   CL_SUCCESS);
  free(img);
}

static cl_program build_with(const void *il, size_t size, const char *what, const char *options) {
  cl_int e;
  cl_program p = clCreateProgramWithIL(ctx, il, size, &e);
  if (e != CL_SUCCESS)
    fail_msg("%s: clCreateProgramWithIL: %d", what, e);
  e = clBuildProgram(p, 1, &dev, options, NULL, NULL);
  if (e != CL_SUCCESS) {
    char log[8192] = "";
    clGetProgramBuildInfo(p, dev, CL_PROGRAM_BUILD_LOG, sizeof log, log, NULL);
    fail_msg("%s: clBuildProgram: %d\n%s", what, e, log);
  }
  return p;
}

static cl_program build(const void *il, size_t size, const char *what) {
  return build_with(il, size, what, "");
}

static void run(const run_case *c, const char *file, allocator_kind kind) {
  size_t size, out_size;
  void *in = st_data(file, &size), *out = NULL;
  cldm_spirv_allocator alloc;
  cl_mem heap;
  allocator_for(kind, &alloc, &heap);
  cldm_spirv_report r;
  cldm_spirv_error err;
  if (cldm_spirv_lower(in, size, &alloc, &out, &out_size, &r, &err))
    fail_msg("%s: %s", file, err.message);
  const cldm_spirv_kernel *k = NULL;
  for (size_t i = 0; i < r.num_kernels; i++)
    if (!strcmp(r.kernels[i].name, c->kernel))
      k = &r.kernels[i];
  assert_non_null(k);
  char what[128];
  snprintf(what, sizeof what, "%s %s (%s)", file, c->kernel, kind == BUMP ? "bump" : "device");
  cl_program p = build(out, out_size, what);
  cl_int e;
  cl_kernel kernel = clCreateKernel(p, c->kernel, &e);
  assert_int_equal(e, CL_SUCCESS);
  cl_uint nargs;
  clGetKernelInfo(kernel, CL_KERNEL_NUM_ARGS, sizeof nargs, &nargs, NULL);
  assert_int_equal(nargs, k->num_user_args + (cl_uint)k->takes_heap); /* no layer to hide it */
  int host[GLOBAL];
  memset(host, 0xAB, sizeof host);
  cl_mem outbuf =
      clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof host, host, &e);
  assert_int_equal(clSetKernelArg(kernel, 0, sizeof outbuf, &outbuf), CL_SUCCESS);
  assert_int_equal(clSetKernelArg(kernel, 1, sizeof c->n, &c->n), CL_SUCCESS);
  if (k->num_user_args == 3) {
    cl_ulong extra = (cl_ulong)c->extra;
    assert_int_equal(clSetKernelArg(kernel, 2, sizeof extra, &extra), CL_SUCCESS);
  }
  if (k->takes_heap)
    assert_int_equal(clSetKernelArg(kernel, k->heap_arg_index, sizeof heap, &heap), CL_SUCCESS);
  size_t global = GLOBAL;
  assert_int_equal(clEnqueueNDRangeKernel(queue, kernel, 1, NULL, &global, NULL, 0, NULL, NULL),
                   CL_SUCCESS);
  assert_int_equal(clEnqueueReadBuffer(queue, outbuf, CL_TRUE, 0, sizeof host, host, 0, NULL, NULL),
                   CL_SUCCESS);
  for (int g = 0; g < GLOBAL; g++)
    if (host[g] != c->expect(g, c->n))
      fail_msg("%s: work-item %d wrote %d, expected %d", what, g, host[g], c->expect(g, c->n));
  if (k->takes_heap && kind == BUMP) {
    uint32_t h[8];
    clEnqueueReadBuffer(queue, heap, CL_TRUE, 0, sizeof h, h, 0, NULL, NULL);
    assert_int_equal(h[3], (uint32_t)(GLOBAL * c->frees_per_item)); /* frees */
  }
  if (k->takes_heap && kind == DEVICE) {
    size_t span = cldm_heap_stats_span(cldm_heap_buffer_size(HEAP_BYTES));
    void *bytes = malloc(span);
    clEnqueueReadBuffer(queue, heap, CL_TRUE, 0, span, bytes, 0, NULL, NULL);
    cldm_heap_stats s;
    assert_int_equal(cldm_heap_stats_decode(bytes, span, &s), 0);
    assert_int_equal(s.live_allocations, 0); /* every kernel frees what it allocated */
    assert_int_equal(s.invalid_frees, 0);
    free(bytes);
  }
  clReleaseMemObject(outbuf);
  clReleaseKernel(kernel);
  clReleaseProgram(p);
  clReleaseMemObject(heap);
  cldm_spirv_report_free(&r);
  free(out);
  free(in);
}

static void run_all(allocator_kind kind) {
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    char file[128];
    snprintf(file, sizeof file, "%s.O0.spir64.spv", cases[i].source);
    run(&cases[i], file, kind);
    snprintf(file, sizeof file, "%s.O2.spir64.ext.spv", cases[i].source);
    run(&cases[i], file, kind);
  }
}

static void bump_allocator(void **state) { run_all(BUMP); }

static void device_allocator(void **state) { run_all(DEVICE); }

/* Modules that are only built: many kinds of existing arguments, existing types. */
static void build_only(void **state) {
  const char *files[] = {"many_args.O0.spir64.spv", "many_args.O2.spir64.ext.spv",
                         "existing_types.O0.spir64.spv", "existing_types.O2.spir64.ext.spv"};
  for (size_t i = 0; i < 4; i++) {
    size_t size, out_size;
    void *in = st_data(files[i], &size);
    void *out = st_lower(in, size, &out_size, NULL);
    cl_program p = build(out, out_size, files[i]);
    cl_kernel k[2];
    cl_uint n = 0;
    assert_int_equal(clCreateKernelsInProgram(p, 2, k, &n), CL_SUCCESS);
    assert_int_equal(n, 1);
    cl_uint nargs;
    clGetKernelInfo(k[0], CL_KERNEL_NUM_ARGS, sizeof nargs, &nargs, NULL);
    assert_int_equal(nargs, strstr(files[i], "many") ? 13 : 5);
    clReleaseKernel(k[0]);
    clReleaseProgram(p);
    free(out);
    free(in);
  }
}

/* llvm-spirv's kernel_arg_type strings (spir64 test data carry them) are extended for the
 * hidden argument: pocl's argument info stays consistent, user arguments unchanged. */
static void argument_info(void **state) {
  const char *files[] = {"kernel_alloc.O0.spir64.spv", "kernel_alloc.O2.spir64.ext.spv"};
  for (int f = 0; f < 2; f++) {
    size_t size, out_size;
    void *in = st_data(files[f], &size);
    void *out = st_lower(in, size, &out_size, NULL);
    cl_program p = build_with(out, out_size, files[f], "-cl-kernel-arg-info");
    cl_int e;
    cl_kernel k = clCreateKernel(p, "k_malloc", &e);
    assert_int_equal(e, CL_SUCCESS);
    const char *types[] = {"int*", "int", "char*"};
    for (cl_uint i = 0; i < 3; i++) {
      char name[64] = "";
      assert_int_equal(clGetKernelArgInfo(k, i, CL_KERNEL_ARG_TYPE_NAME, sizeof name, name, NULL),
                       CL_SUCCESS);
      assert_string_equal(name, types[i]);
      cl_kernel_arg_address_qualifier aq;
      assert_int_equal(
          clGetKernelArgInfo(k, i, CL_KERNEL_ARG_ADDRESS_QUALIFIER, sizeof aq, &aq, NULL),
          CL_SUCCESS);
      assert_int_equal(aq, i == 1 ? CL_KERNEL_ARG_ADDRESS_PRIVATE : CL_KERNEL_ARG_ADDRESS_GLOBAL);
    }
    clReleaseKernel(k);
    clReleaseProgram(p);
    free(out);
    free(in);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(bump_allocator),
      cmocka_unit_test(device_allocator),
      cmocka_unit_test(build_only),
      cmocka_unit_test(argument_info),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
