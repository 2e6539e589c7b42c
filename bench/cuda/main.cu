/*
 * main.cu — cldm-bench-cuda: bench/suite's cases with CUDA's device malloc/free on one CUDA
 * device, for the same-run, same-GPU comparison (bench/run.sh runs it after the OpenCL suite
 * and passes the heap sizes that run used). Options, the plan (bench/common/bench_plan.h), two
 * heap sizes (main heap: cases 1-3, 7; fill heap: cases 4-6; case 8 the default 8 MiB, as
 * in the OpenCL suite; cases.cu's bc_heap_fresh sets them), cuda.csv and cuda.meta.json.
 * Exit status 1 if a correctness check failed, 2 on a CUDA error or without a device.
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <string>

#include "bench_cuda.h"

static FILE *csv;
static int failures;
static std::string failure_text;

static const char usage[] =
    "usage: cldm-bench-cuda [options]\n"
    "  --quick | --scale quick|medium|full   problem sizes (default full)\n"
    "  --device N              CUDA device index (default 0)\n"
    "  --out DIR               where cuda.csv and cuda.meta.json go (default .)\n"
    "  --heap SIZE             main heap in bytes or K/M/G (default: from the device, as the\n"
    "                          OpenCL suite computes it)\n"
    "  --fill-heap SIZE        heap of cases 4-6\n"
    "  --reps N                timed repetitions after one warm-up\n"
    "  --budget SECONDS        cases 1-3: a soft time limit per case (shapes reached after it\n"
    "                          are skipped, passes after the first stop; default none); case 5:\n"
    "                          each of its three parts starts no round after it\n"
    "  --cases LIST            comma-separated case numbers 1-8 (default all)\n"
    "  --max-size SIZE         cases 1 and 3: only block sizes up to SIZE (bytes or K/M)\n"
    "  --probe                 exit 0 if a CUDA device is usable, 2 if not\n";

void bc_check_cuda(cudaError_t err, const char *what, const char *file, int line) {
  if (err == cudaSuccess)
    return;
  fprintf(stderr, "cldm-bench-cuda: %s:%d: %s failed: %s\n", file, line, what,
          cudaGetErrorString(err));
  exit(2);
}

double bc_series::best() const { return v.empty() ? 0 : *std::min_element(v.begin(), v.end()); }

double bc_series::median() const {
  if (v.empty())
    return 0;
  std::vector<double> c = v;
  std::sort(c.begin(), c.end());
  size_t n = c.size();
  return n % 2 ? c[n / 2] : (c[n / 2 - 1] + c[n / 2]) / 2;
}

void bc_row(const char *case_name, const char *kernel, uint64_t size, uint64_t n, const char *param,
            const char *metric, const char *unit, double value, double median, int reps,
            uint64_t ops) {
  fprintf(csv, "cuda,%s,%s,%llu,%llu,%s,%s,%s,%.6g,%.6g,%d,%llu\n", case_name, kernel,
          (unsigned long long)size, (unsigned long long)n, param ? param : "", metric, unit, value,
          median, reps, (unsigned long long)ops);
  fflush(csv);
}

void bc_row_series(const char *case_name, const char *kernel, uint64_t size, uint64_t n,
                   const char *param, const char *metric, const char *unit, const bc_series &s,
                   uint64_t ops) {
  bc_row(case_name, kernel, size, n, param, metric, unit, s.best(), s.median(), (int)s.v.size(),
         ops);
}

void bc_progress(const char *case_name, const char *fmt, ...) {
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  fprintf(stderr, "[bench-cuda] %-13s %s\n", case_name, msg);
}

void bc_fail(const char *fmt, ...) {
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  fprintf(stderr, "[bench-cuda] CHECK FAILED: %s\n", msg);
  if (failure_text.size() < 4000)
    failure_text += (failure_text.empty() ? "" : "\n") + std::string(msg);
  failures++;
}

double bc_now_us() {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e6 + (double)t.tv_nsec * 1e-3;
}

static uint64_t parse_size(const char *s) {
  char *end;
  double v = strtod(s, &end);
  if (end == s || v < 0)
    return 0;
  if (*end == 'k' || *end == 'K')
    v *= 1024, end++;
  else if (*end == 'm' || *end == 'M')
    v *= 1048576, end++;
  else if (*end == 'g' || *end == 'G')
    v *= 1073741824.0, end++;
  return *end ? 0 : (uint64_t)v;
}

static void json_string(FILE *f, const char *s) {
  fputc('"', f);
  for (; *s; s++) {
    if (*s == '"' || *s == '\\')
      fprintf(f, "\\%c", *s);
    else if ((unsigned char)*s < 0x20)
      fprintf(f, "\\u%04x", (unsigned char)*s);
    else
      fputc(*s, f);
  }
  fputc('"', f);
}

static void write_meta(const char *dir, const cudaDeviceProp &p, const bp_plan &plan,
                       double seconds, const char *cases) {
  std::string path = std::string(dir) + "/cuda.meta.json";
  FILE *f = fopen(path.c_str(), "w");
  if (!f)
    return;
  char host[256] = "", date[64] = "";
  gethostname(host, sizeof host - 1);
  time_t now = time(NULL);
  strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%S%z", localtime(&now));
  int runtime = 0, driver = 0;
  cudaRuntimeGetVersion(&runtime);
  cudaDriverGetVersion(&driver);
  fprintf(f, "{\n  \"impl\": \"cuda\",\n  \"date\": \"%s\",\n  \"host\": ", date);
  json_string(f, host);
  fprintf(f, ",\n  \"device\": ");
  json_string(f, p.name);
  fprintf(f,
          ",\n  \"compute_capability\": \"%d.%d\",\n  \"sms\": %d,\n  \"global_mem\": %llu,\n"
          "  \"cuda_runtime\": %d,\n  \"cuda_driver\": %d,\n",
          p.major, p.minor, p.multiProcessorCount, (unsigned long long)p.totalGlobalMem, runtime,
          driver);
  fprintf(f,
          "  \"scale\": \"%s\",\n  \"heap\": %llu,\n  \"fill_heap\": %llu,\n  \"n_max\": %u,\n"
          "  \"fill_items\": %u,\n  \"reps\": %d,\n  \"latency_reps\": %d,\n"
          "  \"local_size\": %u,\n  \"budget_s\": %g,\n  \"max_size\": %u,\n"
          "  \"cases\": \"%s\",\n  \"seconds\": %.1f,\n  \"failures\": ",
          bp_scale_name(plan.scale), (unsigned long long)plan.heap,
          (unsigned long long)plan.fill_heap, plan.n_max, plan.fill_items, plan.reps,
          plan.latency_reps, plan.local, plan.budget_s, plan.max_size, cases, seconds);
  json_string(f, failure_text.c_str());
  fprintf(f, "\n}\n");
  fclose(f);
}

int main(int argc, char **argv) {
  int scale = BP_FULL, device = 0, reps = 0, probe = 0;
  double budget = 0;
  uint64_t heap = 0, fill_heap = 0, max_size = 0;
  const char *out = ".";
  unsigned cases = 0xff;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(a, "--quick"))
      scale = BP_QUICK;
    else if (!strcmp(a, "--probe"))
      probe = 1;
    else if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
      fputs(usage, stdout);
      return 0;
    } else if (v && !strcmp(a, "--scale") && (scale = bp_scale_parse(v)) >= 0)
      i++;
    else if (v && !strcmp(a, "--device"))
      device = atoi(v), i++;
    else if (v && !strcmp(a, "--out"))
      out = v, i++;
    else if (v && !strcmp(a, "--heap") && (heap = parse_size(v)))
      i++;
    else if (v && !strcmp(a, "--fill-heap") && (fill_heap = parse_size(v)))
      i++;
    else if (v && !strcmp(a, "--reps") && (reps = atoi(v)) > 0)
      i++;
    else if (v && !strcmp(a, "--budget") && (budget = atof(v)) > 0)
      i++;
    else if (v && !strcmp(a, "--max-size") && (max_size = parse_size(v)) && max_size <= UINT32_MAX)
      i++;
    else if (v && !strcmp(a, "--cases")) {
      cases = 0;
      std::string list = v;
      for (size_t at = 0; at <= list.size();) {
        size_t comma = list.find(',', at);
        int cnum = atoi(list.substr(at, comma - at).c_str());
        if (cnum >= 1 && cnum <= 8)
          cases |= 1u << (cnum - 1);
        at = comma == std::string::npos ? list.size() + 1 : comma + 1;
      }
      i++;
    } else {
      fputs(usage, stderr);
      return 2;
    }
  }
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count <= device) {
    fprintf(stderr, "cldm-bench-cuda: no CUDA device %d\n", device);
    return 2;
  }
  if (probe)
    return 0;
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, device));
  bp_plan plan;
  bp_plan_init(&plan, scale, prop.totalGlobalMem, prop.totalGlobalMem, heap, fill_heap);
  if (reps)
    plan.reps = reps;
  plan.budget_s = budget;
  plan.max_size = (uint32_t)max_size;
  mkdir(out, 0777);
  std::string path = std::string(out) + "/cuda.csv";
  csv = fopen(path.c_str(), "w");
  if (!csv) {
    fprintf(stderr, "cldm-bench-cuda: cannot write %s\n", path.c_str());
    return 2;
  }
  fputs("impl,case,kernel,size,n,param,metric,unit,value,median,reps,ops\n", csv);
  char case_list[64] = "";
  for (int cnum = 1; cnum <= 8; cnum++)
    if (cases >> (cnum - 1) & 1)
      snprintf(case_list + strlen(case_list), sizeof case_list - strlen(case_list), "%s%d",
               case_list[0] ? "," : "", cnum);
  fprintf(stderr,
          "[bench-cuda] device: %s (sm_%d%d), %s scale, heap %llu MiB, fill heap %llu MiB, "
          "up to %u threads, best of %d after a warm-up\n",
          prop.name, prop.major, prop.minor, bp_scale_name(plan.scale),
          (unsigned long long)(plan.heap >> 20), (unsigned long long)(plan.fill_heap >> 20),
          plan.n_max, plan.reps);
  double t0 = bc_now_us();
  bc_ctx c = {&plan, device, 0, 0, 0};
  if (cases & 0xc7) { /* 1, 2, 3, 7, 8 */
    c.heap = plan.heap;
    bc_heap_fresh(c);
    if (cases & 1) {
      bc_progress("throughput", "== case 1/8");
      bc_case_throughput(c);
    }
    if (cases & 2) {
      bc_progress("mixed", "== case 2/8");
      bc_case_mixed(c);
    }
    if (cases & 4) {
      bc_progress("divergent", "== case 3/8");
      bc_case_divergent(c);
    }
    if (cases & 64) {
      bc_progress("workload", "== case 7/8");
      bc_case_workload(c);
    }
    if (cases & 128) {
      bc_progress("overhead", "== case 8/8");
      bc_case_overhead(c);
    }
  }
  if (cases & 0x38) { /* 4, 5, 6 */
    c.heap = plan.fill_heap;
    bc_heap_fresh(c);
    if (cases & 8) {
      bc_progress("utilisation", "== case 4/8");
      bc_case_utilisation(c);
    }
    if (cases & 16) {
      bc_progress("fragmentation", "== case 5/8");
      bc_case_fragmentation(c);
    }
    if (cases & 32) {
      bc_progress("oom", "== case 6/8");
      bc_case_oom(c);
    }
  }
  double seconds = (bc_now_us() - t0) / 1e6;
  fclose(csv);
  write_meta(out, prop, plan, seconds, case_list);
  fprintf(stderr, "[bench-cuda] done in %.1f s: %s%s\n", seconds, path.c_str(),
          failures ? ", WITH FAILED CHECKS" : "");
  return failures ? 1 : 0;
}
