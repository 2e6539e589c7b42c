/*
 * case_multidev.c — case 9 of the suite: case 1's launch shapes (every work-item mallocs S bytes,
 * S = 16 B .. 4 KiB) on several devices of one context, which has one heap per device (spec
 * 1.2), each device alone while the others idle, then all of them at once: one host thread per
 * device enqueues, the threads released together by a barrier. The question: does one device's
 * allocation slow another's (through the layer, the driver, or hardware the devices share)?
 *
 * Per device and shape: k_malloc, k_free_only and the bump-pointer baseline k_bump (what running
 * together costs a kernel that does not allocate: a CPU driver's devices share the host's
 * cores), warm (best of the repetitions after a warm-up, repetitions interleaved across shapes
 * and modes as in case 1) and cold (the first k_malloc and k_bump launch on a fresh heap, right
 * after clEnqueueResetDeviceHeapEXT); and on the host clock, from the first enqueue to the last
 * completion, whether the launches of all devices overlapped. Every repetition is checked as
 * case 1 checks it: no NULL, each device's blocks 16-byte aligned and disjoint, their ids intact
 * before the free (k_check, untimed, one device at a time), each heap empty after the frees, the
 * bump pointer at its expected end.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "suite.h"

#define ARG(x) sizeof(x), (const void *)&(x)

/* Case 1's block sizes up to this one: at them every scale runs its largest launch. */
#define MULTI_MAX_SIZE 4096u

enum { ALONE, TOGETHER, MODES };
enum { REP_WARM_UP = -1, REP_COLD = -2 }; /* run_rep's repetitions that are not timed ones */
enum { K_MALLOC, K_FREE, K_BUMP, KERNELS };
static const char *const kernel_rows[KERNELS] = {"malloc", "free", "bump"};
static const char *const kernel_names[KERNELS] = {"k_malloc", "k_free_only", "k_bump"};
static const char *const mode_names[MODES] = {"alone", "together"};

typedef struct figures {
  bs_series t[KERNELS];    /* kernel ms of the timed repetitions */
  double cold[KERNELS];    /* the cold repetition's kernel ms (< 0: none; free has none) */
  bs_series wall[KERNELS]; /* ALONE: host clock of the device's launch, ms */
} figures;

typedef struct shape {
  uint32_t size, n;       /* block size, work-items per device */
  uint64_t blocks, units; /* allocations and bump-pointer granules per device */
  int failed, skipped;    /* skipped: reached after the time budget (--budget) */
  figures f[BS_MAX_DEVICES][MODES];
  bs_series wall[KERNELS]; /* TOGETHER: host clock from the first enqueue to the last end, ms */
} shape;

/* One device's part of a repetition: its buffers, its kernel objects, its last launch. */
typedef struct lane {
  bs_session *s;
  uint32_t n;
  cl_mem ptrs, arena, top, errors;
  cl_kernel k[KERNELS], check;
  int which;                /* the kernel lane_launch runs */
  pthread_barrier_t *start; /* NULL: alone */
  double ms, t0, t1;        /* kernel ms; host clock (us) before the enqueue, after the end */
} lane;

static void *lane_launch(void *arg) {
  lane *l = arg;
  if (l->start)
    pthread_barrier_wait(l->start);
  l->t0 = bs_now_us();
  l->ms = bs_launch(l->s, l->k[l->which], l->n, 0);
  l->t1 = bs_now_us();
  return NULL;
}

/* Launches kernel `which` on every lane: one lane in this thread, several at once from a host
 * thread each, released together. Returns the host clock in ms from the first enqueue to the
 * last completion. */
static double launch(lane *lanes, int count, int which) {
  pthread_barrier_t start;
  pthread_t thread[BS_MAX_DEVICES];
  if (count > 1)
    pthread_barrier_init(&start, NULL, (unsigned)count);
  for (int i = 0; i < count; i++) {
    lanes[i].which = which;
    lanes[i].start = count > 1 ? &start : NULL;
  }
  if (count == 1)
    lane_launch(&lanes[0]);
  else {
    for (int i = 0; i < count; i++)
      if (pthread_create(&thread[i], NULL, lane_launch, &lanes[i])) {
        fprintf(stderr, "cldm-bench-suite: cannot start a host thread\n");
        exit(2);
      }
    for (int i = 0; i < count; i++)
      pthread_join(thread[i], NULL);
    pthread_barrier_destroy(&start);
  }
  double t0 = lanes[0].t0, t1 = lanes[0].t1;
  for (int i = 1; i < count; i++) {
    t0 = lanes[i].t0 < t0 ? lanes[i].t0 : t0;
    t1 = lanes[i].t1 > t1 ? lanes[i].t1 : t1;
  }
  return (t1 - t0) / 1e3;
}

/* Buffers, kernels and arguments of device `dev` for a repetition of sh. */
static void lane_open(lane *l, bs_multi *m, int dev, const shape *sh) {
  memset(l, 0, sizeof *l);
  l->s = &m->view[dev];
  l->n = sh->n;
  uint32_t n = sh->n, size = sh->size, mixed = 0, k = 1, seed = 0;
  l->ptrs = bs_buffer(l->s, (size_t)n * 8);
  l->arena = bs_buffer(l->s, (size_t)n * size);
  l->top = bs_buffer(l->s, 4);
  l->errors = bs_buffer(l->s, 4);
  for (int i = 0; i < KERNELS; i++)
    l->k[i] = bs_kernel(l->s, kernel_names[i]);
  l->check = bs_kernel(l->s, "k_check");
  bs_args(l->k[K_MALLOC], ARG(l->ptrs), ARG(n), ARG(size), ARG(mixed), ARG(k), ARG(seed),
          (size_t)0);
  bs_args(l->k[K_FREE], ARG(l->ptrs), ARG(n), (size_t)0);
  bs_args(l->k[K_BUMP], ARG(l->arena), ARG(l->top), ARG(l->ptrs), ARG(n), ARG(size), ARG(mixed),
          ARG(k), ARG(seed), (size_t)0);
  bs_args(l->check, ARG(l->ptrs), ARG(n), ARG(l->errors), (size_t)0);
}

static void lane_close(lane *l) {
  clReleaseMemObject(l->ptrs);
  clReleaseMemObject(l->arena);
  clReleaseMemObject(l->top);
  clReleaseMemObject(l->errors);
}

/* One repetition of sh on the `count` devices of `devs` (one: alone; all: together), with
 * buffers of its own: r >= 0 a timed one, REP_COLD records only the cold figures, REP_WARM_UP
 * nothing. 0 if every check passed; -1 after a reported failure. */
static int run_rep(bs_multi *m, shape *sh, const int *devs, int count, int r) {
  int mode = count > 1 ? TOGETHER : ALONE, result = -1;
  lane lanes[BS_MAX_DEVICES];
  double ms[KERNELS][BS_MAX_DEVICES], wall[KERNELS];
  char what[BS_MAX_DEVICES][160];
  uint64_t *host = malloc((size_t)sh->n * 8 + 8);
  if (!host) {
    bs_fail("multidevice: out of host memory");
    return -1;
  }
  for (int i = 0; i < count; i++) {
    lane_open(&lanes[i], m, devs[i], sh);
    snprintf(what[i], sizeof what[i], "multidevice S=%u N=%u device %d %s", sh->size, sh->n,
             devs[i], mode_names[mode]);
  }
  if (bs_trace())
    fprintf(stderr, "[trace] multidevice S=%u N=%u %d device(s) repetition %d\n", sh->size, sh->n,
            count, r);
  for (int k = 0; k < KERNELS; k++) {
    wall[k] = launch(lanes, count, k);
    for (int i = 0; i < count; i++)
      ms[k][i] = lanes[i].ms;
    for (int i = 0; i < count; i++) {
      lane *l = &lanes[i];
      if (k == K_MALLOC) {
        bs_read(l->s, l->ptrs, (size_t)sh->n * 8, host);
        if (bs_check_blocks(what[i], host, sh->n, sh->size, 0, 1, 0, 1, NULL, NULL) < 0)
          goto done;
        bs_launch(l->s, l->check, sh->n, 0);
        uint32_t bad = bs_read_u32(l->s, l->errors);
        if (bad) {
          bs_fail("%s: %u blocks lost their contents before free", what[i], bad);
          goto done;
        }
      } else if (k == K_FREE) {
        if (bs_check_heap_empty(l->s, what[i], 1))
          goto done;
      } else if (bs_read_u32(l->s, l->top) != (uint32_t)sh->units) {
        bs_fail("%s: bump pointer at %u granules, %llu expected", what[i],
                bs_read_u32(l->s, l->top), (unsigned long long)sh->units);
        goto done;
      }
    }
  }
  for (int i = 0; i < count; i++) {
    figures *f = &sh->f[devs[i]][mode];
    if (r == REP_COLD) {
      f->cold[K_MALLOC] = ms[K_MALLOC][i];
      f->cold[K_BUMP] = ms[K_BUMP][i];
    } else if (r >= 0)
      for (int k = 0; k < KERNELS; k++) {
        bs_series_add(&f->t[k], ms[k][i]);
        if (mode == ALONE)
          bs_series_add(&f->wall[k], wall[k]);
      }
  }
  if (r >= 0 && mode == TOGETHER)
    for (int k = 0; k < KERNELS; k++)
      bs_series_add(&sh->wall[k], wall[k]);
  result = 0;
done:
  for (int i = 0; i < count; i++)
    lane_close(&lanes[i]);
  free(host);
  return result;
}

/* A repetition of sh in one mode: on each device alone, or on all of them together; with
 * `cold`, each right after its heaps were reset (spec 1.4: as newly created). A failure marks
 * sh failed. */
static void run_mode(bs_multi *m, shape *sh, int mode, int r, int cold) {
  int all[BS_MAX_DEVICES];
  for (int d = 0; d < m->count; d++)
    all[d] = d;
  if (mode == ALONE)
    for (int d = 0; d < m->count && !sh->failed; d++) {
      if (cold)
        bs_heap_reset(&m->view[d]);
      if (run_rep(m, sh, &all[d], 1, r))
        sh->failed = 1;
    }
  else if (!sh->failed) {
    for (int d = 0; cold && d < m->count; d++)
      bs_heap_reset(&m->view[d]);
    if (run_rep(m, sh, all, m->count, r))
      sh->failed = 1;
  }
}

static double ratio(double a, double b) { return b > 0 ? a / b : 0; }

static void report_shape(const bs_multi *m, shape *sh) {
  char param[32];
  for (int d = 0; d < m->count; d++)
    for (int mode = 0; mode < MODES; mode++) {
      figures *f = &sh->f[d][mode];
      snprintf(param, sizeof param, "%s-%d", mode_names[mode], d);
      for (int k = 0; k < KERNELS; k++) {
        bs_out_series("multidevice", kernel_rows[k], sh->size, sh->n, param, "time", "ms", &f->t[k],
                      sh->blocks);
        if (mode == ALONE)
          bs_out_series("multidevice", kernel_rows[k], sh->size, sh->n, param, "wall", "ms",
                        &f->wall[k], sh->blocks);
        if (k != K_FREE && f->cold[k] >= 0) {
          bs_row cold = {kernel_rows[k], sh->size, sh->n, param, "cold", "ms", 0, 0, 1, sh->blocks};
          cold.value = cold.median = f->cold[k];
          bs_out_row("multidevice", &cold);
        }
      }
    }
  for (int k = 0; k < KERNELS; k++)
    bs_out_series("multidevice", kernel_rows[k], sh->size, sh->n, "together-all", "wall", "ms",
                  &sh->wall[k], sh->blocks * (uint64_t)m->count);
  double alone_sum = 0;
  for (int d = 0; d < m->count; d++) {
    figures *a = &sh->f[d][ALONE], *t = &sh->f[d][TOGETHER];
    double am = bs_series_best(&a->t[K_MALLOC]), tm = bs_series_best(&t->t[K_MALLOC]);
    double af = bs_series_best(&a->t[K_FREE]), tf = bs_series_best(&t->t[K_FREE]);
    double ab = bs_series_best(&a->t[K_BUMP]), tb = bs_series_best(&t->t[K_BUMP]);
    alone_sum += bs_series_best(&a->wall[K_MALLOC]);
    bs_progress("multidevice",
                "S=%-5u N=%-7u device %d: malloc %.3f ms alone, %.3f together (%.2fx); cold "
                "%.3f, %.3f (%.2fx) | free %.3f, %.3f (%.2fx) | bump %.3f, %.3f (%.2fx)",
                sh->size, sh->n, d, am, tm, ratio(tm, am), a->cold[K_MALLOC], t->cold[K_MALLOC],
                ratio(t->cold[K_MALLOC], a->cold[K_MALLOC]), af, tf, ratio(tf, af), ab, tb,
                ratio(tb, ab));
  }
  double together = bs_series_best(&sh->wall[K_MALLOC]);
  bs_progress("multidevice",
              "S=%-5u N=%-7u malloc on the host clock: %.3f ms alone (sum over the devices), "
              "%.3f together: concurrency %.2f",
              sh->size, sh->n, alone_sum, together, ratio(alone_sum, together));
}

static void shape_free(shape *sh) {
  for (int d = 0; d < BS_MAX_DEVICES; d++)
    for (int mode = 0; mode < MODES; mode++)
      for (int k = 0; k < KERNELS; k++) {
        bs_series_free(&sh->f[d][mode].t[k]);
        bs_series_free(&sh->f[d][mode].wall[k]);
      }
  for (int k = 0; k < KERNELS; k++)
    bs_series_free(&sh->wall[k]);
}

static void shape_init(shape *sh, uint32_t size, uint32_t n) {
  memset(sh, 0, sizeof *sh);
  sh->size = size;
  sh->n = n;
  for (int d = 0; d < BS_MAX_DEVICES; d++)
    for (int mode = 0; mode < MODES; mode++)
      for (int k = 0; k < KERNELS; k++)
        sh->f[d][mode].cold[k] = -1;
  for (uint32_t i = 0; i < n; i++) {
    sh->blocks++;
    sh->units += (bc_size(i, size, 0, 0) + BC_GRANULE - 1) / BC_GRANULE;
  }
}

/* The warm-up first, after a launch of every kernel over no work-item on every device (as case
 * 1's run_cold): every shape alone on each device and together, shapes reached after the time
 * budget (--budget) skipped. Then the cold figures: every shape alone on each device, then
 * every shape together, each right after its heaps' reset, so that in both modes a cold launch
 * follows one of another shape on the same heap. They come after the warm-up, unlike case 1's,
 * so that both modes find the heaps' memory touched: on a CPU device the first touch of a page
 * costs the process a page fault, which would fall on whichever mode ran first. Then the timed
 * passes, each running every shape in both modes, those after the first only within the
 * budget. */
static void run_shapes(bs_multi *m, shape *list, int count) {
  const bp_plan *plan = m->view[0].plan;
  double start = bs_now_us(), t0 = start;
  shape primer;
  shape_init(&primer, list[0].size, 0);
  for (int d = 0; d < m->count; d++)
    if (run_rep(m, &primer, &d, 1, REP_WARM_UP))
      return;
  for (int d = 0; d < m->count; d++)
    bs_heap_reset(&m->view[d]);
  for (int i = 0; i < count; i++) {
    if (!bp_budget_left(plan, (bs_now_us() - start) / 1e6)) {
      list[i].skipped = 1;
      bs_progress("multidevice", "S=%-5u N=%-7u skipped: time budget of %g s spent", list[i].size,
                  list[i].n, plan->budget_s);
      continue;
    }
    double t1 = bs_now_us();
    for (int mode = 0; mode < MODES; mode++)
      run_mode(m, &list[i], mode, REP_WARM_UP, 0);
    bs_progress("multidevice", "warm-up S=%-5u N=%-7u %.2f s", list[i].size, list[i].n,
                (bs_now_us() - t1) / 1e6);
  }
  bs_progress("multidevice", "warm-up: %d launch shapes, %.1f s", count, (bs_now_us() - t0) / 1e6);
  for (int mode = 0; mode < MODES; mode++)
    for (int i = 0; i < count; i++)
      if (!list[i].skipped && !list[i].failed)
        run_mode(m, &list[i], mode, REP_COLD, 1);
  for (int d = 0; d < m->count; d++)
    bs_heap_reset(&m->view[d]);
  for (int r = 0; r < plan->reps; r++) {
    if (r > 0 && !bp_budget_left(plan, (bs_now_us() - start) / 1e6)) {
      bs_progress("multidevice", "time budget of %g s spent after %d timed passes", plan->budget_s,
                  r);
      break;
    }
    t0 = bs_now_us();
    for (int i = 0; i < count; i++)
      for (int mode = 0; mode < MODES; mode++)
        if (!list[i].skipped && !list[i].failed)
          run_mode(m, &list[i], mode, r, 0);
    bs_progress("multidevice", "pass %d/%d: %d launch shapes, %.1f s", r + 1, plan->reps, count,
                (bs_now_us() - t0) / 1e6);
  }
  for (int i = 0; i < count; i++) {
    if (!list[i].failed && !list[i].skipped)
      report_shape(m, &list[i]);
    shape_free(&list[i]);
  }
}

void bs_case_multidevice(const bs_opts *o, const bs_dev *first, const bp_plan *plan) {
  int want = o->devices;
  bs_dev devs[BS_MAX_DEVICES];
  int found = bs_dev_open_many(devs, want, first->platform, o->device);
  if (found < want) {
    bs_progress("multidevice",
                "skipped: %d devices asked for (--devices), %d of platform '%s'%s%s%s report %s",
                want, found, first->platform_name, o->device ? " matching '" : "",
                o->device ? o->device : "", o->device ? "'" : "",
                CL_EXT_DEVICE_MALLOC_EXTENSION_NAME);
    return;
  }
  /* every device gets the heap case 1 would give the smallest of them */
  bp_plan p = *plan;
  if (!o->heap) {
    uint64_t max_alloc = devs[0].max_alloc, global = devs[0].global_mem;
    for (int d = 1; d < want; d++) {
      max_alloc = devs[d].max_alloc < max_alloc ? devs[d].max_alloc : max_alloc;
      global = devs[d].global_mem < global ? devs[d].global_mem : global;
    }
    bp_plan fresh;
    bp_plan_init(&fresh, plan->scale, max_alloc, global, 0, 0);
    p.heap = fresh.heap;
  }
  bs_multi m;
  bs_multi_open(&m, devs, want, &p, o->kernels_dir, p.heap);
  uint64_t usable[BS_MAX_DEVICES], least = m.view[0].heap_usable;
  for (int d = 0; d < want; d++) {
    usable[d] = m.view[d].heap_usable;
    least = usable[d] < least ? usable[d] : least;
    bs_progress("multidevice", "device %d: %s (%s), heap %llu MiB", d, devs[d].name,
                devs[d].platform_name, (unsigned long long)(usable[d] >> 20));
  }
  bs_out_multi(devs, want, usable);
  uint32_t sizes[32];
  shape *list = calloc(32, sizeof *list);
  if (!list) {
    bs_fail("multidevice: out of host memory");
    bs_multi_close(&m);
    return;
  }
  int count = BP_TAKE(&p, bp_throughput_sizes, sizes), ns = 0;
  for (int i = 0; i < count; i++) {
    if (sizes[i] > MULTI_MAX_SIZE || !bp_size_wanted(&p, sizes[i]))
      continue;
    uint32_t n = bp_items(&p, least, sizes[i]);
    if (n)
      shape_init(&list[ns++], sizes[i], n);
    else
      bs_progress("multidevice", "S=%u skipped: the heap holds fewer than %u blocks", sizes[i],
                  2 * BP_MIN_ITEMS);
  }
  bs_trace(); /* read once, before the threads that launch read it */
  if (ns)
    run_shapes(&m, list, ns);
  free(list);
  bs_multi_close(&m);
}
