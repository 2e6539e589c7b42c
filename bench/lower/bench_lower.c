/*
 * bench_lower.c — lowering time against pocl's clBuildProgram time (bench/lower, not a test).
 * For each SPIR-V module given: cldm_spirv_inspect and cldm_spirv_lower are timed (median of
 * repeated runs), then the lowered module is created with clCreateProgramWithIL and built on
 * the first OpenCL device (pocl 6.0, its kernel cache off: POCL_KERNEL_CACHE=0): the first
 * build of each module is shown, the ratio uses the median of three (warm: the smaller build
 * time, so the larger ratio). Prints a table with the ratio lower / build; goal <= 5 %.
 * usage: bench_lower [--allocator FILE.spv] MODULE.spv...
 * Without --allocator the built-in allocator (device/) is used.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <CL/cl.h>

#include "cldm_cl_device.h"
#include "cldm_device.h"
#include "cldm_file.h"
#include "cldm_spirv.h"

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmp_double);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static void *read_file(const char *path, size_t *size) {
  void *d = cldm_file_read(path, size);
  if (!d) {
    fprintf(stderr, "bench_lower: cannot read %s\n", path);
    exit(2);
  }
  return d;
}

#define MAX_REPS 200
#define MIN_SECONDS 0.5

int main(int argc, char **argv) {
  cldm_spirv_allocator alloc = {0};
  int first = 1;
  if (argc > 2 && !strcmp(argv[1], "--allocator")) {
    size_t size;
    void *a = read_file(argv[2], &size);
    cldm_spirv_report r;
    if (cldm_spirv_inspect(a, size, &r, NULL) || (r.address_bits != 32 && r.address_bits != 64)) {
      fprintf(stderr, "bench_lower: %s is not an allocator module\n", argv[2]);
      return 2;
    }
    if (r.address_bits == 32) {
      alloc.words32 = a;
      alloc.num_words32 = size / 4;
    } else {
      alloc.words64 = a;
      alloc.num_words64 = size / 4;
    }
    cldm_spirv_report_free(&r);
    first = 3;
  }
  const cldm_device_module *m64 = cldm_device_module_select(64, ~0u);
  if (!alloc.words64 && m64) {
    alloc.words64 = m64->words;
    alloc.num_words64 = m64->num_words;
    fprintf(stderr, "allocator: %s (%zu bytes)\n", m64->name, m64->num_words * 4);
  }
  if (first >= argc) {
    fprintf(stderr, "usage: bench_lower [--allocator FILE.spv] MODULE.spv...\n");
    return 2;
  }
  setenv("POCL_KERNEL_CACHE", "0", 1);
  cl_device_id dev = cldm_cl_find_device(NULL, NULL, NULL);
  cl_int e;
  if (!dev) {
    fprintf(stderr, "bench_lower: no OpenCL device (set OCL_ICD_VENDORS)\n");
    return 2;
  }
  char dname[256] = "";
  clGetDeviceInfo(dev, CL_DEVICE_NAME, sizeof dname, dname, NULL);
  cl_context ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &e);
  printf("device: %s\n", dname);
  printf("| module | input KB | kernels | inspect ms | lower ms | lowered KB | first build ms "
         "| build ms (median) | lower / build |\n|---|---|---|---|---|---|---|---|---|\n");
  double worst = 0;
  for (int i = first; i < argc; i++) {
    size_t size;
    void *in = read_file(argv[i], &size);
    double t_inspect[MAX_REPS], t_lower[MAX_REPS];
    int reps = 0;
    double start = now();
    void *out = NULL;
    size_t out_size = 0;
    cldm_spirv_report r;
    cldm_spirv_error err;
    size_t kernels = 0;
    while (reps < MAX_REPS && (reps < 5 || now() - start < MIN_SECONDS)) {
      double t0 = now();
      if (cldm_spirv_inspect(in, size, &r, &err)) {
        fprintf(stderr, "%s: %s\n", argv[i], err.message);
        return 1;
      }
      kernels = r.num_kernels;
      cldm_spirv_report_free(&r);
      double t1 = now();
      free(out);
      if (cldm_spirv_lower(in, size, &alloc, &out, &out_size, NULL, &err)) {
        fprintf(stderr, "%s: %s\n", argv[i], err.message);
        return 1;
      }
      double t2 = now();
      t_inspect[reps] = t1 - t0;
      t_lower[reps++] = t2 - t1;
    }
    if (!out) {
      fprintf(stderr, "%s: does not allocate\n", argv[i]);
      return 1;
    }
    double t_build[3], first_build = 0;
    for (int b = 0; b < 3; b++) {
      double t0 = now();
      cl_program p = clCreateProgramWithIL(ctx, out, out_size, &e);
      if (e || clBuildProgram(p, 1, &dev, "", NULL, NULL)) {
        fprintf(stderr, "%s: build failed\n", argv[i]);
        return 1;
      }
      t_build[b] = now() - t0;
      if (b == 0)
        first_build = t_build[b] * 1e3;
      clReleaseProgram(p);
    }
    double li = median(t_inspect, reps) * 1e3, ll = median(t_lower, reps) * 1e3;
    double lb = median(t_build, 3) * 1e3;
    const char *base = strrchr(argv[i], '/');
    printf("| %s | %.1f | %zu | %.3f | %.3f | %.1f | %.1f | %.1f | %.2f %% |\n",
           base ? base + 1 : argv[i], size / 1024.0, kernels, li, ll, out_size / 1024.0,
           first_build, lb, 100.0 * ll / lb);
    if (ll / lb > worst)
      worst = ll / lb;
    free(out);
    free(in);
  }
  printf("worst lower / build: %.2f %% (goal <= 5 %%)\n", 100.0 * worst);
  clReleaseContext(ctx);
  return 0;
}
