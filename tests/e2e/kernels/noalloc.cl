/* noalloc.cl — a module that does not allocate: the layer passes it down byte-identical. */
kernel void add_one(global uint *x) { x[get_global_id(0)] += 1; }
