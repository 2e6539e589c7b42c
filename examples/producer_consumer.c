/*
 * producer_consumer.c — allocations outlive the kernel and the program that made them: a
 * producer program (kernels/producer.cl) allocates a variable-length record per work-item; a
 * consumer program built separately in the same context (kernels/consumer.cl) checks and
 * frees them. Prints the heap statistics in between; exit status 0 if every record arrived
 * intact and the heap ends empty. The programs are built from their OpenCL C source (built into
 * the example); with a directory argument, from the SPIR-V modules producer.spv and
 * consumer.spv in it instead.
 */
#include "consumer_cl.h" /* generated: consumer_cl[], the text of kernels/consumer.cl */
#include "example_util.h"
#include "producer_cl.h" /* generated: producer_cl[] */

#define ITEMS 2048

int main(int argc, char **argv) {
  const char *dir = argc > 1 ? argv[1] : NULL;
  char producer_path[4096], consumer_path[4096];
  snprintf(producer_path, sizeof(producer_path), "%s/producer.spv", dir);
  snprintf(consumer_path, sizeof(consumer_path), "%s/consumer.spv", dir);
  cl_platform_id platform;
  cl_device_id dev = example_device(&platform);
  cl_int err;
  cl_context ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
  CHECK(err);
  cl_command_queue q = clCreateCommandQueueWithProperties(ctx, dev, NULL, &err);
  CHECK(err);
  cl_program producer =
      dir ? example_program(ctx, dev, producer_path)
          : example_source_program(ctx, dev, producer_cl, sizeof(producer_cl), "producer.cl");
  cl_program consumer =
      dir ? example_program(ctx, dev, consumer_path)
          : example_source_program(ctx, dev, consumer_cl, sizeof(consumer_cl), "consumer.cl");
  cl_kernel produce = clCreateKernel(producer, "produce", &err);
  CHECK(err);
  cl_kernel consume = clCreateKernel(consumer, "consume", &err);
  CHECK(err);
  cl_mem records = clCreateBuffer(ctx, CL_MEM_READ_WRITE, ITEMS * sizeof(cl_ulong), NULL, &err);
  CHECK(err);
  cl_mem errors = clCreateBuffer(ctx, CL_MEM_READ_WRITE, sizeof(cl_uint), NULL, &err);
  CHECK(err);
  cl_uint zero = 0, nerr = 0;
  CHECK(clEnqueueFillBuffer(q, errors, &zero, sizeof(zero), 0, sizeof(zero), 0, NULL, NULL));
  CHECK(clSetKernelArg(produce, 0, sizeof(cl_mem), &records));
  CHECK(clSetKernelArg(consume, 0, sizeof(cl_mem), &records));
  CHECK(clSetKernelArg(consume, 1, sizeof(cl_mem), &errors));
  size_t global = ITEMS;
  CHECK(clEnqueueNDRangeKernel(q, produce, 1, NULL, &global, NULL, 0, NULL, NULL));
  example_print_heap(platform, q, "after the producer program");
  CHECK(clEnqueueNDRangeKernel(q, consume, 1, NULL, &global, NULL, 0, NULL, NULL));
  example_print_heap(platform, q, "after the consumer program");
  CHECK(clEnqueueReadBuffer(q, errors, CL_TRUE, 0, sizeof(nerr), &nerr, 0, NULL, NULL));
  cl_ulong live = example_heap_info(platform, q, CL_DEVICE_HEAP_INFO_LIVE_ALLOCATIONS_EXT);
  printf("%d records produced by one program and consumed by another: %s\n", ITEMS,
         nerr || live ? "FAILED" : "all intact, heap empty");
  clReleaseMemObject(records);
  clReleaseMemObject(errors);
  clReleaseKernel(produce);
  clReleaseKernel(consume);
  clReleaseProgram(producer);
  clReleaseProgram(consumer);
  clReleaseCommandQueue(q);
  clReleaseContext(ctx);
  return nerr || live ? 1 : 0;
}
