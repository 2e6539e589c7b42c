/*
 * layer_program.c — programs and kernels of modules that allocate (spec 1.5-1.7).
 * Not intercepted yet in this version: every program call goes down unchanged.
 */
#include "cldm_layer.h"

void cldm_dispatch_fill_program(cl_icd_dispatch *d) { (void)d; }

void *cldm_extfn_program(const char *name)
{
  (void)name;
  return NULL;
}
