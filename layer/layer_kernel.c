/*
 * layer_kernel.c — kernels that take the hidden heap argument (spec 1.6).
 *
 * Kernels of lowered programs are looked up by name in the program's table when they are
 * created (clCreateKernel, clCreateKernelsInProgram, clCloneKernel); those that take the heap
 * get a record here. The hidden argument stays invisible: CL_KERNEL_NUM_ARGS excludes it and
 * clSetKernelArg / clSetKernelArgSVMPointer / clGetKernelArgInfo on its index (or beyond)
 * return CL_INVALID_ARG_INDEX. Each record has a mutex that layer_enqueue.c holds from binding
 * the heap to the enqueue, so concurrent enqueues of one kernel object stay consistent.
 */
#include <stdlib.h>
#include <string.h>

#include "cldm_layer.h"

static cldm_map cldm_kernels = CLDM_MAP_INIT;
static int cldm_kernels_count; /* records alive; read without the lock on the fast path */

static void cldm_kernel_add(cl_kernel kernel, uint32_t heap_arg_index, uint32_t num_user_args) {
  cldm_kernel *rec = calloc(1, sizeof(*rec));
  if (!rec) {
    cldm_log(CLDM_LOG_ERROR, "out of host memory tracking kernel %p", (void *)kernel);
    return;
  }
  rec->heap_arg_index = heap_arg_index;
  rec->num_user_args = num_user_args;
  pthread_mutex_init(&rec->lock, NULL);
  pthread_mutex_lock(&cldm_kernels.lock);
  cldm_kernel *old = cldm_map_remove(&cldm_kernels, kernel); /* a recycled handle */
  if (cldm_map_put(&cldm_kernels, kernel, rec) == 0)
    __atomic_add_fetch(&cldm_kernels_count, old ? 0 : 1, __ATOMIC_RELAXED);
  else {
    cldm_log(CLDM_LOG_ERROR, "out of host memory tracking kernel %p", (void *)kernel);
    free(rec);
  }
  pthread_mutex_unlock(&cldm_kernels.lock);
  if (old) {
    __atomic_sub_fetch(&cldm_kernels_count, 1, __ATOMIC_RELAXED);
    pthread_mutex_destroy(&old->lock);
    free(old);
  }
}

/* Records `kernel` if its program is lowered and the kernel takes the heap. */
static void cldm_kernel_track(cl_kernel kernel, cl_program program) {
  if (!kernel || !cldm_program_tracked(program))
    return;
  void *name = NULL;
  size_t size = 0;
  if (cldm_info_fetch(cldm_info_kernel_query, kernel, CL_KERNEL_FUNCTION_NAME, &name, &size) !=
      CL_SUCCESS)
    return;
  uint32_t heap_arg_index, num_user_args;
  if (cldm_program_kernel_heap(program, name, &heap_arg_index, &num_user_args))
    cldm_kernel_add(kernel, heap_arg_index, num_user_args);
  free(name);
}

cldm_kernel *cldm_kernel_find(cl_kernel kernel) {
  if (!__atomic_load_n(&cldm_kernels_count, __ATOMIC_RELAXED))
    return NULL;
  pthread_mutex_lock(&cldm_kernels.lock);
  cldm_kernel *rec = cldm_map_get(&cldm_kernels, kernel);
  pthread_mutex_unlock(&cldm_kernels.lock);
  return rec; /* lives until the kernel is released, which the caller's use precludes */
}

cl_kernel CL_API_CALL clCreateKernel_wrap(cl_program program, const char *name,
                                          cl_int *errcode_ret) {
  cl_kernel kernel = cldm_next->clCreateKernel(program, name, errcode_ret);
  cldm_kernel_track(kernel, program);
  return kernel;
}

cl_int CL_API_CALL clCreateKernelsInProgram_wrap(cl_program program, cl_uint num_kernels,
                                                 cl_kernel *kernels, cl_uint *num_ret) {
  cl_uint n = 0;
  cl_int err = cldm_next->clCreateKernelsInProgram(program, num_kernels, kernels, &n);
  if (err == CL_SUCCESS && kernels)
    for (cl_uint i = 0; i < n && i < num_kernels; i++)
      cldm_kernel_track(kernels[i], program);
  if (num_ret)
    *num_ret = n;
  return err;
}

cl_kernel CL_API_CALL clCloneKernel_wrap(cl_kernel source, cl_int *errcode_ret) {
  cl_kernel kernel = cldm_next->clCloneKernel(source, errcode_ret);
  cldm_kernel *src = kernel ? cldm_kernel_find(source) : NULL;
  if (src)
    cldm_kernel_add(kernel, src->heap_arg_index, src->num_user_args);
  return kernel;
}

cl_int CL_API_CALL clReleaseKernel_wrap(cl_kernel kernel) {
  int last = 0;
  cl_int err =
      cldm_lifetime_release(CLDM_OBJECT_KERNEL, kernel, cldm_kernel_find(kernel) ? &last : NULL);
  if (last) {
    pthread_mutex_lock(&cldm_kernels.lock);
    cldm_kernel *rec = cldm_map_remove(&cldm_kernels, kernel);
    pthread_mutex_unlock(&cldm_kernels.lock);
    if (rec) {
      __atomic_sub_fetch(&cldm_kernels_count, 1, __ATOMIC_RELAXED);
      pthread_mutex_destroy(&rec->lock);
      free(rec);
    }
  }
  return err;
}

cl_int CL_API_CALL clGetKernelInfo_wrap(cl_kernel kernel, cl_kernel_info name, size_t size,
                                        void *value, size_t *size_ret) {
  cldm_kernel *rec = name == CL_KERNEL_NUM_ARGS ? cldm_kernel_find(kernel) : NULL;
  if (rec) {
    cl_uint n = rec->num_user_args;
    return cldm_info_return(&n, sizeof(n), size, value, size_ret);
  }
  return cldm_next->clGetKernelInfo(kernel, name, size, value, size_ret);
}

/* CL_INVALID_ARG_INDEX for the hidden argument and beyond, else CL_SUCCESS. */
static cl_int cldm_kernel_check_index(cl_kernel kernel, cl_uint index) {
  cldm_kernel *rec = cldm_kernel_find(kernel);
  return rec && index >= rec->num_user_args ? CL_INVALID_ARG_INDEX : CL_SUCCESS;
}

cl_int CL_API_CALL clGetKernelArgInfo_wrap(cl_kernel kernel, cl_uint index, cl_kernel_arg_info name,
                                           size_t size, void *value, size_t *size_ret) {
  cl_int err = cldm_kernel_check_index(kernel, index);
  if (err != CL_SUCCESS)
    return err;
  return cldm_next->clGetKernelArgInfo(kernel, index, name, size, value, size_ret);
}

cl_int CL_API_CALL clSetKernelArg_wrap(cl_kernel kernel, cl_uint index, size_t size,
                                       const void *value) {
  cl_int err = cldm_kernel_check_index(kernel, index);
  if (err != CL_SUCCESS)
    return err;
  return cldm_next->clSetKernelArg(kernel, index, size, value);
}

cl_int CL_API_CALL clSetKernelArgSVMPointer_wrap(cl_kernel kernel, cl_uint index,
                                                 const void *value) {
  cl_int err = cldm_kernel_check_index(kernel, index);
  if (err != CL_SUCCESS)
    return err;
  return cldm_next->clSetKernelArgSVMPointer(kernel, index, value);
}
