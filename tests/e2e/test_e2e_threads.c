/*
 * test_e2e_threads.c — 8 host threads enqueue concurrently (spec 1.7): two contexts, four
 * threads each, every thread with its own queue, all threads of a context enqueueing the SAME
 * kernel objects (arguments identical; each thread works on its own range through the global
 * offset). The heap is created by whichever first launch wins the race, and each enqueue must
 * get its context's heap bound: every allocation is checked by a kernel that does not
 * allocate, freed, and the statistics must add up exactly.
 */
#include <pthread.h>

#include "e2e_util.h"

#define THREADS_PER_CONTEXT 4
#define RANGE 256 /* work-items per thread and round */
#define ROUNDS 6
#define WORDS 8

typedef struct shared {
  e2e env;
  cl_program prog;
  cl_kernel fill, check, release;
  cl_mem ptrs, bad;
  pthread_barrier_t start;
} shared;

typedef struct worker {
  shared *s;
  int index;
  cl_int err;
} worker;

static void *work(void *arg) {
  worker *w = arg;
  shared *s = w->s;
  cl_int err;
  cl_command_queue q =
      clCreateCommandQueueWithProperties(s->env.context, s->env.device, NULL, &err);
  if (err != CL_SUCCESS) {
    w->err = err;
    return NULL;
  }
  pthread_barrier_wait(&s->start); /* first launches race to create the heap */
  size_t offset = (size_t)w->index * RANGE, global = RANGE;
  for (int r = 0; r < ROUNDS && err == CL_SUCCESS; r++) {
    err = clEnqueueNDRangeKernel(q, s->fill, 1, &offset, &global, NULL, 0, NULL, NULL);
    if (err == CL_SUCCESS)
      err = clEnqueueNDRangeKernel(q, s->check, 1, &offset, &global, NULL, 0, NULL, NULL);
    if (err == CL_SUCCESS)
      err = clEnqueueNDRangeKernel(q, s->release, 1, &offset, &global, NULL, 0, NULL, NULL);
  }
  if (err == CL_SUCCESS) /* leave one round allocated, to count */
    err = clEnqueueNDRangeKernel(q, s->fill, 1, &offset, &global, NULL, 0, NULL, NULL);
  if (err == CL_SUCCESS)
    err = clFinish(q);
  clReleaseCommandQueue(q);
  w->err = err;
  return NULL;
}

static void open_shared(shared *s) {
  e2e_open(&s->env);
  s->prog = e2e_program(&s->env, "alloc_basic");
  s->fill = e2e_kernel(s->prog, "fill_again");
  s->check = e2e_kernel(s->prog, "check");
  s->release = e2e_kernel(s->prog, "release");
  size_t n = THREADS_PER_CONTEXT * RANGE;
  s->ptrs = e2e_buffer(&s->env, n * sizeof(cl_ulong));
  s->bad = e2e_buffer(&s->env, sizeof(cl_uint));
  cl_uint words = WORDS, per_item = 0;
  clSetKernelArg(s->fill, 0, sizeof(cl_mem), &s->ptrs);
  clSetKernelArg(s->fill, 1, sizeof(words), &words);
  clSetKernelArg(s->check, 0, sizeof(cl_mem), &s->ptrs);
  clSetKernelArg(s->check, 1, sizeof(words), &words);
  clSetKernelArg(s->check, 2, sizeof(per_item), &per_item);
  clSetKernelArg(s->check, 3, sizeof(cl_mem), &s->bad);
  clSetKernelArg(s->release, 0, sizeof(cl_mem), &s->ptrs);
  assert_int_equal(clFinish(s->env.queue), CL_SUCCESS);
}

static void close_shared(shared *s) {
  clReleaseKernel(s->fill);
  clReleaseKernel(s->check);
  clReleaseKernel(s->release);
  clReleaseProgram(s->prog);
  clReleaseMemObject(s->ptrs);
  clReleaseMemObject(s->bad);
  e2e_close(&s->env);
}

static void test_eight_threads_two_contexts(void **state) {
  shared s[2];
  memset(s, 0, sizeof(s));
  for (int c = 0; c < 2; c++) {
    open_shared(&s[c]);
    pthread_barrier_init(&s[c].start, NULL, THREADS_PER_CONTEXT);
  }
  worker w[2 * THREADS_PER_CONTEXT];
  pthread_t th[2 * THREADS_PER_CONTEXT];
  for (int i = 0; i < 2 * THREADS_PER_CONTEXT; i++) {
    w[i] = (worker){&s[i / THREADS_PER_CONTEXT], i % THREADS_PER_CONTEXT, CL_SUCCESS};
    assert_int_equal(pthread_create(&th[i], NULL, work, &w[i]), 0);
  }
  for (int i = 0; i < 2 * THREADS_PER_CONTEXT; i++) {
    pthread_join(th[i], NULL);
    if (w[i].err != CL_SUCCESS)
      fail_msg("thread %d: error %d", i, w[i].err);
  }
  for (int c = 0; c < 2; c++) {
    const e2e *e = &s[c].env;
    assert_int_equal(e2e_read_u32_sum(e, s[c].bad, 1), 0);
    /* exactly the last round is alive, in each context's own heap */
    assert_int_equal(e2e_heap_stat(e, NULL, CL_DEVICE_HEAP_INFO_LIVE_ALLOCATIONS_EXT),
                     THREADS_PER_CONTEXT * RANGE);
    assert_int_equal(e2e_heap_stat(e, NULL, CL_DEVICE_HEAP_INFO_FAILED_ALLOCATIONS_EXT), 0);
    assert_int_equal(e2e_heap_stat(e, NULL, CL_DEVICE_HEAP_INFO_INVALID_FREES_EXT), 0);
    size_t global = THREADS_PER_CONTEXT * RANGE;
    cl_uint per_item = 0;
    clSetKernelArg(s[c].check, 2, sizeof(per_item), &per_item);
    e2e_run(e, s[c].check, global);
    assert_int_equal(e2e_read_u32_sum(e, s[c].bad, 1), 0);
    e2e_run(e, s[c].release, global);
    assert_int_equal(e2e_heap_stat(e, NULL, CL_DEVICE_HEAP_INFO_LIVE_ALLOCATIONS_EXT), 0);
    pthread_barrier_destroy(&s[c].start);
    close_shared(&s[c]);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_eight_threads_two_contexts),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
