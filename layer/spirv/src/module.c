/*
 * module.c — pass 1 over a SPIR-V module: one loop over the word stream (as Mesa's reader):
 * byte order, header, `opcode = w[0] & 0xffff; count = w[0] >> 16; count >= 1 && within the
 * module`, the logical layout (SPIR-V spec 2.4) as a section counter that never goes back,
 * function structure (parameters, blocks, terminators), and every result id in bound and
 * defined once. The id table is sized by the header's bound. Nothing here trusts a word it has
 * not checked; what needs operand layouts is pass 2 (check.c).
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static const char *const section_names[CLDM_SPIRV_SEC_COUNT] = {
    "capabilities",
    "extensions",
    "extended instruction imports",
    "memory model",
    "entry points",
    "execution modes",
    "debug strings and sources",
    "debug names",
    "module-processed",
    "annotations",
    "types, constants and global variables",
    "functions"};

enum { F_OUT, F_HEAD, F_BLOCK, F_BETWEEN };

typedef struct parser {
  cldm_spirv_module *m;
  cldm_spirv_error *err;
  size_t inst_cap, fn_cap, ep_cap;
  unsigned cur; /* current section */
  int fstate;
} parser;

static unsigned wanted_section(const cldm_spirv_opcode_desc *d, unsigned cur) {
  if (!d)
    return cur < CLDM_SPIRV_SEC_GLOBAL ? CLDM_SPIRV_SEC_GLOBAL : cur;
  switch (d->layout) {
  case CLDM_SPIRV_LAYOUT_GLOBAL:
    return CLDM_SPIRV_SEC_GLOBAL;
  case CLDM_SPIRV_LAYOUT_ANY:
    return cur < CLDM_SPIRV_SEC_GLOBAL ? CLDM_SPIRV_SEC_GLOBAL : cur;
  case CLDM_SPIRV_LAYOUT_FUNCTION:
  case CLDM_SPIRV_LAYOUT_FUNCTION_PARAMETER:
  case CLDM_SPIRV_LAYOUT_FUNCTION_END:
  case CLDM_SPIRV_LAYOUT_LABEL:
  case CLDM_SPIRV_LAYOUT_BODY:
    return CLDM_SPIRV_SEC_FUNCTION;
  default:
    return d->layout; /* CAPABILITY .. ANNOTATION map one to one */
  }
}

static cldm_spirv_status grow(void **p, size_t *cap, size_t need, size_t elem) {
  if (need <= *cap)
    return CLDM_SPIRV_OK;
  size_t n = *cap ? *cap * 2 : 64;
  while (n < need)
    n *= 2;
  void *q = realloc(*p, n * elem);
  if (!q)
    return CLDM_SPIRV_E_NOMEM;
  *p = q;
  *cap = n;
  return CLDM_SPIRV_OK;
}

static cldm_spirv_status nomem(cldm_spirv_error *err) {
  return cldm_spirv_fail(err, CLDM_SPIRV_E_NOMEM, 0, "out of memory");
}

/* Function structure inside the function section. */
static cldm_spirv_status function_structure(parser *p, uint32_t ii, size_t at,
                                            const cldm_spirv_opcode_desc *d) {
  cldm_spirv_module *m = p->m;
  const uint32_t *w = m->w + at;
  uint32_t op = m->inst[ii].op, wc = m->inst[ii].wc;
  const char *name = cldm_spirv_opname(op);
  if (op == SpvOpLine || op == SpvOpNoLine)
    return CLDM_SPIRV_OK;
  switch (op) {
  case SpvOpFunction: {
    if (p->fstate != F_OUT)
      return cldm_spirv_fail(p->err, CLDM_SPIRV_E_MALFORMED, at,
                             "OpFunction inside another function (missing OpFunctionEnd)");
    if (wc < 5)
      return cldm_spirv_fail(p->err, CLDM_SPIRV_E_MALFORMED, at, "OpFunction has %u words, needs 5",
                             wc);
    if (grow((void **)&m->fn, &p->fn_cap, m->nfn + 1, sizeof *m->fn))
      return nomem(p->err);
    cldm_spirv_function *f = &m->fn[m->nfn];
    memset(f, 0, sizeof *f);
    f->result_type = w[1];
    f->id = w[2];
    f->type_id = w[4];
    f->begin = ii;
    f->end = CLDM_SPIRV_NONE;
    if (f->id < m->bound)
      m->ids[f->id].aux = m->nfn;
    m->nfn++;
    p->fstate = F_HEAD;
    return CLDM_SPIRV_OK;
  }
  case SpvOpFunctionParameter:
    if (p->fstate != F_HEAD)
      return cldm_spirv_fail(p->err, CLDM_SPIRV_E_MALFORMED, at,
                             "OpFunctionParameter outside a function header");
    m->fn[m->nfn - 1].nparams++;
    return CLDM_SPIRV_OK;
  case SpvOpLabel:
    if (p->fstate == F_OUT)
      return cldm_spirv_fail(p->err, CLDM_SPIRV_E_MALFORMED, at, "OpLabel outside a function");
    if (p->fstate == F_BLOCK)
      return cldm_spirv_fail(p->err, CLDM_SPIRV_E_MALFORMED, at,
                             "OpLabel inside a block: the previous block has no terminator");
    if (!m->fn[m->nfn - 1].body)
      m->fn[m->nfn - 1].body = ii;
    p->fstate = F_BLOCK;
    return CLDM_SPIRV_OK;
  case SpvOpFunctionEnd:
    if (p->fstate == F_OUT)
      return cldm_spirv_fail(p->err, CLDM_SPIRV_E_MALFORMED, at,
                             "OpFunctionEnd outside a function");
    if (p->fstate == F_BLOCK)
      return cldm_spirv_fail(p->err, CLDM_SPIRV_E_MALFORMED, at,
                             "OpFunctionEnd inside a block: the block has no terminator");
    m->fn[m->nfn - 1].end = ii;
    p->fstate = F_OUT;
    return CLDM_SPIRV_OK;
  default:
    if (p->fstate != F_BLOCK)
      return cldm_spirv_fail(p->err, CLDM_SPIRV_E_MALFORMED, at, "%s outside a block", name);
    if (d && (d->flags & CLDM_SPIRV_OPF_TERMINATOR))
      p->fstate = F_BETWEEN;
    return CLDM_SPIRV_OK;
  }
}

/* Header instructions whose operands pass 1 needs. */
static cldm_spirv_status module_level(parser *p, uint32_t ii, size_t at) {
  cldm_spirv_module *m = p->m;
  const uint32_t *w = m->w + at;
  uint32_t op = m->inst[ii].op, wc = m->inst[ii].wc;
  switch (op) {
  case SpvOpMemoryModel:
    if (m->addressing != CLDM_SPIRV_NONE)
      return cldm_spirv_fail(p->err, CLDM_SPIRV_E_MALFORMED, at, "second OpMemoryModel");
    if (wc != 3)
      return cldm_spirv_fail(p->err, CLDM_SPIRV_E_MALFORMED, at,
                             "OpMemoryModel has %u words, needs 3", wc);
    m->addressing = w[1];
    m->memory_model = w[2];
    return CLDM_SPIRV_OK;
  case SpvOpEntryPoint: {
    if (wc < 4)
      return cldm_spirv_fail(p->err, CLDM_SPIRV_E_MALFORMED, at,
                             "OpEntryPoint has %u words, needs at least 4", wc);
    size_t len = cldm_spirv_string_len(w + 3, wc - 3);
    if (len == SIZE_MAX)
      return cldm_spirv_fail(p->err, CLDM_SPIRV_E_MALFORMED, at,
                             "OpEntryPoint name is not NUL-terminated within the instruction");
    if (grow((void **)&m->ep, &p->ep_cap, m->nep + 1, sizeof *m->ep))
      return nomem(p->err);
    cldm_spirv_entry *e = &m->ep[m->nep];
    e->ii = ii;
    e->model = w[1];
    e->fn = w[2]; /* an id until resolved at the end of the parse */
    e->name = malloc(len + 1);
    if (!e->name)
      return nomem(p->err);
    cldm_spirv_string(w + 3, wc - 3, e->name, len + 1);
    m->nep++;
    return CLDM_SPIRV_OK;
  }
  case SpvOpExtInstImport: {
    if (wc < 3)
      return cldm_spirv_fail(p->err, CLDM_SPIRV_E_MALFORMED, at,
                             "OpExtInstImport has %u words, needs at least 3", wc);
    uint32_t set = CLDM_SPIRV_EXTSET_UNKNOWN;
    for (uint32_t s = 1; s < CLDM_SPIRV_EXTSET_NONSEMANTIC; s++)
      if (cldm_spirv_string_eq(w + 2, wc - 2, cldm_spirv_extsets[s].name))
        set = s;
    char prefix[16];
    cldm_spirv_string(w + 2, wc - 2, prefix, sizeof prefix);
    if (set == CLDM_SPIRV_EXTSET_UNKNOWN && strncmp(prefix, "NonSemantic.", 12) == 0)
      set = CLDM_SPIRV_EXTSET_NONSEMANTIC;
    if (cldm_spirv_string_len(w + 2, wc - 2) == SIZE_MAX)
      return cldm_spirv_fail(p->err, CLDM_SPIRV_E_MALFORMED, at,
                             "OpExtInstImport name is not NUL-terminated within the instruction");
    if (w[1] < m->bound)
      m->ids[w[1]].aux = set;
    return CLDM_SPIRV_OK;
  }
  default:
    return CLDM_SPIRV_OK;
  }
}

static cldm_spirv_status result_ids(parser *p, uint32_t ii, size_t at,
                                    const cldm_spirv_opcode_desc *d) {
  cldm_spirv_module *m = p->m;
  const uint32_t *w = m->w + at;
  uint32_t wc = m->inst[ii].wc;
  int has_type = (d->flags & CLDM_SPIRV_OPF_TYPE) != 0;
  int has_result = (d->flags & CLDM_SPIRV_OPF_RESULT) != 0;
  uint32_t need = 1 + (uint32_t)has_type + (uint32_t)has_result;
  if (wc < need)
    return cldm_spirv_fail(p->err, CLDM_SPIRV_E_MALFORMED, at, "%s has %u words, needs at least %u",
                           d->name, wc, need);
  uint32_t type = 0;
  if (has_type) {
    type = w[1];
    if (type == 0 || type >= m->bound)
      return cldm_spirv_fail(p->err, CLDM_SPIRV_E_MALFORMED, at + 1,
                             "%s: result type id %u is not below the id bound %u", d->name, type,
                             m->bound);
  }
  if (has_result) {
    uint32_t id = w[has_type ? 2 : 1];
    size_t idw = at + (has_type ? 2 : 1);
    if (id == 0 || id >= m->bound)
      return cldm_spirv_fail(p->err, CLDM_SPIRV_E_MALFORMED, idw,
                             "%s: result id %u is not below the id bound %u", d->name, id,
                             m->bound);
    if (m->ids[id].def)
      return cldm_spirv_fail(p->err, CLDM_SPIRV_E_MALFORMED, idw,
                             "%s: id %%%u is already defined at word %u", d->name, id,
                             m->inst[m->ids[id].def - 1].off);
    m->ids[id].def = ii + 1;
    m->ids[id].type = type;
  }
  return CLDM_SPIRV_OK;
}

static cldm_spirv_status header(cldm_spirv_module *m, const void *bytes, size_t size,
                                cldm_spirv_error *err) {
  if (!bytes || size < CLDM_SPIRV_HEADER_WORDS * 4)
    return cldm_spirv_fail(err, CLDM_SPIRV_E_MALFORMED, 0,
                           "module of %zu bytes is shorter than the 5-word header", size);
  if (size % 4)
    return cldm_spirv_fail(err, CLDM_SPIRV_E_MALFORMED, size / 4,
                           "module size %zu bytes is not a multiple of 4 (truncated?)", size);
  m->nw = size / 4;
  m->w = malloc(size);
  if (!m->w)
    return nomem(err);
  memcpy(m->w, bytes, size);
  if (m->w[0] != CLDM_SPIRV_MAGIC) {
    if (__builtin_bswap32(m->w[0]) != CLDM_SPIRV_MAGIC)
      return cldm_spirv_fail(err, CLDM_SPIRV_E_MALFORMED, 0,
                             "bad magic number 0x%08x (SPIR-V is 0x07230203)", m->w[0]);
    for (size_t i = 0; i < m->nw; i++)
      m->w[i] = __builtin_bswap32(m->w[i]);
  }
  uint32_t v = m->w[1], major = (v >> 16) & 0xFF, minor = (v >> 8) & 0xFF;
  if ((v & 0xFF0000FFu) || major != 1 || minor > 5)
    return cldm_spirv_fail(err, CLDM_SPIRV_E_UNSUPPORTED, 1,
                           "SPIR-V version word 0x%08x (%u.%u) is not supported (1.0-1.5)", v,
                           major, minor);
  m->version = v;
  m->generator = m->w[2];
  m->bound = m->w[3];
  if (m->bound == 0)
    return cldm_spirv_fail(err, CLDM_SPIRV_E_MALFORMED, 3, "id bound is 0");
  if (m->bound > CLDM_SPIRV_MAX_BOUND)
    return cldm_spirv_fail(err, CLDM_SPIRV_E_UNSUPPORTED, 3,
                           "id bound %u is larger than the supported %u", m->bound,
                           CLDM_SPIRV_MAX_BOUND);
  m->ids = calloc(m->bound, sizeof *m->ids);
  if (!m->ids)
    return nomem(err);
  return CLDM_SPIRV_OK;
}

static cldm_spirv_status finish(parser *p) {
  cldm_spirv_module *m = p->m;
  for (unsigned s = p->cur + 1; s <= CLDM_SPIRV_SEC_COUNT; s++)
    m->sec[s] = m->ninst;
  if (p->fstate != F_OUT)
    return cldm_spirv_fail(p->err, CLDM_SPIRV_E_MALFORMED, m->nw,
                           "module ends inside a function (missing OpFunctionEnd)");
  if (m->addressing == CLDM_SPIRV_NONE)
    return cldm_spirv_fail(p->err, CLDM_SPIRV_E_MALFORMED, m->nw, "module has no OpMemoryModel");
  for (uint32_t i = 0; i < m->nep; i++) {
    cldm_spirv_entry *e = &m->ep[i];
    uint32_t id = e->fn;
    if (cldm_spirv_def_op(m, id) != SpvOpFunction)
      return cldm_spirv_fail(p->err, CLDM_SPIRV_E_MALFORMED, m->inst[e->ii].off + 2,
                             "OpEntryPoint \"%s\": %%%u is not a function", e->name, id);
    e->fn = m->ids[id].aux;
  }
  return CLDM_SPIRV_OK;
}

cldm_spirv_status cldm_spirv_module_parse(cldm_spirv_module *m, const void *bytes, size_t size,
                                          cldm_spirv_error *err) {
  memset(m, 0, sizeof *m);
  m->addressing = m->memory_model = CLDM_SPIRV_NONE;
  cldm_spirv_status st = header(m, bytes, size, err);
  if (st)
    return st;
  parser p = {.m = m, .err = err, .cur = 0, .fstate = F_OUT};
  size_t at = CLDM_SPIRV_HEADER_WORDS;
  while (at < m->nw) {
    uint32_t op = m->w[at] & 0xFFFFu, wc = m->w[at] >> 16;
    const cldm_spirv_opcode_desc *d = cldm_spirv_opdesc(op);
    const char *name = d ? d->name : "instruction";
    if (wc == 0)
      return cldm_spirv_fail(err, CLDM_SPIRV_E_MALFORMED, at, "%s (opcode %u) has word count 0",
                             name, op);
    if (wc > m->nw - at)
      return cldm_spirv_fail(err, CLDM_SPIRV_E_MALFORMED, at,
                             "%s word count %u runs past the end of the module (%zu words left)",
                             name, wc, m->nw - at);
    if (grow((void **)&m->inst, &p.inst_cap, (size_t)m->ninst + 1, sizeof *m->inst))
      return nomem(err);
    uint32_t ii = m->ninst++;
    m->inst[ii].off = (uint32_t)at;
    m->inst[ii].op = (uint16_t)op;
    m->inst[ii].wc = (uint16_t)wc;
    if (!d && !m->first_unknown)
      m->first_unknown = ii + 1;

    unsigned want = wanted_section(d, p.cur);
    if (want < p.cur)
      return cldm_spirv_fail(err, CLDM_SPIRV_E_MALFORMED, at,
                             "%s is out of the logical layout order: it belongs to the %s "
                             "section, which ends before the %s",
                             name, section_names[want], section_names[p.cur]);
    for (unsigned s = p.cur + 1; s <= want; s++)
      m->sec[s] = ii;
    if (want == CLDM_SPIRV_SEC_MEMORYMODEL && p.cur == CLDM_SPIRV_SEC_MEMORYMODEL &&
        m->addressing != CLDM_SPIRV_NONE)
      return cldm_spirv_fail(err, CLDM_SPIRV_E_MALFORMED, at, "second OpMemoryModel");
    if (want > CLDM_SPIRV_SEC_MEMORYMODEL && m->addressing == CLDM_SPIRV_NONE)
      return cldm_spirv_fail(err, CLDM_SPIRV_E_MALFORMED, at,
                             "%s before OpMemoryModel (the module has none)", name);
    p.cur = want;

    if (d) {
      st = result_ids(&p, ii, at, d);
      if (st)
        return st;
    }
    st = module_level(&p, ii, at);
    if (st)
      return st;
    if (p.cur == CLDM_SPIRV_SEC_FUNCTION) {
      st = function_structure(&p, ii, at, d);
      if (st)
        return st;
    }
    at += wc;
  }
  return finish(&p);
}

void cldm_spirv_module_free(cldm_spirv_module *m) {
  if (!m)
    return;
  for (uint32_t i = 0; i < m->nep; i++)
    free(m->ep[i].name);
  free(m->ep);
  free(m->fn);
  free(m->inst);
  free(m->ids);
  free(m->w);
  free(m->fn_addr_taken);
  memset(m, 0, sizeof *m);
}

const uint32_t *cldm_spirv_def(const cldm_spirv_module *m, uint32_t id, uint32_t *wc) {
  if (id == 0 || id >= m->bound || !m->ids[id].def)
    return NULL;
  const cldm_spirv_inst *in = &m->inst[m->ids[id].def - 1];
  if (wc)
    *wc = in->wc;
  return m->w + in->off;
}

uint32_t cldm_spirv_def_op(const cldm_spirv_module *m, uint32_t id) {
  if (id == 0 || id >= m->bound || !m->ids[id].def)
    return 0;
  return m->inst[m->ids[id].def - 1].op;
}

uint32_t cldm_spirv_int_width(const cldm_spirv_module *m, uint32_t type) {
  uint32_t wc;
  const uint32_t *w = cldm_spirv_def(m, type, &wc);
  if (!w || (w[0] & 0xFFFFu) != SpvOpTypeInt || wc < 4)
    return 0;
  return w[2];
}

int cldm_spirv_pointer(const cldm_spirv_module *m, uint32_t type, uint32_t *storage,
                       uint32_t *pointee) {
  uint32_t wc;
  const uint32_t *w = cldm_spirv_def(m, type, &wc);
  if (!w || (w[0] & 0xFFFFu) != SpvOpTypePointer || wc < 4)
    return 0;
  if (storage)
    *storage = w[2];
  if (pointee)
    *pointee = w[3];
  return 1;
}

uint32_t cldm_spirv_fn_index(const cldm_spirv_module *m, uint32_t id) {
  if (cldm_spirv_def_op(m, id) != SpvOpFunction)
    return CLDM_SPIRV_NONE;
  return m->ids[id].aux;
}

const char *cldm_spirv_name_of(const cldm_spirv_module *m, uint32_t id, char *dst, size_t cap) {
  if (cap)
    dst[0] = '\0';
  for (uint32_t ii = m->sec[CLDM_SPIRV_SEC_DEBUG_B]; ii < m->sec[CLDM_SPIRV_SEC_DEBUG_C]; ii++) {
    const uint32_t *w = cldm_spirv_iw(m, ii);
    if (m->inst[ii].op == SpvOpName && m->inst[ii].wc >= 3 && w[1] == id) {
      cldm_spirv_string(w + 2, m->inst[ii].wc - 2u, dst, cap);
      break;
    }
  }
  return dst;
}

uint32_t cldm_spirv_result_pos(const cldm_spirv_module *m, uint32_t ii) {
  const cldm_spirv_opcode_desc *d = cldm_spirv_opdesc(m->inst[ii].op);
  if (!d || !(d->flags & CLDM_SPIRV_OPF_RESULT))
    return 0;
  return (d->flags & CLDM_SPIRV_OPF_TYPE) ? 2 : 1;
}

unsigned cldm_spirv_section_of(const cldm_spirv_module *m, uint32_t ii) {
  unsigned s = 0;
  while (s + 1 < CLDM_SPIRV_SEC_COUNT && m->sec[s + 1] <= ii)
    s++;
  return s;
}
