/*
 * cldm_test_util.h — small helpers shared by the OpenCL tests (header-only): platform string
 * answers and checking which ICD loader the process really loaded (CLDM_TEST_LOADER, set by
 * cldm_add_e2e_test). Finding devices and device answers: support/cldm_cl_device.h.
 */
#ifndef CLDM_TEST_UTIL_H
#define CLDM_TEST_UTIL_H

#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 300
#endif
#ifndef CL_USE_DEPRECATED_OPENCL_1_2_APIS
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <CL/cl.h>
#include <CL/cl_ext.h>
#include <CL/cl_ext_device_malloc.h>

/* Fetches a string/array answer of clGetPlatformInfo into a malloc'd buffer (NULL on error);
 * cldm_cl_device_info (support/cldm_cl_device.h) does the same for devices. */
static inline void *cldm_test_platform_info(cl_platform_id p, cl_platform_info name, size_t *size) {
  size_t n = 0;
  if (clGetPlatformInfo(p, name, 0, NULL, &n) != CL_SUCCESS)
    return NULL;
  void *buf = calloc(1, n + 1);
  if (buf && clGetPlatformInfo(p, name, n, buf, NULL) != CL_SUCCESS) {
    free(buf);
    return NULL;
  }
  if (size)
    *size = n;
  return buf;
}

/* 1 if a file whose path contains `name` is mapped into this process (/proc/self/maps). */
static inline int cldm_test_mapped(const char *name) {
  FILE *f = fopen("/proc/self/maps", "r");
  char line[4096];
  int found = 0;
  while (f && !found && fgets(line, sizeof(line), f)) {
    char *p = strchr(line, '/');
    found = p && strstr(p, name) != NULL;
  }
  if (f)
    fclose(f);
  return found;
}

/* Path of the libOpenCL.so.1 mapped into this process, from /proc/self/maps. */
static inline int cldm_test_loaded_loader(char *path, size_t size) {
  FILE *f = fopen("/proc/self/maps", "r");
  char line[4096];
  int found = 0;
  while (f && !found && fgets(line, sizeof(line), f)) {
    char *p = strchr(line, '/');
    if (p && strstr(p, "libOpenCL.so")) {
      p[strcspn(p, "\n")] = 0;
      snprintf(path, size, "%s", p);
      found = 1;
    }
  }
  if (f)
    fclose(f);
  return found;
}

/* Checks that the loader named by CLDM_TEST_LOADER ("ocl-icd" or "khronos") is the one
 * loaded: the Khronos loader comes from the first LD_LIBRARY_PATH entry, ocl-icd from the
 * system; where CLDM_TEST_LOADER_DIR is set (runs from a pack that carries both loaders,
 * tools/nvidia/run-tests.sh), the loader must come from that directory. Returns 1 if it matches (or
 * no expectation is set). */
static inline int cldm_test_loader_matches(char *why, size_t size) {
  const char *want = getenv("CLDM_TEST_LOADER");
  char path[4096] = "";
  if (!want)
    return 1;
  if (!cldm_test_loaded_loader(path, sizeof(path))) {
    snprintf(why, size, "no libOpenCL mapped");
    return 0;
  }
  const char *llp = getenv("LD_LIBRARY_PATH"), *dir = getenv("CLDM_TEST_LOADER_DIR");
  int from_llp = llp && *llp && !strncmp(path, llp, strcspn(llp, ":"));
  int ok = !strcmp(want, "khronos") ? from_llp : !from_llp;
  if (dir && *dir)
    ok = !strncmp(path, dir, strlen(dir)) && path[strlen(dir)] == '/';
  snprintf(why, size, "want %s, loaded %s", want, path);
  return ok;
}

#endif
