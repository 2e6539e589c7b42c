/* link_main_alloc.cl — calls the allocating make_buffer of another module: unsupported when
 * compiled separately (spec 1.5), the link must fail with a message. */
extern global uint *make_buffer(uint n);

kernel void use_make_buffer(global ulong *out) { out[get_global_id(0)] = (ulong)make_buffer(8); }
