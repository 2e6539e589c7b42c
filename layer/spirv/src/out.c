/*
 * out.c — the output module, kept as one word buffer per section of the logical layout (plus
 * function declarations, which must precede definitions). Lowering, linking and raising append
 * to the sections in any order; cldm_spirv_out_finish writes them out in layout order behind a
 * fresh header. Also the two module-wide fix-ups: capabilities without duplicates, and the
 * Linkage capability dropped when nothing needs it any more.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

void cldm_spirv_out_free(cldm_spirv_out *o) {
  for (unsigned s = 0; s < CLDM_SPIRV_SEC_COUNT; s++)
    cldm_spirv_buf_free(&o->sec[s]);
  cldm_spirv_buf_free(&o->decls);
}

void cldm_spirv_out_copy(cldm_spirv_buf *b, const cldm_spirv_module *m, uint32_t ii) {
  cldm_spirv_buf_push_n(b, cldm_spirv_iw(m, ii), m->inst[ii].wc);
}

static int dropped(const cldm_spirv_module *m, const uint8_t *drop, uint32_t id) {
  return drop && id < m->bound && drop[id];
}

void cldm_spirv_out_copy_filtered(cldm_spirv_buf *b, const cldm_spirv_module *m, uint32_t ii,
                                  const uint8_t *drop) {
  const uint32_t *w = cldm_spirv_iw(m, ii);
  uint32_t wc = m->inst[ii].wc;
  switch (m->inst[ii].op) {
  case SpvOpName:
  case SpvOpMemberName:
  case SpvOpDecorate:
  case SpvOpDecorateId:
  case SpvOpDecorateString:
  case SpvOpMemberDecorate:
  case SpvOpMemberDecorateString:
  case SpvOpExecutionMode:
  case SpvOpExecutionModeId:
    if (wc >= 2 && dropped(m, drop, w[1]))
      return;
    break;
  case SpvOpGroupDecorate:
  case SpvOpGroupMemberDecorate: {
    uint32_t stride = m->inst[ii].op == SpvOpGroupDecorate ? 1 : 2, kept = 0;
    for (uint32_t i = 2; i + stride <= wc; i += stride)
      kept += !dropped(m, drop, w[i]);
    if (kept == (wc - 2) / stride)
      break;
    if (!kept)
      return;
    size_t at = cldm_spirv_buf_begin(b, m->inst[ii].op);
    cldm_spirv_buf_push(b, w[1]);
    for (uint32_t i = 2; i + stride <= wc; i += stride)
      if (!dropped(m, drop, w[i]))
        cldm_spirv_buf_push_n(b, w + i, stride);
    cldm_spirv_buf_end(b, at);
    return;
  }
  default:
    break;
  }
  cldm_spirv_buf_push_n(b, w, wc);
}

void cldm_spirv_out_capability(cldm_spirv_out *o, uint32_t cap) {
  cldm_spirv_buf *b = &o->sec[CLDM_SPIRV_SEC_CAPABILITY];
  for (size_t i = 0; i + 1 < b->n; i += b->w[i] >> 16)
    if ((b->w[i] & 0xFFFFu) == SpvOpCapability && b->w[i + 1] == cap)
      return;
  uint32_t ops[1] = {cap};
  cldm_spirv_buf_inst(b, SpvOpCapability, ops, 1);
}

void cldm_spirv_out_fix_linkage(cldm_spirv_out *o) {
  const cldm_spirv_buf *a = &o->sec[CLDM_SPIRV_SEC_ANNOTATION];
  for (size_t i = 0; i < a->n; i += a->w[i] >> 16) {
    if (!(a->w[i] >> 16))
      return;
    if ((a->w[i] & 0xFFFFu) == SpvOpDecorate && (a->w[i] >> 16) >= 3 &&
        a->w[i + 2] == SpvDecorationLinkageAttributes)
      return;
  }
  if (o->sec[CLDM_SPIRV_SEC_ENTRYPOINT].n == 0)
    return; /* a library keeps Linkage */
  cldm_spirv_buf *b = &o->sec[CLDM_SPIRV_SEC_CAPABILITY];
  for (size_t i = 0; i + 1 < b->n; i += b->w[i] >> 16)
    if ((b->w[i] & 0xFFFFu) == SpvOpCapability && b->w[i + 1] == SpvCapabilityLinkage) {
      memmove(b->w + i, b->w + i + 2, (b->n - i - 2) * sizeof *b->w);
      b->n -= 2;
      return;
    }
}

cldm_spirv_status cldm_spirv_out_finish(cldm_spirv_out *o, void **out, size_t *out_size,
                                        cldm_spirv_error *err) {
  size_t total = CLDM_SPIRV_HEADER_WORDS + o->decls.n;
  int failed = o->decls.failed;
  for (unsigned s = 0; s < CLDM_SPIRV_SEC_COUNT; s++) {
    total += o->sec[s].n;
    failed |= o->sec[s].failed;
  }
  if (failed)
    return cldm_spirv_fail(err, CLDM_SPIRV_E_NOMEM, 0,
                           "out of memory (or an output instruction grew past 65535 words)");
  uint32_t *w = malloc(total * sizeof *w);
  if (!w)
    return cldm_spirv_fail(err, CLDM_SPIRV_E_NOMEM, 0, "out of memory");
  w[0] = CLDM_SPIRV_MAGIC;
  w[1] = o->version;
  w[2] = o->generator;
  w[3] = o->bound;
  w[4] = 0;
  size_t n = CLDM_SPIRV_HEADER_WORDS;
  for (unsigned s = 0; s < CLDM_SPIRV_SEC_COUNT; s++) {
    if (s == CLDM_SPIRV_SEC_FUNCTION && o->decls.n) {
      memcpy(w + n, o->decls.w, o->decls.n * sizeof *w);
      n += o->decls.n;
    }
    if (o->sec[s].n)
      memcpy(w + n, o->sec[s].w, o->sec[s].n * sizeof *w);
    n += o->sec[s].n;
  }
  *out = w;
  *out_size = total * sizeof *w;
  return CLDM_SPIRV_OK;
}
