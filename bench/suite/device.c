/*
 * device.c — the suite's device: found by a name pattern among the platforms the ICD loader
 * reports (support/cldm_cl_device.h reads the answers), its limits, and the extension's entry
 * points looked up with clGetExtensionFunctionAddressForPlatform as applications do; and case
 * 9's several devices of one platform.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "cldm_cl_device.h"
#include "suite.h"

/* 1 if `pattern` occurs in `text`, ignoring case. */
static int contains_nocase(const char *text, const char *pattern) {
  size_t n = strlen(pattern);
  for (const char *t = text; *t; t++) {
    size_t i = 0;
    while (i < n && t[i] && tolower((unsigned char)t[i]) == tolower((unsigned char)pattern[i]))
      i++;
    if (i == n)
      return 1;
  }
  return n == 0;
}

static void info_string(cl_device_id dev, cl_device_info what, char *out, size_t size) {
  char *s = cldm_cl_device_info(dev, what, NULL);
  snprintf(out, size, "%s", s ? s : "");
  free(s);
}

/* Fills d from `dev` of `platform`. */
static void describe(bs_dev *d, cl_platform_id platform, cl_device_id dev) {
  memset(d, 0, sizeof *d);
  d->platform = platform;
  d->device = dev;
  clGetPlatformInfo(platform, CL_PLATFORM_NAME, sizeof d->platform_name - 1, d->platform_name,
                    NULL);
  info_string(dev, CL_DEVICE_NAME, d->name, sizeof d->name);
  info_string(dev, CL_DEVICE_VERSION, d->version, sizeof d->version);
  info_string(dev, CL_DRIVER_VERSION, d->driver, sizeof d->driver);
  char *il = cldm_cl_device_info(dev, CL_DEVICE_IL_VERSION, NULL);
  d->has_il = il && strstr(il, "SPIR-V") != NULL;
  free(il);
  char *ext = cldm_cl_device_info(dev, CL_DEVICE_EXTENSIONS, NULL);
  d->has_ext = ext && cldm_cl_has_word(ext, CL_EXT_DEVICE_MALLOC_EXTENSION_NAME);
  free(ext);
  clGetDeviceInfo(dev, CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof d->max_alloc, &d->max_alloc, NULL);
  clGetDeviceInfo(dev, CL_DEVICE_GLOBAL_MEM_SIZE, sizeof d->global_mem, &d->global_mem, NULL);
  clGetDeviceInfo(dev, CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof d->max_wg, &d->max_wg, NULL);
  clGetDeviceInfo(dev, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof d->units, &d->units, NULL);
}

/* Calls fn(platform, device, arg) for every device until it returns non-zero; returns that. */
static int each_device(int (*fn)(cl_platform_id, cl_device_id, void *), void *arg) {
  cl_uint np = 0;
  if (clGetPlatformIDs(0, NULL, &np) != CL_SUCCESS || np == 0)
    return 0;
  cl_platform_id *ps = calloc(np, sizeof *ps);
  int r = 0;
  if (ps && clGetPlatformIDs(np, ps, NULL) == CL_SUCCESS)
    for (cl_uint i = 0; i < np && !r; i++) {
      cl_uint nd = 0;
      if (clGetDeviceIDs(ps[i], CL_DEVICE_TYPE_ALL, 0, NULL, &nd) != CL_SUCCESS || nd == 0)
        continue;
      cl_device_id *ds = calloc(nd, sizeof *ds);
      if (ds && clGetDeviceIDs(ps[i], CL_DEVICE_TYPE_ALL, nd, ds, NULL) == CL_SUCCESS)
        for (cl_uint j = 0; j < nd && !r; j++)
          r = fn(ps[i], ds[j], arg);
      free(ds);
    }
  free(ps);
  return r;
}

typedef struct find_arg {
  bs_dev *d;
  const char *pattern;
  int need_ext;
} find_arg;

static int try_device(cl_platform_id p, cl_device_id dev, void *arg) {
  find_arg *a = arg;
  describe(a->d, p, dev);
  if (a->pattern && !contains_nocase(a->d->name, a->pattern) &&
      !contains_nocase(a->d->platform_name, a->pattern))
    return 0;
  return !a->need_ext || a->d->has_ext;
}

/* The extension's entry points of d's platform, looked up as applications do. 0 if found. */
static int lookup_ext(bs_dev *d) {
  d->set_heap = (clSetDeviceHeapSizeEXT_fn)clGetExtensionFunctionAddressForPlatform(
      d->platform, "clSetDeviceHeapSizeEXT");
  d->heap_info = (clGetDeviceHeapInfoEXT_fn)clGetExtensionFunctionAddressForPlatform(
      d->platform, "clGetDeviceHeapInfoEXT");
  d->reset_heap = (clEnqueueResetDeviceHeapEXT_fn)clGetExtensionFunctionAddressForPlatform(
      d->platform, "clEnqueueResetDeviceHeapEXT");
  if (!d->set_heap || !d->heap_info || !d->reset_heap) {
    fprintf(stderr, "cldm-bench-suite: the extension's entry points are missing\n");
    return -1;
  }
  return 0;
}

int bs_dev_open(bs_dev *d, const char *pattern, int need_ext) {
  find_arg a = {d, pattern, need_ext};
  if (!each_device(try_device, &a)) {
    fprintf(stderr, "cldm-bench-suite: no device%s%s%s%s\n", pattern ? " matching '" : "",
            pattern ? pattern : "", pattern ? "'" : "",
            need_ext ? " reports " CL_EXT_DEVICE_MALLOC_EXTENSION_NAME
                       " (is the layer enabled? OPENCL_LAYERS, see README)"
                     : " found");
    return -1;
  }
  return need_ext ? lookup_ext(d) : 0;
}

typedef struct many_arg {
  bs_dev *d;
  int want, found;
  cl_platform_id platform;
  const char *pattern;
} many_arg;

static int take_device(cl_platform_id p, cl_device_id dev, void *arg) {
  many_arg *a = arg;
  if (p != a->platform)
    return 0;
  bs_dev *d = &a->d[a->found];
  describe(d, p, dev);
  if (!d->has_ext || (a->pattern && !contains_nocase(d->name, a->pattern) &&
                      !contains_nocase(d->platform_name, a->pattern)))
    return 0;
  if (lookup_ext(d))
    return 0;
  return ++a->found == a->want;
}

int bs_dev_open_many(bs_dev *d, int want, cl_platform_id platform, const char *pattern) {
  many_arg a = {d, want, 0, platform, pattern};
  if (want > 0)
    each_device(take_device, &a);
  return a.found;
}

static int print_device(cl_platform_id p, cl_device_id dev, void *arg) {
  bs_dev d;
  describe(&d, p, dev);
  printf("%s | %s | %s%s\n", d.platform_name, d.name, d.version,
         d.has_ext ? " | " CL_EXT_DEVICE_MALLOC_EXTENSION_NAME : "");
  (void)arg;
  return 0;
}

void bs_dev_list(void) { each_device(print_device, NULL); }

const char *bs_dev_tag(const bs_dev *d) {
  static char tag[96];
  cl_device_type type = 0;
  clGetDeviceInfo(d->device, CL_DEVICE_TYPE, sizeof type, &type, NULL);
  const char *kind = type & CL_DEVICE_TYPE_GPU ? "gpu" : type & CL_DEVICE_TYPE_CPU ? "cpu" : "dev";
  if (contains_nocase(d->platform_name, "Portable Computing Language") ||
      contains_nocase(d->platform_name, "pocl")) {
    snprintf(tag, sizeof tag, "pocl-%s", kind);
    return tag;
  }
  size_t o = 0;
  for (const char *c = d->name; *c && o + 1 < sizeof tag; c++) {
    if (isalnum((unsigned char)*c))
      tag[o++] = (char)tolower((unsigned char)*c);
    else if (o && tag[o - 1] != '-')
      tag[o++] = '-';
  }
  while (o && tag[o - 1] == '-')
    o--;
  tag[o] = 0;
  if (!o)
    snprintf(tag, sizeof tag, "%s", kind);
  return tag;
}
