/* producer.cl — first program of the producer/consumer example: each work-item allocates a
 * variable-length record (a length word followed by that many values) and publishes it. */

kernel void produce(global ulong *records) {
  size_t i = get_global_id(0);
  uint count = 1 + (uint)(i % 61);
  global uint *r = (global uint *)malloc((1 + count) * sizeof(uint));
  if (r) {
    r[0] = count;
    for (uint k = 0; k < count; k++)
      r[1 + k] = (uint)(i * 3 + k);
  }
  records[i] = (ulong)r;
}
