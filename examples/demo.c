/*
 * demo.c — the README demo. On the first device that reports cl_ext_device_malloc (pocl with
 * the layer enabled), it:
 *   1. shows the extension in the device's extension list and sets the heap size through
 *      clSetDeviceHeapSizeEXT, found with clGetExtensionFunctionAddressForPlatform;
 *   2. runs build_lists (examples/kernels/lists.cl, built into the demo): every work-item mallocs
 *      a linked list of its own length;
 *   3. prints the heap statistics, runs consume_lists (a later launch walks, sums and frees
 *      every list), checks each sum and length on the host, and prints the statistics again.
 * It does this for the OpenCL C source itself (clCreateProgramWithSource: the layer compiles
 * it, malloc and free need no declaration), then offline forms of the same kernels: the module
 * as clang + llvm-spirv emit it (malloc/free as Import-linkage functions) and that module raised
 * to the SPV_EXT_device_malloc OpExtInst form. Exit status 0 only if every check passed.
 */
#include "example_util.h"
#include "lists_cl.h" /* generated: lists_cl[], the text of kernels/lists.cl */

#define ITEMS 4096
#define MAX_LEN 24

/* Runs the demo with the program made from `spv` (a SPIR-V file), or from the source if NULL. */
static int run(cl_platform_id platform, cl_device_id dev, const char *spv) {
  cl_int err;
  cl_context ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
  CHECK(err);
  cl_command_queue q = clCreateCommandQueueWithProperties(ctx, dev, NULL, &err);
  CHECK(err);
  cl_program prog = spv ? example_program(ctx, dev, spv)
                        : example_source_program(ctx, dev, lists_cl, sizeof(lists_cl), "lists.cl");
  cl_kernel build = clCreateKernel(prog, "build_lists", &err);
  CHECK(err);
  cl_kernel consume = clCreateKernel(prog, "consume_lists", &err);
  CHECK(err);
  cl_uint nargs = 0;
  CHECK(clGetKernelInfo(build, CL_KERNEL_NUM_ARGS, sizeof(nargs), &nargs, NULL));
  printf("%s: build_lists takes %u arguments (the heap argument is hidden)\n",
         spv ? spv : "kernels/lists.cl", nargs);

  cl_mem heads = clCreateBuffer(ctx, CL_MEM_READ_WRITE, ITEMS * sizeof(cl_ulong), NULL, &err);
  CHECK(err);
  cl_mem sums = clCreateBuffer(ctx, CL_MEM_READ_WRITE, ITEMS * sizeof(cl_ulong), NULL, &err);
  CHECK(err);
  cl_mem lengths = clCreateBuffer(ctx, CL_MEM_READ_WRITE, ITEMS * sizeof(cl_uint), NULL, &err);
  CHECK(err);
  cl_mem failed = clCreateBuffer(ctx, CL_MEM_READ_WRITE, sizeof(cl_uint), NULL, &err);
  CHECK(err);
  cl_uint zero = 0, max_len = MAX_LEN;
  CHECK(clEnqueueFillBuffer(q, failed, &zero, sizeof(zero), 0, sizeof(zero), 0, NULL, NULL));
  CHECK(clSetKernelArg(build, 0, sizeof(cl_mem), &heads));
  CHECK(clSetKernelArg(build, 1, sizeof(max_len), &max_len));
  CHECK(clSetKernelArg(build, 2, sizeof(cl_mem), &failed));
  CHECK(clSetKernelArg(consume, 0, sizeof(cl_mem), &heads));
  CHECK(clSetKernelArg(consume, 1, sizeof(cl_mem), &sums));
  CHECK(clSetKernelArg(consume, 2, sizeof(cl_mem), &lengths));

  example_print_heap(platform, q, "before");
  size_t global = ITEMS;
  CHECK(clEnqueueNDRangeKernel(q, build, 1, NULL, &global, NULL, 0, NULL, NULL));
  example_print_heap(platform, q, "after build_lists");
  CHECK(clEnqueueNDRangeKernel(q, consume, 1, NULL, &global, NULL, 0, NULL, NULL));
  example_print_heap(platform, q, "after consume_lists");

  cl_ulong *s = malloc(ITEMS * sizeof(*s));
  cl_uint *len = malloc(ITEMS * sizeof(*len)), nfailed = 0;
  CHECK(clEnqueueReadBuffer(q, sums, CL_TRUE, 0, ITEMS * sizeof(*s), s, 0, NULL, NULL));
  CHECK(clEnqueueReadBuffer(q, lengths, CL_TRUE, 0, ITEMS * sizeof(*len), len, 0, NULL, NULL));
  CHECK(clEnqueueReadBuffer(q, failed, CL_TRUE, 0, sizeof(nfailed), &nfailed, 0, NULL, NULL));
  int bad = 0;
  unsigned long long nodes = 0;
  for (cl_ulong i = 0; i < ITEMS; i++) {
    cl_ulong want_len = 1 + i % MAX_LEN, want_sum = want_len * i + want_len * (want_len - 1) / 2;
    nodes += len[i];
    if (nfailed == 0 && (len[i] != want_len || s[i] != want_sum)) {
      if (bad++ < 5)
        printf("  work-item %llu: length %u sum %llu, want %llu and %llu\n", (unsigned long long)i,
               len[i], (unsigned long long)s[i], (unsigned long long)want_len,
               (unsigned long long)want_sum);
    }
  }
  printf(
      "%d work-items built %llu list nodes with malloc, a later kernel summed and freed them: %s\n",
      ITEMS, nodes, bad || nfailed ? "MISMATCH" : "all sums and lengths verified");
  free(s);
  free(len);
  clReleaseMemObject(heads);
  clReleaseMemObject(sums);
  clReleaseMemObject(lengths);
  clReleaseMemObject(failed);
  clReleaseKernel(build);
  clReleaseKernel(consume);
  clReleaseProgram(prog);
  clReleaseCommandQueue(q);
  clReleaseContext(ctx);
  return bad || nfailed ? 1 : 0;
}

int main(int argc, char **argv) {
  const char *dir = argc > 1 ? argv[1] : CLDM_EXAMPLES_SPV_DIR;
  cl_platform_id platform;
  cl_device_id dev = example_device(&platform);
  char name[256] = "", ext[8192] = "";
  clGetDeviceInfo(dev, CL_DEVICE_NAME, sizeof(name) - 1, name, NULL);
  clGetDeviceInfo(dev, CL_DEVICE_EXTENSIONS, sizeof(ext) - 1, ext, NULL);
  printf("device: %s\n  reports %s: %s\n", name, CL_EXT_DEVICE_MALLOC_EXTENSION_NAME,
         strstr(ext, CL_EXT_DEVICE_MALLOC_EXTENSION_NAME) ? "yes" : "no");

  clSetDeviceHeapSizeEXT_fn set_heap_size =
      (clSetDeviceHeapSizeEXT_fn)clGetExtensionFunctionAddressForPlatform(platform,
                                                                          "clSetDeviceHeapSizeEXT");
  if (!set_heap_size) {
    fprintf(stderr, "clSetDeviceHeapSizeEXT not found\n");
    return 1;
  }
  CHECK(set_heap_size(dev, 16u << 20));
  size_t heap = 0;
  CHECK(clGetDeviceInfo(dev, CL_DEVICE_HEAP_SIZE_EXT, sizeof(heap), &heap, NULL));
  printf("  clSetDeviceHeapSizeEXT(16 MiB) -> CL_SUCCESS; CL_DEVICE_HEAP_SIZE_EXT = %zu bytes\n",
         heap);

  printf("\n== OpenCL C source (clCreateProgramWithSource)\n");
  int rc = run(platform, dev, NULL);
  const char *forms[] = {"lists.spv", "lists.extinst.spv"};
  for (int i = 0; i < 2; i++) {
    char path[4096];
    snprintf(path, sizeof(path), "%s/%s", dir, forms[i]);
    printf("\n== SPIR-V, %s form\n",
           i == 0 ? "Import-linkage (clang + llvm-spirv)" : "SPV_EXT_device_malloc OpExtInst");
    rc |= run(platform, dev, path);
  }
  printf("\n%s\n", rc ? "demo FAILED" : "demo passed");
  return rc;
}
