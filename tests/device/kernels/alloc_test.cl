/*
 * alloc_test.cl — test kernels for the device allocator. They call the allocator's exported
 * functions directly (declared extern here, Import linkage); the build links this module with
 * each allocator module using spirv-link (tests/device/CMakeLists.txt), so the tests run the
 * embedded artifact itself.
 *
 * Every kernel takes the number of work-items that do work as its last argument `n` (the host
 * rounds launches up to a fixed work-group size, so pocl compiles each kernel once). Work-items
 * past n still call the allocator, with size 0 or NULL: every call is made from uniform control
 * flow, as the sub-group variant (cldm_alloc.cl20_sg) requires.
 *
 * Results go back to the host as heap offsets (ptr - heap; CLDM_NULL_OFF for NULL), so the
 * host can check bounds, alignment and overlap independently of the device.
 */
extern global void *cldm_malloc(global void *heap, size_t size);
extern void cldm_free(global void *heap, global void *ptr);
extern global void *cldm_calloc(global void *heap, size_t count, size_t size);
extern global void *cldm_realloc(global void *heap, global void *ptr, size_t size);
extern global void *cldm_aligned_alloc(global void *heap, size_t align, size_t size);

#define CLDM_NULL_OFF 0xFFFFFFFFFFFFFFFFul

static ulong off_of(global uchar *heap, global void *p) {
  return p ? (ulong)((global uchar *)p - heap) : CLDM_NULL_OFF;
}

/* Word k of an allocation owned by `id`. */
static uint pattern(uint id, uint k) {
  return (id * 0x9E3779B9u) ^ (k * 0x85EBCA6Bu) ^ 0x5bd1e995u;
}

static void fill(global void *p, uint bytes, uint id) {
  global uint *w = (global uint *)p;
  for (uint k = 0; k < bytes / 4u; k++)
    w[k] = pattern(id, k);
}

static uint check(global const void *p, uint bytes, uint id) {
  global const uint *w = (global const uint *)p;
  uint bad = 0;
  for (uint k = 0; k < bytes / 4u; k++)
    bad += w[k] != pattern(id, k);
  return bad;
}

static uint mix(uint x) {
  x ^= x >> 16;
  x *= 0x7feb352dU;
  x ^= x >> 15;
  x *= 0x846ca68bU;
  x ^= x >> 16;
  return x;
}

/* A random request: mostly 16 B..8 KiB, log-uniform; 1 in `large_one_in` 32..256 KiB. */
static uint random_size(uint r, uint large_one_in) {
  if (large_one_in && r % large_one_in == 0u)
    return 32768u + (mix(r) % 229376u);
  uint e = 4u + (r >> 8) % 10u; /* 16 .. 8192 */
  uint s = (1u << e) + (mix(r ^ 0xabcdu) & ((1u << e) - 1u));
  return s > 8192u ? 8192u : s;
}

/* sizes[i] bytes each (0 allowed); fills the memory with work-item i's pattern. */
kernel void k_malloc(global uchar *heap, global const uint *sizes, global ulong *offs, uint do_fill,
                     uint n) {
  uint i = get_global_id(0);
  bool active = i < n;
  uint size = active ? sizes[i] : 0u;
  global void *p = cldm_malloc(heap, size);
  if (!active)
    return;
  offs[i] = off_of(heap, p);
  if (p && do_fill)
    fill(p, size, i);
}

/* Checks work-item i's pattern in its allocation and frees it (if do_free). */
kernel void k_check_free(global uchar *heap, global const uint *sizes, global const ulong *offs,
                         global uint *errors, uint do_free, uint n) {
  uint i = get_global_id(0);
  global uchar *p = 0;
  if (i < n && offs[i] != CLDM_NULL_OFF) {
    p = heap + offs[i];
    uint bad = check(p, sizes[i], i);
    if (bad)
      atomic_add(errors, bad);
  }
  /* unconditional call: pocl 6.0 miscounts sub-group collectives reached under a branch, even
   * a uniform one (the sub-group variant then updates counters once per work-item) */
  cldm_free(heap, do_free ? p : (global uchar *)0);
}

/* Frees heap + offs[i] as given (also pointers that are not allocations). */
kernel void k_free_offs(global uchar *heap, global const ulong *offs, uint n) {
  uint i = get_global_id(0);
  bool some = i < n && offs[i] != CLDM_NULL_OFF;
  cldm_free(heap, some ? heap + offs[i] : (global void *)0);
}

/* Work-item 0 frees a pointer into another buffer (outside the heap). */
kernel void k_free_foreign(global uchar *heap, global uchar *other, uint at, uint n) {
  cldm_free(heap, get_global_id(0) == 0u ? other + at : (global void *)0);
}

/* aligned_alloc(aligns[i], sizes[i]); mods[i] = absolute address mod alignment. */
kernel void k_aligned(global uchar *heap, global const uint *aligns, global const uint *sizes,
                      global ulong *offs, global uint *mods, uint n) {
  uint i = get_global_id(0);
  bool active = i < n;
  global void *p = cldm_aligned_alloc(heap, active ? aligns[i] : 16u, active ? sizes[i] : 0u);
  if (!active)
    return;
  offs[i] = off_of(heap, p);
  mods[i] = p && aligns[i] ? (uint)((size_t)p & (size_t)(aligns[i] - 1u)) : 0u;
  if (p)
    fill(p, sizes[i], i);
}

/* Fills sizes[i] bytes at offs[i] with 0xFF words (dirties memory before calloc). */
kernel void k_dirty(global uchar *heap, global const ulong *offs, global const uint *sizes,
                    uint n) {
  uint i = get_global_id(0);
  if (i >= n || offs[i] == CLDM_NULL_OFF)
    return;
  global uint *w = (global uint *)(heap + offs[i]);
  for (uint k = 0; k < sizes[i] / 4u; k++)
    w[k] = 0xFFFFFFFFu;
}

/* calloc(counts[i], sizes[i]) and counts the non-zero bytes of the first count*size bytes. */
kernel void k_calloc(global uchar *heap, global const ulong *counts, global const ulong *sizes,
                     global ulong *offs, global uint *nonzero, uint n) {
  uint i = get_global_id(0);
  bool active = i < n;
  global uchar *p =
      (global uchar *)cldm_calloc(heap, active ? counts[i] : 0u, active ? sizes[i] : 0u);
  if (!active)
    return;
  offs[i] = off_of(heap, p);
  if (!p)
    return;
  uint bytes = (uint)(counts[i] * sizes[i]), nz = 0;
  for (uint k = 0; k < bytes; k++)
    nz += p[k] != 0;
  if (nz)
    atomic_add(nonzero, nz);
}

/* Calls with arguments of size_t width that no heap can satisfy (32- and 64-bit): work-item 0
 * asks, the others ask for nothing. */
kernel void k_calloc_overflow(global uchar *heap, global ulong *offs, uint n) {
  bool first = get_global_id(0) == 0u;
  size_t root = ((size_t)1 << (sizeof(size_t) * 4u)) + 1u; /* root * root overflows */
  global void *a = cldm_calloc(heap, first ? root : 0u, root);
  global void *b = cldm_calloc(heap, first ? (size_t)-1 : 0u, 2u);
  global void *c = cldm_malloc(heap, first ? (size_t)-1 : 0u);
  global void *d = cldm_aligned_alloc(heap, 64u, first ? (size_t)-16 : 0u);
  if (first) {
    offs[0] = off_of(heap, a);
    offs[1] = off_of(heap, b);
    offs[2] = off_of(heap, c);
    offs[3] = off_of(heap, d);
  }
}

/* realloc: offs[i] (allocation of old_sizes[i] bytes holding i's pattern, or NULL) grows or
 * shrinks to new_sizes[i]; errors counts pattern words lost in min(old, new); the new
 * allocation is refilled with the pattern for new_sizes[i]. */
kernel void k_realloc(global uchar *heap, global ulong *offs, global const uint *old_sizes,
                      global const uint *new_sizes, global uint *errors, uint n) {
  uint i = get_global_id(0);
  bool active = i < n;
  global void *old = !active || offs[i] == CLDM_NULL_OFF ? (global void *)0 : heap + offs[i];
  global void *p = cldm_realloc(heap, old, active ? new_sizes[i] : 0u);
  if (!active)
    return;
  offs[i] = off_of(heap, p);
  if (!p)
    return;
  uint keep = old_sizes[i] < new_sizes[i] ? old_sizes[i] : new_sizes[i];
  if (old) {
    uint bad = check(p, keep, i);
    if (bad)
      atomic_add(errors, bad);
  }
  fill(p, new_sizes[i], i);
}

/* Random sizes (seeded) allocated and filled; sizes and offsets recorded for the host. */
kernel void k_random_alloc(global uchar *heap, uint seed, uint large_one_in, global uint *sizes,
                           global ulong *offs, global uint *nulls, uint n) {
  uint i = get_global_id(0);
  bool active = i < n;
  uint size = active ? random_size(mix(seed ^ (i * 0x9E3779B9u)), large_one_in) : 0u;
  global void *p = cldm_malloc(heap, size);
  if (!active)
    return;
  sizes[i] = size;
  offs[i] = off_of(heap, p);
  if (p)
    fill(p, size, i);
  else
    atomic_inc(nulls);
}

/* Each work-item keeps up to 4 allocations live: every step allocates a random size, fills
 * it, and replaces the oldest live one after checking its pattern; at the end checks and
 * frees the rest. Exercises concurrent allocation and free in one launch. */
kernel void k_stress(global uchar *heap, uint seed, uint steps, uint large_one_in,
                     global uint *errors, global uint *nulls, uint n) {
  uint i = get_global_id(0);
  bool active = i < n;
  global uchar *live[4] = {0, 0, 0, 0};
  uint live_size[4] = {0, 0, 0, 0}, live_id[4] = {0, 0, 0, 0};
  uint bad = 0, nul = 0;
  for (uint s = 0; s < steps; s++) {
    uint slot = s & 3u;
    if (live[slot])
      bad += check(live[slot], live_size[slot], live_id[slot]);
    cldm_free(heap, live[slot]);
    live[slot] = 0;
    uint id = i * 64u + s;
    uint size = active ? random_size(mix(seed ^ mix(id)), large_one_in) : 0u;
    global uchar *p = (global uchar *)cldm_malloc(heap, size);
    if (!p) {
      nul += active;
      continue;
    }
    if (((size_t)p & 15u) != 0u)
      bad++;
    fill(p, size, id);
    live[slot] = p;
    live_size[slot] = size;
    live_id[slot] = id;
  }
  for (uint slot = 0; slot < 4u; slot++) {
    if (live[slot])
      bad += check(live[slot], live_size[slot], live_id[slot]);
    cldm_free(heap, live[slot]);
  }
  if (bad)
    atomic_add(errors, bad);
  if (nul)
    atomic_add(nulls, nul);
}

/* Every work-item allocates `size` bytes, writes its tag, reads it back and frees, `rounds`
 * times: on a heap with only a few free slots, concurrent work-items compete for the same
 * bitmap words, so a slot handed out twice shows up as a changed tag (errors) or as an invalid
 * free (the second free of the slot). */
kernel void k_churn(global uchar *heap, uint size, uint rounds, global uint *errors,
                    global uint *nulls, uint n) {
  uint i = get_global_id(0);
  bool active = i < n;
  uint bad = 0, nul = 0;
  for (uint r = 0; r < rounds; r++) {
    global volatile uint *p = (global volatile uint *)cldm_malloc(heap, active ? size : 0u);
    if (p) {
      uint tag = (i << 8) ^ r;
      for (uint k = 0; k < size / 4u; k++)
        p[k] = tag + k;
      for (uint k = 0; k < size / 4u; k++)
        bad += p[k] != tag + k;
    } else {
      nul += active;
    }
    cldm_free(heap, (global void *)p);
  }
  if (bad)
    atomic_add(errors, bad);
  if (nul)
    atomic_add(nulls, nul);
}

/* The heap's device address (where the allocator puts page 0 depends on it). */
kernel void k_heap_addr(global uchar *heap, global ulong *addr, uint n) {
  if (get_global_id(0) == 0u && n)
    addr[0] = (ulong)(size_t)heap;
}
