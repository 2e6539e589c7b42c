/* header_offline.cl — compiled offline (clang-15 + llvm-spirv-15) against the shipped OpenCL C
 * header include/opencl-c/cl_ext_device_malloc.h instead of declarations of its own: the
 * global forms for OpenCL C 1.2, the generic forms for 2.0. out[i] = i + 1. */
#include <cl_ext_device_malloc.h>

kernel void offline(global ulong *out) {
  size_t i = get_global_id(0);
#ifdef CL_EXT_DEVICE_MALLOC_GENERIC_FORMS
  uint *p = malloc(2 * sizeof(uint));
#else
  global uint *p = malloc(2 * sizeof(uint));
#endif
  if (p)
    p[1] = (uint)i;
  out[i] = p ? p[1] + cl_ext_device_malloc : 0;
  free(p);
}
