/* workitem.cl — every work-item function, for each dimension, and once with a dimension known
 * only at run time: the PTX must read NVIDIA's environment registers for offsets, split grids
 * and group counts (the backend's overrides), never libclc's plain ctaid/nctaid forms. */
kernel void workitem(global ulong *out, uint d) {
  for (uint k = 0; k < 3; k++) {
    out[0 + k] = get_global_id(k);
    out[3 + k] = get_global_offset(k);
    out[6 + k] = get_group_id(k);
    out[9 + k] = get_num_groups(k);
    out[12 + k] = get_global_size(k);
    out[15 + k] = get_local_size(k);
    out[18 + k] = get_local_id(k);
  }
  out[21] = get_work_dim();
  out[22] = get_global_id(d) + get_global_offset(d) + get_group_id(d) + get_num_groups(d) +
            get_global_size(d) + get_local_size(d) + get_local_id(d);
}
