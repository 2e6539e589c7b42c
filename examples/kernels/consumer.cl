/* consumer.cl — second, separately built program of the producer/consumer example: reads each
 * record the producer allocated, checks it, and frees it (same context and device, so the
 * same heap: spec 2.1). */

kernel void consume(global ulong *records, global uint *errors) {
  size_t i = get_global_id(0);
  global uint *r = (global uint *)records[i];
  if (!r) {
    atomic_inc(errors);
    return;
  }
  uint count = r[0];
  if (count != 1 + (uint)(i % 61))
    atomic_inc(errors);
  else
    for (uint k = 0; k < count; k++)
      if (r[1 + k] != (uint)(i * 3 + k)) {
        atomic_inc(errors);
        break;
      }
  free(r);
  records[i] = 0;
}
