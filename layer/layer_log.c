/*
 * layer_log.c — logging to stderr and the environment knobs documented in README ("Knobs"):
 *   CLDM_LOG        none | error | warn | info | debug (default: error)
 *   CLDM_HEAP_SIZE  default heap size in bytes, K/M/G suffixes allowed (default: 8M)
 *   CLDM_DUMP_DIR   directory where lowered SPIR-V modules are written (default: unset)
 *   CLDM_HEAP_MEMORY svm | buffer: force the heap's memory kind (default: SVM if available)
 * Each knob is read once, on first use.
 */
#include <ctype.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cldm_layer.h"

static pthread_once_t cldm_config_once = PTHREAD_ONCE_INIT;
static cldm_log_level cldm_level = CLDM_LOG_ERROR;
static size_t cldm_heap_default = CL_DEVICE_HEAP_SIZE_DEFAULT_EXT;
static const char *cldm_dump_dir;
static const char *cldm_heap_memory;

/* Parses "<digits>[K|M|G][B|iB]"; returns 0 on failure. */
static size_t cldm_parse_size(const char *s)
{
  char *end = NULL;
  unsigned long long v = strtoull(s, &end, 10);
  if (end == s)
    return 0;
  unsigned shift = 0;
  switch (toupper((unsigned char)*end)) {
  case 'K': shift = 10; end++; break;
  case 'M': shift = 20; end++; break;
  case 'G': shift = 30; end++; break;
  default: break;
  }
  if (*end == 'i')
    end++;
  if (toupper((unsigned char)*end) == 'B')
    end++;
  if (*end != '\0' || v > (SIZE_MAX >> shift))
    return 0;
  return (size_t)(v << shift);
}

static void cldm_config_read(void)
{
  const char *lvl = getenv("CLDM_LOG");
  if (lvl) {
    static const char *const names[] = {"none", "error", "warn", "info", "debug"};
    int found = 0;
    for (int i = 0; i < 5; i++)
      if (!strcmp(lvl, names[i])) {
        cldm_level = (cldm_log_level)i;
        found = 1;
      }
    if (!found && lvl[0] >= '0' && lvl[0] <= '4' && lvl[1] == '\0') {
      cldm_level = (cldm_log_level)(lvl[0] - '0');
      found = 1;
    }
    if (!found)
      fprintf(stderr, "cldm: warning: CLDM_LOG=%s not understood (none|error|warn|info|debug)\n",
              lvl);
  }
  const char *hs = getenv("CLDM_HEAP_SIZE");
  if (hs) {
    size_t v = cldm_parse_size(hs);
    if (v >= CL_DEVICE_HEAP_SIZE_MIN_EXT)
      cldm_heap_default = v;
    else if (cldm_level >= CLDM_LOG_ERROR)
      fprintf(stderr, "cldm: error: CLDM_HEAP_SIZE=%s is not a size >= 1M; using 8M\n", hs);
  }
  const char *dd = getenv("CLDM_DUMP_DIR");
  if (dd && *dd)
    cldm_dump_dir = dd;
  const char *hm = getenv("CLDM_HEAP_MEMORY");
  if (hm && (!strcmp(hm, "svm") || !strcmp(hm, "buffer")))
    cldm_heap_memory = hm;
  else if (hm && *hm && cldm_level >= CLDM_LOG_ERROR)
    fprintf(stderr, "cldm: error: CLDM_HEAP_MEMORY=%s is not svm or buffer; ignored\n", hm);
}

static void cldm_config_init(void) { pthread_once(&cldm_config_once, cldm_config_read); }

int cldm_log_enabled(cldm_log_level level)
{
  cldm_config_init();
  return level != CLDM_LOG_NONE && level <= cldm_level;
}

void cldm_log(cldm_log_level level, const char *fmt, ...)
{
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

size_t cldm_config_default_heap_size(void)
{
  cldm_config_init();
  return cldm_heap_default;
}

const char *cldm_config_dump_dir(void)
{
  cldm_config_init();
  return cldm_dump_dir;
}

const char *cldm_config_heap_memory(void)
{
  cldm_config_init();
  return cldm_heap_memory;
}
