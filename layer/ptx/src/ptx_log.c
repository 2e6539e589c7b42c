/*
 * ptx_log.c — the growable text behind every log the backend hands back: printf-style
 * appends, never failing loudly (an allocation failure truncates the text and marks it).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ptx_internal.h"

static int reserve(cldm_ptx_log *log, size_t extra) {
  if (log->oom)
    return -1;
  if (log->len + extra + 1 <= log->cap)
    return 0;
  size_t cap = log->cap ? log->cap : 256;
  while (cap < log->len + extra + 1)
    cap *= 2;
  char *s = realloc(log->s, cap);
  if (!s) {
    log->oom = 1;
    return -1;
  }
  log->s = s;
  log->cap = cap;
  return 0;
}

void cldm_ptx_log_append(cldm_ptx_log *log, const char *text, size_t len) {
  if (!log || reserve(log, len))
    return;
  memcpy(log->s + log->len, text, len);
  log->len += len;
  log->s[log->len] = '\0';
}

void cldm_ptx_log_printf(cldm_ptx_log *log, const char *fmt, ...) {
  if (!log)
    return;
  va_list ap;
  va_start(ap, fmt);
  char small[512];
  int n = vsnprintf(small, sizeof small, fmt, ap);
  va_end(ap);
  if (n < 0)
    return;
  if ((size_t)n < sizeof small) {
    cldm_ptx_log_append(log, small, (size_t)n);
    return;
  }
  if (reserve(log, (size_t)n))
    return;
  va_start(ap, fmt);
  vsnprintf(log->s + log->len, (size_t)n + 1, fmt, ap);
  va_end(ap);
  log->len += (size_t)n;
}

char *cldm_ptx_log_take(cldm_ptx_log *log) {
  char *s = log->len ? log->s : NULL;
  if (!s)
    free(log->s);
  memset(log, 0, sizeof *log);
  return s;
}

void cldm_ptx_log_free(cldm_ptx_log *log) {
  free(log->s);
  memset(log, 0, sizeof *log);
}
