/*
 * layer_source.c — programs created from OpenCL C source (spec 1.5.1, 3.5): which sources the layer
 * looks at, their records (CLDM_PROGRAM_SOURCE, layer_program.c), and the queries on them.
 *
 * clCreateProgramWithSource always creates the driver's source program from exactly the
 * application's strings; that handle is what the application gets, so CL_PROGRAM_SOURCE,
 * CL_PROGRAM_CONTEXT and the rest stay the driver's. If the context has a device the layer
 * serves and a cheap scan of the source (comments, string and character literals skipped)
 * finds an identifier of the extension (malloc, free, calloc, realloc, aligned_alloc,
 * cl_ext_device_malloc) or an #include (whose text the scan cannot see), the layer keeps a
 * record; every other source is never looked at again. At build or compile time
 * (layer_build.c) the source is compiled in-process and the module decides: one that does not
 * allocate is built by the driver from the untouched source; one that does becomes the
 * program's target, a hidden driver program made from the lowered module, and what concerns
 * the built program is answered from the target:
 *   CL_PROGRAM_NUM_KERNELS, CL_PROGRAM_KERNEL_NAMES, CL_PROGRAM_BINARY_SIZES,
 *   CL_PROGRAM_BINARIES, CL_PROGRAM_SCOPE_GLOBAL_CTORS/DTORS_PRESENT   -> the target
 *   kernels (layer_kernel.c)                                           -> made from the target
 *   build status, log, binary type (layer_build.c)                     -> the target's
 * The record goes with its last holder (the application's handles and the kernels that hold
 * the program, counted by the layer: cldm_program.holders), and releases the target with it.
 */
#include <stdlib.h>
#include <string.h>

#include "cldm_layer.h"

/* ---- the scan ---------------------------------------------------------------------------- */

static int cldm_source_ident_start(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static int cldm_source_ident_char(char c) {
  return cldm_source_ident_start(c) || (c >= '0' && c <= '9');
}

static unsigned cldm_source_ident_bits(const char *w, size_t n) {
  static const char *const names[] = {"malloc",        "free", "calloc", "realloc",
                                      "aligned_alloc", "new",  "delete"}; /* C++: spec 2.2 */
  for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
    if (strlen(names[i]) == n && !memcmp(w, names[i], n))
      return CLDM_SOURCE_NAMES;
  if (n == 20 && !memcmp(w, "cl_ext_device_malloc", 20))
    return CLDM_SOURCE_MACRO;
  return 0;
}

unsigned cldm_source_scan(const char *text, size_t n) {
  unsigned bits = 0;
  const char *p = text, *end = text + n;
  int line_start = 1, directive = 0; /* after '#' at the start of a line, until its name */
  while (p < end) {
    char c = *p;
    if (c == '\n') {
      line_start = 1;
      directive = 0;
      p++;
    } else if (c == '/' && p + 1 < end && p[1] == '/') {
      while (p < end && *p != '\n')
        p++;
    } else if (c == '/' && p + 1 < end && p[1] == '*') {
      p += 2;
      while (p + 1 < end && !(p[0] == '*' && p[1] == '/'))
        p++;
      p = p + 1 < end ? p + 2 : end;
    } else if (c == '"' || c == '\'') { /* literals end at their quote or the line's end */
      for (p++; p < end && *p != c && *p != '\n'; p++)
        if (*p == '\\' && p + 1 < end)
          p++;
      if (p < end && *p == c)
        p++;
      line_start = 0;
    } else if (c >= '0' && c <= '9') { /* a pp-number, e.g. 0x1free, is no identifier */
      while (p < end && (cldm_source_ident_char(*p) || *p == '.'))
        p++;
      line_start = 0;
    } else if (cldm_source_ident_start(c)) {
      const char *w = p;
      while (p < end && cldm_source_ident_char(*p))
        p++;
      if (directive && (size_t)(p - w) == 7 && !memcmp(w, "include", 7))
        bits |= CLDM_SOURCE_INCLUDE;
      bits |= cldm_source_ident_bits(w, (size_t)(p - w));
      directive = 0;
      line_start = 0;
    } else if (c == '#' && line_start) {
      directive = 1;
      line_start = 0;
      p++;
    } else {
      if (c != ' ' && c != '\t' && c != '\r')
        line_start = directive = 0;
      p++;
    }
  }
  return bits;
}

/* ---- records ----------------------------------------------------------------------------- */

char *cldm_source_diagnostic_text(cl_program program) {
  const cldm_clc_api *api = cldm_clc();
  size_t hn = 0;
  const char *header = api ? api->header(&hn) : NULL;
  static const char line[] = "\n#line 1\n";
  char *text = NULL;
  cldm_program_lock();
  const cldm_program_source *s = cldm_program_find_source(program);
  if (s && header && (text = malloc(hn + sizeof(line) + s->length)) != NULL) {
    memcpy(text, header, hn);
    memcpy(text + hn, line, sizeof(line) - 1);
    memcpy(text + hn + sizeof(line) - 1, s->text, s->length + 1);
  }
  cldm_program_unlock();
  return text;
}

/* The application's strings joined (malloc'd, NUL-terminated; *n its length), NULL if out of
 * memory or invalid (then the driver answers the call as it would). */
static char *cldm_source_join(cl_uint count, const char **strings, const size_t *lengths,
                              size_t *n) {
  size_t total = 0;
  if (!count || !strings)
    return NULL;
  for (cl_uint i = 0; i < count; i++) {
    if (!strings[i])
      return NULL;
    total += lengths && lengths[i] ? lengths[i] : strlen(strings[i]);
  }
  char *text = malloc(total + 1);
  if (!text)
    return NULL;
  size_t at = 0;
  for (cl_uint i = 0; i < count; i++) {
    size_t len = lengths && lengths[i] ? lengths[i] : strlen(strings[i]);
    memcpy(text + at, strings[i], len);
    at += len;
  }
  text[at] = '\0';
  *n = at;
  return text;
}

cl_program CL_API_CALL clCreateProgramWithSource_wrap(cl_context context, cl_uint count,
                                                      const char **strings, const size_t *lengths,
                                                      cl_int *errcode_ret) {
  cl_program program =
      cldm_next->clCreateProgramWithSource(context, count, strings, lengths, errcode_ret);
  if (!program)
    return NULL;
  unsigned features;
  cldm_device_route route = cldm_device_context_route(context, &features);
  size_t n = 0;
  char *text = route != CLDM_ROUTE_NONE ? cldm_source_join(count, strings, lengths, &n) : NULL;
  unsigned bits = text ? cldm_source_scan(text, n) : 0;
  /* The PTX route keeps every source: linking a layer-built module with another separately
   * compiled one needs that one's module too (layer_link.c). */
  if (!text || (!bits && route != CLDM_ROUTE_PTX)) {
    free(text);
    return program; /* never looked at again */
  }
  cldm_program *rec = cldm_program_new(CLDM_PROGRAM_SOURCE);
  if (!rec) {
    free(text);
    cldm_log(CLDM_LOG_ERROR, "out of host memory tracking program %p", (void *)program);
    return program;
  }
  cldm_program_source *s = &rec->source;
  s->text = text;
  s->length = n;
  s->scan = bits;
  s->context = context;
  s->route = route;
  cldm_program_register(program, rec); /* one holder: the application's handle */
  cldm_log(CLDM_LOG_DEBUG, "program %p: source of %zu bytes may use the extension (scan %#x)",
           (void *)program, n, bits);
  return program;
}

/* ---- queries ----------------------------------------------------------------------------- */

/* 1 for the program queries that concern the built program, which a target answers. */
static int cldm_source_target_query(cl_program_info name) {
  switch (name) {
  case CL_PROGRAM_NUM_KERNELS:
  case CL_PROGRAM_KERNEL_NAMES:
  case CL_PROGRAM_BINARY_SIZES:
  case CL_PROGRAM_BINARIES:
  case CL_PROGRAM_SCOPE_GLOBAL_CTORS_PRESENT:
  case CL_PROGRAM_SCOPE_GLOBAL_DTORS_PRESENT:
    return 1;
  default:
    return 0;
  }
}

cl_int CL_API_CALL clGetProgramInfo_wrap(cl_program program, cl_program_info name, size_t size,
                                         void *value, size_t *size_ret) {
  cl_int err;
  if (name == CL_PROGRAM_IL && cldm_program_il_info(program, size, value, size_ret, &err))
    return err;
  cl_program target = cldm_source_target_query(name) ? cldm_program_target(program) : NULL;
  if (target) {
    err = clGetProgramInfo_wrap(target, name, size, value, size_ret);
    cldm_next->clReleaseProgram(target);
    return err;
  }
  err = cldm_next->clGetProgramInfo(program, name, size, value, size_ret);
  if (err == CL_SUCCESS && name == CL_PROGRAM_BINARIES && value && cldm_program_tracked(program))
    cldm_binary_remember(program, size / sizeof(unsigned char *), (unsigned char *const *)value);
  return err;
}
