/*
 * callgraph.c — which functions allocate (spec 3.2 step 2): a function allocates if it holds
 * an allocation site or calls a function that allocates; and which may stop the work-item at a
 * throwing operator new that failed (spec 2.2): those holding a call of one, or calling a
 * function that may stop. Both are computed by a worklist over reversed call edges. Then the constructs the lowering cannot handle are rejected with E_UNSUPPORTED
 * (spec 1.5): recursion among allocating functions (the heap parameter would have to be passed
 * round a cycle, which is fine in SPIR-V, but OpenCL C forbids recursion and drivers reject it),
 * allocating functions whose address is taken (an indirect call could not pass the heap), and
 * entry points without a body. Functions declared without a body (Import linkage, other than
 * spec 2.2's malloc/free/...) are taken not to allocate: whether one defined in another module
 * does cannot be known here (spec 1.5 and spec section 5, issue 4: such links are not supported). All walks are
 * iterative: no recursion on module-sized data.
 * Roots of the stops: a function that may stop has a stop flag parameter, except a root, which
 * keeps its flag in a variable of its own: an entry point, and a function named as an entry
 * point is (by OpName or Export linkage). The latter is llvm-spirv's body of a kernel: its
 * writer makes the entry point a wrapper that calls the body, and its reader (pocl's, the PTX
 * route's) takes the function of the entry point's name for the kernel, which must therefore
 * keep the kernel's parameters. A root's callers cannot see that it stopped, so a call of a
 * root that may stop is allowed only as that wrapper's (the entry point of the root's name,
 * the call followed by its return).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

typedef struct edge {
  uint32_t callee, ii;
} edge;

typedef struct graph {
  uint32_t *first; /* [nfn + 1]: edges of f are e[first[f] .. first[f+1]) */
  edge *e;
} graph;

static void graph_free(graph *g) {
  free(g->first);
  free(g->e);
}

/* Call edges between functions of the module (calls of Import-form decls are sites). */
static int build_edges(const cldm_spirv_module *m, const cldm_spirv_detect *d, graph *g) {
  g->first = calloc((size_t)m->nfn + 1, sizeof *g->first);
  if (!g->first)
    return -1;
  size_t n = 0;
  for (int pass = 0; pass < 2; pass++) {
    n = 0;
    for (uint32_t f = 0; f < m->nfn; f++) {
      if (pass == 1)
        g->first[f] = (uint32_t)n;
      if (!m->fn[f].body)
        continue;
      for (uint32_t ii = m->fn[f].body; ii < m->fn[f].end; ii++) {
        if (m->inst[ii].op != SpvOpFunctionCall || m->inst[ii].wc < 4)
          continue;
        uint32_t callee = cldm_spirv_fn_index(m, cldm_spirv_iw(m, ii)[3]);
        if (callee == CLDM_SPIRV_NONE || d->import_op[callee])
          continue;
        if (pass == 1)
          g->e[n] = (edge){callee, ii};
        n++;
      }
    }
    if (pass == 0 && !(g->e = malloc((n ? n : 1) * sizeof *g->e)))
      return -1;
  }
  g->first[m->nfn] = (uint32_t)n;
  return 0;
}

/* Reverse reachability from functions holding sites (only throwing ones if `throwing`). */
static int propagate(const cldm_spirv_module *m, const cldm_spirv_detect *d, const graph *g,
                     int throwing, uint8_t *alloc) {
  /* reversed edges: callers of f are r[rfirst[f] .. rfirst[f+1]) */
  size_t ne = g->first[m->nfn];
  uint32_t *rfirst = calloc((size_t)m->nfn + 1, sizeof *rfirst);
  uint32_t *r = malloc((ne ? ne : 1) * sizeof *r);
  uint32_t *work = malloc(((size_t)m->nfn + 1) * sizeof *work);
  if (!rfirst || !r || !work) {
    free(rfirst), free(r), free(work);
    return -1;
  }
  for (size_t i = 0; i < ne; i++)
    rfirst[g->e[i].callee + 1]++;
  for (uint32_t f = 0; f < m->nfn; f++)
    rfirst[f + 1] += rfirst[f];
  uint32_t *fill = calloc((size_t)m->nfn + 1, sizeof *fill);
  if (!fill) {
    free(rfirst), free(r), free(work);
    return -1;
  }
  for (uint32_t f = 0; f < m->nfn; f++)
    for (uint32_t i = g->first[f]; i < g->first[f + 1]; i++) {
      uint32_t c = g->e[i].callee;
      r[rfirst[c] + fill[c]++] = f;
    }
  free(fill);
  size_t top = 0;
  for (uint32_t s = 0; s < d->nsites; s++)
    if ((!throwing || d->sites[s].throws) && !alloc[d->sites[s].fn]) {
      alloc[d->sites[s].fn] = 1;
      work[top++] = d->sites[s].fn;
    }
  while (top) {
    uint32_t f = work[--top];
    for (uint32_t i = rfirst[f]; i < rfirst[f + 1]; i++)
      if (!alloc[r[i]]) {
        alloc[r[i]] = 1;
        work[top++] = r[i];
      }
  }
  free(rfirst), free(r), free(work);
  return 0;
}

static const char *fname(const cldm_spirv_module *m, uint32_t f, char *buf, size_t cap) {
  cldm_spirv_name_of(m, m->fn[f].id, buf, cap);
  return buf;
}

/* Depth-first search with an explicit stack over allocating functions; a call to a function
 * still on the stack closes a cycle. */
static cldm_spirv_status find_recursion(const cldm_spirv_module *m, const graph *g,
                                        const uint8_t *alloc, cldm_spirv_error *err) {
  uint8_t *color = calloc(m->nfn ? m->nfn : 1, 1);
  uint32_t *stack = malloc(((size_t)m->nfn + 1) * sizeof *stack);
  uint32_t *next = malloc(((size_t)m->nfn + 1) * sizeof *next);
  if (!color || !stack || !next) {
    free(color), free(stack), free(next);
    return cldm_spirv_fail(err, CLDM_SPIRV_E_NOMEM, 0, "out of memory");
  }
  cldm_spirv_status st = CLDM_SPIRV_OK;
  for (uint32_t root = 0; root < m->nfn && !st; root++) {
    if (!alloc[root] || color[root])
      continue;
    size_t top = 0;
    stack[top] = root;
    next[top++] = g->first[root];
    color[root] = 1;
    while (top && !st) {
      uint32_t f = stack[top - 1];
      if (next[top - 1] == g->first[f + 1]) {
        color[f] = 2;
        top--;
        continue;
      }
      const edge *e = &g->e[next[top - 1]++];
      if (!alloc[e->callee])
        continue;
      if (color[e->callee] == 1) {
        char a[64], b[64];
        st = cldm_spirv_fail(err, CLDM_SPIRV_E_UNSUPPORTED, m->inst[e->ii].off,
                             "recursion through allocating functions is not supported "
                             "(spec 1.5): %%%u \"%s\" calls %%%u \"%s\", which reaches it again",
                             m->fn[f].id, fname(m, f, a, sizeof a), m->fn[e->callee].id,
                             fname(m, e->callee, b, sizeof b));
      } else if (color[e->callee] == 0) {
        color[e->callee] = 1;
        stack[top] = e->callee;
        next[top++] = g->first[e->callee];
      }
    }
  }
  free(color), free(stack), free(next);
  return st;
}

/* The entry point named `name`, or NULL. */
static const cldm_spirv_entry *entry_named(const cldm_spirv_module *m, const char *name) {
  for (uint32_t i = 0; i < m->nep; i++)
    if (name[0] && !strcmp(m->ep[i].name, name))
      return &m->ep[i];
  return NULL;
}

/* Bytes a name buffer needs so that a function's name compares exactly with every entry
 * point's: the longest entry name, one byte more (a longer name, cut there, still differs)
 * and the terminator. */
static size_t entry_name_cap(const cldm_spirv_module *m) {
  size_t n = 0;
  for (uint32_t i = 0; i < m->nep; i++)
    if (strlen(m->ep[i].name) > n)
      n = strlen(m->ep[i].name);
  return n + 2;
}

/* 1 if function f is named (OpName or Export linkage) as entry point `want`, or as any entry
 * point for NULL; `buf` holds entry_name_cap(m) bytes. */
static int named_as_entry(const cldm_spirv_module *m, uint32_t f, const cldm_spirv_entry *want,
                          char *buf, size_t cap) {
  const cldm_spirv_entry *e = entry_named(m, cldm_spirv_name_of(m, m->fn[f].id, buf, cap));
  if (e && (!want || e == want))
    return 1;
  e = entry_named(m, cldm_spirv_linkage_name(m, f, buf, cap));
  return e && (!want || e == want);
}

/* Roots: entry points, and functions named as an entry point is (named_as_entry). */
static int mark_roots(const cldm_spirv_module *m, uint8_t *root) {
  size_t cap = entry_name_cap(m);
  char *name = malloc(cap);
  if (!name)
    return -1;
  for (uint32_t i = 0; i < m->nep; i++)
    root[m->ep[i].fn] = 1;
  for (uint32_t f = 0; f < m->nfn; f++)
    if (named_as_entry(m, f, NULL, name, cap))
      root[f] = 1;
  free(name);
  return 0;
}

/* A call of a root that may stop (see the header) is allowed only as the wrapper's: made by the
 * entry point of the root's name and followed by its return. */
static cldm_spirv_status called_root(const cldm_spirv_module *m, const graph *g,
                                     const cldm_spirv_callgraph *cg, cldm_spirv_error *err) {
  size_t cap = entry_name_cap(m);
  char *name = malloc(cap);
  if (!name)
    return cldm_spirv_fail(err, CLDM_SPIRV_E_NOMEM, 0, "out of memory");
  for (uint32_t f = 0; f < m->nfn; f++)
    for (uint32_t k = g->first[f]; k < g->first[f + 1]; k++) {
      uint32_t callee = g->e[k].callee, ii = g->e[k].ii;
      if (!cg->throws[callee] || !cg->root[callee])
        continue;
      const cldm_spirv_entry *e = NULL;
      for (uint32_t i = 0; i < m->nep && !e; i++)
        if (m->ep[i].fn == f)
          e = &m->ep[i];
      if (e && ii + 1 < m->fn[f].end && m->inst[ii + 1].op == SpvOpReturn &&
          named_as_entry(m, callee, e, name, cap))
        continue;
      free(name);
      char a[64], b[64];
      return cldm_spirv_fail(err, CLDM_SPIRV_E_UNSUPPORTED, m->inst[ii].off,
                             "%%%u \"%s\" calls %%%u \"%s\", a kernel (or llvm-spirv's body of "
                             "one) that may stop at a throwing operator new: not supported "
                             "(spec 2.2)",
                             m->fn[f].id, fname(m, f, a, sizeof a), m->fn[callee].id,
                             fname(m, callee, b, sizeof b));
    }
  free(name);
  return CLDM_SPIRV_OK;
}

cldm_spirv_status cldm_spirv_callgraph_build(const cldm_spirv_module *m, const cldm_spirv_detect *d,
                                             cldm_spirv_callgraph *cg, cldm_spirv_error *err) {
  memset(cg, 0, sizeof *cg);
  for (uint32_t i = 0; i < m->nep; i++) {
    const cldm_spirv_function *f = &m->fn[m->ep[i].fn];
    if (!f->body)
      return cldm_spirv_fail(err, CLDM_SPIRV_E_UNSUPPORTED, m->inst[m->ep[i].ii].off,
                             "entry point \"%s\" (%%%u) has no function body to lower",
                             m->ep[i].name, f->id);
  }
  graph g = {0};
  cg->allocates = calloc(m->nfn ? m->nfn : 1, 1);
  cg->throws = calloc(m->nfn ? m->nfn : 1, 1);
  cg->root = calloc(m->nfn ? m->nfn : 1, 1);
  if (!cg->allocates || !cg->throws || !cg->root || mark_roots(m, cg->root) ||
      build_edges(m, d, &g) || propagate(m, d, &g, 0, cg->allocates) ||
      (d->nthrowing && propagate(m, d, &g, 1, cg->throws))) {
    graph_free(&g);
    return cldm_spirv_fail(err, CLDM_SPIRV_E_NOMEM, 0, "out of memory");
  }
  cldm_spirv_status st = find_recursion(m, &g, cg->allocates, err);
  if (!st && d->nthrowing)
    st = called_root(m, &g, cg, err);
  graph_free(&g);
  if (st)
    return st;
  for (uint32_t f = 0; f < m->nfn; f++) {
    if (!(cg->allocates[f] || d->import_op[f]) || !m->fn_addr_taken || !m->fn_addr_taken[f])
      continue;
    uint32_t ii = m->fn_addr_taken[f] - 1;
    char a[64 + CLDM_SPIRV_CALLEE_NAME_MAX], name[CLDM_SPIRV_CALLEE_NAME_MAX];
    if (d->import_op[f])
      snprintf(a, sizeof a, "Import-linkage %s", cldm_spirv_linkage_name(m, f, name, sizeof name));
    else
      snprintf(a, sizeof a, "allocating function \"%s\"", fname(m, f, (char[64]){0}, 64));
    return cldm_spirv_fail(err, CLDM_SPIRV_E_UNSUPPORTED, m->inst[ii].off,
                           "%s takes the address of %s (%%%u): function pointers to allocating "
                           "functions are not supported (spec 1.5)",
                           cldm_spirv_opname(m->inst[ii].op), a, m->fn[f].id);
  }
  return CLDM_SPIRV_OK;
}

void cldm_spirv_callgraph_free(cldm_spirv_callgraph *cg) {
  free(cg->allocates);
  free(cg->throws);
  free(cg->root);
  memset(cg, 0, sizeof *cg);
}
