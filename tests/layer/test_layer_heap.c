/*
 * test_layer_heap.c — a heap's life (layer_heap.c, layer_enqueue.c; spec 1.2, 1.7) against
 * NVIDIA's reference counting, on the NVIDIA-like stub ICD under both loaders: its queues and
 * SVM allocations hold their context out of CL_CONTEXT_REFERENCE_COUNT, so the layer sees a
 * context free of the application at its last clReleaseContext even while a launch of it
 * waits for a user event. The heap must then stay until the launch ran (the stub counts a
 * launch that finds its SVM argument freed), go right after it (nothing left allocated), and
 * count as live for clSetDeviceHeapSizeEXT until then; no release waits for the launch (the
 * stub runs it only when the test sets the event, after the releases). A launch that is not
 * gated lets the release free the heap at once.
 * Argument: the directory of alloc_basic.spv (tests/e2e).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <cmocka.h>

#include "cldm_test_util.h"
#include "cldm_cl_device.h"
#include "cldm_file.h"
#include "stub_icd.h"

static const char *e2e_dir;
static cl_platform_id plat;
static cl_device_id dev;
static clSetDeviceHeapSizeEXT_fn set_heap_size;

typedef struct stats {
  cl_uint runs, runs_on_freed, svm_alive;
} stats;

static stats stub_stats(void) {
  typedef void (*fn_t)(cl_uint *);
  fn_t fn = (fn_t)clGetExtensionFunctionAddressForPlatform(plat, STUB_LAUNCH_STATS_FUNCTION);
  assert_non_null(fn);
  cl_uint v[3];
  fn(v);
  return (stats){v[0], v[1], v[2]};
}

/* The stub's statistics once `svm_alive` SVM allocations are left, or after 5 s: a heap whose
 * last command's callback let go is freed by the layer's reaper thread, a moment later. */
static stats stub_stats_once(cl_uint svm_alive) {
  stats s = stub_stats();
  for (int i = 0; i < 500 && s.svm_alive != svm_alive; i++) {
    struct timespec ms10 = {0, 10000000};
    nanosleep(&ms10, NULL);
    s = stub_stats();
  }
  return s;
}

static int destroyed;
static void CL_CALLBACK on_destroy(cl_context c, void *flag) { *(int *)flag = 1; }

typedef struct app {
  cl_context context;
  cl_command_queue queue;
  cl_program program;
  cl_kernel fill;
} app;

/* A context, a queue, alloc_basic.spv built (PTX for the stub) and its kernel fill. */
static void app_open(app *a) {
  cl_int err;
  a->context = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
  assert_int_equal(err, CL_SUCCESS);
  destroyed = 0;
  assert_int_equal(clSetContextDestructorCallback(a->context, on_destroy, &destroyed), CL_SUCCESS);
  a->queue = clCreateCommandQueueWithProperties(a->context, dev, NULL, &err);
  assert_int_equal(err, CL_SUCCESS);
  char path[4096];
  snprintf(path, sizeof(path), "%s/alloc_basic.spv", e2e_dir);
  size_t size;
  void *il = cldm_file_read(path, &size);
  assert_non_null(il);
  a->program = clCreateProgramWithIL(a->context, il, size, &err);
  free(il);
  assert_int_equal(err, CL_SUCCESS);
  assert_int_equal(clBuildProgram(a->program, 1, &dev, NULL, NULL, NULL), CL_SUCCESS);
  a->fill = clCreateKernel(a->program, "fill", &err);
  assert_int_equal(err, CL_SUCCESS);
  cl_mem none = NULL;
  cl_uint n = 4;
  assert_int_equal(clSetKernelArg(a->fill, 0, sizeof(none), &none), CL_SUCCESS);
  assert_int_equal(clSetKernelArg(a->fill, 1, sizeof(n), &n), CL_SUCCESS);
}

/* Releases every object of the application, the context last. */
static void app_close(app *a) {
  assert_int_equal(clReleaseKernel(a->fill), CL_SUCCESS);
  assert_int_equal(clReleaseProgram(a->program), CL_SUCCESS);
  assert_int_equal(clReleaseCommandQueue(a->queue), CL_SUCCESS);
  assert_int_equal(clReleaseContext(a->context), CL_SUCCESS);
}

static void test_gated_launch_keeps_heap(void **state) {
  stats before = stub_stats();
  app a;
  app_open(&a);
  cl_int err;
  cl_event gate = clCreateUserEvent(a.context, &err);
  assert_int_equal(err, CL_SUCCESS);
  size_t global = 64;
  assert_int_equal(clEnqueueNDRangeKernel(a.queue, a.fill, 1, NULL, &global, NULL, 1, &gate, NULL),
                   CL_SUCCESS);
  stats s = stub_stats();
  assert_int_equal(s.svm_alive, before.svm_alive + 2); /* the heap and its pristine image */
  assert_int_equal(s.runs, before.runs);
  app_close(&a); /* returns: nothing waits for the launch */
  s = stub_stats();
  assert_int_equal(s.svm_alive, before.svm_alive + 2); /* the heap stays for the launch */
  assert_int_equal(destroyed, 0);
  /* a context released while its commands still run counts as released once they completed */
  assert_int_equal(set_heap_size(dev, 16u << 20), CL_INVALID_OPERATION);
  assert_int_equal(clSetUserEventStatus(gate, CL_COMPLETE), CL_SUCCESS);
  s = stub_stats_once(before.svm_alive);
  assert_int_equal(s.runs, before.runs + 1);
  assert_int_equal(s.runs_on_freed, before.runs_on_freed); /* it found its heap alive */
  assert_int_equal(s.svm_alive, before.svm_alive);         /* and the heap went after it */
  assert_int_equal(set_heap_size(dev, 16u << 20), CL_SUCCESS);
  assert_int_equal(clReleaseEvent(gate), CL_SUCCESS);
  assert_int_equal(destroyed, 1); /* the gate held the context last */
  assert_int_equal(set_heap_size(dev, CL_DEVICE_HEAP_SIZE_DEFAULT_EXT), CL_SUCCESS);
}

static void test_launch_done_heap_goes_at_release(void **state) {
  stats before = stub_stats();
  app a;
  app_open(&a);
  size_t global = 64;
  cl_event ev;
  assert_int_equal(clEnqueueNDRangeKernel(a.queue, a.fill, 1, NULL, &global, NULL, 0, NULL, &ev),
                   CL_SUCCESS);
  cl_int status = CL_QUEUED;
  assert_int_equal(
      clGetEventInfo(ev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof(status), &status, NULL),
      CL_SUCCESS);
  assert_int_equal(status, CL_COMPLETE); /* the stub runs an ungated launch at once */
  assert_int_equal(clReleaseEvent(ev), CL_SUCCESS);
  stats s = stub_stats();
  assert_int_equal(s.runs, before.runs + 1);
  assert_int_equal(s.svm_alive, before.svm_alive + 2);
  app_close(&a);
  s = stub_stats_once(before.svm_alive);
  assert_int_equal(s.svm_alive, before.svm_alive);
  assert_int_equal(s.runs_on_freed, before.runs_on_freed);
  assert_int_equal(destroyed, 1);
  assert_int_equal(set_heap_size(dev, CL_DEVICE_HEAP_SIZE_DEFAULT_EXT), CL_SUCCESS);
}

static int setup(void **state) {
  dev = cldm_cl_find_device("stub-nv", NULL, &plat);
  assert_non_null(dev);
  set_heap_size = (clSetDeviceHeapSizeEXT_fn)clGetExtensionFunctionAddressForPlatform(
      plat, "clSetDeviceHeapSizeEXT");
  assert_non_null(set_heap_size);
  return 0;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: test_layer_heap E2E_KERNEL_DIR\n");
    return 2;
  }
  e2e_dir = argv[1];
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_gated_launch_keeps_heap),
      cmocka_unit_test(test_launch_done_heap_goes_at_release),
  };
  return cmocka_run_group_tests_name("heap lifetime, NVIDIA's counting", tests, setup, NULL);
}
