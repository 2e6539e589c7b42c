/*
 * layer_build.c — building and compiling programs (spec 1.5, 1.5.1, 3.5).
 *
 * SPIR-V route: clBuildProgram and clCompileProgram of programs made from IL go to the driver
 * unchanged.
 * PTX route (layer_ptx.c): the driver program holds PTX, which the driver can only build.
 * clBuildProgram fails with the translation's log where the translation failed, and otherwise
 * builds the PTX with the options that apply to it (preprocessor and language options do not
 * apply to a module that is already compiled: spec 1.5). clCompileProgram has nothing left to
 * compile and records that it succeeded. clGetProgramBuildInfo reports a translation failure
 * as a failed build with its log.
 * Source programs the layer keeps (layer_source.c): the source is compiled in-process for the
 * first device (layer_clc.c), with the options and, for clCompileProgram, the input headers.
 *   - it does not compile: on the SPIR-V route the driver compiles the same source with the
 *     extension's declarations in front ("#line 1" keeps the line numbers), so the build log
 *     is the driver's own; on the PTX route (and if the driver compiles it after all) the log
 *     is the compiler's, in clang's format ("<kernel>:<line>:<col>: error: ...", as NVIDIA's
 *     compiler names a program's source). The build fails with that log.
 *   - the module does not allocate: the driver builds (compiles) the untouched source, with
 *     cl_ext_device_malloc defined (CL_PROGRAM_BUILD_OPTIONS still reports the application's
 *     options).
 *   - it allocates: the module, lowered, becomes the program's target (a driver program made
 *     from IL, or on the PTX route from PTX), built (compiled) with the options that apply to
 *     a compiled module; with -cl-kernel-arg-info the compiler's argument information goes
 *     with it. The build status, log and binary type are the target's.
 * The build is synchronous; pfn_notify is called before the call returns.
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

char *cldm_build_binary_options(const char *options) {
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

/* ---- source programs ------------------------------------------------------------------------ */

/* One clBuildProgram or clCompileProgram call. */
typedef struct cldm_build_call {
  int compile;
  cl_program program;
  cl_uint num_devices;
  const cl_device_id *devices;
  const char *options;
  cl_uint num_headers;
  const cl_program *headers;
  const char **header_names;
  void(CL_CALLBACK *pfn_notify)(cl_program, void *);
  void *user_data;
} cldm_build_call;

/* The call made on `program` through the next table with `options`. */
static cl_int cldm_build_next(const cldm_build_call *c, cl_program program, const char *options,
                              int notify) {
  void(CL_CALLBACK * pfn)(cl_program, void *) = notify ? c->pfn_notify : NULL;
  if (c->compile)
    return cldm_next->clCompileProgram(program, c->num_devices, c->devices, options, c->num_headers,
                                       c->headers, c->header_names, pfn, c->user_data);
  return cldm_next->clBuildProgram(program, c->num_devices, c->devices, options, pfn, c->user_data);
}

/* The build log the driver wrote for `program` on `device` (malloc'd), or NULL. */
static char *cldm_build_driver_log(cl_program program, cl_device_id device) {
  size_t n = 0;
  if (cldm_next->clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, 0, NULL, &n) !=
          CL_SUCCESS ||
      !n)
    return NULL;
  char *log = calloc(1, n + 1);
  if (log && cldm_next->clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, n, log,
                                              NULL) != CL_SUCCESS) {
    free(log);
    return NULL;
  }
  return log;
}

/* The driver's own diagnostics for a source that does not compile (SPIR-V route): the same
 * call on a hidden program of the source with the extension's declarations in front. Returns
 * the driver's error and its log in *log; CL_SUCCESS if the driver compiles it after all. */
static cl_int cldm_build_diagnose(const cldm_build_call *c, cl_context context, cl_device_id device,
                                  char **log) {
  *log = NULL;
  char *text = cldm_source_diagnostic_text(c->program);
  cl_int err = CL_OUT_OF_HOST_MEMORY;
  cl_program diag =
      text ? cldm_next->clCreateProgramWithSource(context, 1, (const char **)&text, NULL, &err)
           : NULL;
  free(text);
  if (!diag)
    return err;
  err = cldm_build_next(c, diag, c->options, 0);
  if (err != CL_SUCCESS)
    *log = cldm_build_driver_log(diag, device);
  cldm_next->clReleaseProgram(diag);
  return err;
}

/* The sources of clCompileProgram's header programs (malloc'd array of malloc'd strings, as
 * the driver returns CL_PROGRAM_SOURCE), NULL if out of memory or a header has none. */
static char **cldm_build_header_sources(const cldm_build_call *c) {
  char **src = calloc(c->num_headers ? c->num_headers : 1, sizeof(*src));
  for (cl_uint i = 0; src && i < c->num_headers; i++) {
    size_t n = 0;
    if (cldm_next->clGetProgramInfo(c->headers[i], CL_PROGRAM_SOURCE, 0, NULL, &n) != CL_SUCCESS ||
        !(src[i] = calloc(1, n + 1)) ||
        cldm_next->clGetProgramInfo(c->headers[i], CL_PROGRAM_SOURCE, n, src[i], NULL) !=
            CL_SUCCESS) {
      cldm_program_names_free(src, c->num_headers);
      return NULL;
    }
  }
  return src;
}

/* 1 if the space-separated `options` hold the word `word`. */
static int cldm_build_has_option(const char *options, const char *word) {
  size_t n = strlen(word);
  for (const char *p = options ? options : ""; (p = strstr(p, word)) != NULL; p += n)
    if ((p == options || p[-1] == ' ' || p[-1] == '\t') &&
        (p[n] == '\0' || p[n] == ' ' || p[n] == '\t'))
      return 1;
  return 0;
}

/* Replaces the outcome of the record of c->program (under the records' lock); takes `target`,
 * `log`, `module` and `report` over, and releases the target it replaces (after the lock). */
static void cldm_build_set_outcome(const cldm_build_call *c, int failed, cl_program target,
                                   char *log, void *module, size_t module_size,
                                   cldm_spirv_report *report) {
  cl_program old = NULL;
  char *options = strdup(c->options ? c->options : "");
  cldm_program_lock();
  cldm_program_source *s = cldm_program_find_source(c->program);
  if (s) {
    old = s->target;
    s->target = target;
    s->failed = failed;
    free(s->log);
    s->log = log;
    free(s->options);
    s->options = options;
    s->type = CL_PROGRAM_BINARY_TYPE_NONE;
    if (module) {
      free(s->module);
      cldm_spirv_report_free(&s->report);
      s->module = module;
      s->module_size = module_size;
      s->report = *report;
      memset(report, 0, sizeof(*report));
      module = NULL;
    }
    log = options = NULL;
    target = NULL;
  }
  cldm_program_unlock();
  free(log);
  free(options);
  free(module);
  if (report)
    cldm_spirv_report_free(report);
  if (target)
    old = target; /* the record is gone: the new target goes instead */
  if (old)
    clReleaseProgram_wrap(old);
}

/* The build of c failed with `log` (taken over): recorded, the callback told; returns `err`. */
static cl_int cldm_build_fail(const cldm_build_call *c, char *log, cl_int err) {
  cldm_build_set_outcome(c, 1, NULL, log, NULL, 0, NULL);
  if (c->pfn_notify)
    c->pfn_notify(c->program, c->user_data);
  return err;
}

/* ---- building a source program, step by step ------------------------------------------- */

/* What a build of a source program carries from one step to the next. */
typedef struct cldm_build_job {
  const cldm_build_call *call;
  char *text; /* from the record: a copy of the source, its scan, route and context */
  unsigned scan;
  cldm_device_route route;
  cl_context context;
  cl_device_id device;    /* the device the source is compiled for, or NULL */
  int compiled;           /* the compiler ran: `out` and `status` hold its answer */
  cldm_clc_result out;    /* owned once compiled */
  cldm_clc_status status; /* CLDM_CLC_OK: `out` holds the module */
  void *module;           /* a copy of the module, read by the engine; owned */
  size_t module_size;
  cldm_spirv_report report; /* the engine's report on `module`; owned */
} cldm_build_job;

static void cldm_build_job_free(cldm_build_job *job) {
  free(job->text);
  free(job->module);
  cldm_spirv_report_free(&job->report);
  if (job->compiled)
    cldm_clc_result_release(&job->out);
}

/* Copies the text, scan, route and context of the program's record: CL_INVALID_OPERATION if
 * kernel objects are attached to the program (as a driver refuses the build), else CL_SUCCESS. */
static cl_int cldm_build_read_record(cldm_build_job *job) {
  cldm_program_lock();
  const cldm_program_source *s = cldm_program_find_source(job->call->program);
  int busy = s && s->kernels > 0;
  if (s && !busy) {
    job->text = strdup(s->text);
    job->scan = s->scan;
    job->route = s->route;
    job->context = s->context;
  }
  cldm_program_unlock();
  return busy ? CL_INVALID_OPERATION : CL_SUCCESS;
}

/* Picks the device to compile for: the call's first device, else the context's first. */
static void cldm_build_pick_device(cldm_build_job *job) {
  const cldm_build_call *c = job->call;
  void *devs = NULL;
  size_t size = 0;
  job->device = c->num_devices && c->devices ? c->devices[0] : NULL;
  if (!job->device &&
      cldm_info_fetch(cldm_info_context_query, job->context, CL_CONTEXT_DEVICES, &devs, &size) ==
          CL_SUCCESS &&
      size >= sizeof(cl_device_id))
    job->device = ((cl_device_id *)devs)[0];
  free(devs);
}

/* Compiles the source in-process with the call's options and headers: CL_SUCCESS (job->status
 * says whether it compiled), CL_INVALID_OPERATION with no compiler, device or reason to compile
 * (a source kept only for links is compiled by clCompileProgram only), CL_OUT_OF_HOST_MEMORY. */
static cl_int cldm_build_compile(cldm_build_job *job) {
  const cldm_build_call *c = job->call;
  char **headers =
      job->text && job->device && (job->scan || c->compile) ? cldm_build_header_sources(c) : NULL;
  cl_int err = headers
                   ? cldm_clc_compile(job->device, job->text, c->options, c->num_headers,
                                      (const char *const *)headers,
                                      (const char *const *)c->header_names, &job->out, &job->status)
                   : CL_INVALID_OPERATION;
  cldm_program_names_free(headers, c->num_headers);
  job->compiled = err == CL_SUCCESS;
  return err;
}

/* Copies the compiled module into job->module and reads it with the engine (job->report): 1, or
 * 0 (nothing kept) if the engine cannot read it. */
static int cldm_build_inspect(cldm_build_job *job) {
  void *module = malloc(job->out.spirv_size ? job->out.spirv_size : 1);
  if (!module || cldm_spirv_inspect(job->out.spirv, job->out.spirv_size, &job->report, NULL) !=
                     CLDM_SPIRV_OK) {
    free(module);
    cldm_spirv_report_free(&job->report);
    return 0;
  }
  memcpy(module, job->out.spirv, job->out.spirv_size);
  job->module = module;
  job->module_size = job->out.spirv_size;
  return 1;
}

/* Outcome: the driver builds (compiles) the source itself with `options`; the record keeps the
 * module read by cldm_build_inspect, if any, for links. */
static cl_int cldm_build_by_driver(cldm_build_job *job, const char *options) {
  const cldm_build_call *c = job->call;
  cldm_build_set_outcome(c, 0, NULL, NULL, job->module, job->module_size, &job->report);
  job->module = NULL; /* taken over */
  return cldm_build_next(c, c->program, options, 1);
}

/* Outcome: the module does not allocate; the driver builds the untouched source with
 * cl_ext_device_malloc defined (CL_PROGRAM_BUILD_OPTIONS still reports the application's). */
static cl_int cldm_build_untouched(cldm_build_job *job) {
  const char *options = job->call->options;
  size_t n = options ? strlen(options) : 0;
  char *opts = malloc(n + 40);
  if (!opts)
    return CL_OUT_OF_HOST_MEMORY;
  snprintf(opts, n + 40, "%s%s-D cl_ext_device_malloc=1", options ? options : "", n ? " " : "");
  cl_int err = cldm_build_by_driver(job, opts);
  free(opts);
  return err;
}

/* Outcome: the source does not compile; the build fails with the driver's own diagnostics
 * (SPIR-V route, cldm_build_diagnose; not for C++ for OpenCL, whose option drivers that take no
 * C++, pocl's among them, could only refuse) or else the compiler's log. */
static cl_int cldm_build_not_compiled(cldm_build_job *job) {
  const cldm_build_call *c = job->call;
  char *log = NULL;
  int cxx = c->options && strstr(c->options, "-cl-std=CLC++");
  cl_int err = job->route == CLDM_ROUTE_SPIRV && !cxx
                   ? cldm_build_diagnose(c, job->context, job->device, &log)
                   : CL_SUCCESS;
  if (err == CL_SUCCESS || !log) {
    free(log);
    log = job->out.log ? strdup(job->out.log) : strdup("error: the source does not compile\n");
    err = c->compile ? CL_COMPILE_PROGRAM_FAILURE : CL_BUILD_PROGRAM_FAILURE;
  }
  cldm_log(CLDM_LOG_INFO, "program %p does not compile: %s", (void *)c->program, log ? log : "");
  return cldm_build_fail(c, log, err);
}

/* Outcome: the module allocates; its lowered form becomes the program's target, with the
 * compiler's argument information under -cl-kernel-arg-info, built (compiled) with the options
 * that apply to a compiled module. The build fails if the module cannot be lowered. */
static cl_int cldm_build_target(cldm_build_job *job) {
  const cldm_build_call *c = job->call;
  char why[300] = "";
  cl_int err;
  cl_program target =
      cldm_il_create_target(job->context, job->module, job->module_size, why, sizeof(why), &err);
  if (!target) {
    char *log = malloc(strlen(why) + 64);
    if (log)
      snprintf(log, strlen(why) + 64, "error: the module cannot be lowered: %s\n",
               *why ? why : "(no reason given)");
    cldm_log(CLDM_LOG_ERROR, "clBuildProgram: %s", log ? log : why);
    return cldm_build_fail(c, log,
                           err == CL_OUT_OF_HOST_MEMORY ? err
                           : c->compile                 ? CL_COMPILE_PROGRAM_FAILURE
                                                        : CL_BUILD_PROGRAM_FAILURE);
  }
  if (cldm_build_has_option(c->options, "-cl-kernel-arg-info")) {
    cldm_arg_table args;
    if (cldm_clc_arg_table(&job->out, &args) == 0)
      cldm_program_set_args(target, &args);
  }
  char *warnings = job->out.log && *job->out.log ? strdup(job->out.log) : NULL;
  char *opts = cldm_build_binary_options(c->options);
  if (!opts)
    err = CL_OUT_OF_HOST_MEMORY;
  else if (c->compile)
    err =
        clCompileProgram_wrap(target, c->num_devices, c->devices, opts, 0, NULL, NULL, NULL, NULL);
  else
    err = clBuildProgram_wrap(target, c->num_devices, c->devices, opts, NULL, NULL);
  free(opts);
  cldm_build_set_outcome(c, 0, target, warnings, job->module, job->module_size, &job->report);
  job->module = NULL; /* taken over */
  cldm_log(CLDM_LOG_INFO, "program %p: built from its compiled module as program %p (%d)",
           (void *)c->program, (void *)target, err);
  if (c->pfn_notify)
    c->pfn_notify(c->program, c->user_data);
  return err;
}

/* clBuildProgram / clCompileProgram of a source program the layer keeps (see the top): the
 * steps above, then the one outcome that applies. */
static cl_int cldm_build_source(const cldm_build_call *c) {
  cldm_build_job job;
  memset(&job, 0, sizeof(job));
  job.call = c;
  job.status = CLDM_CLC_E_INVALID_ARG;
  cl_int err = cldm_build_read_record(&job);
  if (err != CL_SUCCESS)
    goto out;
  cldm_build_pick_device(&job);
  err = cldm_build_compile(&job);
  if (err == CL_OUT_OF_HOST_MEMORY)
    goto out;
  if (err != CL_SUCCESS || !job.scan) { /* no compiler, or a source kept only for links */
    if (err == CL_SUCCESS && job.status == CLDM_CLC_OK)
      cldm_build_inspect(&job);
    err = cldm_build_by_driver(&job, c->options);
  } else if (job.status != CLDM_CLC_OK)
    err = cldm_build_not_compiled(&job);
  else if (!cldm_build_inspect(&job)) /* the engine cannot read it: the driver judges the source */
    err = cldm_build_by_driver(&job, c->options);
  else if (!job.report.allocates)
    err = cldm_build_untouched(&job);
  else
    err = cldm_build_target(&job);
out:
  cldm_build_job_free(&job);
  return err;
}

/* 1 if `program` is a source program the layer keeps. */
static int cldm_build_is_source(cl_program program) {
  cldm_program_lock();
  int is = cldm_program_find_source(program) != NULL;
  cldm_program_unlock();
  return is;
}

/* ---- the entry points ------------------------------------------------------------------------ */

cl_int CL_API_CALL clBuildProgram_wrap(cl_program program, cl_uint num_devices,
                                       const cl_device_id *device_list, const char *options,
                                       void(CL_CALLBACK *pfn_notify)(cl_program, void *),
                                       void *user_data) {
  if (cldm_build_is_source(program)) {
    cldm_build_call c = {0, program, num_devices, device_list, options,
                         0, NULL,    NULL,        pfn_notify,  user_data};
    return cldm_build_source(&c);
  }
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
  if (cldm_build_is_source(program)) {
    cldm_build_call c = {1,          program,           num_devices,   device_list,
                         options,    num_input_headers, input_headers, header_include_names,
                         pfn_notify, user_data};
    return cldm_build_source(&c);
  }
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

/* The build information of a source program the layer keeps: 1 (with *err) if answered. */
static int cldm_build_source_info(cl_program program, cl_device_id device,
                                  cl_program_build_info name, size_t size, void *value,
                                  size_t *size_ret, cl_int *err) {
  cldm_program_lock();
  cldm_program_source *s = cldm_program_find_source(program);
  if (!s || !s->options) { /* not kept, or not built through the layer yet */
    cldm_program_unlock();
    return 0;
  }
  int answered = 1;
  cl_program target = s->target;
  if (name == CL_PROGRAM_BUILD_OPTIONS)
    *err = cldm_info_return(s->options, strlen(s->options) + 1, size, value, size_ret);
  else if (s->failed && name == CL_PROGRAM_BUILD_STATUS) {
    cl_build_status failed = CL_BUILD_ERROR;
    *err = cldm_info_return(&failed, sizeof(failed), size, value, size_ret);
  } else if (s->failed && name == CL_PROGRAM_BUILD_LOG) {
    const char *log = s->log ? s->log : "";
    *err = cldm_info_return(log, strlen(log) + 1, size, value, size_ret);
  } else if (s->failed && name == CL_PROGRAM_BINARY_TYPE)
    *err = cldm_info_return(&s->type, sizeof(s->type), size, value, size_ret);
  else
    answered = 0; /* the target's answer, if there is a target; else the driver's */
  if (answered || !target) {
    cldm_program_unlock();
    return answered;
  }
  char *warnings = name == CL_PROGRAM_BUILD_LOG && s->log ? strdup(s->log) : NULL;
  cldm_next->clRetainProgram(target);
  cldm_program_unlock();
  if (!warnings) {
    *err = clGetProgramBuildInfo_wrap(target, device, name, size, value, size_ret);
  } else { /* the compiler's warnings, then the driver's log of the target */
    size_t n = 0;
    char *log = NULL;
    *err = clGetProgramBuildInfo_wrap(target, device, name, 0, NULL, &n);
    if (*err == CL_SUCCESS && !(log = calloc(1, strlen(warnings) + n + 1)))
      *err = CL_OUT_OF_HOST_MEMORY;
    if (*err == CL_SUCCESS) {
      strcpy(log, warnings);
      *err = clGetProgramBuildInfo_wrap(target, device, name, n, log + strlen(warnings), NULL);
    }
    if (*err == CL_SUCCESS)
      *err = cldm_info_return(log, strlen(log) + 1, size, value, size_ret);
    free(log);
    free(warnings);
  }
  cldm_next->clReleaseProgram(target);
  return 1;
}

cl_int CL_API_CALL clGetProgramBuildInfo_wrap(cl_program program, cl_device_id device,
                                              cl_program_build_info name, size_t size, void *value,
                                              size_t *size_ret) {
  cl_int err = CL_SUCCESS;
  if (cldm_build_source_info(program, device, name, size, value, size_ret, &err))
    return err;
  if (name == CL_PROGRAM_BUILD_STATUS || name == CL_PROGRAM_BUILD_LOG) {
    int ptx = 0, link_only = 0;
    char *log = cldm_build_ptx_state(program, &ptx, &link_only);
    if (log) {
      cl_build_status failed = CL_BUILD_ERROR;
      err = name == CL_PROGRAM_BUILD_LOG
                ? cldm_info_return(log, strlen(log) + 1, size, value, size_ret)
                : cldm_info_return(&failed, sizeof(failed), size, value, size_ret);
      free(log);
      return err;
    }
  }
  return cldm_next->clGetProgramBuildInfo(program, device, name, size, value, size_ret);
}
