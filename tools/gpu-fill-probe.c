/* tools/gpu-fill-probe.c — times clEnqueueFillBuffer over buffers of 1 GiB doubling up to a
 * limit, each step under a 20 s alarm (a fill that never ends prints TIMEOUT and exits 3).
 * Written to find out whether NVIDIA's driver hangs on a single large fill: the benchmark
 * suite's zero-fill of an 8 GiB buffer never ended on the H200 (driver 580), after the suite's
 * kernels had run (bench/results/2026-12-02-nvidia-h200-alloc-stamp/README.md). Alone, it did
 * not hang, so the suite now fills in pieces of 1 GiB (bench/suite/session.c).
 *
 *   gcc -O2 -o gpu-fill-probe tools/gpu-fill-probe.c -Iinclude -lOpenCL
 *   sh <pack>/run.sh [--layer] ./gpu-fill-probe MAX_GIB [PATTERN_BYTES [HOLD_GIB [FIRST_GIB]]]
 *
 * PATTERN_BYTES: the fill pattern's size (4 or 16); HOLD_GIB: a buffer of that size is created
 * and filled first and held through the steps (memory in use, as the suite's heap is);
 * FIRST_GIB: the first step's size. The first platform's first device is used. */
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void on_alarm(int sig) {
  (void)sig;
  static const char m[] = "TIMEOUT\n";
  (void)!write(1, m, sizeof m - 1);
  _exit(3);
}

/* Fills `bytes` of m with a zero pattern of `pattern` bytes; prints the time. */
static void timed_fill(cl_command_queue q, cl_mem m, size_t bytes, int pattern, const char *what) {
  static const unsigned char zero[16] = {0};
  alarm(20);
  double t0 = now_s();
  cl_int e = clEnqueueFillBuffer(q, m, zero, (size_t)pattern, 0, bytes, 0, NULL, NULL);
  cl_int f = clFinish(q);
  double t = now_s() - t0;
  alarm(0);
  printf("%s %.0f GiB pattern %d B (%llu elements): fill %d finish %d, %.3f s\n", what,
         (double)bytes / (double)(1ull << 30), pattern, (unsigned long long)(bytes / pattern), e, f,
         t);
  fflush(stdout);
}

int main(int argc, char **argv) {
  double max_gib = argc > 1 ? atof(argv[1]) : 1.0, first = argc > 4 ? atof(argv[4]) : 1.0;
  int pattern = argc > 2 ? atoi(argv[2]) : 4;
  if (pattern != 4 && pattern != 16) {
    fprintf(stderr, "pattern: 4 or 16 bytes\n");
    return 2;
  }
  cl_platform_id p;
  cl_device_id d;
  cl_int e;
  if (clGetPlatformIDs(1, &p, NULL) || clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 1, &d, NULL)) {
    fprintf(stderr, "no OpenCL device\n");
    return 1;
  }
  cl_ulong max_alloc = 0;
  clGetDeviceInfo(d, CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof max_alloc, &max_alloc, NULL);
  printf("max alloc %llu MiB\n", (unsigned long long)(max_alloc >> 20));
  cl_context c = clCreateContext(NULL, 1, &d, NULL, NULL, &e);
  if (e)
    return 1;
  cl_command_queue q = clCreateCommandQueueWithProperties(c, d, NULL, &e);
  if (e)
    return 1;
  signal(SIGALRM, on_alarm);
  cl_mem held = NULL;
  if (argc > 3) {
    size_t hb = (size_t)(atof(argv[3]) * (double)(1ull << 30));
    held = clCreateBuffer(c, CL_MEM_READ_WRITE, hb, NULL, &e);
    if (e)
      printf("held %s GiB: create %d\n", argv[3], e);
    else
      timed_fill(q, held, hb, pattern, "held");
  }
  for (double g = first; g <= max_gib; g *= 2) {
    size_t bytes = (size_t)(g * (double)(1ull << 30));
    cl_mem m = clCreateBuffer(c, CL_MEM_READ_WRITE, bytes, NULL, &e);
    if (e) {
      printf("%.0f GiB: create %d\n", g, e);
      break;
    }
    timed_fill(q, m, bytes, pattern, "step");
    clReleaseMemObject(m);
  }
  if (held)
    clReleaseMemObject(held);
  clReleaseCommandQueue(q);
  clReleaseContext(c);
  return 0;
}
