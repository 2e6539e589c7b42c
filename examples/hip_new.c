/*
 * hip_new.c — HIP device code with new, new[], delete, malloc and free, run through OpenCL with
 * the cl_ext_device_malloc layer: kernels/hip_shapes.hip, compiled at build time by clang's HIP
 * front end for SPIR-V (CLDM_EXAMPLES_SPV_DIR/hip_shapes.spv), is given to
 * clCreateProgramWithIL; a HIP launch of GRID blocks of BLOCK threads is an NDRange of GRID
 * work-groups of BLOCK work-items. One kernel builds a scene of objects per thread, a second
 * (a later launch) sums and deletes them. Prints the heap statistics in between; exit status 0
 * if every scene's sum is right and the heap ends empty. With an argument, the module is read
 * from hip_shapes.spv in that directory instead, as the demo takes its directory.
 */
#include "example_util.h"

#define GRID 16
#define BLOCK 64
#define THREADS (GRID * BLOCK)

/* The area sum of thread id's scene, as kernels/hip_shapes.hip builds it. */
static float expected_total(unsigned id) {
  float total = 0.0f;
  for (int k = 1; k <= (int)(id % 7) + 1; k++)
    total += ((id + k) % 2 == 0 ? 1.0f : 3.0f) * (float)k * (float)k;
  return total;
}

int main(int argc, char **argv) {
  char path[4096];
  snprintf(path, sizeof path, "%s/hip_shapes.spv", argc > 1 ? argv[1] : CLDM_EXAMPLES_SPV_DIR);
  cl_platform_id platform;
  cl_device_id dev = example_device(&platform);
  cl_int err;
  cl_context ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
  CHECK(err);
  cl_command_queue q = clCreateCommandQueueWithProperties(ctx, dev, NULL, &err);
  CHECK(err);
  cl_program prog = example_program(ctx, dev, path);
  cl_kernel build = clCreateKernel(prog, "scene_build", &err);
  CHECK(err);
  cl_kernel sum = clCreateKernel(prog, "scene_sum_delete", &err);
  CHECK(err);
  cl_mem scenes = clCreateBuffer(ctx, CL_MEM_READ_WRITE, THREADS * sizeof(cl_ulong), NULL, &err);
  CHECK(err);
  cl_mem totals = clCreateBuffer(ctx, CL_MEM_READ_WRITE, THREADS * sizeof(float), NULL, &err);
  CHECK(err);
  cl_mem bad = clCreateBuffer(ctx, CL_MEM_READ_WRITE, THREADS * sizeof(int), NULL, &err);
  CHECK(err);
  CHECK(clSetKernelArg(build, 0, sizeof(cl_mem), &scenes));
  CHECK(clSetKernelArg(sum, 0, sizeof(cl_mem), &scenes));
  CHECK(clSetKernelArg(sum, 1, sizeof(cl_mem), &totals));
  CHECK(clSetKernelArg(sum, 2, sizeof(cl_mem), &bad));
  size_t global = THREADS, local = BLOCK; /* scene_build<<<GRID, BLOCK>>>(scenes) */
  CHECK(clEnqueueNDRangeKernel(q, build, 1, NULL, &global, &local, 0, NULL, NULL));
  example_print_heap(platform, q, "after scene_build");
  CHECK(clEnqueueNDRangeKernel(q, sum, 1, NULL, &global, &local, 0, NULL, NULL));
  example_print_heap(platform, q, "after scene_sum_delete");
  static float got[THREADS];
  static int wrong[THREADS];
  CHECK(clEnqueueReadBuffer(q, totals, CL_TRUE, 0, sizeof(got), got, 0, NULL, NULL));
  CHECK(clEnqueueReadBuffer(q, bad, CL_TRUE, 0, sizeof(wrong), wrong, 0, NULL, NULL));
  int failures = 0;
  for (unsigned id = 0; id < THREADS; id++)
    failures += wrong[id] != 0 || got[id] != expected_total(id);
  cl_ulong live = example_heap_info(platform, q, CL_DEVICE_HEAP_INFO_LIVE_ALLOCATIONS_EXT);
  printf("%d HIP threads built scenes with new, new[] and malloc, and deleted them: %s\n", THREADS,
         failures || live ? "FAILED" : "all sums right, heap empty");
  clReleaseMemObject(scenes);
  clReleaseMemObject(totals);
  clReleaseMemObject(bad);
  clReleaseKernel(build);
  clReleaseKernel(sum);
  clReleaseProgram(prog);
  clReleaseCommandQueue(q);
  clReleaseContext(ctx);
  return failures || live ? 1 : 0;
}
