/*
 * cldm_file.c — see cldm_file.h. The stream is read in growing chunks, so pipes and stdin
 * work as well as regular files.
 */
#include "cldm_file.h"

#include <errno.h>
#include <stdlib.h>

void *cldm_file_read_stream(FILE *f, size_t *size) {
  size_t cap = 1 << 16, n = 0;
  char *buf = malloc(cap);
  if (!buf)
    return NULL;
  for (;;) {
    n += fread(buf + n, 1, cap - n, f);
    if (n < cap)
      break;
    char *b = realloc(buf, cap * 2);
    if (!b) {
      free(buf);
      return NULL;
    }
    buf = b;
    cap *= 2;
  }
  if (ferror(f)) {
    free(buf);
    errno = EIO;
    return NULL;
  }
  buf[n] = '\0'; /* n < cap: room for it */
  *size = n;
  return buf;
}

void *cldm_file_read(const char *path, size_t *size) {
  FILE *f = fopen(path, "rb");
  if (!f)
    return NULL;
  void *data = cldm_file_read_stream(f, size);
  int saved = errno;
  fclose(f);
  errno = saved;
  return data;
}
