/*
 * output.c — what the suite writes: rows of the CSV schema it shares with the CUDA program
 * (bench/README.md lists the columns), a JSON file describing the run (device, plan, heap
 * sizes, failed checks), and one progress line per case on stderr.
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "suite.h"

static FILE *csv;
static char failures[4096];
static struct { /* case 9's devices (bs_out_multi) */
  int count;
  char name[BS_MAX_DEVICES][256];
  uint64_t heap_usable[BS_MAX_DEVICES];
} multi;

static const char header[] = "impl,case,kernel,size,n,param,metric,unit,value,median,reps,ops\n";

void bs_out_open(const char *out_dir) {
  if (!out_dir) {
    csv = stdout;
    return;
  }
  char path[4096];
  snprintf(path, sizeof path, "%s/opencl.csv", out_dir);
  csv = fopen(path, "w");
  if (!csv) {
    fprintf(stderr, "cldm-bench-suite: cannot write %s\n", path);
    exit(2);
  }
  fputs(header, csv);
  fflush(csv); /* a run stopped before its first row still has a valid (empty) CSV */
}

void bs_out_close(void) {
  if (csv && csv != stdout)
    fclose(csv);
  else if (csv)
    fflush(csv);
  csv = NULL;
}

void bs_out_row(const char *case_name, const bs_row *r) {
  fprintf(csv, "opencl,%s,%s,%llu,%llu,%s,%s,%s,%.6g,%.6g,%d,%llu\n", case_name, r->kernel,
          (unsigned long long)r->size, (unsigned long long)r->n, r->param ? r->param : "",
          r->metric, r->unit, r->value, r->median, r->reps, (unsigned long long)r->ops);
  fflush(csv);
}

void bs_out_raw(const char *line) {
  fputs(line, csv);
  if (!*line || line[strlen(line) - 1] != '\n')
    fputc('\n', csv);
  fflush(csv);
}

void bs_out_series(const char *case_name, const char *kernel, uint64_t size, uint64_t n,
                   const char *param, const char *metric, const char *unit, const bs_series *s,
                   uint64_t ops) {
  bs_row r = {kernel, size, n, param, metric, unit, bs_series_best(s), bs_series_median(s),
              s->n,   ops};
  bs_out_row(case_name, &r);
}

void bs_out_multi(const bs_dev *devs, int count, const uint64_t *heap_usable) {
  multi.count = count < BS_MAX_DEVICES ? count : BS_MAX_DEVICES;
  for (int d = 0; d < multi.count; d++) {
    snprintf(multi.name[d], sizeof multi.name[d], "%s", devs[d].name);
    multi.heap_usable[d] = heap_usable[d];
  }
}

void bs_out_note_failure(const char *msg) {
  size_t used = strlen(failures);
  if (used + strlen(msg) + 4 < sizeof failures)
    snprintf(failures + used, sizeof failures - used, "%s%s", used ? "\n" : "", msg);
}

/* Writes s as a JSON string (quotes, backslashes and control characters escaped). */
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

void bs_out_meta(const char *out_dir, const bs_dev *d, const bp_plan *p, uint64_t main_usable,
                 uint64_t fill_usable, double seconds, const char *cases) {
  char path[4096], host[256] = "", date[64] = "";
  snprintf(path, sizeof path, "%s/opencl.meta.json", out_dir);
  FILE *f = fopen(path, "w");
  if (!f) {
    fprintf(stderr, "cldm-bench-suite: cannot write %s\n", path);
    return;
  }
  gethostname(host, sizeof host - 1);
  time_t now = time(NULL);
  strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%S%z", localtime(&now));
  fprintf(f, "{\n  \"impl\": \"opencl\",\n  \"date\": \"%s\",\n  \"host\": ", date);
  json_string(f, host);
  fprintf(f, ",\n  \"host_cpus\": %ld,\n  \"platform\": ", sysconf(_SC_NPROCESSORS_ONLN));
  json_string(f, d->platform_name);
  fprintf(f, ",\n  \"device\": ");
  json_string(f, d->name);
  fprintf(f, ",\n  \"device_tag\": ");
  json_string(f, bs_dev_tag(d));
  fprintf(f, ",\n  \"device_version\": ");
  json_string(f, d->version);
  fprintf(f, ",\n  \"driver_version\": ");
  json_string(f, d->driver);
  fprintf(f, ",\n  \"compute_units\": %u,\n  \"max_mem_alloc\": %llu,\n  \"global_mem\": %llu,\n",
          d->units, (unsigned long long)d->max_alloc, (unsigned long long)d->global_mem);
  fprintf(f,
          "  \"scale\": \"%s\",\n  \"heap\": %llu,\n  \"heap_usable\": %llu,\n"
          "  \"fill_heap\": %llu,\n  \"fill_heap_usable\": %llu,\n",
          bp_scale_name(p->scale), (unsigned long long)p->heap, (unsigned long long)main_usable,
          (unsigned long long)p->fill_heap, (unsigned long long)fill_usable);
  fprintf(f,
          "  \"n_max\": %u,\n  \"fill_items\": %u,\n  \"reps\": %d,\n  \"latency_reps\": %d,\n"
          "  \"create_reps\": %d,\n  \"local_size\": %u,\n  \"budget_s\": %g,\n"
          "  \"max_size\": %u,\n  \"cases\": \"%s\",\n  \"seconds\": %.1f,\n",
          p->n_max, p->fill_items, p->reps, p->latency_reps, p->create_reps, p->local, p->budget_s,
          p->max_size, cases, seconds);
  if (multi.count) { /* case 9: its devices and their heaps, in the order of its rows' numbers */
    fprintf(f, "  \"multi_devices\": [");
    for (int d = 0; d < multi.count; d++) {
      fprintf(f, "%s", d ? ", " : "");
      json_string(f, multi.name[d]);
    }
    fprintf(f, "],\n  \"multi_heap_usable\": [");
    for (int d = 0; d < multi.count; d++)
      fprintf(f, "%s%llu", d ? ", " : "", (unsigned long long)multi.heap_usable[d]);
    fprintf(f, "],\n");
  }
  fprintf(f, "  \"failures\": ");
  json_string(f, failures);
  fprintf(f, "\n}\n");
  fclose(f);
}

void bs_progress(const char *case_name, const char *fmt, ...) {
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  fprintf(stderr, "[bench] %-13s %s\n", case_name, msg);
}
