/*
 * layer_build.c — building, compiling and linking programs of the layer's records (spec 1.5).
 *
 * SPIR-V route: clBuildProgram and clCompileProgram go to the driver unchanged; clLinkProgram
 * carries the kernel table over to the linked program, and refuses links in which a module
 * calls an allocating function another module exports (the caller cannot pass the heap:
 * spec 5, issue 4).
 * PTX route (layer_ptx.c): the driver program holds PTX, which the driver can only build.
 * clBuildProgram fails with the translation's log where the translation failed, and otherwise
 * builds the PTX with the options that apply to it (preprocessor and language options do not
 * apply to a module that is already compiled: spec 1.5). clCompileProgram has nothing left to
 * compile and records that it succeeded; clLinkProgram translates the inputs' modules linked
 * together into a new program of binaries and builds it. clGetProgramBuildInfo reports a
 * translation failure as a failed build with its log.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cldm_layer.h"

/* ---- the PTX route ----------------------------------------------------------------------- */

/* The translation failure of a PTX-route program (malloc'd copy), NULL if none or not ours.
 * *ptx is 1 for PTX-route programs. */
static char *cldm_build_ptx_state(cl_program program, int *ptx, int *link_only) {
  cldm_program_lock();
  const cldm_program *p = cldm_program_find(program);
  *ptx = p && p->ptx;
  *link_only = *ptx && p->link_only;
  char *log = *ptx && p->build_log ? strdup(p->build_log) : NULL;
  cldm_program_unlock();
  return log;
}

/* `options` without those that do not apply to an already compiled module: -D name[=value],
 * -I dir (also as two words), -cl-std=..., -x ..., -spir-std=... (malloc'd). */
static char *cldm_build_binary_options(const char *options) {
  size_t n = options ? strlen(options) : 0;
  char *out = malloc(n + 1), *o = out;
  if (!out)
    return NULL;
  const char *p = options ? options : "";
  while (*p) {
    while (*p == ' ' || *p == '\t')
      p++;
    const char *w = p;
    while (*p && *p != ' ' && *p != '\t')
      p++;
    size_t len = (size_t)(p - w);
    if (!len)
      break;
    int two_words = (len == 2 && (!strncmp(w, "-D", 2) || !strncmp(w, "-I", 2))) ||
                    (len == 2 && !strncmp(w, "-x", 2));
    int drop = two_words || !strncmp(w, "-D", 2) || !strncmp(w, "-I", 2) ||
               !strncmp(w, "-cl-std=", 8) || !strncmp(w, "-spir-std=", 10);
    if (two_words) { /* the option's argument is the next word */
      while (*p == ' ' || *p == '\t')
        p++;
      while (*p && *p != ' ' && *p != '\t')
        p++;
    }
    if (!drop) {
      if (o != out)
        *o++ = ' ';
      memcpy(o, w, len);
      o += len;
    }
  }
  *o = '\0';
  return out;
}

cl_int CL_API_CALL clBuildProgram_wrap(cl_program program, cl_uint num_devices,
                                       const cl_device_id *device_list, const char *options,
                                       void(CL_CALLBACK *pfn_notify)(cl_program, void *),
                                       void *user_data) {
  int ptx = 0, link_only = 0;
  char *log = cldm_build_ptx_state(program, &ptx, &link_only);
  if (!ptx)
    return cldm_next->clBuildProgram(program, num_devices, device_list, options, pfn_notify,
                                     user_data);
  if (log) {
    if (link_only)
      cldm_log(CLDM_LOG_ERROR, "clBuildProgram: %s", log);
    free(log);
    if (pfn_notify)
      pfn_notify(program, user_data);
    return CL_BUILD_PROGRAM_FAILURE;
  }
  char *opts = cldm_build_binary_options(options);
  if (!opts)
    return CL_OUT_OF_HOST_MEMORY;
  cl_int err =
      cldm_next->clBuildProgram(program, num_devices, device_list, opts, pfn_notify, user_data);
  free(opts);
  return err;
}

cl_int CL_API_CALL clCompileProgram_wrap(cl_program program, cl_uint num_devices,
                                         const cl_device_id *device_list, const char *options,
                                         cl_uint num_input_headers, const cl_program *input_headers,
                                         const char **header_include_names,
                                         void(CL_CALLBACK *pfn_notify)(cl_program, void *),
                                         void *user_data) {
  int ptx = 0, link_only = 0;
  char *log = cldm_build_ptx_state(program, &ptx, &link_only);
  if (!ptx)
    return cldm_next->clCompileProgram(program, num_devices, device_list, options,
                                       num_input_headers, input_headers, header_include_names,
                                       pfn_notify, user_data);
  if (link_only) { /* compiled means: ready to be linked with what it imports */
    free(log);
    log = NULL;
  }
  if (!log) {
    cldm_program_lock();
    cldm_program *p = cldm_program_find(program);
    if (p)
      p->compiled = 1;
    cldm_program_unlock();
  }
  free(log);
  if (pfn_notify)
    pfn_notify(program, user_data);
  return log ? CL_COMPILE_PROGRAM_FAILURE : CL_SUCCESS;
}

cl_int CL_API_CALL clGetProgramBuildInfo_wrap(cl_program program, cl_device_id device,
                                              cl_program_build_info name, size_t size, void *value,
                                              size_t *size_ret) {
  if (name == CL_PROGRAM_BUILD_STATUS || name == CL_PROGRAM_BUILD_LOG) {
    int ptx = 0, link_only = 0;
    char *log = cldm_build_ptx_state(program, &ptx, &link_only);
    if (log) {
      cl_build_status failed = CL_BUILD_ERROR;
      cl_int err = name == CL_PROGRAM_BUILD_LOG
                       ? cldm_info_return(log, strlen(log) + 1, size, value, size_ret)
                       : cldm_info_return(&failed, sizeof(failed), size, value, size_ret);
      free(log);
      return err;
    }
  }
  return cldm_next->clGetProgramBuildInfo(program, device, name, size, value, size_ret);
}

/* ---- linking ------------------------------------------------------------------------------ */

/* Names input `program` imports: from its record, or from the IL the driver holds for an
 * untracked program made from IL (programs made from source have none to inspect). */
static int cldm_build_imports(cl_program program, char ***names, size_t *n) {
  *names = NULL;
  *n = 0;
  cldm_program_lock();
  const cldm_program *p = cldm_program_find(program);
  int err = p ? cldm_program_names_append(names, n, p->report.imports, p->report.num_imports) : 0;
  cldm_program_unlock();
  if (p || err)
    return err;
  void *il = NULL;
  size_t size = 0;
  if (cldm_next->clGetProgramInfo(program, CL_PROGRAM_IL, 0, NULL, &size) != CL_SUCCESS || !size ||
      !(il = malloc(size)) ||
      cldm_next->clGetProgramInfo(program, CL_PROGRAM_IL, size, il, NULL) != CL_SUCCESS) {
    free(il);
    return 0;
  }
  cldm_spirv_report r;
  if (cldm_spirv_inspect(il, size, &r, NULL) == CLDM_SPIRV_OK) { /* take the names over */
    *names = r.imports;
    *n = r.num_imports;
    r.imports = NULL;
    r.num_imports = 0;
  }
  cldm_spirv_report_free(&r);
  free(il);
  return err;
}

/* Finds a function that one input imports and another, lowered input exports with the heap
 * parameter; writes "<function>" into `what`. Returns 1 if found. */
static int cldm_build_link_conflict(cl_uint num_inputs, const cl_program *inputs, char *what,
                                    size_t cap) {
  int found = 0;
  for (cl_uint i = 0; i < num_inputs && !found; i++) {
    char **imports;
    size_t n;
    if (cldm_build_imports(inputs[i], &imports, &n) != 0)
      continue;
    cldm_program_lock();
    for (cl_uint j = 0; j < num_inputs && !found; j++) {
      const cldm_program *p = j == i ? NULL : cldm_program_find(inputs[j]);
      for (size_t e = 0; p && e < p->report.num_heap_exports && !found; e++)
        for (size_t k = 0; k < n && !found; k++)
          if (!strcmp(imports[k], p->report.heap_exports[e])) {
            snprintf(what, cap, "%s", imports[k]);
            found = 1;
          }
    }
    cldm_program_unlock();
    cldm_program_names_free(imports, n);
  }
  return found;
}

/* The record of a linked program: the kernels and allocating exports of its tracked inputs. */
static cldm_program *cldm_build_link_record(cl_uint num_inputs, const cl_program *inputs,
                                            int *tracked) {
  cldm_program *merged = calloc(1, sizeof(*merged));
  int ok = merged != NULL;
  *tracked = 0;
  cldm_program_lock();
  for (cl_uint i = 0; ok && i < num_inputs; i++) {
    const cldm_program *p = cldm_program_find(inputs[i]);
    if (!p)
      continue;
    (*tracked)++;
    ok = cldm_spirv_report_append(&merged->report, &p->report, NULL) == CLDM_SPIRV_OK;
  }
  cldm_program_unlock();
  if (!ok || !*tracked) {
    cldm_program_free(merged);
    return NULL;
  }
  return merged;
}

/* 1 if some input is a PTX-route program (then all are: one context, one route). */
static int cldm_build_link_ptx_inputs(cl_uint num_inputs, const cl_program *inputs) {
  int any = 0;
  cldm_program_lock();
  for (cl_uint i = 0; i < num_inputs && !any; i++) {
    const cldm_program *p = cldm_program_find(inputs[i]);
    any = p && p->ptx;
  }
  cldm_program_unlock();
  return any;
}

/* clLinkProgram on the PTX route: the inputs' modules translated together into a new program
 * of binaries, built with `options`; takes `merged` (the linked program's record) over. As
 * for a driver's link, a failed link still returns the program when one exists (its build log
 * says why) with CL_LINK_PROGRAM_FAILURE. */
static cl_program cldm_build_link_ptx(cl_context context, cl_uint num_devices,
                                      const cl_device_id *device_list, const char *options,
                                      cl_uint num_inputs, const cl_program *inputs,
                                      void(CL_CALLBACK *pfn_notify)(cl_program, void *),
                                      void *user_data, cldm_program *merged, cl_int *errcode_ret) {
  cl_int err = CL_SUCCESS;
  cl_program program = NULL;
  void **modules = calloc(num_inputs, sizeof(*modules));
  size_t *sizes = calloc(num_inputs, sizeof(*sizes));
  void *devs = NULL;
  size_t devs_size = 0;
  if (!modules || !sizes) {
    err = CL_OUT_OF_HOST_MEMORY;
    goto out;
  }
  cldm_program_lock();
  for (cl_uint i = 0; i < num_inputs && err == CL_SUCCESS; i++) {
    const cldm_program *p = cldm_program_find(inputs[i]);
    if (!p || !p->ptx || !p->module || (p->build_log && !p->link_only))
      err = CL_INVALID_OPERATION; /* linked programs and failed translations cannot be inputs */
    else if (!(modules[i] = malloc(p->module_size)))
      err = CL_OUT_OF_HOST_MEMORY;
    else {
      memcpy(modules[i], p->module, p->module_size);
      sizes[i] = p->module_size;
    }
  }
  cldm_program_unlock();
  if (err == CL_INVALID_OPERATION)
    cldm_log(CLDM_LOG_ERROR, "clLinkProgram: on the PTX route the inputs must be programs "
                             "created from IL whose translation succeeded");
  if (err != CL_SUCCESS)
    goto out;
  if (!device_list) {
    err = cldm_info_fetch(cldm_info_context_query, context, CL_CONTEXT_DEVICES, &devs, &devs_size);
    if (err != CL_SUCCESS)
      goto out;
    device_list = devs;
    num_devices = (cl_uint)(devs_size / sizeof(cl_device_id));
  }
  merged->ptx = 1;
  program = cldm_ptx_program_create(context, num_devices, device_list, (const void *const *)modules,
                                    sizes, num_inputs, options, &merged->build_log, &err);
  if (!program)
    goto out;
  if (merged->build_log) {
    err = CL_LINK_PROGRAM_FAILURE;
  } else {
    char *opts = cldm_build_binary_options(options);
    err = opts ? cldm_next->clBuildProgram(program, num_devices, device_list, opts, NULL, NULL)
               : CL_OUT_OF_HOST_MEMORY;
    free(opts);
    if (err == CL_BUILD_PROGRAM_FAILURE)
      err = CL_LINK_PROGRAM_FAILURE;
  }
  if (err == CL_SUCCESS || err == CL_LINK_PROGRAM_FAILURE) {
    cldm_program_register(program, merged);
    merged = NULL;
    if (pfn_notify)
      pfn_notify(program, user_data);
  } else {
    cldm_next->clReleaseProgram(program);
    program = NULL;
  }
out:
  for (cl_uint i = 0; modules && i < num_inputs; i++)
    free(modules[i]);
  free(modules);
  free(sizes);
  free(devs);
  cldm_program_free(merged);
  if (errcode_ret)
    *errcode_ret = err;
  return program;
}

cl_program CL_API_CALL clLinkProgram_wrap(cl_context context, cl_uint num_devices,
                                          const cl_device_id *device_list, const char *options,
                                          cl_uint num_inputs, const cl_program *inputs,
                                          void(CL_CALLBACK *pfn_notify)(cl_program, void *),
                                          void *user_data, cl_int *errcode_ret) {
  int tracked = 0;
  cldm_program *merged = inputs ? cldm_build_link_record(num_inputs, inputs, &tracked) : NULL;
  char what[256];
  if (merged && num_inputs > 1 &&
      cldm_build_link_conflict(num_inputs, inputs, what, sizeof(what))) {
    cldm_log(CLDM_LOG_ERROR,
             "clLinkProgram: function \"%s\" allocates and is called from another, separately "
             "compiled module, which cannot pass it the heap (spec 5, issue 4); build the modules "
             "as one program instead",
             what);
    cldm_program_free(merged);
    if (errcode_ret)
      *errcode_ret = CL_LINK_PROGRAM_FAILURE;
    return NULL;
  }
  if (merged && cldm_build_link_ptx_inputs(num_inputs, inputs))
    return cldm_build_link_ptx(context, num_devices, device_list, options, num_inputs, inputs,
                               pfn_notify, user_data, merged, errcode_ret);
  cl_program program =
      cldm_next->clLinkProgram(context, num_devices, device_list, options, num_inputs, inputs,
                               pfn_notify, user_data, errcode_ret);
  if (program && merged)
    cldm_program_register(program, merged);
  else
    cldm_program_free(merged);
  return program;
}
