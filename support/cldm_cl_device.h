/*
 * cldm_cl_device.h — finding an OpenCL device, for the tests, the benchmarks and the examples:
 * by name, by extension, or the first one, through the platforms the ICD loader reports. The
 * caller links libOpenCL (or a loader of its choice); this library links none.
 */
#ifndef CLDM_CL_DEVICE_H
#define CLDM_CL_DEVICE_H

#include <stddef.h>

#include <CL/cl.h>

/* The first device, platforms and their devices taken in the order the loader reports them,
 * whose CL_DEVICE_NAME equals `name` and whose CL_DEVICE_EXTENSIONS lists `extension` (either
 * may be NULL: any). Its platform goes to *platform if platform is not NULL. NULL if no device
 * matches (or no platform answers). */
cl_device_id cldm_cl_find_device(const char *name, const char *extension, cl_platform_id *platform);

/* A string or array answer of clGetDeviceInfo in a malloc'd buffer with a NUL byte after it;
 * its size in *size if size is not NULL. NULL on error. */
void *cldm_cl_device_info(cl_device_id device, cl_device_info name, size_t *size);

/* 1 if the space-separated list (an extension string) holds `word`, 0 if not. */
int cldm_cl_has_word(const char *list, const char *word);

#endif /* CLDM_CL_DEVICE_H */
