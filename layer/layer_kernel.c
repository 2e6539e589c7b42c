/*
 * layer_kernel.c — kernels that take the hidden heap argument (spec 1.6).
 *
 * Kernels of lowered programs are looked up by name in the program's table when they are
 * created (clCreateKernel, clCreateKernelsInProgram, clCloneKernel); those that take the heap
 * get a record here. The hidden argument stays invisible: CL_KERNEL_NUM_ARGS excludes it and
 * clSetKernelArg / clSetKernelArgSVMPointer / clGetKernelArgInfo on its index (or beyond)
 * return CL_INVALID_ARG_INDEX. Each record has a mutex that layer_enqueue.c holds from binding
 * the heap to the enqueue, so concurrent enqueues of one kernel object stay consistent.
 *
 * Kernels of a source program with a target (layer_source.c) are made from the target; the
 * layer remembers the application's program for them, answers it as CL_KERNEL_PROGRAM and
 * holds a reference on it while the kernel lives (as a driver's kernel holds its program).
 * clGetKernelArgInfo answers from the program's argument table where it has one (programs
 * built from source with -cl-kernel-arg-info, and their binaries).
 *
 * Both go at the application's last release of the kernel, counted here (created, retained,
 * released through the layer), not read from the driver: a driver holds a kernel of its own
 * while a launch of it runs (pocl retains it in the command), so a last release made during a
 * launch sees a count of 2, and the records would outlive the kernel until a new kernel
 * reused its handle. A kernel of a program with a record holds that record
 * (cldm_program_hold) until then, as the driver's kernel holds its program.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cldm_layer.h"

static cldm_map cldm_kernels = CLDM_MAP_INIT;
static int cldm_kernels_count; /* records alive; read without the lock on the fast path */
/* kernel -> its handles, for kernels of a program with a record or made from a target (the
 * counts of the application's handles, and what the kernel holds until the last of them) */
typedef struct cldm_kernel_handles {
  unsigned long count; /* handles the application holds */
  cl_program held;     /* the program whose record the kernel holds (cldm_program_hold), or NULL */
  cl_program app;      /* made from a target: the application's program, a reference held */
} cldm_kernel_handles;
static cldm_map cldm_kernel_handles_map = CLDM_MAP_INIT;
static int cldm_kernel_apps; /* entries with `app`; read without the lock on the fast path */

/* Gives back what a kernel's entry held (after the entry went). */
static void cldm_kernel_let_go(cl_program held, cl_program app) {
  if (app) {
    cldm_program_kernel_attached(app, -1);
    clReleaseProgram_wrap(app);
  }
  if (held)
    cldm_program_hold(held, -1);
}

/* A new kernel made from `from` (a hold on its record taken if it has one) and, for a kernel
 * made from a target, the application's program `app` (a reference taken): counted if either,
 * with one handle, the application's. */
static void cldm_kernel_watch(cl_kernel kernel, cl_program from, cl_program app) {
  if (!kernel)
    return;
  cl_program held = from && cldm_program_hold(from, 1) >= 0 ? from : NULL;
  if (!held && !app)
    return;
  if (app) {
    clRetainProgram_wrap(app);
    cldm_program_kernel_attached(app, 1);
  }
  cldm_kernel_handles *e = malloc(sizeof(*e));
  pthread_mutex_lock(&cldm_kernel_handles_map.lock);
  /* a recycled handle of a kernel the application never released */
  cldm_kernel_handles *old = cldm_map_remove(&cldm_kernel_handles_map, kernel);
  if (e) {
    *e = (cldm_kernel_handles){1ul, held, app};
    if (cldm_map_put(&cldm_kernel_handles_map, kernel, e) != 0) {
      free(e);
      e = NULL;
    }
  }
  int apps = (e && app ? 1 : 0) - (old && old->app ? 1 : 0);
  __atomic_add_fetch(&cldm_kernel_apps, apps, __ATOMIC_RELAXED);
  pthread_mutex_unlock(&cldm_kernel_handles_map.lock);
  if (!e) {
    cldm_log(CLDM_LOG_ERROR, "out of host memory tracking kernel %p", (void *)kernel);
    cldm_kernel_let_go(held, app);
  }
  if (old)
    cldm_kernel_let_go(old->held, old->app);
  free(old);
}

/* Adds `delta` to the handles the application holds to `kernel`. Returns the new count, or -1
 * for a kernel not counted; at 0 the entry goes and *gone gets what it held (for
 * cldm_kernel_let_go). */
static long cldm_kernel_handles_add(cl_kernel kernel, int delta, cldm_kernel_handles *gone) {
  pthread_mutex_lock(&cldm_kernel_handles_map.lock);
  cldm_kernel_handles *e = cldm_map_get(&cldm_kernel_handles_map, kernel);
  long now = e ? (long)e->count + delta : -1;
  if (e && now > 0)
    e->count = (unsigned long)now;
  else if (e) {
    cldm_map_remove(&cldm_kernel_handles_map, kernel);
    if (e->app)
      __atomic_sub_fetch(&cldm_kernel_apps, 1, __ATOMIC_RELAXED);
    *gone = *e;
    free(e);
    now = 0;
  }
  pthread_mutex_unlock(&cldm_kernel_handles_map.lock);
  return now;
}

/* The entry of `kernel` (zeroed if it has none). */
static cldm_kernel_handles cldm_kernel_entry(cl_kernel kernel) {
  cldm_kernel_handles copy = {0ul, NULL, NULL};
  pthread_mutex_lock(&cldm_kernel_handles_map.lock);
  cldm_kernel_handles *e = cldm_map_get(&cldm_kernel_handles_map, kernel);
  if (e)
    copy = *e;
  pthread_mutex_unlock(&cldm_kernel_handles_map.lock);
  return copy;
}

/* The application's program of a kernel made from a target, or NULL. */
static cl_program cldm_kernel_app_program(cl_kernel kernel) {
  if (!__atomic_load_n(&cldm_kernel_apps, __ATOMIC_RELAXED))
    return NULL;
  return cldm_kernel_entry(kernel).app;
}

static void cldm_kernel_record_free(cldm_kernel *rec) {
  pthread_mutex_destroy(&rec->lock);
  free(rec->throwing_new);
  free(rec);
}

/* throwing_new: the kernel's name if it may stop at a throwing operator new, else NULL. */
static void cldm_kernel_add(cl_kernel kernel, uint32_t heap_arg_index, uint32_t num_user_args,
                            const char *throwing_new) {
  cldm_kernel *rec = calloc(1, sizeof(*rec));
  if (!rec || (throwing_new && !(rec->throwing_new = strdup(throwing_new)))) {
    free(rec);
    cldm_log(CLDM_LOG_ERROR, "out of host memory tracking kernel %p", (void *)kernel);
    return;
  }
  rec->heap_arg_index = heap_arg_index;
  rec->num_user_args = num_user_args;
  pthread_mutex_init(&rec->lock, NULL);
  pthread_mutex_lock(&cldm_kernels.lock);
  /* a recycled handle whose kernel the application never released: its record is replaced,
   * and the count of records stays (it went down once for the old one before, which kept the
   * new kernel's record out of sight of cldm_kernel_find's fast path) */
  cldm_kernel *old = cldm_map_remove(&cldm_kernels, kernel);
  if (cldm_map_put(&cldm_kernels, kernel, rec) == 0) {
    if (!old)
      __atomic_add_fetch(&cldm_kernels_count, 1, __ATOMIC_RELAXED);
  } else {
    cldm_log(CLDM_LOG_ERROR, "out of host memory tracking kernel %p", (void *)kernel);
    if (old)
      __atomic_sub_fetch(&cldm_kernels_count, 1, __ATOMIC_RELAXED);
    cldm_kernel_record_free(rec);
    rec = NULL;
  }
  pthread_mutex_unlock(&cldm_kernels.lock);
  if (old)
    cldm_kernel_record_free(old);
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
  int throwing_new = 0;
  if (cldm_program_kernel_heap(program, name, &heap_arg_index, &num_user_args, &throwing_new))
    cldm_kernel_add(kernel, heap_arg_index, num_user_args, throwing_new ? name : NULL);
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
  cl_program target = cldm_program_target(program);
  cl_kernel kernel = cldm_next->clCreateKernel(target ? target : program, name, errcode_ret);
  cldm_kernel_track(kernel, target ? target : program);
  cldm_kernel_watch(kernel, target ? target : program, target ? program : NULL);
  if (target)
    cldm_next->clReleaseProgram(target);
  return kernel;
}

cl_int CL_API_CALL clCreateKernelsInProgram_wrap(cl_program program, cl_uint num_kernels,
                                                 cl_kernel *kernels, cl_uint *num_ret) {
  cl_uint n = 0;
  cl_program target = cldm_program_target(program);
  cl_program from = target ? target : program;
  cl_int err = cldm_next->clCreateKernelsInProgram(from, num_kernels, kernels, &n);
  if (err == CL_SUCCESS && kernels)
    for (cl_uint i = 0; i < n && i < num_kernels; i++) {
      cldm_kernel_track(kernels[i], from);
      cldm_kernel_watch(kernels[i], from, target ? program : NULL);
    }
  if (target)
    cldm_next->clReleaseProgram(target);
  if (num_ret)
    *num_ret = n;
  return err;
}

cl_kernel CL_API_CALL clCloneKernel_wrap(cl_kernel source, cl_int *errcode_ret) {
  cl_kernel kernel = cldm_next->clCloneKernel(source, errcode_ret);
  cldm_kernel *src = kernel ? cldm_kernel_find(source) : NULL;
  if (src)
    cldm_kernel_add(kernel, src->heap_arg_index, src->num_user_args, src->throwing_new);
  cldm_kernel_handles of = cldm_kernel_entry(kernel ? source : NULL);
  cldm_kernel_watch(kernel, of.held, of.app);
  return kernel;
}

cl_int CL_API_CALL clRetainKernel_wrap(cl_kernel kernel) {
  cl_int err = cldm_next->clRetainKernel(kernel);
  cldm_kernel_handles gone; /* (a count of at least 2 now: nothing goes) */
  if (err == CL_SUCCESS)
    cldm_kernel_handles_add(kernel, 1, &gone);
  return err;
}

cl_int CL_API_CALL clReleaseKernel_wrap(cl_kernel kernel) {
  /* The records go before the driver's release: until it, no new kernel can have this
   * handle. */
  cldm_kernel_handles gone;
  if (cldm_kernel_handles_add(kernel, -1, &gone) == 0) {
    pthread_mutex_lock(&cldm_kernels.lock);
    cldm_kernel *rec = cldm_map_remove(&cldm_kernels, kernel);
    pthread_mutex_unlock(&cldm_kernels.lock);
    if (rec) {
      __atomic_sub_fetch(&cldm_kernels_count, 1, __ATOMIC_RELAXED);
      cldm_kernel_record_free(rec);
    }
    cldm_kernel_let_go(gone.held, gone.app);
  }
  return cldm_lifetime_release(CLDM_OBJECT_KERNEL, kernel);
}

cl_int CL_API_CALL clGetKernelInfo_wrap(cl_kernel kernel, cl_kernel_info name, size_t size,
                                        void *value, size_t *size_ret) {
  cl_program app = name == CL_KERNEL_PROGRAM ? cldm_kernel_app_program(kernel) : NULL;
  if (app)
    return cldm_info_return(&app, sizeof(app), size, value, size_ret);
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

/* Answers clGetKernelArgInfo from the argument table of the kernel's (driver) program:
 * 1 (with *err) if it has one for this kernel, else 0. */
static int cldm_kernel_arg_info(cl_kernel kernel, cl_uint index, cl_kernel_arg_info name,
                                size_t size, void *value, size_t *size_ret, cl_int *err) {
  cl_program program = NULL;
  void *fname = NULL;
  size_t fsize = 0;
  if (cldm_next->clGetKernelInfo(kernel, CL_KERNEL_PROGRAM, sizeof(program), &program, NULL) !=
          CL_SUCCESS ||
      !cldm_program_tracked(program) ||
      cldm_info_fetch(cldm_info_kernel_query, kernel, CL_KERNEL_FUNCTION_NAME, &fname, &fsize) !=
          CL_SUCCESS)
    return 0;
  int answered = 0;
  cldm_program_lock();
  const cldm_program *p = cldm_program_find(program);
  const cldm_kernel_args *ka = p ? cldm_arg_table_find(&p->args, fname) : NULL;
  if (ka) {
    answered = 1;
    const cldm_arg_info *a = index < ka->num_args ? &ka->args[index] : NULL;
    if (!a)
      *err = CL_INVALID_ARG_INDEX;
    else if (name == CL_KERNEL_ARG_ADDRESS_QUALIFIER)
      *err = cldm_info_return(&a->address, sizeof(a->address), size, value, size_ret);
    else if (name == CL_KERNEL_ARG_ACCESS_QUALIFIER)
      *err = cldm_info_return(&a->access, sizeof(a->access), size, value, size_ret);
    else if (name == CL_KERNEL_ARG_TYPE_QUALIFIER)
      *err = cldm_info_return(&a->type_qual, sizeof(a->type_qual), size, value, size_ret);
    else if (name == CL_KERNEL_ARG_TYPE_NAME)
      *err = cldm_info_return(a->type_name, strlen(a->type_name) + 1, size, value, size_ret);
    else if (name == CL_KERNEL_ARG_NAME)
      *err = cldm_info_return(a->name, strlen(a->name) + 1, size, value, size_ret);
    else
      *err = CL_INVALID_VALUE;
  }
  cldm_program_unlock();
  free(fname);
  return answered;
}

cl_int CL_API_CALL clGetKernelArgInfo_wrap(cl_kernel kernel, cl_uint index, cl_kernel_arg_info name,
                                           size_t size, void *value, size_t *size_ret) {
  cl_int err = cldm_kernel_check_index(kernel, index);
  if (err != CL_SUCCESS)
    return err;
  if (cldm_kernel_arg_info(kernel, index, name, size, value, size_ret, &err))
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
