/*
 * stub_loader.c — a stand-in for an OpenCL ICD loader without layer support, as the CUDA
 * toolkit's libOpenCL.so.1 is: built as libOpenCL.so.1 with the loaders' symbol versions
 * (stub_loader.map), it finds no platform and never reads the variable that names layers. The
 * tests of cldm-run put it first in LD_LIBRARY_PATH (or in a program's DT_RPATH or DT_RUNPATH):
 * cldm-run must run the program with a loader that enables the layer, and a program that still
 * loads the stub finds no device and fails.
 */
#include <CL/cl.h>
#include <CL/cl_ext.h>

__attribute__((visibility("default"))) cl_int
clGetPlatformIDs(cl_uint num_entries, cl_platform_id *platforms, cl_uint *num_platforms) {
  (void)num_entries;
  (void)platforms;
  if (num_platforms)
    *num_platforms = 0;
  return CL_PLATFORM_NOT_FOUND_KHR;
}
