/* new_hip.hip — HIP device code that allocates with new and new[] and frees with delete and
 * delete[] (spec 2.2), run through OpenCL by test_e2e_hip.c: the scenarios of hip-tests'
 * device allocation tests with new/delete (catch/unit/deviceLib/deviceAllocation.cc), written
 * for this project:
 *   per_thread_*     every thread new[]s its own array, fills it, copies it out, delete[]s it
 *                    (char, short, int, float, double, a struct)
 *   block_*          thread 0 of a block new[]s an array for the block, every thread writes its
 *                    element after a barrier, the last thread copies it out and delete[]s it
 *   across_*         one kernel new[]s an array for the grid, a second writes it, a third copies
 *                    it out and delete[]s it: the allocation lives across launches (and, in the
 *                    test, across programs and host threads)
 *   complex_struct   thread 0 news a structure whose member array it new[]s, the block fills
 *                    it, the last thread checks it and deletes both
 *   union_block      an array of unions per block, each thread writing another member
 *   device_func      allocation, use and delete[] in __device__ functions the kernel calls
 * Where the originals test a NULL result, throwing new never gives one here: a thread whose new
 * finds no room stops (spec 2.2).
 * Kernels have C linkage so that the host finds them by these names. */
#include "hip_device.h"

#define DEVICE_FUNC_WORDS 8

struct simple_struct {
  int i;
  double d;
  float f;
  short s;
  signed char c;
  char bytes[8];
};

union test_union {
  int i;
  double d;
  float f;
  short s;
  signed char c;
};

struct thread_info {
  int thread_id, block_id, ival;
  double dval;
  float fval;
  short sval;
  signed char cval;
};

struct complex_structure {
  thread_info *info;
  __device__ void alloc_members(unsigned int n) { info = new thread_info[n]; }
  __device__ void free_members() { delete[] info; }
};

__device__ static simple_struct sample_struct() {
  simple_struct v = {__INT_MAX__, __DBL_MAX__, __FLT_MAX__, __SHRT_MAX__, __SCHAR_MAX__,
                     {1, 2, 3, 4, 5, 6, 7, 8}};
  return v;
}

template <class T> __device__ void per_thread(T *out, T value, unsigned int count) {
  unsigned int id = threadIdx.x + blockDim.x * blockIdx.x;
  T *p = new T[count];
  for (unsigned int k = 0; k < count; k++)
    p[k] = value;
  for (unsigned int k = 0; k < count; k++)
    out[id * count + k] = p[k];
  delete[] p;
}

template <class T> __device__ void block(T *out, T value, void **slots) {
  unsigned int t = threadIdx.x, last = blockDim.x - 1, b = blockIdx.x;
  if (t == 0)
    slots[b] = new T[blockDim.x];
  __syncthreads();
  T *p = static_cast<T *>(slots[b]);
  p[t] = value;
  __syncthreads();
  if (t == last) {
    for (unsigned int k = 0; k < blockDim.x; k++)
      out[k + blockDim.x * b] = p[k];
    delete[] p;
  }
}

template <class T> __device__ void across_alloc(void **slot) {
  if (threadIdx.x + blockDim.x * blockIdx.x == 0)
    *slot = new T[blockDim.x * gridDim.x];
}

template <class T> __device__ void across_write(void **slot, T value) {
  static_cast<T *>(*slot)[threadIdx.x + blockDim.x * blockIdx.x] = value;
}

template <class T> __device__ void across_free(T *out, void **slot) {
  if (threadIdx.x + blockDim.x * blockIdx.x != 0)
    return;
  T *p = static_cast<T *>(*slot);
  for (unsigned int k = 0; k < blockDim.x * gridDim.x; k++)
    out[k] = p[k];
  delete[] p;
  *slot = nullptr;
}

#define KERNELS(suffix, T, VALUE)                                                                  \
  extern "C" __global__ void per_thread_##suffix(T *out, unsigned int count) {                    \
    per_thread<T>(out, VALUE, count);                                                              \
  }                                                                                                \
  extern "C" __global__ void block_##suffix(T *out, void **slots) { block<T>(out, VALUE, slots); } \
  extern "C" __global__ void across_alloc_##suffix(void **slot) { across_alloc<T>(slot); }         \
  extern "C" __global__ void across_write_##suffix(void **slot) { across_write<T>(slot, VALUE); }  \
  extern "C" __global__ void across_free_##suffix(T *out, void **slot) { across_free<T>(out, slot); }

KERNELS(char, signed char, __SCHAR_MAX__)
KERNELS(short, short, __SHRT_MAX__)
KERNELS(int, int, __INT_MAX__)
KERNELS(float, float, __FLT_MAX__)
KERNELS(double, double, __DBL_MAX__)

extern "C" __global__ void per_thread_struct(simple_struct *out, unsigned int count) {
  per_thread<simple_struct>(out, sample_struct(), count);
}

/* result[b] = 1 if the block's structure held what its threads wrote */
extern "C" __global__ void complex_struct(int *result, void **slots) {
  unsigned int t = threadIdx.x, last = blockDim.x - 1, b = blockIdx.x;
  if (t == 0) {
    complex_structure *s = new complex_structure;
    s->alloc_members(blockDim.x);
    slots[b] = s;
  }
  __syncthreads();
  complex_structure *s = static_cast<complex_structure *>(slots[b]);
  thread_info *info = &s->info[t];
  info->thread_id = (int)t;
  info->block_id = (int)b;
  info->ival = __INT_MAX__;
  info->dval = __DBL_MAX__;
  info->fval = __FLT_MAX__;
  info->sval = __SHRT_MAX__;
  info->cval = __SCHAR_MAX__;
  __syncthreads();
  if (t == last) {
    int match = 1;
    for (unsigned int k = 0; k < blockDim.x; k++) {
      const thread_info *e = &s->info[k];
      if (e->thread_id != (int)k || e->block_id != (int)b || e->ival != __INT_MAX__ ||
          e->dval != __DBL_MAX__ || e->fval != __FLT_MAX__ || e->sval != __SHRT_MAX__ ||
          e->cval != __SCHAR_MAX__)
        match = 0;
    }
    result[b] = match;
    s->free_members();
    delete s;
  }
}

extern "C" __global__ void union_block(test_union *out, void **slots) {
  unsigned int t = threadIdx.x, last = blockDim.x - 1, b = blockIdx.x;
  unsigned int id = t + blockDim.x * b;
  if (t == 0)
    slots[b] = new test_union[blockDim.x];
  __syncthreads();
  test_union *p = static_cast<test_union *>(slots[b]);
  switch (id % 5) {
  case 0:
    p[t].i = __INT_MAX__;
    break;
  case 1:
    p[t].d = __DBL_MAX__;
    break;
  case 2:
    p[t].f = __FLT_MAX__;
    break;
  case 3:
    p[t].s = __SHRT_MAX__;
    break;
  default:
    p[t].c = __SCHAR_MAX__;
    break;
  }
  __syncthreads();
  if (t == last) {
    for (unsigned int k = 0; k < blockDim.x; k++)
      out[k + blockDim.x * b] = p[k];
    delete[] p;
  }
}

__device__ static int *device_alloc() { return new int[DEVICE_FUNC_WORDS]; }

__device__ static void device_write(int id, int *mem) {
  for (int k = 0; k < DEVICE_FUNC_WORDS; k++)
    mem[k] = id;
}

__device__ static void device_free(int *out, int *mem, int id) {
  for (int k = 0; k < DEVICE_FUNC_WORDS; k++)
    out[id * DEVICE_FUNC_WORDS + k] = mem[k];
  delete[] mem;
}

extern "C" __global__ void device_func(int *out) {
  int id = (int)(threadIdx.x + blockDim.x * blockIdx.x);
  int *mem = device_alloc();
  device_write(id, mem);
  device_free(out, mem, id);
}

__device__ static int *device_alloc_sized(unsigned long long n) { return new int[n]; }

/* A thread whose new[] finds no room stops, in the __device__ function: threads with
 * id % 4 == 1 ask for `big` ints; out[id] = id + 1 for the others, 0 for them. */
extern "C" __global__ void stop_on_full(int *out, unsigned long long big) {
  unsigned int id = threadIdx.x + blockDim.x * blockIdx.x;
  int *p = device_alloc_sized(id % 4 == 1 ? big : 4);
  p[0] = (int)id;
  out[id] = p[0] + 1;
  delete[] p;
}
