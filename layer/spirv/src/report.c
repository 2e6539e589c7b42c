/*
 * report.c — what the layer needs to know about a module (spec 3.2, last paragraph): per
 * kernel, its name, how many arguments the application sees, whether the lowered kernel
 * takes the hidden heap argument (always the last one) and whether it may stop a work-item at a
 * throwing operator new (spec 2.2); and, for linking across modules, which
 * exported functions allocate and which functions the module imports. Reports own what they
 * hold (cldm_spirv_report_free); cldm_spirv_report_append merges them for linked programs.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

void cldm_spirv_report_free(cldm_spirv_report *report) {
  if (!report)
    return;
  for (size_t i = 0; i < report->num_kernels; i++)
    free(report->kernels[i].name);
  free(report->kernels);
  for (size_t i = 0; i < report->num_heap_exports; i++)
    free(report->heap_exports[i]);
  free(report->heap_exports);
  for (size_t i = 0; i < report->num_imports; i++)
    free(report->imports[i]);
  free(report->imports);
  memset(report, 0, sizeof *report);
}

cldm_spirv_status cldm_spirv_report_append(cldm_spirv_report *dst, const cldm_spirv_report *src,
                                           cldm_spirv_error *err) {
  cldm_spirv_error_clear(err);
  /* exact sizes: report_push's doubling assumes arrays it grew itself, which these are not */
  if (src->num_kernels) {
    cldm_spirv_kernel *k = realloc(dst->kernels, (dst->num_kernels + src->num_kernels) * sizeof *k);
    if (!k)
      return cldm_spirv_fail(err, CLDM_SPIRV_E_NOMEM, 0, "out of memory");
    dst->kernels = k;
    for (size_t i = 0; i < src->num_kernels; i++) {
      k[dst->num_kernels] = src->kernels[i];
      if (!(k[dst->num_kernels].name = strdup(src->kernels[i].name)))
        return cldm_spirv_fail(err, CLDM_SPIRV_E_NOMEM, 0, "out of memory");
      dst->num_kernels++;
    }
  }
  if (src->num_heap_exports) {
    char **e =
        realloc(dst->heap_exports, (dst->num_heap_exports + src->num_heap_exports) * sizeof *e);
    if (!e)
      return cldm_spirv_fail(err, CLDM_SPIRV_E_NOMEM, 0, "out of memory");
    dst->heap_exports = e;
    for (size_t i = 0; i < src->num_heap_exports; i++) {
      if (!(e[dst->num_heap_exports] = strdup(src->heap_exports[i])))
        return cldm_spirv_fail(err, CLDM_SPIRV_E_NOMEM, 0, "out of memory");
      dst->num_heap_exports++;
    }
  }
  return CLDM_SPIRV_OK;
}

/* Appends a copy of `name` to list[*n] (capacity grows by doubling). 0, or -1 out of memory. */
static int report_push(char ***list, size_t *n, const char *name) {
  if ((*n & (*n - 1)) == 0) { /* 0, 1, 2, 4, ...: grow */
    char **grown = realloc(*list, (*n ? 2 * *n : 1) * sizeof **list);
    if (!grown)
      return -1;
    *list = grown;
  }
  if (!((*list)[*n] = strdup(name)))
    return -1;
  (*n)++;
  return 0;
}

/* Functions named by LinkageAttributes: allocating exports and foreign imports. */
static int report_linkage(cldm_spirv_report *report, const cldm_spirv_module *m,
                          const cldm_spirv_detect *d, const uint8_t *allocating) {
  for (uint32_t ii = m->sec[CLDM_SPIRV_SEC_ANNOTATION]; ii < m->sec[CLDM_SPIRV_SEC_ANNOTATION + 1];
       ii++) {
    uint32_t target, type;
    char name[256];
    if (!cldm_spirv_linkage(m, ii, &target, &type, name, sizeof name))
      continue;
    uint32_t fn = cldm_spirv_fn_index(m, target);
    if (fn == CLDM_SPIRV_NONE)
      continue; /* a variable */
    if (type == SpvLinkageTypeExport && allocating && allocating[fn]) {
      if (report_push(&report->heap_exports, &report->num_heap_exports, name))
        return -1;
    } else if (type == SpvLinkageTypeImport && !(d->import_op && d->import_op[fn])) {
      if (report_push(&report->imports, &report->num_imports, name))
        return -1;
    }
  }
  return 0;
}

cldm_spirv_status cldm_spirv_report_fill(cldm_spirv_report *report, const cldm_spirv_module *m,
                                         const cldm_spirv_detect *d, const cldm_spirv_callgraph *cg,
                                         cldm_spirv_error *err) {
  if (!report)
    return CLDM_SPIRV_OK;
  const uint8_t *allocating = cg ? cg->allocates : NULL;
  memset(report, 0, sizeof *report);
  report->allocates = d->allocates;
  report->forms = d->forms;
  report->address_bits = m->addressing == SpvAddressingModelPhysical32   ? 32
                         : m->addressing == SpvAddressingModelPhysical64 ? 64
                                                                         : 0;
  size_t n = 0;
  for (uint32_t i = 0; i < m->nep; i++)
    n += m->ep[i].model == SpvExecutionModelKernel;
  report->kernels = calloc(n ? n : 1, sizeof *report->kernels);
  if (!report->kernels)
    return cldm_spirv_fail(err, CLDM_SPIRV_E_NOMEM, 0, "out of memory");
  for (uint32_t i = 0; i < m->nep; i++) {
    const cldm_spirv_entry *e = &m->ep[i];
    if (e->model != SpvExecutionModelKernel)
      continue;
    cldm_spirv_kernel *k = &report->kernels[report->num_kernels];
    k->name = strdup(e->name);
    if (!k->name) {
      cldm_spirv_report_free(report);
      return cldm_spirv_fail(err, CLDM_SPIRV_E_NOMEM, 0, "out of memory");
    }
    report->num_kernels++;
    k->takes_heap = allocating ? allocating[e->fn] : 0;
    k->num_user_args = m->fn[e->fn].nparams;
    k->heap_arg_index = k->takes_heap ? k->num_user_args : UINT32_MAX;
    k->throwing_new = cg && cg->throws ? cg->throws[e->fn] : 0;
  }
  if (report_linkage(report, m, d, allocating)) {
    cldm_spirv_report_free(report);
    return cldm_spirv_fail(err, CLDM_SPIRV_E_NOMEM, 0, "out of memory");
  }
  return CLDM_SPIRV_OK;
}
