/* spaces.cl — every OpenCL address space through the PTX path: a constant argument and a
 * program-scope constant table (SPIR constant 2 -> NVPTX const 4), a local argument and a
 * kernel-scope local array (3 -> shared), a built-in on a constant pointer (vload4: its name
 * is re-mangled U3AS2 -> U3AS4 to match libclc), and the three fences (all membar.gl). */
constant int table[4] = {1, 2, 3, 4};

kernel void spaces(global int *out, constant int *c, local int *l, int n) {
  local int tile[64];
  size_t i = get_global_id(0), li = get_local_id(0);
  tile[li % 64] = c[i % 4] + table[(i + (size_t)n) % 4];
  l[li] = tile[(li + 1) % 64];
  barrier(CLK_LOCAL_MEM_FENCE);
  int4 v = vload4((size_t)n, c);
  out[i] = l[(li + 1) % get_local_size(0)] + v.x + v.w;
  mem_fence(CLK_GLOBAL_MEM_FENCE);
  out[i + 1] = 1;
  read_mem_fence(CLK_LOCAL_MEM_FENCE);
  out[i + 2] = 2;
  write_mem_fence(CLK_GLOBAL_MEM_FENCE);
  out[i + 3] = 3;
}
