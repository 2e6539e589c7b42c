/*
 * main.c — cldm-bench-suite: the benchmark suite of bench/README.md on one OpenCL device
 * through the cl_ext_device_malloc layer. Options, the plan (bench/common/bench_plan.h), two
 * sessions (the main heap for cases 1-3 and 7, then the smaller fill heap for cases 4-6),
 * case 8 in two more runs of this program (with and without the layer), case 9 in a context of
 * several devices, the CSV and JSON files, and the exit status (1 if a correctness check
 * failed).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "suite.h"

static const char usage[] =
    "usage: cldm-bench-suite [options]\n"
    "  --quick                 the quick scale (under a minute on a 2-core CPU)\n"
    "  --scale quick|medium|full   problem sizes (default full)\n"
    "  --device PATTERN        the first device whose platform or device name contains\n"
    "                          PATTERN (case insensitive); default: the first device that\n"
    "                          reports cl_ext_device_malloc\n"
    "  --kernels DIR           the suite's SPIR-V files (default: kernels/ next to this program)\n"
    "  --out DIR               where opencl.csv and opencl.meta.json go (default: .)\n"
    "  --heap SIZE             main heap (cases 1-3, 7), bytes or K/M/G (default: from the "
    "device)\n"
    "  --fill-heap SIZE        heap of cases 4-6\n"
    "  --reps N                timed repetitions (after one warm-up)\n"
    "  --budget SECONDS        cases 1-3 and 9: a soft time limit per case (shapes reached\n"
    "                          after it are skipped, passes after the first stop; default\n"
    "                          none); case 5: each of its three parts starts no round after it\n"
    "  --cases LIST            comma-separated case numbers 1-9 (default: 1-8; case 9, several\n"
    "                          devices of one context, runs only when named)\n"
    "  --devices N             case 9: the first N devices that report the extension (default\n"
    "                          2), of the platform of the device above (--device filters them)\n"
    "  --max-size SIZE         cases 1, 3 and 9: only block sizes up to SIZE (bytes or K/M)\n"
    "  --local N               work-group size of the launches (default 256; the kernel's and\n"
    "                          the device's limits still apply)\n"
    "  --list-devices          print the platforms and devices, then exit\n"
    "  --tag                   print the device's short name (for result folders), then exit\n"
    "Needs the layer: OPENCL_LAYERS=<build>/layer/libcldm-layer.so (see README).\n";

static const char *case_names[BS_NUM_CASES] = {"throughput",  "mixed",         "divergent",
                                               "utilisation", "fragmentation", "oom",
                                               "workload",    "overhead",      "multidevice"};

static uint64_t parse_size(const char *s) {
  char *end;
  errno = 0;
  double v = strtod(s, &end);
  if (errno || end == s || v < 0)
    return 0;
  switch (*end) {
  case 'k':
  case 'K':
    v *= 1024;
    end++;
    break;
  case 'm':
  case 'M':
    v *= 1048576;
    end++;
    break;
  case 'g':
  case 'G':
    v *= 1073741824.0;
    end++;
    break;
  default:
    break;
  }
  return *end ? 0 : (uint64_t)v;
}

static unsigned parse_cases(const char *s) {
  unsigned mask = 0;
  char copy[256];
  snprintf(copy, sizeof copy, "%s", s);
  char *save = NULL;
  for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
    int c = atoi(t);
    if (c < 1 || c > BS_NUM_CASES)
      return 0;
    mask |= 1u << (c - 1);
  }
  return mask;
}

/* The directory of this executable + "/kernels" (static buffer). */
static const char *default_kernels(const char *self) {
  static char dir[4096];
  snprintf(dir, sizeof dir, "%s", self);
  char *slash = strrchr(dir, '/');
  if (slash)
    snprintf(slash, sizeof dir - (size_t)(slash - dir), "/kernels");
  else
    snprintf(dir, sizeof dir, "kernels");
  return dir;
}

static int parse(bs_opts *o, int argc, char **argv, int *list, int *tag) {
  static char self[4096];
  ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
  if (len > 0)
    self[len] = 0;
  else
    snprintf(self, sizeof self, "%s", argv[0]);
  memset(o, 0, sizeof *o);
  o->self = self;
  o->scale = BP_FULL;
  o->out_dir = ".";
  o->cases = BS_DEFAULT_CASES;
  o->devices = 2;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(a, "--quick"))
      o->scale = BP_QUICK;
    else if (v && !strcmp(a, "--child")) {
      o->child = !strcmp(v, "layer") ? 1 : !strcmp(v, "nolayer") ? 2 : 0;
      if (!o->child)
        return -1;
      i++;
    } else if (!strcmp(a, "--list-devices"))
      *list = 1;
    else if (!strcmp(a, "--tag"))
      *tag = 1;
    else if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
      fputs(usage, stdout);
      exit(0);
    } else if (v && !strcmp(a, "--scale")) {
      if ((o->scale = bp_scale_parse(v)) < 0)
        return -1;
      i++;
    } else if (v && !strcmp(a, "--device"))
      o->device = v, i++;
    else if (v && !strcmp(a, "--kernels"))
      o->kernels_dir = v, i++;
    else if (v && !strcmp(a, "--out"))
      o->out_dir = v, i++;
    else if (v && !strcmp(a, "--heap")) {
      if (!(o->heap = parse_size(v)))
        return -1;
      i++;
    } else if (v && !strcmp(a, "--fill-heap")) {
      if (!(o->fill_heap = parse_size(v)))
        return -1;
      i++;
    } else if (v && !strcmp(a, "--reps")) {
      if ((o->reps = atoi(v)) <= 0)
        return -1;
      i++;
    } else if (v && !strcmp(a, "--budget")) {
      if ((o->budget_s = atof(v)) <= 0)
        return -1;
      i++;
    } else if (v && !strcmp(a, "--max-size")) {
      uint64_t m = parse_size(v);
      if (!m || m > UINT32_MAX)
        return -1;
      o->max_size = (uint32_t)m;
      i++;
    } else if (v && !strcmp(a, "--local")) {
      if ((o->local = atoi(v)) <= 0)
        return -1;
      i++;
    } else if (v && !strcmp(a, "--devices")) {
      if ((o->devices = atoi(v)) < 2 || o->devices > BS_MAX_DEVICES)
        return -1;
      i++;
    } else if (v && !strcmp(a, "--cases")) {
      if (!(o->cases = parse_cases(v)))
        return -1;
      i++;
    } else
      return -1;
  }
  if (!o->kernels_dir)
    o->kernels_dir = default_kernels(self);
  return 0;
}

static int wanted(const bs_opts *o, int c) { return (o->cases >> (c - 1)) & 1; }

static void announce(int c, const char *extra) {
  bs_progress(case_names[c - 1], "== case %d/%d %s", c, BS_NUM_CASES, extra);
}

int main(int argc, char **argv) {
  bs_opts o;
  int list = 0, tag = 0;
  if (parse(&o, argc, argv, &list, &tag)) {
    fputs(usage, stderr);
    return 2;
  }
  if (list) {
    bs_dev_list();
    return 0;
  }
  if (o.child)
    return bs_overhead_child(&o);
  bs_dev d;
  if (bs_dev_open(&d, o.device, 1))
    return 2;
  if (tag) {
    printf("%s\n", bs_dev_tag(&d));
    return 0;
  }
  bp_plan plan;
  bp_plan_init(&plan, o.scale, d.max_alloc, d.global_mem, o.heap, o.fill_heap);
  if (o.reps)
    plan.reps = o.reps;
  plan.budget_s = o.budget_s;
  plan.max_size = o.max_size;
  if (o.local)
    plan.local = (uint32_t)o.local;
  if (plan.heap > d.max_alloc || plan.fill_heap > d.max_alloc) {
    fprintf(stderr, "cldm-bench-suite: heap larger than CL_DEVICE_MAX_MEM_ALLOC_SIZE (%llu)\n",
            (unsigned long long)d.max_alloc);
    return 2;
  }
  mkdir(o.out_dir, 0777);
  bs_out_open(o.out_dir);
  char cases[64] = "";
  for (int c = 1; c <= BS_NUM_CASES; c++)
    if (wanted(&o, c))
      snprintf(cases + strlen(cases), sizeof cases - strlen(cases), "%s%d", cases[0] ? "," : "", c);
  fprintf(stderr,
          "[bench] device: %s (%s), %s scale, heap %llu MiB (cases 1-3, 7), fill heap "
          "%llu MiB (cases 4-6), up to %u work-items, best of %d after a warm-up\n",
          d.name, d.platform_name, bp_scale_name(plan.scale), (unsigned long long)(plan.heap >> 20),
          (unsigned long long)(plan.fill_heap >> 20), plan.n_max, plan.reps);
  double t0 = bs_now_us();
  uint64_t main_usable = 0, fill_usable = 0;
  /* the meta data first (seconds -1: not finished), again when a heap's usable size is known,
   * and at the end: a run stopped from outside (bench/run.sh --opencl-timeout) still has it */
  bs_out_meta(o.out_dir, &d, &plan, main_usable, fill_usable, -1.0, cases);
  bs_session s;
  if (wanted(&o, 1) || wanted(&o, 2) || wanted(&o, 3) || wanted(&o, 7)) {
    bs_session_open(&s, &d, &plan, o.kernels_dir, plan.heap);
    main_usable = s.heap_usable;
    bs_out_meta(o.out_dir, &d, &plan, main_usable, fill_usable, -1.0, cases);
    if (wanted(&o, 1)) {
      announce(1, "throughput: N work-items malloc S bytes each; free; malloc+free");
      bs_case_throughput(&s);
    }
    if (wanted(&o, 2)) {
      announce(2, "mixed sizes 16 B - S_max, scaling in N");
      bs_case_mixed(&s);
    }
    if (wanted(&o, 3)) {
      announce(3, "divergent callers: every k-th work-item allocates");
      bs_case_divergent(&s);
    }
    if (wanted(&o, 7)) {
      announce(7, "list building through malloc vs count + prefix sum + fill");
      bs_case_workload(&s);
    }
    bs_session_close(&s);
  }
  if (wanted(&o, 8)) {
    announce(8, "layer overhead: launch latency and program creation, with and without the layer");
    bs_case_overhead(&o, &d);
  }
  if (wanted(&o, 4) || wanted(&o, 5) || wanted(&o, 6)) {
    bs_session_open(&s, &d, &plan, o.kernels_dir, plan.fill_heap);
    fill_usable = s.heap_usable;
    bs_out_meta(o.out_dir, &d, &plan, main_usable, fill_usable, -1.0, cases);
    if (wanted(&o, 4)) {
      announce(4, "heap utilisation: S-byte blocks until NULL");
      bs_case_utilisation(&s);
    }
    if (wanted(&o, 5)) {
      announce(5, "fragmentation: rounds of random-size malloc/free");
      bs_case_fragmentation(&s);
    }
    if (wanted(&o, 6)) {
      announce(6, "out of memory: repeated exhaustion, capacity recovered by frees");
      bs_case_oom(&s);
    }
    bs_session_close(&s);
  }
  if (wanted(&o, 9)) {
    announce(9,
             "several devices: case 1's malloc and free on each device alone, then on all at once");
    bs_case_multidevice(&o, &d, &plan);
  }
  double seconds = (bs_now_us() - t0) / 1e6;
  bs_out_close();
  bs_out_meta(o.out_dir, &d, &plan, main_usable, fill_usable, seconds, cases);
  fprintf(stderr, "[bench] done in %.1f s: %s/opencl.csv%s\n", seconds, o.out_dir,
          bs_failures() ? ", WITH FAILED CHECKS" : "");
  return bs_failures() ? 1 : 0;
}
