/*
 * case_overhead.c — case 8 of the suite, the layer's own cost, on host clocks:
 *   enqueue  time spent in clEnqueueNDRangeKernel;
 *   finish   clEnqueueNDRangeKernel + clFinish (enqueue to completion);
 * for the non-allocating k_noalloc (overhead.spv) with the layer and without it, and for the
 * allocating k_overhead_alloc (alloc.spv) with it; and clCreateProgramWithIL (+ a first
 * clBuildProgram) for the allocating module, which the layer lowers, next to the same module
 * lowered at build time (alloc.lowered.spv, `cldm-spirv lower`) given to the driver without the
 * layer, and for the non-allocating module with and without the layer.
 *
 * Both measurements run in fresh processes that differ only in the layer: this program again
 * (--child layer, --child nolayer, the second started with OPENCL_LAYERS and OPENCL_LAYER_PATH
 * removed from its environment), each with one context and one queue, writing its rows to a
 * pipe; so the figures compare the layer's interception, not the state the other cases left in
 * the driver (heaps, buffers, queues). On a driver that takes no SPIR-V, the run without the
 * layer builds overhead.cl from source instead (kernel "program_noalloc_source") and skips the
 * pre-lowered module.
 */
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cldm_file.h"
#include "suite.h"

extern char **environ;

#define ARG(x) sizeof(x), (const void *)&(x)

/* Host-clock latencies of `reps` launches of k over n work-items on the plain queue q. */
static void latency(cl_command_queue q, cl_kernel k, cl_device_id dev, uint32_t n, int reps,
                    bs_series *enq, bs_series *fin) {
  size_t wg = 0, global = n, local;
  BS_CHECK(clGetKernelWorkGroupInfo(k, dev, CL_KERNEL_WORK_GROUP_SIZE, sizeof wg, &wg, NULL));
  local = wg && wg < global ? wg : global;
  while (global % local)
    local--;
  for (int r = 0; r < 10; r++) { /* warm-up */
    BS_CHECK(clEnqueueNDRangeKernel(q, k, 1, NULL, &global, &local, 0, NULL, NULL));
    BS_CHECK(clFinish(q));
  }
  for (int r = 0; r < reps; r++) {
    double t0 = bs_now_us();
    BS_CHECK(clEnqueueNDRangeKernel(q, k, 1, NULL, &global, &local, 0, NULL, NULL));
    double t1 = bs_now_us();
    BS_CHECK(clFinish(q));
    bs_series_add(enq, t1 - t0);
  }
  for (int r = 0; r < reps; r++) {
    double t0 = bs_now_us();
    BS_CHECK(clEnqueueNDRangeKernel(q, k, 1, NULL, &global, &local, 0, NULL, NULL));
    BS_CHECK(clFinish(q));
    bs_series_add(fin, bs_now_us() - t0);
  }
}

static void latency_rows(const char *kernel, const char *param, uint32_t n, bs_series *enq,
                         bs_series *fin) {
  bs_out_series("overhead", kernel, 0, n, param, "enqueue", "us", enq, 1);
  bs_out_series("overhead", kernel, 0, n, param, "finish", "us", fin, 1);
  bs_series_free(enq);
  bs_series_free(fin);
}

/* Program creation from `il` (or `source` when il is NULL) `reps` times, after one creation
 * that is also built (the first build's time in *build_ms). */
static void creation(cl_context ctx, cl_device_id dev, const void *il, size_t size,
                     const char *source, int reps, bs_series *create, double *build_ms) {
  for (int r = -1; r < reps; r++) {
    cl_int err;
    double t0 = bs_now_us();
    cl_program p = il ? clCreateProgramWithIL(ctx, il, size, &err)
                      : clCreateProgramWithSource(ctx, 1, &source, NULL, &err);
    double t1 = bs_now_us();
    BS_CHECK(err);
    if (r < 0) {
      double b0 = bs_now_us();
      BS_CHECK(clBuildProgram(p, 1, &dev, "", NULL, NULL));
      *build_ms = (bs_now_us() - b0) / 1e3;
    } else {
      bs_series_add(create, (t1 - t0) / 1e3);
    }
    clReleaseProgram(p);
  }
}

static void creation_rows(const char *kernel, const char *param, bs_series *create,
                          double build_ms) {
  bs_out_series("overhead", kernel, 0, 0, param, "create", "ms", create, 1);
  bs_row b = {kernel, 0, 0, param, "build", "ms", build_ms, build_ms, 1, 1};
  bs_out_row("overhead", &b);
  bs_series_free(create);
}

static void *read_kernel_file(const char *dir, const char *file, size_t *size) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", dir, file);
  void *buf = cldm_file_read(path, size);
  if (!buf) {
    fprintf(stderr, "cldm-bench-suite: cannot read %s (--kernels DIR)\n", path);
    exit(2);
  }
  return buf;
}

/* Runs this program with --child `mode` (environment without the layer for "nolayer") and
 * passes its rows on; *enq / *fin get its median k_noalloc latencies, *alloc_* those of
 * k_overhead_alloc, *create that of the allocating module's creation (0 where absent). */
typedef struct child_figures {
  double enq, fin, alloc_enq, alloc_fin, create;
} child_figures;

static void take_figure(child_figures *f, char **field) {
  double median = atof(field[9]);
  int noalloc = !strcmp(field[2], "noalloc"), alloc = !strcmp(field[2], "alloc");
  if (noalloc && !strcmp(field[6], "enqueue"))
    f->enq = median;
  if (noalloc && !strcmp(field[6], "finish"))
    f->fin = median;
  if (alloc && !strcmp(field[6], "enqueue"))
    f->alloc_enq = median;
  if (alloc && !strcmp(field[6], "finish"))
    f->alloc_fin = median;
  if (!strcmp(field[2], "program_alloc") && !strcmp(field[6], "create"))
    f->create = median;
}

static int run_child(const bs_opts *o, const bs_dev *d, const char *mode, child_figures *fig) {
  int fds[2];
  if (pipe(fds)) {
    bs_fail("overhead: pipe failed");
    return -1;
  }
  int layer = !strcmp(mode, "layer");
  size_t count = 0;
  while (environ[count])
    count++;
  char **env = calloc(count + 1, sizeof *env);
  size_t e = 0;
  for (size_t i = 0; i < count; i++)
    if (layer || (strncmp(environ[i], "OPENCL_LAYERS=", 14) &&
                  strncmp(environ[i], "OPENCL_LAYER_PATH=", 18)))
      env[e++] = environ[i];
  char *argv[] = {(char *)o->self,
                  "--child",
                  (char *)mode,
                  "--device",
                  (char *)d->name,
                  "--kernels",
                  (char *)o->kernels_dir,
                  "--scale",
                  (char *)bp_scale_name(o->scale),
                  NULL};
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_addclose(&fa, fds[0]);
  posix_spawn_file_actions_addclose(&fa, fds[1]);
  pid_t pid;
  int rc = posix_spawn(&pid, o->self, &fa, NULL, argv, env);
  posix_spawn_file_actions_destroy(&fa);
  free(env);
  close(fds[1]);
  if (rc) {
    close(fds[0]);
    bs_fail("overhead: cannot start %s --child %s", o->self, mode);
    return -1;
  }
  FILE *f = fdopen(fds[0], "r");
  char line[1024];
  while (f && fgets(line, sizeof line, f)) {
    if (strncmp(line, "opencl,overhead,", 16))
      continue;
    bs_out_raw(line);
    /* opencl,overhead,kernel,size,n,param,metric,unit,value,median,reps,ops */
    char copy[1024], *field[12] = {0}, *save = NULL;
    snprintf(copy, sizeof copy, "%s", line);
    int nf = 0;
    for (char *p = copy, *t; nf < 12 && (t = strtok_r(p, ",", &save)); p = NULL)
      field[nf++] = t;
    if (nf == 12)
      take_figure(fig, field);
  }
  if (f)
    fclose(f);
  int status = 0;
  waitpid(pid, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status)) {
    bs_fail("overhead: the run --child %s failed (exit status %d)", mode,
            WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    return -1;
  }
  return 0;
}

void bs_case_overhead(const bs_opts *o, const bs_dev *d) {
  child_figures with = {0}, without = {0};
  if (run_child(o, d, "layer", &with) || run_child(o, d, "nolayer", &without))
    return;
  bs_progress("overhead",
              "median k_noalloc enqueue %.1f us with the layer, %.1f us without; "
              "enqueue+finish %.1f / %.1f us; k_overhead_alloc %.1f / %.1f us; "
              "clCreateProgramWithIL (lowering) %.2f ms",
              with.enq, without.enq, with.fin, without.fin, with.alloc_enq, with.alloc_fin,
              with.create);
}

/* The allocating kernel's latencies, after the layer has created the heap; checks its output. */
static void alloc_latency(cl_context ctx, cl_command_queue q, const bs_dev *d, const bs_opts *o,
                          int reps, uint32_t n) {
  cl_int err;
  cl_program p = bs_program_il(ctx, 1, &d->device, o->kernels_dir, "alloc.spv");
  cl_kernel k = clCreateKernel(p, "k_overhead_alloc", &err);
  BS_CHECK(err);
  cl_mem out = clCreateBuffer(ctx, CL_MEM_READ_WRITE, (size_t)n * 4, NULL, &err);
  BS_CHECK(err);
  bs_args(k, ARG(out), ARG(n), (size_t)0);
  bs_series enq = {0}, fin = {0};
  latency(q, k, d->device, n, reps, &enq, &fin);
  latency_rows("alloc", "layer", n, &enq, &fin);
  uint32_t *host = malloc((size_t)n * 4);
  BS_CHECK(clEnqueueReadBuffer(q, out, CL_TRUE, 0, (size_t)n * 4, host, 0, NULL, NULL));
  for (uint32_t i = 0; i < n; i++)
    if (host[i] != i) {
      fprintf(stderr, "[bench] CHECK FAILED: overhead: k_overhead_alloc work-item %u read %u\n", i,
              host[i]);
      exit(1);
    }
  cl_ulong live = 1;
  BS_CHECK(d->heap_info(q, CL_DEVICE_HEAP_INFO_LIVE_ALLOCATIONS_EXT, sizeof live, &live, NULL));
  if (live) {
    fprintf(stderr,
            "[bench] CHECK FAILED: overhead: %llu allocations live after k_overhead_alloc\n",
            (unsigned long long)live);
    exit(1);
  }
  free(host);
  clReleaseMemObject(out);
  clReleaseKernel(k);
  clReleaseProgram(p);
}

int bs_overhead_child(const bs_opts *o) {
  int layer = o->child == 1;
  bs_dev d;
  if (bs_dev_open(&d, o->device, layer))
    return 2;
  if (!layer && d.has_ext) {
    fprintf(stderr,
            "cldm-bench-suite --child nolayer: the device still reports %s: the layer is "
            "enabled by other means (OPENCL_LAYER_PATH, /etc/OpenCL/layers)\n",
            CL_EXT_DEVICE_MALLOC_EXTENSION_NAME);
    return 3;
  }
  const char *param = layer ? "layer" : "nolayer";
  bp_plan plan;
  bp_plan_init(&plan, o->scale, d.max_alloc, d.global_mem, 0, 0);
  bs_out_open(NULL);
  if (layer)
    BS_CHECK(d.set_heap(d.device, CL_DEVICE_HEAP_SIZE_DEFAULT_EXT));
  cl_int err;
  cl_context ctx = clCreateContext(NULL, 1, &d.device, NULL, NULL, &err);
  BS_CHECK(err);
  cl_command_queue q = clCreateCommandQueueWithProperties(ctx, d.device, NULL, &err);
  BS_CHECK(err);
  /* program creation */
  size_t size, source_size;
  char *source = read_kernel_file(o->kernels_dir, "overhead.cl", &source_size);
  int il_ok = layer || d.has_il;
  void *il = il_ok ? read_kernel_file(o->kernels_dir, "overhead.spv", &size) : NULL;
  bs_series create = {0};
  double build_ms = 0;
  creation(ctx, d.device, il, size, source, plan.create_reps, &create, &build_ms);
  creation_rows(il ? "program_noalloc" : "program_noalloc_source", param, &create, build_ms);
  cl_program prog = il ? clCreateProgramWithIL(ctx, il, size, &err)
                       : clCreateProgramWithSource(ctx, 1, (const char **)&source, NULL, &err);
  BS_CHECK(err);
  BS_CHECK(clBuildProgram(prog, 1, &d.device, "", NULL, NULL));
  free(il);
  free(source);
  if (il_ok) {
    const char *file = layer ? "alloc.spv" : "alloc.lowered.spv";
    il = read_kernel_file(o->kernels_dir, file, &size);
    creation(ctx, d.device, il, size, NULL, plan.create_reps, &create, &build_ms);
    creation_rows(layer ? "program_alloc" : "program_lowered", param, &create, build_ms);
    free(il);
  }
  /* latencies */
  uint32_t n = BP_OVERHEAD_ITEMS;
  cl_mem out = clCreateBuffer(ctx, CL_MEM_READ_WRITE, (size_t)n * 4, NULL, &err);
  BS_CHECK(err);
  cl_kernel k = clCreateKernel(prog, "k_noalloc", &err);
  BS_CHECK(err);
  bs_args(k, ARG(out), ARG(n), (size_t)0);
  bs_series enq = {0}, fin = {0};
  latency(q, k, d.device, n, plan.latency_reps, &enq, &fin);
  latency_rows("noalloc", param, n, &enq, &fin);
  if (layer)
    alloc_latency(ctx, q, &d, o, plan.latency_reps, n);
  clReleaseKernel(k);
  clReleaseMemObject(out);
  clReleaseProgram(prog);
  clReleaseCommandQueue(q);
  clReleaseContext(ctx);
  bs_out_close();
  return 0;
}
