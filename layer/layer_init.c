/*
 * layer_init.c — the layer's exported entry points and its dispatch table.
 *
 * Exported (and nothing else, see layer.map): clGetLayerInfo, clInitLayer,
 * clInitLayerWithProperties, clDeinitLayer. ocl-icd 2.3.x calls only clInitLayer; the Khronos
 * loader >= 2026.05 requires clInitLayerWithProperties too. Loaders hand us the next
 * dispatch table with their own length (149 entries from ocl-icd 2.3.1 and Debian's headers,
 * 150 from newer Khronos headers): we remember the length and never read past it
 * (CLDM_NEXT_HAS). Our own table has NULL in every slot we do not intercept; both loaders
 * fill such slots from the next table, so unwrapped calls go straight down.
 *
 * The first initialisation says (CLDM_LOG=warn and above) which ICD loader made it: the shared
 * object the entry point returns to, so a user can check that the loader meant runs the
 * application, not another libOpenCL.so.1 found first (CUDA's ignores OPENCL_LAYERS, and then
 * nothing of the layer's is said at all).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <string.h>

#include <CL/cl_layer.h>

#include "cldm_layer.h"

/* Newer cl_layer.h has these; Debian 12's opencl-c-headers does not. */
#ifndef CL_LAYER_PROPERTIES_LIST_END
typedef intptr_t cl_layer_properties;
#define CL_LAYER_PROPERTIES_LIST_END ((cl_layer_properties)0)
#endif
#ifndef CL_LAYER_DEINITIALIZATION
#define CL_LAYER_DEINITIALIZATION 0x4242
#define CL_LAYER_DEINITIALIZATION_ATEXIT 0x4243
#define CL_LAYER_DEINITIALIZATION_FUNCTION 0x4244
#endif

const cl_icd_dispatch *cldm_next;
cl_uint cldm_next_entries;

static cl_icd_dispatch cldm_dispatch;
static const char cldm_layer_name[] = "cl_ext_device_malloc layer " CLDM_VERSION_STRING;

/* Every entry point the layer intercepts, by the file that defines its wrapper (cldm_layer.h
 * declares them in the same groups); every other slot stays NULL and falls through to the next
 * table. */
static void cldm_init_fill_dispatch(cl_icd_dispatch *d) {
  memset(d, 0, sizeof(*d));
  /* layer_query.c */
  d->clGetPlatformInfo = clGetPlatformInfo_wrap;
  d->clGetDeviceInfo = clGetDeviceInfo_wrap;
  /* layer_extfn.c */
  d->clGetExtensionFunctionAddress = clGetExtensionFunctionAddress_wrap;
  d->clGetExtensionFunctionAddressForPlatform = clGetExtensionFunctionAddressForPlatform_wrap;
  /* layer_program.c */
  d->clRetainProgram = clRetainProgram_wrap;
  d->clReleaseProgram = clReleaseProgram_wrap;
  /* layer_il.c */
  d->clCreateProgramWithIL = clCreateProgramWithIL_wrap;
  /* layer_binary.c */
  d->clCreateProgramWithBinary = clCreateProgramWithBinary_wrap;
  /* layer_source.c */
  d->clCreateProgramWithSource = clCreateProgramWithSource_wrap;
  d->clGetProgramInfo = clGetProgramInfo_wrap;
  /* layer_build.c */
  d->clBuildProgram = clBuildProgram_wrap;
  d->clCompileProgram = clCompileProgram_wrap;
  d->clGetProgramBuildInfo = clGetProgramBuildInfo_wrap;
  /* layer_link.c */
  d->clLinkProgram = clLinkProgram_wrap;
  /* layer_kernel.c */
  d->clCreateKernel = clCreateKernel_wrap;
  d->clCreateKernelsInProgram = clCreateKernelsInProgram_wrap;
  d->clCloneKernel = clCloneKernel_wrap;
  d->clRetainKernel = clRetainKernel_wrap;
  d->clReleaseKernel = clReleaseKernel_wrap;
  d->clGetKernelInfo = clGetKernelInfo_wrap;
  d->clGetKernelArgInfo = clGetKernelArgInfo_wrap;
  d->clSetKernelArg = clSetKernelArg_wrap;
  d->clSetKernelArgSVMPointer = clSetKernelArgSVMPointer_wrap;
  /* layer_enqueue.c */
  d->clEnqueueNDRangeKernel = clEnqueueNDRangeKernel_wrap;
  d->clEnqueueTask = clEnqueueTask_wrap;
  /* layer_new.c */
  d->clFinish = clFinish_wrap;
  d->clWaitForEvents = clWaitForEvents_wrap;
  /* layer_lifetime.c */
  d->clCreateContext = clCreateContext_wrap;
  d->clCreateContextFromType = clCreateContextFromType_wrap;
  d->clRetainContext = clRetainContext_wrap;
  d->clReleaseContext = clReleaseContext_wrap;
  d->clReleaseCommandQueue = clReleaseCommandQueue_wrap;
  d->clReleaseMemObject = clReleaseMemObject_wrap;
  d->clReleaseSampler = clReleaseSampler_wrap;
  d->clReleaseEvent = clReleaseEvent_wrap;
}

CLDM_EXPORT cl_int CL_API_CALL clGetLayerInfo(cl_layer_info param_name, size_t param_value_size,
                                              void *param_value, size_t *param_value_size_ret) {
  static const cl_layer_api_version version = CL_LAYER_API_VERSION_100;
  if (!param_value && !param_value_size_ret)
    return CL_INVALID_VALUE;
  switch (param_name) {
  case CL_LAYER_API_VERSION:
    return cldm_info_return(&version, sizeof(version), param_value_size, param_value,
                            param_value_size_ret);
  case CL_LAYER_NAME:
    return cldm_info_return(cldm_layer_name, sizeof(cldm_layer_name), param_value_size, param_value,
                            param_value_size_ret);
  default:
    return CL_INVALID_VALUE;
  }
}

/* The first call only: logs the file of the shared object that holds `caller` (the loader). */
static void cldm_init_announce(const void *caller) {
  static int said;
  if (__atomic_exchange_n(&said, 1, __ATOMIC_RELAXED))
    return;
  Dl_info info;
  const char *loader = caller && dladdr(caller, &info) && info.dli_fname && *info.dli_fname
                           ? info.dli_fname
                           : "(not known: dladdr names no file)";
  cldm_log(CLDM_LOG_WARN, "%s loaded by the ICD loader %s", cldm_layer_name, loader);
}

/* `caller`: the return address of the loader's call into the entry point. */
static cl_int cldm_init(cl_uint num_entries, const cl_icd_dispatch *target_dispatch,
                        cl_uint *num_entries_ret, const cl_icd_dispatch **layer_dispatch_ret,
                        const void *caller) {
  if (!target_dispatch || !num_entries_ret || !layer_dispatch_ret || num_entries == 0)
    return CL_INVALID_VALUE;
  cldm_init_announce(caller);
  cldm_next = target_dispatch;
  cldm_next_entries = num_entries;
  cldm_init_fill_dispatch(&cldm_dispatch);
  *layer_dispatch_ret = &cldm_dispatch;
  /* Our table is as long as our headers' struct; the loader takes min(ours, its own). */
  *num_entries_ret = (cl_uint)(sizeof(cldm_dispatch) / sizeof(void *));
  cldm_log(CLDM_LOG_INFO, "layer initialised (next dispatch table: %u entries)", num_entries);
  return CL_SUCCESS;
}

CLDM_EXPORT cl_int CL_API_CALL clInitLayer(cl_uint num_entries,
                                           const cl_icd_dispatch *target_dispatch,
                                           cl_uint *num_entries_ret,
                                           const cl_icd_dispatch **layer_dispatch_ret) {
  return cldm_init(num_entries, target_dispatch, num_entries_ret, layer_dispatch_ret,
                   __builtin_return_address(0));
}

CLDM_EXPORT cl_int CL_API_CALL clInitLayerWithProperties(cl_uint num_entries,
                                                         const cl_icd_dispatch *target_dispatch,
                                                         cl_uint *num_entries_ret,
                                                         const cl_icd_dispatch **layer_dispatch_ret,
                                                         const cl_layer_properties *properties) {
  /* The only property defined so far chooses how the loader de-initialises us; both ways
   * end in cldm_deinit, so we accept it and reject anything unknown. */
  for (const cl_layer_properties *p = properties; p && *p != CL_LAYER_PROPERTIES_LIST_END; p += 2) {
    if (p[0] != CL_LAYER_DEINITIALIZATION ||
        (p[1] != CL_LAYER_DEINITIALIZATION_ATEXIT && p[1] != CL_LAYER_DEINITIALIZATION_FUNCTION))
      return CL_INVALID_PROPERTY;
  }
  return cldm_init(num_entries, target_dispatch, num_entries_ret, layer_dispatch_ret,
                   __builtin_return_address(0));
}

CLDM_EXPORT cl_int CL_API_CALL clDeinitLayer(void) {
  cldm_log(CLDM_LOG_INFO, "layer de-initialised");
  cldm_next = NULL;
  cldm_next_entries = 0;
  return CL_SUCCESS;
}
