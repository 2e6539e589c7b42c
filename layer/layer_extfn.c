/*
 * layer_extfn.c — extension function lookup. clGetExtensionFunctionAddressForPlatform and
 * clGetExtensionFunctionAddress return the layer's entry points for the names of the
 * extension (plus the unsuffixed alias clSetDeviceHeapSize, see "New API Functions" in the
 * spec) and pass every other name down. For a platform none of whose devices supports the
 * extension the platform query passes everything down: the layer is transparent there.
 */
#include <string.h>

#include "cldm_layer.h"

typedef struct cldm_extfn {
  const char *name;
  void *fn;
} cldm_extfn;

static const cldm_extfn cldm_extfns[] = {
    {"clSetDeviceHeapSizeEXT", (void *)cldm_clSetDeviceHeapSizeEXT},
    {"clSetDeviceHeapSize", (void *)cldm_clSetDeviceHeapSizeEXT},
    {"clGetDeviceHeapInfoEXT", (void *)cldm_clGetDeviceHeapInfoEXT},
    {"clEnqueueResetDeviceHeapEXT", (void *)cldm_clEnqueueResetDeviceHeapEXT},
};

static void *cldm_extfn_find(const char *name) {
  if (!name)
    return NULL;
  for (size_t i = 0; i < sizeof(cldm_extfns) / sizeof(cldm_extfns[0]); i++)
    if (!strcmp(cldm_extfns[i].name, name))
      return cldm_extfns[i].fn;
  return cldm_il_extfn(name);
}

void *CL_API_CALL clGetExtensionFunctionAddressForPlatform_wrap(cl_platform_id platform,
                                                                const char *name) {
  void *fn = cldm_device_platform_route(platform) != CLDM_ROUTE_NONE ? cldm_extfn_find(name) : NULL;
  if (fn)
    return fn;
  if (!CLDM_NEXT_HAS(clGetExtensionFunctionAddressForPlatform))
    return NULL;
  return cldm_next->clGetExtensionFunctionAddressForPlatform(platform, name);
}

void *CL_API_CALL clGetExtensionFunctionAddress_wrap(const char *name) {
  void *fn = cldm_extfn_find(name);
  if (fn)
    return fn;
  if (!CLDM_NEXT_HAS(clGetExtensionFunctionAddress))
    return NULL;
  return cldm_next->clGetExtensionFunctionAddress(name);
}
