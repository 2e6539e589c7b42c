/*
 * dtest.h — helpers for the device allocator's end-to-end tests and benchmark: one pocl
 * device, a program built from a linked SPIR-V file (test kernels + allocator module), heaps
 * created and reset by writing cldm_heap_image_write's image, statistics read back.
 *
 * Every helper aborts the test (cmocka fail) or the program on an OpenCL error: these are
 * harness failures, not allocator results.
 */
#ifndef CLDM_DTEST_H
#define CLDM_DTEST_H

#include <CL/cl.h>
#include <stddef.h>
#include <stdint.h>

#include "cldm_device.h"

#define DT_NULL_OFF UINT64_MAX /* CLDM_NULL_OFF of the kernels: the allocation returned NULL */

typedef struct dt_env {
  cl_platform_id platform;
  cl_device_id device;
  cl_context ctx;
  cl_command_queue queue;
  cl_program program;
  cl_uint device_address_bits;
  char device_name[256];
} dt_env;

typedef struct dt_heap {
  cl_mem buf;
  uint64_t buffer_bytes;
  uint64_t usable_bytes;
} dt_heap;

/* Calls abort() with a message if err != CL_SUCCESS. */
void dt_check(cl_int err, const char *what);
#define DT_CHECK(call) dt_check((call), #call)

/* Opens the first device (cldm_cl_find_device) and builds `spv_path`, a module of
 * `module_bits` address bits. Returns 0, or the OpenCL error of clCreateProgramWithIL /
 * clBuildProgram (with the build log on stderr) so the caller can report a module the device
 * rejects; CL_INVALID_DEVICE without building if the device's address width differs (pocl
 * 6.0 crashes building such a module). */
cl_int dt_open(dt_env *env, const char *spv_path, unsigned module_bits);
void dt_close(dt_env *env);

/* Path of a file in $CLDM_TEST_DATA_DIR (static buffer). */
const char *dt_data_path(const char *file);

cl_kernel dt_kernel(dt_env *env, const char *name);

/* Heap of `requested` usable bytes, initialised. */
dt_heap dt_heap_create(dt_env *env, uint64_t requested);
void dt_heap_reset(dt_env *env, const dt_heap *heap);
void dt_heap_release(dt_heap *heap);
cldm_heap_stats dt_heap_stats(dt_env *env, const dt_heap *heap);
/* Offset of the first page from the heap base (read from the header). */
uint64_t dt_heap_pages_offset(dt_env *env, const dt_heap *heap);

cl_mem dt_buffer(dt_env *env, size_t bytes, const void *init);
void dt_read(dt_env *env, cl_mem buf, size_t bytes, void *dst);
void dt_write(dt_env *env, cl_mem buf, size_t bytes, const void *src);
uint32_t dt_read_u32(dt_env *env, cl_mem buf);

/* Sets kernel arguments from index 0: a list of (size, pointer) pairs ended by 0 (the last
 * argument, n, is set by dt_run). */
void dt_args(cl_kernel k, ...);
/* Runs k for n work-items: sets k's last argument (uint n), launches n rounded up to whole
 * work-groups of DT_LOCAL_SIZE (one work-group size: pocl compiles each kernel once) and
 * waits. Returns the wall time in seconds. */
#define DT_LOCAL_SIZE 64
double dt_run(dt_env *env, cl_kernel k, size_t n);

double dt_now(void);

#endif /* CLDM_DTEST_H */
