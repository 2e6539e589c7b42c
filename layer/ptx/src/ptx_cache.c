/*
 * ptx_cache.c — translations cached per key (ptx_api.c: SHA-256 of the module, the target,
 * the options that change the output, the backend's and libclc's identity).
 *   memory: most-recently-used list, at most CACHE_MAX_BYTES of PTX (the oldest entries go);
 *   disk:   when $CLDM_CACHE_DIR is set, one file per key, <dir>/cldm-ptx-<hex key>.ptx,
 *           written under a temporary name in the same directory and renamed into place, so
 *           a reader never sees a partial file; write failures only cost the caching.
 * One mutex guards the list and the counters; file I/O happens outside it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ptx_internal.h"

#define CACHE_MAX_BYTES ((size_t)64 << 20)
#define DISK_MAX_BYTES ((off_t)256 << 20) /* a cache file larger than this is not ours */

typedef struct entry {
  cldm_ptx_key key;
  char *ptx;
  size_t size;
  struct entry *prev, *next;
} entry;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static entry *head, *tail;
static size_t cached_bytes, cached_entries;
static uint64_t memory_hits, disk_hits, misses;
static unsigned long tmp_counter;

static void unlink_entry(entry *e) {
  if (e->prev)
    e->prev->next = e->next;
  else
    head = e->next;
  if (e->next)
    e->next->prev = e->prev;
  else
    tail = e->prev;
  e->prev = e->next = NULL;
}

static void push_front(entry *e) {
  e->next = head;
  e->prev = NULL;
  if (head)
    head->prev = e;
  else
    tail = e;
  head = e;
}

static entry *find(const cldm_ptx_key *key) {
  for (entry *e = head; e; e = e->next)
    if (!memcmp(e->key.b, key->b, sizeof key->b))
      return e;
  return NULL;
}

static char *dup_text(const char *s, size_t n) {
  char *d = malloc(n + 1);
  if (d) {
    memcpy(d, s, n);
    d[n] = '\0';
  }
  return d;
}

/* Inserts a copy unless present; caller holds the lock. */
static void insert(const cldm_ptx_key *key, const char *ptx, size_t size) {
  if (find(key) || size > CACHE_MAX_BYTES)
    return;
  entry *e = calloc(1, sizeof *e);
  char *copy = dup_text(ptx, size);
  if (!e || !copy) {
    free(e);
    free(copy);
    return;
  }
  e->key = *key;
  e->ptx = copy;
  e->size = size;
  push_front(e);
  cached_bytes += size;
  cached_entries++;
  while (cached_bytes > CACHE_MAX_BYTES && tail && tail != head) {
    entry *old = tail;
    unlink_entry(old);
    cached_bytes -= old->size;
    cached_entries--;
    free(old->ptx);
    free(old);
  }
}

static const char *cache_dir(void) {
  const char *d = getenv("CLDM_CACHE_DIR");
  return d && *d ? d : NULL;
}

static void key_hex(const cldm_ptx_key *key, char hex[65]) {
  for (int i = 0; i < 32; i++)
    snprintf(hex + 2 * i, 3, "%02x", key->b[i]);
}

static char *disk_read(const char *dir, const cldm_ptx_key *key, size_t *size) {
  char hex[65], path[4096];
  key_hex(key, hex);
  snprintf(path, sizeof path, "%s/cldm-ptx-%s.ptx", dir, hex);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return NULL;
  struct stat st;
  char *buf = NULL;
  if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 && st.st_size < DISK_MAX_BYTES &&
      (buf = malloc((size_t)st.st_size + 1))) {
    size_t got = 0;
    while (got < (size_t)st.st_size) {
      ssize_t r = read(fd, buf + got, (size_t)st.st_size - got);
      if (r <= 0)
        break;
      got += (size_t)r;
    }
    if (got != (size_t)st.st_size) {
      free(buf);
      buf = NULL;
    } else {
      buf[got] = '\0';
      *size = got;
    }
  }
  close(fd);
  return buf;
}

static void disk_write(const char *dir, const cldm_ptx_key *key, const char *ptx, size_t size,
                       cldm_ptx_log *log) {
  char hex[65], path[4096], tmp[4200];
  key_hex(key, hex);
  snprintf(path, sizeof path, "%s/cldm-ptx-%s.ptx", dir, hex);
  pthread_mutex_lock(&lock);
  unsigned long n = ++tmp_counter;
  pthread_mutex_unlock(&lock);
  snprintf(tmp, sizeof tmp, "%s/.cldm-ptx-%s.%ld.%lu.tmp", dir, hex, (long)getpid(), n);
  if (mkdir(dir, 0777) && errno != EEXIST) {
    cldm_ptx_log_printf(log, "cache: cannot create %s: %s\n", dir, strerror(errno));
    return;
  }
  int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) {
    cldm_ptx_log_printf(log, "cache: cannot write %s: %s\n", tmp, strerror(errno));
    return;
  }
  size_t done = 0;
  while (done < size) {
    ssize_t w = write(fd, ptx + done, size - done);
    if (w <= 0)
      break;
    done += (size_t)w;
  }
  int bad = done != size;
  bad |= close(fd) != 0;
  if (bad || rename(tmp, path)) {
    cldm_ptx_log_printf(log, "cache: cannot store %s\n", path);
    unlink(tmp);
  }
}

int cldm_ptx_cache_get(const cldm_ptx_key *key, char **ptx, size_t *size, const char **from) {
  pthread_mutex_lock(&lock);
  entry *e = find(key);
  if (e) {
    *ptx = dup_text(e->ptx, e->size);
    if (*ptx) {
      *size = e->size;
      unlink_entry(e);
      push_front(e);
      memory_hits++;
    }
  }
  pthread_mutex_unlock(&lock);
  if (e && *ptx) {
    *from = "memory";
    return 1;
  }
  const char *dir = cache_dir();
  char *text = dir ? disk_read(dir, key, size) : NULL;
  if (!text)
    return 0;
  pthread_mutex_lock(&lock);
  insert(key, text, *size);
  disk_hits++;
  pthread_mutex_unlock(&lock);
  *ptx = text;
  *from = "disk";
  return 1;
}

void cldm_ptx_cache_put(const cldm_ptx_key *key, const char *ptx, size_t size, cldm_ptx_log *log) {
  pthread_mutex_lock(&lock);
  insert(key, ptx, size);
  pthread_mutex_unlock(&lock);
  const char *dir = cache_dir();
  if (dir)
    disk_write(dir, key, ptx, size, log);
}

void cldm_ptx_cache_count_miss(void) {
  pthread_mutex_lock(&lock);
  misses++;
  pthread_mutex_unlock(&lock);
}

void cldm_ptx_cache_stats_get(cldm_ptx_cache_stats *out) {
  pthread_mutex_lock(&lock);
  out->memory_hits = memory_hits;
  out->disk_hits = disk_hits;
  out->misses = misses;
  out->entries = cached_entries;
  out->bytes = cached_bytes;
  pthread_mutex_unlock(&lock);
}

void cldm_ptx_cache_clear_all(void) {
  pthread_mutex_lock(&lock);
  while (head) {
    entry *e = head;
    unlink_entry(e);
    free(e->ptx);
    free(e);
  }
  cached_bytes = cached_entries = 0;
  memory_hits = disk_hits = misses = 0;
  pthread_mutex_unlock(&lock);
}
