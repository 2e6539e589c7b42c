/* link_main_plain.cl — calls only the non-allocating twice of the library module: linking it
 * with the (lowered) library works. */
extern uint twice(uint x);

kernel void use_twice(global uint *x) { x[get_global_id(0)] = twice(x[get_global_id(0)]); }
