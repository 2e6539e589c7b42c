/*
 * layer_link.c — linking programs (spec 1.5).
 *
 * Inputs that are source programs with a target (layer_source.c) take part through their
 * target. SPIR-V route: the driver links; the linked program gets a record with the kernel
 * tables (and argument information) of the inputs' records. Links in which a module calls an
 * allocating function another module exports are refused (the caller cannot pass the heap:
 * spec 5, issue 4).
 * PTX route: the inputs' modules are translated together into a new program of binaries
 * (layer_ptx.c), which is then built; an input source program without a target (its module
 * does not allocate) takes part with the module the layer compiled from it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cldm_layer.h"

/* The imports of a program the driver compiled from source on its own (the layer kept no
 * module of it): its source compiled again, with the options of its compile, for its first
 * device. Nothing if that fails (a compile that needed input headers, for instance). */
static int cldm_link_source_imports(cl_program program, char ***names, size_t *n) {
  size_t size = 0;
  char *src = NULL, *opts = NULL;
  cl_device_id device = NULL;
  if (cldm_next->clGetProgramInfo(program, CL_PROGRAM_SOURCE, 0, NULL, &size) != CL_SUCCESS ||
      size < 2 || !(src = calloc(1, size + 1)) ||
      cldm_next->clGetProgramInfo(program, CL_PROGRAM_SOURCE, size, src, NULL) != CL_SUCCESS ||
      cldm_next->clGetProgramInfo(program, CL_PROGRAM_DEVICES, sizeof(device), &device, NULL) !=
          CL_SUCCESS ||
      cldm_next->clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_OPTIONS, 0, NULL, &size) !=
          CL_SUCCESS ||
      !(opts = calloc(1, size + 1)) ||
      cldm_next->clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_OPTIONS, size, opts,
                                       NULL) != CL_SUCCESS) {
    free(src);
    free(opts);
    return 0;
  }
  cldm_clc_result out;
  cldm_clc_status st;
  if (cldm_clc_compile(device, src, opts, 0, NULL, NULL, &out, &st) == CL_SUCCESS) {
    cldm_spirv_report r;
    if (st == CLDM_CLC_OK &&
        cldm_spirv_inspect(out.spirv, out.spirv_size, &r, NULL) == CLDM_SPIRV_OK) {
      *names = r.imports; /* take the names over */
      *n = r.num_imports;
      r.imports = NULL;
      r.num_imports = 0;
      cldm_spirv_report_free(&r);
    }
    cldm_clc_result_release(&out);
  }
  free(src);
  free(opts);
  return 0;
}

/* Names input `program` imports: from its record, from the module the layer compiled from a
 * source program, from the IL the driver holds for an untracked program made from IL, or from
 * the source of one the driver compiled on its own. */
static int cldm_link_imports(cl_program program, char ***names, size_t *n) {
  *names = NULL;
  *n = 0;
  cldm_program_lock();
  const cldm_program *p = cldm_program_find(program);
  /* a source program's record knows the imports only if the layer compiled it */
  const cldm_spirv_report *known = !p                               ? NULL
                                   : p->kind != CLDM_PROGRAM_SOURCE ? &p->report
                                   : p->source.module               ? &p->source.report
                                                                    : NULL;
  int err = known ? cldm_program_names_append(names, n, known->imports, known->num_imports) : 0;
  cldm_program_unlock();
  if (known || err)
    return err;
  void *il = NULL;
  size_t size = 0;
  if (cldm_next->clGetProgramInfo(program, CL_PROGRAM_IL, 0, NULL, &size) != CL_SUCCESS || !size ||
      !(il = malloc(size)) ||
      cldm_next->clGetProgramInfo(program, CL_PROGRAM_IL, size, il, NULL) != CL_SUCCESS) {
    free(il);
    return cldm_link_source_imports(program, names, n);
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

/* 1 if some input's record exports a function that takes the heap. */
static int cldm_link_any_heap_export(cl_uint num_inputs, const cl_program *inputs) {
  int any = 0;
  cldm_program_lock();
  for (cl_uint i = 0; i < num_inputs && !any; i++) {
    const cldm_program *p = cldm_program_find(inputs[i]);
    any = p && p->report.num_heap_exports > 0;
  }
  cldm_program_unlock();
  return any;
}

/* Finds a function that one input imports and another, lowered input exports with the heap
 * parameter; writes "<function>" into `what`. Returns 1 if found. */
static int cldm_link_conflict(cl_uint num_inputs, const cl_program *inputs, char *what,
                              size_t cap) {
  int found = 0;
  if (!cldm_link_any_heap_export(num_inputs, inputs))
    return 0;
  for (cl_uint i = 0; i < num_inputs && !found; i++) {
    char **imports;
    size_t n;
    if (cldm_link_imports(inputs[i], &imports, &n) != 0)
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
static cldm_program *cldm_link_record(cl_uint num_inputs, const cl_program *inputs, int *tracked) {
  cldm_program *merged = cldm_program_new(CLDM_PROGRAM_LINKED);
  int ok = merged != NULL;
  *tracked = 0;
  cldm_program_lock();
  for (cl_uint i = 0; ok && i < num_inputs; i++) {
    const cldm_program *p = cldm_program_find(inputs[i]);
    if (!p || p->kind == CLDM_PROGRAM_SOURCE) /* a source program without a target */
      continue;
    (*tracked)++;
    ok = cldm_spirv_report_append(&merged->report, &p->report, NULL) == CLDM_SPIRV_OK &&
         cldm_arg_table_append(&merged->args, &p->args) == 0;
  }
  cldm_program_unlock();
  if (!ok || !*tracked) {
    cldm_program_free(merged);
    return NULL;
  }
  return merged;
}

/* 1 if some input is a PTX-route program (then all are: one context, one route). */
static int cldm_link_ptx_inputs(cl_uint num_inputs, const cl_program *inputs) {
  int any = 0;
  cldm_program_lock();
  for (cl_uint i = 0; i < num_inputs && !any; i++) {
    const cldm_program *p = cldm_program_find(inputs[i]);
    any = p && p->ptx;
  }
  cldm_program_unlock();
  return any;
}

/* The module an input takes part with on the PTX route (a copy in *module): a program made from
 * IL (its translation not failed), or a source program the layer compiled. */
static cl_int cldm_link_ptx_module(cl_program input, void **module, size_t *size) {
  cl_int err = CL_INVALID_OPERATION;
  cldm_program_lock();
  const cldm_program *p = cldm_program_find(input);
  const void *from = NULL;
  size_t from_size = 0;
  if (p && p->kind == CLDM_PROGRAM_SOURCE && p->source.module && !p->source.target) {
    from = p->source.module;
    from_size = p->source.module_size;
  } else if (p && p->ptx && p->module && (!p->build_log || p->link_only)) {
    from = p->module;
    from_size = p->module_size;
  }
  if (from) {
    err = (*module = malloc(from_size)) ? CL_SUCCESS : CL_OUT_OF_HOST_MEMORY;
    if (*module) {
      memcpy(*module, from, from_size);
      *size = from_size;
    }
  }
  cldm_program_unlock();
  return err;
}

/* clLinkProgram on the PTX route: the inputs' modules translated together into a new program
 * of binaries, built with `options`; takes `merged` (the linked program's record) over. As
 * for a driver's link, a failed link still returns the program when one exists (its build log
 * says why) with CL_LINK_PROGRAM_FAILURE. */
static cl_program cldm_link_ptx(cl_context context, cl_uint num_devices,
                                const cl_device_id *device_list, const char *options,
                                cl_uint num_inputs, const cl_program *inputs,
                                void(CL_CALLBACK *pfn_notify)(cl_program, void *), void *user_data,
                                cldm_program *merged, cl_int *errcode_ret) {
  cl_int err = CL_SUCCESS;
  cl_program program = NULL;
  void **modules = calloc(num_inputs, sizeof(*modules));
  size_t *sizes = calloc(num_inputs, sizeof(*sizes));
  void *devs = NULL;
  size_t devs_size = 0;
  unsigned *cc = NULL;
  if (!modules || !sizes) {
    err = CL_OUT_OF_HOST_MEMORY;
    goto out;
  }
  for (cl_uint i = 0; i < num_inputs && err == CL_SUCCESS; i++)
    err = cldm_link_ptx_module(inputs[i], &modules[i], &sizes[i]);
  if (err == CL_INVALID_OPERATION)
    cldm_log(CLDM_LOG_ERROR, "clLinkProgram: on the PTX route the inputs must be programs "
                             "created from IL whose translation succeeded, or compiled source "
                             "programs");
  if (err != CL_SUCCESS)
    goto out;
  if (!device_list) {
    err = cldm_info_fetch(cldm_info_context_query, context, CL_CONTEXT_DEVICES, &devs, &devs_size);
    if (err != CL_SUCCESS)
      goto out;
    device_list = devs;
    num_devices = (cl_uint)(devs_size / sizeof(cl_device_id));
  }
  if (!(cc = calloc(num_devices ? num_devices : 1, sizeof(*cc)))) {
    err = CL_OUT_OF_HOST_MEMORY;
    goto out;
  }
  cldm_device_compute_capabilities(num_devices, device_list, cc);
  merged->ptx = 1;
  program = cldm_ptx_program_create(context, num_devices, device_list, cc,
                                    (const void *const *)modules, sizes, num_inputs, options,
                                    &merged->report, &merged->build_log, &err);
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
  free(cc);
  cldm_program_free(merged);
  if (errcode_ret)
    *errcode_ret = err;
  return program;
}

/* The inputs as they take part: source programs with a target by their target (retained;
 * released by cldm_link_inputs_release). NULL if out of memory. */
static cl_program *cldm_link_inputs(cl_uint num_inputs, const cl_program *inputs) {
  cl_program *mapped = calloc(num_inputs ? num_inputs : 1, sizeof(*mapped));
  for (cl_uint i = 0; mapped && i < num_inputs; i++) {
    cl_program target = cldm_program_target(inputs[i]);
    mapped[i] = target ? target : inputs[i];
  }
  return mapped;
}

static void cldm_link_inputs_release(cl_uint num_inputs, const cl_program *inputs,
                                     cl_program *mapped) {
  for (cl_uint i = 0; mapped && i < num_inputs; i++)
    if (mapped[i] != inputs[i])
      cldm_next->clReleaseProgram(mapped[i]);
  free(mapped);
}

cl_program CL_API_CALL clLinkProgram_wrap(cl_context context, cl_uint num_devices,
                                          const cl_device_id *device_list, const char *options,
                                          cl_uint num_inputs, const cl_program *inputs,
                                          void(CL_CALLBACK *pfn_notify)(cl_program, void *),
                                          void *user_data, cl_int *errcode_ret) {
  cl_program *mapped = inputs ? cldm_link_inputs(num_inputs, inputs) : NULL;
  if (inputs && !mapped) {
    if (errcode_ret)
      *errcode_ret = CL_OUT_OF_HOST_MEMORY;
    return NULL;
  }
  const cl_program *in = mapped ? mapped : inputs;
  int tracked = 0;
  cldm_program *merged = in ? cldm_link_record(num_inputs, in, &tracked) : NULL;
  char what[256];
  cl_program program = NULL;
  if (merged && num_inputs > 1 && cldm_link_conflict(num_inputs, in, what, sizeof(what))) {
    cldm_log(CLDM_LOG_ERROR,
             "clLinkProgram: function \"%s\" allocates and is called from another, separately "
             "compiled module, which cannot pass it the heap (spec 5, issue 4); build the modules "
             "as one program instead",
             what);
    cldm_program_free(merged);
    if (errcode_ret)
      *errcode_ret = CL_LINK_PROGRAM_FAILURE;
  } else if (merged && cldm_link_ptx_inputs(num_inputs, in)) {
    program = cldm_link_ptx(context, num_devices, device_list, options, num_inputs, in, pfn_notify,
                            user_data, merged, errcode_ret);
  } else {
    program = cldm_next->clLinkProgram(context, num_devices, device_list, options, num_inputs, in,
                                       pfn_notify, user_data, errcode_ret);
    if (program && merged)
      cldm_program_register(program, merged);
    else
      cldm_program_free(merged);
  }
  cldm_link_inputs_release(num_inputs, inputs, mapped);
  return program;
}
