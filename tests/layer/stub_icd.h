/*
 * stub_icd.h — what the stub ICD (stub_icd.c) reports, shared with the layer tests so they
 * can compare the layer's answers with the driver's exact answers.
 *
 * Platform 0 ("cldm stub A"): device 0 "stub-plain" (OpenCL 3.0, empty IL list),
 *                            device 1 "stub-spirv" (SPIR-V 1.0/1.2, answers
 *                            CL_DEVICE_SPIRV_EXTENDED_INSTRUCTION_SETS_KHR).
 * Platform 1 ("cldm stub B"): device 2 "stub-legacy" (OpenCL 1.2: IL query is invalid).
 *
 * Built with STUB_NVIDIA (libcldm_stub_nv_icd.so), the stub is an NVIDIA-like driver instead:
 * one platform ("cldm stub NVIDIA"), one device "stub-nv" with NVIDIA's vendor id, no IL
 * (CL_DEVICE_IL_VERSION is "", clCreateProgramWithIL fails as NVIDIA's driver does), compute
 * capability STUB_NV_CC_MAJOR.STUB_NV_CC_MINOR, and programs from binaries that it keeps
 * byte for byte (CL_PROGRAM_BINARIES returns them) and "builds" when they look like PTX
 * (".version" and ".target" present), with a kernel for each PTX entry (as many arguments as
 * the entry has .param declarations).
 * Both builds keep source programs byte for byte (CL_PROGRAM_SOURCE returns them) and "build"
 * and "compile" IL and source programs without looking at them; the options of the last build
 * or compile are returned by the extension function STUB_LAST_BUILD_OPTIONS_FUNCTION
 * (const char *(void)).
 */
#ifndef CLDM_STUB_ICD_H
#define CLDM_STUB_ICD_H

#define STUB_PLATFORM_A_EXTENSIONS "cl_khr_icd cl_stub_platform_a"
#define STUB_PLATFORM_B_EXTENSIONS "cl_khr_icd cl_stub_platform_b "
#define STUB_DEVICE0_EXTENSIONS "cl_khr_fp64 cl_stub_plain"
#define STUB_DEVICE1_EXTENSIONS                                                                    \
  "cl_khr_il_program cl_khr_int64_base_atomics cl_khr_int64_extended_atomics cl_stub_spirv "
#define STUB_DEVICE2_EXTENSIONS "cl_khr_byte_addressable_store"
#define STUB_DEVICE1_IL "SPIR-V_1.0 SPIR-V_1.2"
#define STUB_DEVICE1_MAX_ALLOC ((cl_ulong)64 << 20)
#define STUB_SPIRV_SET0 "OpenCL.std"
#define STUB_PROBE_FUNCTION "clStubProbeEXT" /* served by the stub for both platforms */
#define STUB_PROBE_RESULT 0x5157

#define STUB_NV_PLATFORM_EXTENSIONS "cl_khr_icd cl_nv_device_attribute_query"
#define STUB_NV_DEVICE_EXTENSIONS                                                                  \
  "cl_khr_global_int32_base_atomics cl_khr_int64_base_atomics cl_khr_int64_extended_atomics "      \
  "cl_nv_device_attribute_query "
#define STUB_NV_CC_MAJOR 9u
#define STUB_NV_CC_MINOR 0u
#define STUB_LAST_BUILD_OPTIONS_FUNCTION "clStubLastBuildOptionsEXT"
/* cl_int (cl_kernel, cl_int delta): the driver's own reference on a kernel taken (delta 1) or
 * dropped (-1) without the layer seeing it, as for a launch in flight. A kernel or program
 * freed leaves its memory to the next one created (a reused handle). */
#define STUB_DRIVER_REF_FUNCTION "clStubDriverRefKernelEXT"
/* void (cl_uint stats[3]): launches run, those of them that found an SVM argument freed (an
 * allocation of the stub's clSVMAlloc when it was set, freed since), and SVM allocations
 * alive. A launch runs when the last user event of its wait list is set (at once if none
 * waits); queues, SVM allocations and events hold their context out of
 * CL_CONTEXT_REFERENCE_COUNT, as NVIDIA's driver counts. */
#define STUB_LAUNCH_STATS_FUNCTION "clStubLaunchStatsEXT"

#endif
