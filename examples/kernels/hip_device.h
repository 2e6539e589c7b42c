/*
 * hip_device.h — what HIP kernels compiled for SPIR-V need from a HIP device library, as far
 * as this project's HIP kernels use it (examples/, tests/e2e/). They are compiled by clang with
 * no HIP headers or device libraries:
 *
 *   clang-15 -x hip -std=c++17 --offload=spirv64 -nogpulib -nogpuinc --cuda-device-only \
 *       -O1 -Xclang -disable-llvm-passes -Xclang -no-opaque-pointers -c -emit-llvm \
 *       -I examples/kernels -o k.bc k.hip
 *   llvm-spirv-15 --spirv-max-version=1.0 k.bc -o k.spv
 *
 * (not -O0, whose noinline on every function keeps the drivers from inlining the work-item
 * functions' callers into the kernel, as pocl must: cmake/CldmOpenCL.cmake)
 * and run through OpenCL: the module is given to clCreateProgramWithIL, a block is a
 * work-group. Provided here:
 *   - threadIdx, blockIdx, blockDim, gridDim (x, y, z) and __syncthreads(), from OpenCL's
 *     work-item functions and barrier, declared with C++ linkage so that clang mangles them as
 *     the OpenCL built-ins they are (_Z12get_local_idj, ...), which the driver defines;
 *   - malloc and free (extern "C") and the global operator new, new[], delete and delete[]:
 *     declared only, so that the module calls them with Import linkage and the
 *     cl_ext_device_malloc implementation serves them from its device heap (spec 2.2). A
 *     throwing new that finds no room stops its thread (spec 2.2) instead of returning NULL.
 */
#ifndef CLDM_HIP_DEVICE_H
#define CLDM_HIP_DEVICE_H

typedef __SIZE_TYPE__ size_t;

#define __device__ __attribute__((device))
#define __global__ __attribute__((global))

extern "C" __device__ void *malloc(size_t size);
extern "C" __device__ void free(void *ptr);

__device__ void *operator new(size_t size);
__device__ void *operator new[](size_t size);
__device__ void operator delete(void *ptr) noexcept;
__device__ void operator delete[](void *ptr) noexcept;
__device__ void operator delete(void *ptr, size_t size) noexcept;
__device__ void operator delete[](void *ptr, size_t size) noexcept;
__device__ inline void *operator new(size_t, void *place) noexcept { return place; }

/* OpenCL's work-item functions and barrier (CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE). */
__device__ size_t get_local_id(unsigned int dim);
__device__ size_t get_group_id(unsigned int dim);
__device__ size_t get_local_size(unsigned int dim);
__device__ size_t get_num_groups(unsigned int dim);
__device__ void barrier(unsigned int flags);

struct cldm_hip_dim3 {
  unsigned int x, y, z;
};

#define CLDM_HIP_DIM3(fn)                                                                          \
  (cldm_hip_dim3{(unsigned int)fn(0), (unsigned int)fn(1), (unsigned int)fn(2)})
#define threadIdx CLDM_HIP_DIM3(get_local_id)
#define blockIdx CLDM_HIP_DIM3(get_group_id)
#define blockDim CLDM_HIP_DIM3(get_local_size)
#define gridDim CLDM_HIP_DIM3(get_num_groups)
#define __syncthreads() barrier(3u)

#endif /* CLDM_HIP_DEVICE_H */
