/*
 * layer_query.c — the extension's effect on queries (spec 1.1, 1.2):
 *   CL_DEVICE_EXTENSIONS(_WITH_VERSION)       + cl_ext_device_malloc on devices the layer
 *                                             serves; + cl_khr_il_program on the PTX route
 *   CL_PLATFORM_EXTENSIONS(_WITH_VERSION)     the same, if any device of the platform has it
 *   CL_DEVICE_IL_VERSION, CL_DEVICE_ILS_WITH_VERSION  SPIR-V 1.0-1.2 on the PTX route
 *   CL_DEVICE_SPIRV_EXTENDED_INSTRUCTION_SETS_KHR + SPV_EXT_device_malloc, where answered
 *   CL_DEVICE_HEAP_SIZE_EXT                   the current heap-size setting
 * Every other query, and every query about a device the layer does not serve, goes down
 * unchanged.
 * Answers are built in full, then copied by cldm_info_return (size/truncation rules).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cldm_layer.h"

static const char cldm_ext_name[] = CL_EXT_DEVICE_MALLOC_EXTENSION_NAME;
static const char *const cldm_spirv_set_name = CL_EXT_DEVICE_MALLOC_SPIRV_EXT_INST_SET;

static cl_int cldm_query_device(const void *obj, cl_uint name, size_t size, void *value,
                                size_t *size_ret) {
  return cldm_next->clGetDeviceInfo((cl_device_id)obj, name, size, value, size_ret);
}

static cl_int cldm_query_platform(const void *obj, cl_uint name, size_t size, void *value,
                                  size_t *size_ret) {
  return cldm_next->clGetPlatformInfo((cl_platform_id)obj, name, size, value, size_ret);
}

/* 1 if the space-separated list `list` holds the word `word`. */
static int cldm_query_words_contain(const char *list, const char *word) {
  size_t n = strlen(word);
  for (const char *p = list; (p = strstr(p, word)) != NULL; p += n) {
    int starts = p == list || p[-1] == ' ';
    int ends = p[n] == '\0' || p[n] == ' ';
    if (starts && ends)
      return 1;
  }
  return 0;
}

/* What the layer adds to a device's or platform's extension lists: cl_ext_device_malloc, and
 * on the PTX route cl_khr_il_program too (the layer accepts SPIR-V for the device). */
typedef struct cldm_query_exts {
  const char *names[2];
  size_t count;
} cldm_query_exts;

static cldm_query_exts cldm_query_exts_for(cldm_device_route route) {
  cldm_query_exts e = {{cldm_ext_name, "cl_khr_il_program"}, route == CLDM_ROUTE_PTX ? 2 : 1};
  return e;
}

/* Answers a space-separated name list with each of `add` appended (once). */
static cl_int cldm_query_answer_name_list(cldm_info_query_fn query, const void *obj, cl_uint name,
                                          cldm_query_exts add, size_t param_value_size,
                                          void *param_value, size_t *param_value_size_ret) {
  void *orig;
  size_t orig_size;
  cl_int err = cldm_info_fetch(query, obj, name, &orig, &orig_size);
  if (err != CL_SUCCESS)
    return err;
  const char *list = orig;
  size_t len = strlen(list), extra = 0;
  for (size_t i = 0; i < add.count; i++)
    extra += strlen(add.names[i]) + 1;
  char *answer = malloc(len + extra + 2);
  if (!answer) {
    free(orig);
    return CL_OUT_OF_HOST_MEMORY;
  }
  memcpy(answer, list, len + 1);
  /* Keep the driver's style: a list ending in a space gets "name " appended. */
  int trailing_space = len > 0 && list[len - 1] == ' ';
  for (size_t i = 0; i < add.count; i++) {
    if (cldm_query_words_contain(list, add.names[i]))
      continue;
    size_t now = strlen(answer);
    if (now > 0 && answer[now - 1] != ' ')
      strcat(answer, " ");
    strcat(answer, add.names[i]);
    if (trailing_space)
      strcat(answer, " ");
  }
  err = cldm_info_return(answer, strlen(answer) + 1, param_value_size, param_value,
                         param_value_size_ret);
  free(answer);
  free(orig);
  return err;
}

/* Answers an array query with the `count` elements `elems` (elem_size bytes each) appended,
 * each unless an element is already the `same` as it. Errors of the driver's answer are
 * returned unchanged. */
static cl_int cldm_query_answer_array(cldm_info_query_fn query, const void *obj, cl_uint name,
                                      const void *elems, size_t count, size_t elem_size,
                                      int (*same)(const void *a, const void *b),
                                      size_t param_value_size, void *param_value,
                                      size_t *param_value_size_ret) {
  void *orig;
  size_t orig_size;
  cl_int err = cldm_info_fetch(query, obj, name, &orig, &orig_size);
  if (err != CL_SUCCESS)
    return err;
  size_t n = orig_size / elem_size;
  char *answer = malloc((n + count) * elem_size);
  if (!answer) {
    free(orig);
    return CL_OUT_OF_HOST_MEMORY;
  }
  memcpy(answer, orig, n * elem_size);
  for (size_t e = 0; e < count; e++) {
    const char *elem = (const char *)elems + e * elem_size;
    int present = 0;
    for (size_t i = 0; i < n && !present; i++)
      present = same(answer + i * elem_size, elem);
    if (!present)
      memcpy(answer + n++ * elem_size, elem, elem_size);
  }
  err =
      cldm_info_return(answer, n * elem_size, param_value_size, param_value, param_value_size_ret);
  free(answer);
  free(orig);
  return err;
}

static int cldm_query_same_name_version(const void *a, const void *b) {
  return strncmp(((const cl_name_version *)a)->name, ((const cl_name_version *)b)->name,
                 CL_NAME_VERSION_MAX_NAME_SIZE) == 0;
}

static int cldm_query_same_string(const void *a, const void *b) {
  const char *x = *(const char *const *)a, *y = *(const char *const *)b;
  return x && y && !strcmp(x, y);
}

static cl_name_version cldm_query_name_version(const char *name, cl_version version) {
  cl_name_version v;
  memset(&v, 0, sizeof(v));
  v.version = version;
  snprintf(v.name, sizeof(v.name), "%s", name);
  return v;
}

/* Answers a cl_name_version array with an entry for each of `add` appended (once). */
static cl_int cldm_query_answer_name_versions(cldm_info_query_fn query, const void *obj,
                                              cl_uint name, cldm_query_exts add,
                                              size_t param_value_size, void *param_value,
                                              size_t *param_value_size_ret) {
  cl_name_version entries[2] = {
      cldm_query_name_version(cldm_ext_name, CL_EXT_DEVICE_MALLOC_EXTENSION_VERSION),
      cldm_query_name_version("cl_khr_il_program", CL_MAKE_VERSION(1, 0, 0))};
  return cldm_query_answer_array(query, obj, name, entries, add.count, sizeof(entries[0]),
                                 cldm_query_same_name_version, param_value_size, param_value,
                                 param_value_size_ret);
}

/* The SPIR-V versions the PTX route reads (those LLVMSPIRVLib 15 reads and pocl 6.0 lists). */
static const char cldm_query_ptx_il_version[] = "SPIR-V_1.0 SPIR-V_1.1 SPIR-V_1.2";

static cl_int cldm_query_answer_ptx_ils(size_t param_value_size, void *param_value,
                                        size_t *param_value_size_ret) {
  cl_name_version ils[3] = {cldm_query_name_version("SPIR-V", CL_MAKE_VERSION(1, 0, 0)),
                            cldm_query_name_version("SPIR-V", CL_MAKE_VERSION(1, 1, 0)),
                            cldm_query_name_version("SPIR-V", CL_MAKE_VERSION(1, 2, 0))};
  return cldm_info_return(ils, sizeof(ils), param_value_size, param_value, param_value_size_ret);
}

/* Answers CL_DEVICE_SPIRV_EXTENDED_INSTRUCTION_SETS_KHR (an array of const char *) with our
 * set appended, when the driver answers the query at all. */
static cl_int cldm_query_answer_spirv_sets(cl_device_id device, size_t param_value_size,
                                           void *param_value, size_t *param_value_size_ret) {
  return cldm_query_answer_array(
      cldm_query_device, device, CL_DEVICE_SPIRV_EXTENDED_INSTRUCTION_SETS_KHR,
      &cldm_spirv_set_name, 1, sizeof(cldm_spirv_set_name), cldm_query_same_string,
      param_value_size, param_value, param_value_size_ret);
}

cl_int CL_API_CALL clGetDeviceInfo_wrap(cl_device_id device, cl_device_info param_name,
                                        size_t param_value_size, void *param_value,
                                        size_t *param_value_size_ret) {
  cldm_device_state st;
  switch (param_name) {
  case CL_DEVICE_EXTENSIONS:
  case CL_DEVICE_EXTENSIONS_WITH_VERSION:
  case CL_DEVICE_SPIRV_EXTENDED_INSTRUCTION_SETS_KHR:
  case CL_DEVICE_HEAP_SIZE_EXT:
  case CL_DEVICE_IL_VERSION: /* == CL_DEVICE_IL_VERSION_KHR */
  case CL_DEVICE_ILS_WITH_VERSION:
    if (cldm_device_snapshot(device, &st) == CL_SUCCESS && st.supported &&
        (st.route == CLDM_ROUTE_PTX ||
         (param_name != CL_DEVICE_IL_VERSION && param_name != CL_DEVICE_ILS_WITH_VERSION)))
      break;
    __attribute__((fallthrough)); /* not ours to change */
  default:
    return cldm_next->clGetDeviceInfo(device, param_name, param_value_size, param_value,
                                      param_value_size_ret);
  }
  cldm_query_exts exts = cldm_query_exts_for(st.route);
  switch (param_name) {
  case CL_DEVICE_EXTENSIONS:
    return cldm_query_answer_name_list(cldm_query_device, device, param_name, exts,
                                       param_value_size, param_value, param_value_size_ret);
  case CL_DEVICE_EXTENSIONS_WITH_VERSION:
    return cldm_query_answer_name_versions(cldm_query_device, device, param_name, exts,
                                           param_value_size, param_value, param_value_size_ret);
  case CL_DEVICE_SPIRV_EXTENDED_INSTRUCTION_SETS_KHR:
    return cldm_query_answer_spirv_sets(device, param_value_size, param_value,
                                        param_value_size_ret);
  case CL_DEVICE_IL_VERSION:
    return cldm_info_return(cldm_query_ptx_il_version, sizeof(cldm_query_ptx_il_version),
                            param_value_size, param_value, param_value_size_ret);
  case CL_DEVICE_ILS_WITH_VERSION:
    return cldm_query_answer_ptx_ils(param_value_size, param_value, param_value_size_ret);
  default: { /* CL_DEVICE_HEAP_SIZE_EXT */
    size_t size = st.heap_size;
    return cldm_info_return(&size, sizeof(size), param_value_size, param_value,
                            param_value_size_ret);
  }
  }
}

cl_int CL_API_CALL clGetPlatformInfo_wrap(cl_platform_id platform, cl_platform_info param_name,
                                          size_t param_value_size, void *param_value,
                                          size_t *param_value_size_ret) {
  cldm_device_route route;
  if ((param_name == CL_PLATFORM_EXTENSIONS || param_name == CL_PLATFORM_EXTENSIONS_WITH_VERSION) &&
      (route = cldm_device_platform_route(platform)) != CLDM_ROUTE_NONE) {
    cldm_query_exts exts = cldm_query_exts_for(route);
    if (param_name == CL_PLATFORM_EXTENSIONS)
      return cldm_query_answer_name_list(cldm_query_platform, platform, param_name, exts,
                                         param_value_size, param_value, param_value_size_ret);
    return cldm_query_answer_name_versions(cldm_query_platform, platform, param_name, exts,
                                           param_value_size, param_value, param_value_size_ret);
  }
  return cldm_next->clGetPlatformInfo(platform, param_name, param_value_size, param_value,
                                      param_value_size_ret);
}
