/*
 * layer_log.c — the layer's messages on stderr, filtered by the knob CLDM_LOG (README "Settings"):
 * none | error | warn | info | debug, or 0..4 (default: error). Read once, on first use.
 */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cldm_layer.h"

static pthread_once_t cldm_log_once = PTHREAD_ONCE_INIT;
static cldm_log_level cldm_log_threshold = CLDM_LOG_ERROR;

static void cldm_log_read_level(void) {
  const char *lvl = getenv("CLDM_LOG");
  if (!lvl)
    return;
  static const char *const names[] = {"none", "error", "warn", "info", "debug"};
  for (int i = 0; i < 5; i++)
    if (!strcmp(lvl, names[i])) {
      cldm_log_threshold = (cldm_log_level)i;
      return;
    }
  if (lvl[0] >= '0' && lvl[0] <= '4' && lvl[1] == '\0') {
    cldm_log_threshold = (cldm_log_level)(lvl[0] - '0');
    return;
  }
  fprintf(stderr, "cldm: warning: CLDM_LOG=%s not understood (none|error|warn|info|debug)\n", lvl);
}

int cldm_log_enabled(cldm_log_level level) {
  pthread_once(&cldm_log_once, cldm_log_read_level);
  return level != CLDM_LOG_NONE && level <= cldm_log_threshold;
}

void cldm_log(cldm_log_level level, const char *fmt, ...) {
  static const char *const tags[] = {"", "error", "warning", "info", "debug"};
  if (!cldm_log_enabled(level))
    return;
  char line[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(line, sizeof(line), fmt, ap);
  va_end(ap);
  fprintf(stderr, "cldm: %s: %s\n", tags[level], line); /* one call: lines do not interleave */
}
