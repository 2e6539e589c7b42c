/*
 * cldm_cl_device.c — see cldm_cl_device.h.
 */
#include "cldm_cl_device.h"

#include <stdlib.h>
#include <string.h>

void *cldm_cl_device_info(cl_device_id device, cl_device_info name, size_t *size) {
  size_t n = 0;
  if (clGetDeviceInfo(device, name, 0, NULL, &n) != CL_SUCCESS)
    return NULL;
  void *buf = calloc(1, n + 1);
  if (buf && clGetDeviceInfo(device, name, n, buf, NULL) != CL_SUCCESS) {
    free(buf);
    return NULL;
  }
  if (size)
    *size = n;
  return buf;
}

int cldm_cl_has_word(const char *list, const char *word) {
  size_t n = strlen(word);
  for (const char *p = list; p && (p = strstr(p, word)); p += n)
    if ((p == list || p[-1] == ' ') && (p[n] == 0 || p[n] == ' '))
      return 1;
  return 0;
}

/* 1 if `device` has the name and the extension asked for (NULL: anything). */
static int matches(cl_device_id device, const char *name, const char *extension) {
  int ok = 1;
  if (name) {
    char *s = cldm_cl_device_info(device, CL_DEVICE_NAME, NULL);
    ok = s && !strcmp(s, name);
    free(s);
  }
  if (ok && extension) {
    char *s = cldm_cl_device_info(device, CL_DEVICE_EXTENSIONS, NULL);
    ok = s && cldm_cl_has_word(s, extension);
    free(s);
  }
  return ok;
}

cl_device_id cldm_cl_find_device(const char *name, const char *extension,
                                 cl_platform_id *platform) {
  cl_uint np = 0;
  if (clGetPlatformIDs(0, NULL, &np) != CL_SUCCESS || np == 0)
    return NULL;
  cl_platform_id *ps = malloc(np * sizeof *ps);
  cl_device_id found = NULL;
  if (!ps || clGetPlatformIDs(np, ps, NULL) != CL_SUCCESS)
    goto done;
  for (cl_uint i = 0; i < np && !found; i++) {
    cl_uint nd = 0;
    if (clGetDeviceIDs(ps[i], CL_DEVICE_TYPE_ALL, 0, NULL, &nd) != CL_SUCCESS || nd == 0)
      continue;
    cl_device_id *ds = malloc(nd * sizeof *ds);
    if (ds && clGetDeviceIDs(ps[i], CL_DEVICE_TYPE_ALL, nd, ds, NULL) == CL_SUCCESS)
      for (cl_uint j = 0; j < nd && !found; j++)
        if (matches(ds[j], name, extension)) {
          found = ds[j];
          if (platform)
            *platform = ps[i];
        }
    free(ds);
  }
done:
  free(ps);
  return found;
}
