/*
 * report.c — what the layer needs to know about a module (spec 3.2, last paragraph): per
 * kernel, its name, how many arguments the application sees, and whether the lowered kernel
 * takes the hidden heap argument (always the last one).
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
  memset(report, 0, sizeof *report);
}

cldm_spirv_status cldm_spirv_report_fill(cldm_spirv_report *report, const cldm_spirv_module *m,
                                         const cldm_spirv_detect *d, const uint8_t *allocating,
                                         cldm_spirv_error *err) {
  if (!report)
    return CLDM_SPIRV_OK;
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
  }
  return CLDM_SPIRV_OK;
}
