/* ordered.cl (OpenCL C 2.0) — an atomic with acquire/release order, which the PTX path refuses
 * (OpenCL 1.2 built-ins and LLVM 15's NVPTX back end would drop the order). */
kernel void ordered(global atomic_uint *p) {
  atomic_fetch_add_explicit(p, 1u, memory_order_acq_rel, memory_scope_device);
}
