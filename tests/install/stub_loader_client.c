/*
 * stub_loader_client.c — a program that links libOpenCL.so.1 and finds it through a search
 * path of its own (built twice: with DT_RPATH and with DT_RUNPATH naming the stub loader's
 * directory, tests/install/CMakeLists.txt). test_cldm_run_loader.sh asks cldm-run about it:
 * LD_LIBRARY_PATH comes before a DT_RUNPATH, so cldm-run can give it another loader, but after a
 * DT_RPATH, so cldm-run must refuse. Exit status 0 if a platform is found.
 */
#include <CL/cl.h>

int main(void) {
  cl_uint n = 0;
  return clGetPlatformIDs(0, NULL, &n) == CL_SUCCESS && n > 0 ? 0 : 1;
}
