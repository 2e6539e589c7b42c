/*
 * layer_map.c — a small hash map from handle (pointer) to value, for the layer's side tables:
 * program and kernel records (layer_program.c, layer_kernel.c) and the application's handle
 * counts per context (layer_lifetime.c, counts stored as the values). Open addressing with
 * linear probing and backward-shift deletion; the table starts at 64 slots and doubles before
 * its load would pass 1/2 (it never shrinks). NULL keys are refused, and a NULL value reads as
 * absent. Not thread-safe by itself: each table carries its own mutex (cldm_map.lock), which
 * callers lock with pthread_mutex_lock around every operation (but cldm_map_hold, which locks
 * it itself).
 */
#include <stdlib.h>

#include "cldm_layer.h"

static size_t cldm_map_hash(const void *key, size_t mask) {
  uint64_t x = (uint64_t)(uintptr_t)key;
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull; /* murmur3 finaliser */
  x ^= x >> 33;
  return (size_t)x & mask;
}

static int cldm_map_grow(cldm_map *m) {
  size_t cap = m->cap ? m->cap * 2 : 64;
  cldm_map_slot *slots = calloc(cap, sizeof(*slots));
  if (!slots)
    return -1;
  for (size_t i = 0; i < m->cap; i++) {
    if (!m->slots[i].key)
      continue;
    size_t j = cldm_map_hash(m->slots[i].key, cap - 1);
    while (slots[j].key)
      j = (j + 1) & (cap - 1);
    slots[j] = m->slots[i];
  }
  free(m->slots);
  m->slots = slots;
  m->cap = cap;
  return 0;
}

void *cldm_map_get(const cldm_map *m, const void *key) {
  if (!m->cap || !key)
    return NULL;
  for (size_t j = cldm_map_hash(key, m->cap - 1);; j = (j + 1) & (m->cap - 1)) {
    if (!m->slots[j].key)
      return NULL;
    if (m->slots[j].key == key)
      return m->slots[j].value;
  }
}

int cldm_map_put(cldm_map *m, const void *key, void *value) {
  if (!key)
    return -1;
  if ((m->len + 1) * 2 > m->cap && cldm_map_grow(m) != 0)
    return -1;
  size_t j = cldm_map_hash(key, m->cap - 1);
  while (m->slots[j].key && m->slots[j].key != key)
    j = (j + 1) & (m->cap - 1);
  if (!m->slots[j].key)
    m->len++;
  m->slots[j].key = key;
  m->slots[j].value = value;
  return 0;
}

void *cldm_map_remove(cldm_map *m, const void *key) {
  if (!m->cap || !key)
    return NULL;
  size_t mask = m->cap - 1, j = cldm_map_hash(key, mask);
  while (m->slots[j].key != key) {
    if (!m->slots[j].key)
      return NULL;
    j = (j + 1) & mask;
  }
  void *value = m->slots[j].value;
  /* backward-shift deletion keeps every probe chain unbroken */
  for (size_t k = (j + 1) & mask; m->slots[k].key; k = (k + 1) & mask) {
    size_t home = cldm_map_hash(m->slots[k].key, mask);
    /* move slot k into the hole j if its home lies cyclically outside (j, k] */
    if (((k - home) & mask) >= ((k - j) & mask)) {
      m->slots[j] = m->slots[k];
      j = k;
    }
  }
  m->slots[j].key = NULL;
  m->slots[j].value = NULL;
  m->len--;
  return value;
}

long cldm_map_hold(cldm_map *m, const void *key, size_t offset, int delta, void **gone) {
  pthread_mutex_lock(&m->lock);
  unsigned char *value = cldm_map_get(m, key);
  long now = -1;
  *gone = NULL;
  if (value) {
    unsigned long *holders = (unsigned long *)(value + offset);
    now = (long)*holders + delta;
    *holders = now > 0 ? (unsigned long)now : 0ul;
    if (now <= 0) {
      *gone = cldm_map_remove(m, key);
      now = 0;
    }
  }
  pthread_mutex_unlock(&m->lock);
  return now;
}
