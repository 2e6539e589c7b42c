/*
 * buf.c — growable buffers of words: the output is assembled in them, section by section.
 * Allocation failure is sticky (b->failed) and checked once when the output is finished, so
 * emission code stays linear. Literal strings are packed as SPIR-V says: UTF-8 bytes, low byte
 * first within each word, NUL-terminated, padded with zeros to a whole word.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

void cldm_spirv_buf_free(cldm_spirv_buf *b) {
  free(b->w);
  memset(b, 0, sizeof *b);
}

int cldm_spirv_buf_reserve(cldm_spirv_buf *b, size_t extra) {
  if (b->failed)
    return -1;
  if (extra <= b->cap - b->n)
    return 0;
  size_t cap = b->cap ? b->cap : 256;
  while (cap - b->n < extra) {
    if (cap > SIZE_MAX / 8) {
      b->failed = 1;
      return -1;
    }
    cap *= 2;
  }
  uint32_t *w = realloc(b->w, cap * sizeof *w);
  if (!w) {
    b->failed = 1;
    return -1;
  }
  b->w = w;
  b->cap = cap;
  return 0;
}

void cldm_spirv_buf_push(cldm_spirv_buf *b, uint32_t word) {
  if (b->n == b->cap && cldm_spirv_buf_reserve(b, 1))
    return;
  b->w[b->n++] = word;
}

void cldm_spirv_buf_push_n(cldm_spirv_buf *b, const uint32_t *w, size_t n) {
  if (n == 0 || cldm_spirv_buf_reserve(b, n))
    return;
  memcpy(b->w + b->n, w, n * sizeof *w);
  b->n += n;
}

void cldm_spirv_buf_append(cldm_spirv_buf *dst, const cldm_spirv_buf *src) {
  if (src->failed)
    dst->failed = 1;
  cldm_spirv_buf_push_n(dst, src->w, src->n);
}

size_t cldm_spirv_buf_begin(cldm_spirv_buf *b, uint32_t opcode) {
  size_t start = b->n;
  cldm_spirv_buf_push(b, opcode);
  return start;
}

void cldm_spirv_buf_end(cldm_spirv_buf *b, size_t start) {
  if (b->failed || start >= b->n)
    return;
  size_t wc = b->n - start;
  if (wc > 0xFFFF) {
    b->failed = 1;
    return;
  }
  b->w[start] = (b->w[start] & 0xFFFFu) | (uint32_t)wc << 16;
}

void cldm_spirv_buf_string(cldm_spirv_buf *b, const char *s, size_t len) {
  size_t words = len / 4 + 1;
  if (cldm_spirv_buf_reserve(b, words))
    return;
  for (size_t i = 0; i < words; i++) {
    uint32_t w = 0;
    for (size_t k = 0; k < 4; k++) {
      size_t at = i * 4 + k;
      if (at < len)
        w |= (uint32_t)(unsigned char)s[at] << (8 * k);
    }
    b->w[b->n++] = w;
  }
}

void cldm_spirv_buf_inst(cldm_spirv_buf *b, uint32_t opcode, const uint32_t *ops, size_t n) {
  size_t at = cldm_spirv_buf_begin(b, opcode);
  cldm_spirv_buf_push_n(b, ops, n);
  cldm_spirv_buf_end(b, at);
}

size_t cldm_spirv_string_len(const uint32_t *w, size_t nw) {
  for (size_t i = 0; i < nw; i++)
    for (size_t k = 0; k < 4; k++)
      if (((w[i] >> (8 * k)) & 0xFFu) == 0)
        return i * 4 + k;
  return SIZE_MAX;
}

size_t cldm_spirv_string(const uint32_t *w, size_t nw, char *dst, size_t cap) {
  size_t len = cldm_spirv_string_len(w, nw);
  if (cap)
    dst[0] = '\0';
  if (len == SIZE_MAX)
    return 0;
  if (cap) {
    size_t copy = len < cap - 1 ? len : cap - 1;
    for (size_t i = 0; i < copy; i++)
      dst[i] = (char)((w[i / 4] >> (8 * (i % 4))) & 0xFFu);
    dst[copy] = '\0';
  }
  return len / 4 + 1;
}

int cldm_spirv_string_eq(const uint32_t *w, size_t nw, const char *s) {
  size_t n = strlen(s);
  if (cldm_spirv_string_len(w, nw) != n)
    return 0;
  for (size_t i = 0; i < n; i++)
    if ((char)((w[i / 4] >> (8 * (i % 4))) & 0xFFu) != s[i])
      return 0;
  return 1;
}
