/*
 * error.c — status names and the engine's error messages. Every failure is reported once, at
 * the point it is found, as "word N: reason" (N = word offset in the input), so that the layer
 * can print it verbatim (spec 1.5).
 */
#include <stdio.h>
#include <string.h>

#include "internal.h"

const char *cldm_spirv_status_name(cldm_spirv_status status) {
  switch (status) {
  case CLDM_SPIRV_OK:
    return "OK";
  case CLDM_SPIRV_E_MALFORMED:
    return "E_MALFORMED";
  case CLDM_SPIRV_E_INVALID:
    return "E_INVALID";
  case CLDM_SPIRV_E_UNSUPPORTED:
    return "E_UNSUPPORTED";
  case CLDM_SPIRV_E_ALLOCATOR:
    return "E_ALLOCATOR";
  case CLDM_SPIRV_E_NOMEM:
    return "E_NOMEM";
  }
  return "E_UNKNOWN";
}

cldm_spirv_status cldm_spirv_fail(cldm_spirv_error *err, cldm_spirv_status status, size_t word,
                                  const char *fmt, ...) {
  if (err) {
    err->status = status;
    err->word_offset = word;
    int n = snprintf(err->message, sizeof err->message, "word %zu: ", word);
    if (n < 0 || (size_t)n >= sizeof err->message)
      n = 0;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->message + n, sizeof err->message - (size_t)n, fmt, ap);
    va_end(ap);
    for (char *p = err->message; *p; p++) /* one line */
      if (*p == '\n' || *p == '\r')
        *p = ' ';
  }
  return status;
}

/* "word N: reason" becomes "word N: allocator module: reason", the form of
 * cldm_spirv_fail_allocator_at, so every allocator message reads the same way. */
cldm_spirv_status cldm_spirv_fail_allocator(cldm_spirv_error *err, cldm_spirv_status status) {
  if (status == CLDM_SPIRV_OK || status == CLDM_SPIRV_E_NOMEM)
    return status;
  if (err) {
    char head[32], reason[sizeof err->message];
    const char *r = err->message;
    int h = snprintf(head, sizeof head, "word %zu: ", err->word_offset);
    if (h > 0 && (size_t)h < sizeof head && !strncmp(r, head, (size_t)h))
      r += h;
    snprintf(reason, sizeof reason, "%s", r);
    cldm_spirv_fail(err, CLDM_SPIRV_E_ALLOCATOR, err->word_offset, "allocator module: %s", reason);
  }
  return CLDM_SPIRV_E_ALLOCATOR;
}

cldm_spirv_status cldm_spirv_fail_allocator_at(cldm_spirv_error *err, size_t word, const char *fmt,
                                               ...) {
  char msg[200];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return cldm_spirv_fail(err, CLDM_SPIRV_E_ALLOCATOR, word, "allocator module: %s", msg);
}

void cldm_spirv_error_clear(cldm_spirv_error *err) {
  if (err) {
    err->status = CLDM_SPIRV_OK;
    err->word_offset = 0;
    err->message[0] = '\0';
  }
}
