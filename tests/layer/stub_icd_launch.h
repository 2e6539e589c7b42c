/*
 * stub_icd_launch.h — what stub_icd.c and stub_icd_launch.c (queues, SVM, events and launches
 * of the stub ICD) share.
 */
#ifndef CLDM_STUB_ICD_LAUNCH_H
#define CLDM_STUB_ICD_LAUNCH_H

#include <CL/cl.h>
#include <CL/cl_icd.h>

#define STUB_KERNEL_SVM_ARGS 16 /* SVM pointer arguments a kernel remembers */

/* ---- stub_icd.c ---------------------------------------------------------------------------- */

/* The driver's one lock (recursive): every entry point that touches reference counts, the
 * SVM list or pending launches holds it, as OpenCL requires of a driver (the layer frees heaps
 * from its own thread). */
void stub_lock(void);
void stub_unlock(void);
/* Adds `delta` to the references on c that CL_CONTEXT_REFERENCE_COUNT leaves out (as NVIDIA's
 * driver leaves out those of queues and memory); c is destroyed once both counts are 0. */
void stub_context_hold(cl_context c, int delta);
cl_device_id stub_context_device(cl_context c);
/* A clGet*Info answer: `size` bytes of src into value (value_size at least), the size into
 * *size_ret. */
cl_int stub_return(const void *src, size_t size, size_t value_size, void *value, size_t *size_ret);
/* The SVM pointers set as k's arguments (STUB_KERNEL_SVM_ARGS of them, NULL where none). */
void stub_kernel_svm_args(cl_kernel k, const void **svm);
cl_context stub_kernel_context(cl_kernel k);

/* ---- stub_icd_launch.c --------------------------------------------------------------------- */

void stub_launch_fill_dispatch(cl_icd_dispatch *d);
/* STUB_LAUNCH_STATS_FUNCTION (stub_icd.h). */
void stub_launch_stats(cl_uint stats[3]);

#endif
