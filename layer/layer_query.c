/*
 * layer_query.c — the extension's effect on queries (spec 1.1, 1.2):
 *   CL_DEVICE_EXTENSIONS(_WITH_VERSION)       + cl_ext_device_malloc on SPIR-V devices
 *   CL_PLATFORM_EXTENSIONS(_WITH_VERSION)     + cl_ext_device_malloc if any device has it
 *   CL_DEVICE_SPIRV_EXTENDED_INSTRUCTION_SETS_KHR + SPV_EXT_device_malloc, where answered
 *   CL_DEVICE_HEAP_SIZE_EXT                   the current heap-size setting
 * Every other query, and every query about a device without SPIR-V, goes down unchanged.
 * Answers are built in full, then copied by cldm_info_return (size/truncation rules).
 */
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

/* Answers a space-separated name list with our name appended (once). */
static cl_int cldm_query_answer_name_list(cldm_info_query_fn query, const void *obj, cl_uint name,
                                          size_t param_value_size, void *param_value,
                                          size_t *param_value_size_ret) {
  void *orig;
  size_t orig_size;
  cl_int err = cldm_info_fetch(query, obj, name, &orig, &orig_size);
  if (err != CL_SUCCESS)
    return err;
  const char *list = orig;
  size_t len = strlen(list);
  char *answer = malloc(len + sizeof(cldm_ext_name) + 2);
  if (!answer) {
    free(orig);
    return CL_OUT_OF_HOST_MEMORY;
  }
  memcpy(answer, list, len + 1);
  if (!cldm_query_words_contain(list, cldm_ext_name)) {
    /* Keep the driver's style: a list ending in a space gets "name " appended. */
    int trailing_space = len > 0 && list[len - 1] == ' ';
    if (len > 0 && !trailing_space)
      strcat(answer, " ");
    strcat(answer, cldm_ext_name);
    if (trailing_space)
      strcat(answer, " ");
  }
  err = cldm_info_return(answer, strlen(answer) + 1, param_value_size, param_value,
                         param_value_size_ret);
  free(answer);
  free(orig);
  return err;
}

/* Answers an array query with `elem` (elem_size bytes) appended, unless an element is
 * already the `same` as it. Errors of the driver's answer are returned unchanged. */
static cl_int cldm_query_answer_array(cldm_info_query_fn query, const void *obj, cl_uint name,
                                      const void *elem, size_t elem_size,
                                      int (*same)(const void *a, const void *b),
                                      size_t param_value_size, void *param_value,
                                      size_t *param_value_size_ret) {
  void *orig;
  size_t orig_size;
  cl_int err = cldm_info_fetch(query, obj, name, &orig, &orig_size);
  if (err != CL_SUCCESS)
    return err;
  size_t n = orig_size / elem_size;
  char *answer = malloc((n + 1) * elem_size);
  if (!answer) {
    free(orig);
    return CL_OUT_OF_HOST_MEMORY;
  }
  memcpy(answer, orig, n * elem_size);
  int present = 0;
  for (size_t i = 0; i < n && !present; i++)
    present = same(answer + i * elem_size, elem);
  if (!present)
    memcpy(answer + n++ * elem_size, elem, elem_size);
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

/* Answers a cl_name_version array with our entry appended (once). */
static cl_int cldm_query_answer_name_versions(cldm_info_query_fn query, const void *obj,
                                              cl_uint name, size_t param_value_size,
                                              void *param_value, size_t *param_value_size_ret) {
  cl_name_version ours;
  memset(&ours, 0, sizeof(ours));
  ours.version = CL_EXT_DEVICE_MALLOC_EXTENSION_VERSION;
  memcpy(ours.name, cldm_ext_name, sizeof(cldm_ext_name));
  return cldm_query_answer_array(query, obj, name, &ours, sizeof(ours),
                                 cldm_query_same_name_version, param_value_size, param_value,
                                 param_value_size_ret);
}

/* Answers CL_DEVICE_SPIRV_EXTENDED_INSTRUCTION_SETS_KHR (an array of const char *) with our
 * set appended, when the driver answers the query at all. */
static cl_int cldm_query_answer_spirv_sets(cl_device_id device, size_t param_value_size,
                                           void *param_value, size_t *param_value_size_ret) {
  return cldm_query_answer_array(
      cldm_query_device, device, CL_DEVICE_SPIRV_EXTENDED_INSTRUCTION_SETS_KHR,
      &cldm_spirv_set_name, sizeof(cldm_spirv_set_name), cldm_query_same_string, param_value_size,
      param_value, param_value_size_ret);
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
    if (cldm_device_snapshot(device, &st) == CL_SUCCESS && st.supported)
      break;
    __attribute__((fallthrough)); /* not ours to change */
  default:
    return cldm_next->clGetDeviceInfo(device, param_name, param_value_size, param_value,
                                      param_value_size_ret);
  }
  switch (param_name) {
  case CL_DEVICE_EXTENSIONS:
    return cldm_query_answer_name_list(cldm_query_device, device, param_name, param_value_size,
                                       param_value, param_value_size_ret);
  case CL_DEVICE_EXTENSIONS_WITH_VERSION:
    return cldm_query_answer_name_versions(cldm_query_device, device, param_name, param_value_size,
                                           param_value, param_value_size_ret);
  case CL_DEVICE_SPIRV_EXTENDED_INSTRUCTION_SETS_KHR:
    return cldm_query_answer_spirv_sets(device, param_value_size, param_value,
                                        param_value_size_ret);
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
  if ((param_name == CL_PLATFORM_EXTENSIONS || param_name == CL_PLATFORM_EXTENSIONS_WITH_VERSION) &&
      cldm_device_platform_supported(platform)) {
    if (param_name == CL_PLATFORM_EXTENSIONS)
      return cldm_query_answer_name_list(cldm_query_platform, platform, param_name,
                                         param_value_size, param_value, param_value_size_ret);
    return cldm_query_answer_name_versions(cldm_query_platform, platform, param_name,
                                           param_value_size, param_value, param_value_size_ret);
  }
  return cldm_next->clGetPlatformInfo(platform, param_name, param_value_size, param_value,
                                      param_value_size_ret);
}
