/*
 * cl_ext_device_malloc.h — host API of the cl_ext_device_malloc extension
 * (spec/cl_ext_device_malloc.asciidoc). Shaped like the Khronos generated extension
 * headers (cl_ext.h): name/version macros, tokens, clXxxEXT_t / clXxxEXT_fn typedefs and,
 * unless CL_NO_EXTENSION_PROTOTYPES is defined, prototypes.
 *
 * STATUS: proposed, prototype. Every enum value below comes from the experimental range
 * 0x10000-0x10FFF reserved for unregistered prototypes and is PROVISIONAL: it will change
 * when the extension is registered. Applications should obtain the entry points through
 * clGetExtensionFunctionAddressForPlatform; the implementation is an ICD layer, so there is
 * no library to link the prototypes against.
 */
#ifndef OPENCL_CL_EXT_DEVICE_MALLOC_H_
#define OPENCL_CL_EXT_DEVICE_MALLOC_H_

#include <CL/cl.h>

#ifdef __cplusplus
extern "C" {
#endif

/***************************************************************
 * cl_ext_device_malloc
 ***************************************************************/
#define cl_ext_device_malloc 1
#define CL_EXT_DEVICE_MALLOC_EXTENSION_NAME "cl_ext_device_malloc"
#define CL_EXT_DEVICE_MALLOC_EXTENSION_VERSION CL_MAKE_VERSION(0, 1, 0)

/* Name of the SPIR-V extended instruction set (and SPIR-V extension) kernels use. */
#define CL_EXT_DEVICE_MALLOC_SPIRV_EXT_INST_SET "SPV_EXT_device_malloc"

typedef cl_uint cl_device_heap_info_ext;

/* cl_device_info (provisional) */
#define CL_DEVICE_HEAP_SIZE_EXT 0x10DA0

/* cl_device_heap_info_ext (provisional); every value is returned as a cl_ulong */
#define CL_DEVICE_HEAP_INFO_SIZE_EXT 0x10DA1
#define CL_DEVICE_HEAP_INFO_BYTES_IN_USE_EXT 0x10DA2
#define CL_DEVICE_HEAP_INFO_PEAK_BYTES_HELD_EXT 0x10DA3 /* maximum of BYTES_HELD */
#define CL_DEVICE_HEAP_INFO_LIVE_ALLOCATIONS_EXT 0x10DA4
#define CL_DEVICE_HEAP_INFO_FAILED_ALLOCATIONS_EXT 0x10DA5
#define CL_DEVICE_HEAP_INFO_INVALID_FREES_EXT 0x10DA6
/* checked mode (section "Checked mode"); 0 for heaps that are not checked */
#define CL_DEVICE_HEAP_INFO_CHECKED_EXT 0x10DA7 /* 1 if the heap is checked */
#define CL_DEVICE_HEAP_INFO_DOUBLE_FREES_EXT 0x10DA8
#define CL_DEVICE_HEAP_INFO_INTERIOR_FREES_EXT 0x10DA9
#define CL_DEVICE_HEAP_INFO_OUTSIDE_FREES_EXT 0x10DAA
#define CL_DEVICE_HEAP_INFO_UNALLOCATED_FREES_EXT 0x10DAB
#define CL_DEVICE_HEAP_INFO_OVERFLOWS_EXT 0x10DAC   /* found at free */
#define CL_DEVICE_HEAP_INFO_LOST_EVENTS_EXT 0x10DAD /* counted, not logged (log full) */
#define CL_DEVICE_HEAP_INFO_DAMAGED_BLOCKS_EXT                                                     \
  0x10DAE                                          /* inspects the heap: live blocks
                                                             with overwritten guard bytes */
#define CL_DEVICE_HEAP_INFO_BYTES_HELD_EXT 0x10DAF /* pages taken for slabs and runs */
/* throwing operator new calls that found no room (C++, section "Import-linkage form"): each
 * stopped its work-item */
#define CL_DEVICE_HEAP_INFO_BAD_ALLOCS_EXT 0x10DB0

/* Default and minimum heap size in bytes (section "Heap size"). */
#define CL_DEVICE_HEAP_SIZE_DEFAULT_EXT ((size_t)8 << 20)
#define CL_DEVICE_HEAP_SIZE_MIN_EXT ((size_t)1 << 20)

typedef cl_int CL_API_CALL clSetDeviceHeapSizeEXT_t(cl_device_id device, size_t size);

typedef clSetDeviceHeapSizeEXT_t *clSetDeviceHeapSizeEXT_fn CL_API_SUFFIX__VERSION_1_2;

typedef cl_int CL_API_CALL clGetDeviceHeapInfoEXT_t(cl_command_queue command_queue,
                                                    cl_device_heap_info_ext param_name,
                                                    size_t param_value_size, void *param_value,
                                                    size_t *param_value_size_ret);

typedef clGetDeviceHeapInfoEXT_t *clGetDeviceHeapInfoEXT_fn CL_API_SUFFIX__VERSION_1_2;

typedef cl_int CL_API_CALL clEnqueueResetDeviceHeapEXT_t(cl_command_queue command_queue,
                                                         cl_uint num_events_in_wait_list,
                                                         const cl_event *event_wait_list,
                                                         cl_event *event);

typedef clEnqueueResetDeviceHeapEXT_t *clEnqueueResetDeviceHeapEXT_fn CL_API_SUFFIX__VERSION_1_2;

#if !defined(CL_NO_EXTENSION_PROTOTYPES)

extern CL_API_ENTRY cl_int CL_API_CALL clSetDeviceHeapSizeEXT(cl_device_id device, size_t size)
    CL_API_SUFFIX__VERSION_1_2;

extern CL_API_ENTRY cl_int CL_API_CALL clGetDeviceHeapInfoEXT(
    cl_command_queue command_queue, cl_device_heap_info_ext param_name, size_t param_value_size,
    void *param_value, size_t *param_value_size_ret) CL_API_SUFFIX__VERSION_1_2;

extern CL_API_ENTRY cl_int CL_API_CALL clEnqueueResetDeviceHeapEXT(
    cl_command_queue command_queue, cl_uint num_events_in_wait_list,
    const cl_event *event_wait_list, cl_event *event) CL_API_SUFFIX__VERSION_1_2;

#endif /* !defined(CL_NO_EXTENSION_PROTOTYPES) */

#ifdef __cplusplus
}
#endif

#endif /* OPENCL_CL_EXT_DEVICE_MALLOC_H_ */
