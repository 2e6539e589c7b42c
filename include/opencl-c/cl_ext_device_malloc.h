/*
 * cl_ext_device_malloc.h — OpenCL C interface of the cl_ext_device_malloc extension (spec 2.3):
 * the feature macro and the declarations of malloc, free, calloc, realloc and aligned_alloc.
 *
 * Programs the implementation builds from source see this header implicitly (the layer passes
 * it as an included header, and defines cl_ext_device_malloc for devices that report the
 * extension): kernels call malloc without declaring it. For offline compilation to SPIR-V,
 * include it and compile as usual, e.g.
 *
 *   clang-15 -target spir64 -x cl -cl-std=CL1.2 -c -emit-llvm -fno-builtin \
 *       -Xclang -no-opaque-pointers -I include/opencl-c -o k.bc k.cl
 *   llvm-spirv-15 --spirv-max-version=1.0 k.bc -o k.spv
 *
 * OpenCL C 1.x (and 3.0 without __opencl_c_generic_address_space) gets the global forms
 * (`global void *malloc(size_t)`); OpenCL C 2.0 (and 3.0 with generic pointers) the generic
 * forms (`void *malloc(size_t)`), which also take and return pointers to global memory.
 * A program may declare these functions itself only with the same types; defining
 * CL_EXT_DEVICE_MALLOC_NO_DECLARATIONS (e.g. -D CL_EXT_DEVICE_MALLOC_NO_DECLARATIONS) before
 * the header leaves them to the program.
 */
#ifndef CL_EXT_DEVICE_MALLOC_OPENCL_C_H
#define CL_EXT_DEVICE_MALLOC_OPENCL_C_H

#ifndef cl_ext_device_malloc
#define cl_ext_device_malloc 1
#endif

#if defined(__opencl_c_generic_address_space) ||                                                   \
    (defined(__OPENCL_C_VERSION__) && __OPENCL_C_VERSION__ == 200)
#define CL_EXT_DEVICE_MALLOC_GENERIC_FORMS 1
#endif

#ifndef CL_EXT_DEVICE_MALLOC_NO_DECLARATIONS
#ifdef CL_EXT_DEVICE_MALLOC_GENERIC_FORMS
void *malloc(size_t size);
void *calloc(size_t count, size_t size);
void *realloc(void *ptr, size_t size);
void *aligned_alloc(size_t alignment, size_t size);
void free(void *ptr);
#else
__global void *malloc(size_t size);
__global void *calloc(size_t count, size_t size);
__global void *realloc(__global void *ptr, size_t size);
__global void *aligned_alloc(size_t alignment, size_t size);
void free(__global void *ptr);
#endif
#endif

#endif /* CL_EXT_DEVICE_MALLOC_OPENCL_C_H */
