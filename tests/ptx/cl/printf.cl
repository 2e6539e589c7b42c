/* printf.cl — printf, which the PTX path refuses with a message. */
kernel void print_it(global int *v) { printf("%d\n", v[0]); }
