/* calls.cl — a kernel that calls another kernel (kept as a call at -O0): the callee stays an
 * entry point and the call goes to a callable copy. */
kernel void callee(global int *p) { p[get_global_id(0)] += 1; }
kernel void caller(global int *p) {
  callee(p);
  p[0] = 7;
}
