/*
 * layer_program.c — the layer's program records: one table, keyed by the driver's cl_program,
 * holds a record for every program the layer must know (cldm_program; its kind says how the
 * program came to be: from IL, a source program kept, a source program's hidden target, a
 * recognised binary, a link), and clRetainProgram / clReleaseProgram, which count the record's
 * holders.
 *
 * The layer never wraps handles: the key is the driver's handle, which the driver may give to
 * a new program once the old one is gone. A record goes with its last holder (the
 * application's handles, counted here, plus the kernels made from the program that are alive,
 * counted by layer_kernel.c), before the driver's release of the program, so no new program
 * has the handle meanwhile. The driver's own reference count cannot say when: it counts
 * references the layer does not see (kernels of launches still running). A source program's
 * record releases its target with it. Registering a record for a handle that still has one
 * replaces the stale record.
 *
 * Records are read and written with the table locked (cldm_program_lock): the callers of
 * cldm_program_find and cldm_program_find_source hold it; every other function here takes it
 * itself.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "cldm_layer.h"

static cldm_map cldm_programs = CLDM_MAP_INIT;

/* ---- argument tables and name lists ------------------------------------------------------ */

void cldm_program_names_free(char **names, size_t n) {
  for (size_t i = 0; i < n; i++)
    free(names[i]);
  free(names);
}

void cldm_arg_table_free(cldm_arg_table *t) {
  for (size_t k = 0; k < t->num_kernels; k++) {
    cldm_kernel_args *e = &t->kernels[k];
    for (size_t a = 0; a < e->num_args; a++) {
      free(e->args[a].name);
      free(e->args[a].type_name);
    }
    free(e->args);
    free(e->kernel);
  }
  free(t->kernels);
  memset(t, 0, sizeof(*t));
}

int cldm_arg_table_append(cldm_arg_table *dst, const cldm_arg_table *src) {
  if (!src->num_kernels)
    return 0;
  cldm_kernel_args *grown =
      realloc(dst->kernels, (dst->num_kernels + src->num_kernels) * sizeof(*grown));
  if (!grown)
    return -1;
  dst->kernels = grown;
  for (size_t k = 0; k < src->num_kernels; k++) {
    const cldm_kernel_args *from = &src->kernels[k];
    cldm_kernel_args *to = &dst->kernels[dst->num_kernels];
    memset(to, 0, sizeof(*to));
    dst->num_kernels++; /* counted at once: a partial copy is still freed */
    if (!(to->kernel = strdup(from->kernel)))
      return -1;
    if (!from->num_args)
      continue;
    if (!(to->args = calloc(from->num_args, sizeof(*to->args))))
      return -1;
    to->num_args = from->num_args;
    for (size_t a = 0; a < from->num_args; a++) {
      to->args[a] = from->args[a];
      to->args[a].name = strdup(from->args[a].name);
      to->args[a].type_name = strdup(from->args[a].type_name);
      if (!to->args[a].name || !to->args[a].type_name)
        return -1;
    }
  }
  return 0;
}

const cldm_kernel_args *cldm_arg_table_find(const cldm_arg_table *t, const char *name) {
  for (size_t k = 0; k < t->num_kernels; k++)
    if (!strcmp(t->kernels[k].kernel, name))
      return &t->kernels[k];
  return NULL;
}

int cldm_program_names_append(char ***list, size_t *len, char *const *names, size_t n) {
  if (!n)
    return 0;
  char **grown = realloc(*list, (*len + n) * sizeof(*grown));
  if (!grown)
    return -1;
  *list = grown;
  for (size_t i = 0; i < n; i++) {
    if (!(grown[*len] = strdup(names[i])))
      return -1;
    (*len)++;
  }
  return 0;
}

/* ---- records ----------------------------------------------------------------------------- */

cldm_program *cldm_program_new(cldm_program_kind kind) {
  cldm_program *p = calloc(1, sizeof(*p));
  if (p)
    p->kind = kind;
  return p;
}

cldm_program *cldm_program_new_kernels(cldm_program_kind kind, const cldm_spirv_report *report) {
  cldm_program *p = cldm_program_new(kind);
  if (p && report) {
    cldm_spirv_report kernels = {0};
    kernels.num_kernels = report->num_kernels;
    kernels.kernels = report->kernels;
    cldm_spirv_status st = cldm_spirv_report_append(&p->report, &kernels, NULL);
    p->report.address_bits = report->address_bits;
    p->report.allocates = report->allocates;
    if (st != CLDM_SPIRV_OK) {
      cldm_program_free(p);
      return NULL;
    }
  }
  return p;
}

void cldm_program_free(cldm_program *p) {
  if (!p)
    return;
  cldm_spirv_report_free(&p->report);
  cldm_arg_table_free(&p->args);
  free(p->il);
  free(p->module);
  free(p->build_log);
  cldm_program_source *s = &p->source;
  free(s->text);
  free(s->log);
  free(s->options);
  free(s->module);
  cldm_spirv_report_free(&s->report);
  free(p);
}

void cldm_program_lock(void) { pthread_mutex_lock(&cldm_programs.lock); }
void cldm_program_unlock(void) { pthread_mutex_unlock(&cldm_programs.lock); }

cldm_program *cldm_program_find(cl_program program) {
  return cldm_map_get(&cldm_programs, program);
}

cldm_program_source *cldm_program_find_source(cl_program program) {
  cldm_program *p = cldm_map_get(&cldm_programs, program);
  return p && p->kind == CLDM_PROGRAM_SOURCE ? &p->source : NULL;
}

void cldm_program_register(cl_program program, cldm_program *rec) {
  rec->holders = 1; /* the handle of its creator (the application, or the layer for a target) */
  pthread_mutex_lock(&cldm_programs.lock);
  cldm_program *old = cldm_map_remove(&cldm_programs, program); /* a recycled handle */
  if (cldm_map_put(&cldm_programs, program, rec) != 0) {
    cldm_log(CLDM_LOG_ERROR, "out of host memory tracking program %p", (void *)program);
    cldm_program_free(rec);
  }
  pthread_mutex_unlock(&cldm_programs.lock);
  cldm_program_free(old);
}

int cldm_program_tracked(cl_program program) {
  pthread_mutex_lock(&cldm_programs.lock);
  const cldm_program *p = cldm_map_get(&cldm_programs, program);
  int tracked = p && p->kind != CLDM_PROGRAM_SOURCE;
  pthread_mutex_unlock(&cldm_programs.lock);
  return tracked;
}

long cldm_program_hold(cl_program program, int delta) {
  void *v;
  long now = cldm_map_hold(&cldm_programs, program, offsetof(cldm_program, holders), delta, &v);
  cldm_program *gone = v;
  /* a source program's last holder: its target goes first, so that the release of the program
   * itself may free the heaps */
  if (gone && gone->kind == CLDM_PROGRAM_SOURCE && gone->source.target)
    clReleaseProgram_wrap(gone->source.target);
  cldm_program_free(gone);
  return now;
}

/* ---- what the records answer ------------------------------------------------------------- */

cl_program cldm_program_target(cl_program program) {
  pthread_mutex_lock(&cldm_programs.lock);
  const cldm_program_source *s = cldm_program_find_source(program);
  cl_program target = s ? s->target : NULL;
  if (target)
    cldm_next->clRetainProgram(target);
  pthread_mutex_unlock(&cldm_programs.lock);
  return target;
}

void cldm_program_kernel_attached(cl_program program, int delta) {
  pthread_mutex_lock(&cldm_programs.lock);
  cldm_program_source *s = cldm_program_find_source(program);
  if (s && (delta > 0 || s->kernels > 0))
    s->kernels += (unsigned)delta;
  pthread_mutex_unlock(&cldm_programs.lock);
}

int cldm_program_kernel_heap(cl_program program, const char *name, uint32_t *heap_arg_index,
                             uint32_t *num_user_args, int *throwing_new) {
  int takes_heap = 0;
  pthread_mutex_lock(&cldm_programs.lock);
  const cldm_program *p = cldm_map_get(&cldm_programs, program);
  const cldm_spirv_kernel *k = NULL;
  for (size_t i = 0; p && i < p->report.num_kernels && !k; i++)
    if (!strcmp(p->report.kernels[i].name, name))
      k = &p->report.kernels[i];
  if (k && k->takes_heap) {
    takes_heap = 1;
    *heap_arg_index = k->heap_arg_index;
    *num_user_args = k->num_user_args;
    *throwing_new = k->throwing_new;
  }
  pthread_mutex_unlock(&cldm_programs.lock);
  return takes_heap;
}

void cldm_program_set_args(cl_program program, cldm_arg_table *args) {
  pthread_mutex_lock(&cldm_programs.lock);
  cldm_program *p = cldm_map_get(&cldm_programs, program);
  if (p) {
    cldm_arg_table_free(&p->args);
    p->args = *args;
    memset(args, 0, sizeof(*args));
  }
  pthread_mutex_unlock(&cldm_programs.lock);
  cldm_arg_table_free(args);
}

int cldm_program_il_info(cl_program program, size_t size, void *value, size_t *size_ret,
                         cl_int *err) {
  pthread_mutex_lock(&cldm_programs.lock);
  const cldm_program *p = cldm_map_get(&cldm_programs, program);
  int have = p && p->il;
  if (have)
    *err = cldm_info_return(p->il, p->il_size, size, value, size_ret);
  pthread_mutex_unlock(&cldm_programs.lock);
  return have;
}

/* ---- the entry points -------------------------------------------------------------------- */

cl_int CL_API_CALL clRetainProgram_wrap(cl_program program) {
  cl_int err = cldm_next->clRetainProgram(program);
  if (err == CL_SUCCESS)
    cldm_program_hold(program, 1);
  return err;
}

cl_int CL_API_CALL clReleaseProgram_wrap(cl_program program) {
  /* the record goes before the driver's release: until it, no new program has this handle */
  cldm_program_hold(program, -1);
  return cldm_lifetime_release(CLDM_OBJECT_PROGRAM, program);
}
