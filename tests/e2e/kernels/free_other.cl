/* free_other.cl — a second program of the same context frees what alloc_basic.cl allocated,
 * after checking the contents (spec 2.1: any later kernel of the context may free). */
extern void free(global void *ptr);

static uint pattern(size_t item, uint k) { return (uint)item * 7919u + k * 31u + 1u; }

kernel void check_and_free(global ulong *ptrs, uint n, global uint *bad) {
  size_t i = get_global_id(0);
  global uint *a = (global uint *)ptrs[i];
  if (!a) {
    atomic_inc(bad);
    return;
  }
  for (uint k = 0; k < n; k++)
    if (a[k] != pattern(i, k)) {
      atomic_inc(bad);
      break;
    }
  free(a);
  ptrs[i] = 0;
}
