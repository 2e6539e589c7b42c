/*
 * blockorder.c — reverse post-order of a function's blocks. SPIR-V requires every block to
 * appear after the blocks that dominate it (SPIR-V spec 2.16.1, "the order of blocks in a
 * function must satisfy the rule that blocks appear before all blocks they dominate");
 * clang-15 -O2 + llvm-spirv-15 sometimes lay a block out before its dominator, which
 * spirv-val rejects while pocl accepts such modules. Reverse post-order from the entry block
 * satisfies the rule (a dominator is always finished later in a depth-first search), so the
 * allocator's functions are emitted in that order and validate whatever order their producer
 * chose. Unreachable blocks keep their relative order at the end.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

typedef struct block {
  uint32_t label_ii;
  uint32_t term_ii; /* last instruction of the block */
} block;

/* Index of the block whose label is `id`, CLDM_SPIRV_NONE if `id` labels no block of b[0..nb):
 * the module's id table gives the defining instruction; b is in layout order, so sorted by
 * label_ii, and a binary search finds it. */
static uint32_t block_of(const cldm_spirv_module *m, const block *b, size_t nb, uint32_t id) {
  if (id >= m->bound || !m->ids[id].def)
    return CLDM_SPIRV_NONE;
  uint32_t ii = m->ids[id].def - 1;
  size_t lo = 0, hi = nb;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (b[mid].label_ii == ii)
      return (uint32_t)mid;
    if (b[mid].label_ii < ii)
      lo = mid + 1;
    else
      hi = mid;
  }
  return CLDM_SPIRV_NONE;
}

/* Successor label ids of the block ending at instruction ii: returns a pointer into the
 * instruction and the count through *n (with a stride of 1 or 2 words). */
static const uint32_t *successors(const cldm_spirv_module *m, uint32_t ii, uint32_t *n,
                                  uint32_t *stride, uint32_t *first_extra) {
  const uint32_t *w = cldm_spirv_iw(m, ii);
  uint32_t wc = m->inst[ii].wc;
  *stride = 1;
  *first_extra = CLDM_SPIRV_NONE;
  switch (m->inst[ii].op) {
  case SpvOpBranch:
    *n = wc >= 2 ? 1 : 0;
    return w + 1;
  case SpvOpBranchConditional:
    *n = wc >= 4 ? 2 : 0;
    return w + 2;
  case SpvOpSwitch: {
    /* selector, default, then (literal, label) pairs; literal width from the selector type */
    if (wc < 3) {
      *n = 0;
      return w;
    }
    uint32_t sel = w[1];
    uint32_t type = sel < m->bound ? m->ids[sel].type : 0;
    uint32_t lw = cldm_spirv_int_width(m, type) > 32 ? 2 : 1;
    *first_extra = w[2];
    *stride = lw + 1;
    *n = (wc - 3) / (lw + 1);
    return w + 3 + lw;
  }
  default:
    *n = 0;
    return w;
  }
}

int cldm_spirv_blockorder(const cldm_spirv_module *m, const cldm_spirv_function *f, uint32_t *order,
                          uint32_t *n) {
  *n = 0;
  if (!f->body)
    return 0;
  size_t nb = 0;
  for (uint32_t ii = f->body; ii < f->end; ii++)
    nb += m->inst[ii].op == SpvOpLabel;
  block *b = malloc(nb * sizeof *b);
  uint8_t *seen = calloc(nb, 1);
  uint32_t *stack = malloc(nb * sizeof *stack), *next = malloc(nb * sizeof *next);
  uint32_t *post = malloc(nb * sizeof *post);
  int rc = -1;
  if (!b || !seen || !stack || !next || !post)
    goto done;
  size_t k = 0;
  for (uint32_t ii = f->body; ii < f->end; ii++) {
    if (m->inst[ii].op != SpvOpLabel)
      continue;
    if (k)
      b[k - 1].term_ii = ii - 1;
    b[k++].label_ii = ii;
  }
  b[k - 1].term_ii = f->end - 1;
  /* iterative DFS; next[] counts successors visited (index 0 = switch default) */
  size_t top = 0, np = 0;
  stack[top] = 0;
  next[top++] = 0;
  seen[0] = 1;
  while (top) {
    uint32_t cur = stack[top - 1], cnt, stride, extra;
    const uint32_t *succ = successors(m, b[cur].term_ii, &cnt, &stride, &extra);
    uint32_t total = cnt + (extra != CLDM_SPIRV_NONE);
    if (next[top - 1] >= total) {
      post[np++] = cur;
      top--;
      continue;
    }
    uint32_t i = next[top - 1]++;
    uint32_t label =
        extra != CLDM_SPIRV_NONE ? (i == 0 ? extra : succ[(i - 1) * stride]) : succ[i * stride];
    uint32_t s = block_of(m, b, nb, label);
    if (s == CLDM_SPIRV_NONE || seen[s])
      continue;
    seen[s] = 1;
    stack[top] = s;
    next[top++] = 0;
  }
  for (size_t i = 0; i < np; i++)
    order[(*n)++] = b[post[np - 1 - i]].label_ii;
  for (size_t i = 0; i < nb; i++)
    if (!seen[i])
      order[(*n)++] = b[i].label_ii;
  rc = 0;
done:
  free(b), free(seen), free(stack), free(next), free(post);
  return rc;
}
