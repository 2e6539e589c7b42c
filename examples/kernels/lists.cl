/* lists.cl — the demo's kernels. Each work-item builds a linked list of variable length
 * (1 + i % max_len nodes) in device-allocated memory and leaves its head in heads[i]; a second
 * kernel, launched later, walks every list, sums it, and frees each node. malloc and free need
 * no declaration: programs built from source by the cl_ext_device_malloc layer see them
 * implicitly (the offline SPIR-V build includes include/opencl-c/cl_ext_device_malloc.h). */

typedef struct node {
  global struct node *next;
  uint value;
} node;

kernel void build_lists(global ulong *heads, uint max_len, global uint *failed) {
  size_t i = get_global_id(0);
  uint len = 1 + (uint)(i % max_len);
  global node *head = 0;
  for (uint k = 0; k < len; k++) {
    global node *n = (global node *)malloc(sizeof(node));
    if (!n) { /* heap full: keep what we have, and say so */
      atomic_inc(failed);
      break;
    }
    n->value = (uint)i + k;
    n->next = head;
    head = n;
  }
  heads[i] = (ulong)head;
}

kernel void consume_lists(global ulong *heads, global ulong *sums, global uint *lengths) {
  size_t i = get_global_id(0);
  global node *n = (global node *)heads[i];
  ulong sum = 0;
  uint len = 0;
  while (n) {
    global node *next = n->next;
    sum += n->value;
    len++;
    free(n);
    n = next;
  }
  heads[i] = 0;
  sums[i] = sum;
  lengths[i] = len;
}
