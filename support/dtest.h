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

/* CLDM_NULL_OFF of the kernels: the allocation returned NULL */
#define CLDM_DTEST_NULL_OFF UINT64_MAX

typedef struct cldm_dtest_env {
  cl_platform_id platform;
  cl_device_id device;
  cl_context ctx;
  cl_command_queue queue;
  cl_program program;
  cl_uint device_address_bits;
  char device_name[256];
} cldm_dtest_env;

typedef struct cldm_dtest_heap {
  cl_mem buf;
  uint64_t buffer_bytes;
  uint64_t usable_bytes;
} cldm_dtest_heap;

/* Calls abort() with a message if err != CL_SUCCESS. */
void cldm_dtest_check(cl_int err, const char *what);
#define DT_CHECK(call) cldm_dtest_check((call), #call)

/* Opens the first device (cldm_cl_find_device) and builds `spv_path`, a module of
 * `module_bits` address bits. Returns 0, or the OpenCL error of clCreateProgramWithIL /
 * clBuildProgram (with the build log on stderr) so the caller can report a module the device
 * rejects; CL_INVALID_DEVICE without building if the device's address width differs (pocl
 * 6.0 crashes building such a module). */
cl_int cldm_dtest_open(cldm_dtest_env *env, const char *spv_path, unsigned module_bits);
void cldm_dtest_close(cldm_dtest_env *env);

/* Path of a file in $CLDM_TEST_DATA_DIR (static buffer). */
const char *cldm_dtest_data_path(const char *file);

cl_kernel cldm_dtest_kernel(cldm_dtest_env *env, const char *name);

/* Heap of `requested` usable bytes, initialised. */
cldm_dtest_heap cldm_dtest_heap_create(cldm_dtest_env *env, uint64_t requested);
void cldm_dtest_heap_reset(cldm_dtest_env *env, const cldm_dtest_heap *heap);
void cldm_dtest_heap_release(cldm_dtest_heap *heap);
cldm_heap_stats cldm_dtest_heap_stats(cldm_dtest_env *env, const cldm_dtest_heap *heap);
/* Offset of the page area from the heap base (read from the header): the metadata ends before
 * it; page 0 lies up to CLDM_PAGES_SLACK_BYTES further (cldm_heap_first_page). */
uint64_t cldm_dtest_heap_pages_offset(cldm_dtest_env *env, const cldm_dtest_heap *heap);

cl_mem cldm_dtest_buffer(cldm_dtest_env *env, size_t bytes, const void *init);
void cldm_dtest_read(cldm_dtest_env *env, cl_mem buf, size_t bytes, void *dst);
void cldm_dtest_write(cldm_dtest_env *env, cl_mem buf, size_t bytes, const void *src);
uint32_t cldm_dtest_read_u32(cldm_dtest_env *env, cl_mem buf);

/* Sets kernel arguments from index 0: a list of (size, pointer) pairs ended by 0 (the last
 * argument, n, is set by cldm_dtest_run). */
void cldm_dtest_args(cl_kernel k, ...);
/* Runs k for n work-items: sets k's last argument (uint n), launches n rounded up to whole
 * work-groups of DT_LOCAL_SIZE (one work-group size: pocl compiles each kernel once) and
 * waits. Returns the wall time in seconds. */
#define DT_LOCAL_SIZE 64
double cldm_dtest_run(cldm_dtest_env *env, cl_kernel k, size_t n);

double cldm_dtest_now(void);

#endif /* CLDM_DTEST_H */
