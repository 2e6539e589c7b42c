/*
 * test_ptx_translate.c — the PTX backend (libcldm-ptx.so) end to end without a GPU: SPIR-V
 * in, PTX text out, checked as text and assembled with ptxas when the CUDA
 * toolkit is installed (CLDM_TEST_PTXAS; not in the ASan build, where ptxas would check the
 * same PTX again and the test would take most of its time limit).
 *
 * Inputs are the modules the build makes for the other tests (never committed): the engine's
 * allocating test modules, the demo's kernels, the end-to-end kernels, the allocator's own
 * test kernels linked with its cl12 variant, and the kernels in cl/. Modules that allocate are
 * lowered first with the cl12 allocator variant, the one `cldm-spirv lower --features none`
 * selects and the only one the PTX path compiles correctly (OpenCL 1.2 atomics ordered by
 * explicit fences).
 *
 * Every translation is for an H200 (compute capability 9.0) unless a test says otherwise.
 */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <spawn.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "cldm_device.h"
#include "cldm_ptx.h"
#include "cldm_spirv.h"

static const cldm_ptx_api *api;
static const cldm_ptx_target h200 = {9, 0, NULL};

/* ---- helpers ------------------------------------------------------------------------------ */

static void *read_all(const char *path, size_t *size) {
  FILE *f = fopen(path, "rb");
  if (!f)
    fail_msg("cannot open %s: %s", path, strerror(errno));
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  void *buf = malloc(n > 0 ? (size_t)n : 1);
  assert_non_null(buf);
  assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
  fclose(f);
  *size = (size_t)n;
  return buf;
}

static void *read_in(const char *dir, const char *name, size_t *size) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  return read_all(path, size);
}

/* A module ready for the backend: lowered with the cl12 allocator if it allocates (the
 * allocator module is chosen as `cldm-spirv lower --features none` does), with its kernels. */
typedef struct module {
  void *spv;
  size_t size;
  cldm_spirv_report report;
  int allocates;
} module;

static void load_module(module *m, const char *dir, const char *name, unsigned features) {
  memset(m, 0, sizeof *m);
  size_t n;
  void *in = read_in(dir, name, &n);
  cldm_spirv_error err;
  cldm_spirv_report r;
  assert_int_equal(cldm_spirv_inspect(in, n, &r, &err), CLDM_SPIRV_OK);
  m->allocates = r.allocates;
  cldm_spirv_report_free(&r);
  if (!m->allocates) {
    m->spv = in;
    m->size = n;
    assert_int_equal(cldm_spirv_inspect(in, n, &m->report, &err), CLDM_SPIRV_OK);
    return;
  }
  features |= CLDM_DEVICE_FEATURE_INT64_ATOMICS; /* every variant needs them */
  const cldm_device_module *a64 = cldm_device_module_select(64, features);
  const cldm_device_module *a32 = cldm_device_module_select(32, features);
  assert_non_null(a64);
  assert_string_equal(a64->name, features & CLDM_DEVICE_FEATURE_TARGET_PTX ? "cldm_alloc.nv.spir64"
                                 : features & CLDM_DEVICE_FEATURE_CL20_ATOMICS
                                     ? "cldm_alloc.cl20.spir64"
                                     : "cldm_alloc.cl12.spir64");
  cldm_spirv_allocator al = {.words32 = a32->words,
                             .num_words32 = a32->num_words,
                             .words64 = a64->words,
                             .num_words64 = a64->num_words};
  if (cldm_spirv_lower(in, n, &al, &m->spv, &m->size, &m->report, &err))
    fail_msg("%s: lowering failed: %s", name, err.message);
  free(in);
}

static void free_module(module *m) {
  free(m->spv);
  cldm_spirv_report_free(&m->report);
}

static size_t count(const char *hay, const char *needle) {
  size_t n = 0;
  for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
    n++;
  return n;
}

/* Parameters of `.entry name(...)`: how many, and the text of the last one. -1 if absent. */
static int entry_params(const char *ptx, const char *name, char *last, size_t cap) {
  char head[512];
  snprintf(head, sizeof head, ".entry %s(", name);
  const char *p = strstr(ptx, head);
  if (!p)
    return -1;
  p += strlen(head);
  const char *end = strchr(p, ')');
  if (!end)
    return -1;
  int n = 0;
  last[0] = '\0';
  for (const char *q = p; (q = strstr(q, ".param")) && q < end; q++) {
    const char *eol = strpbrk(q, ",\n)");
    size_t len = (size_t)(eol - q) < cap - 1 ? (size_t)(eol - q) : cap - 1;
    memcpy(last, q, len);
    last[len] = '\0';
    n++;
  }
  return n;
}

/* ---- ptxas, in the background ------------------------------------------------------------ */

/* ptxas runs beside the translations, as many at once as there are processors: it takes
 * longer than a translation, and the test would otherwise take most of ctest's time limit.
 * assemble_wait() reaps them all and fails the test with the log of the first that failed. */
#ifdef CLDM_TEST_PTXAS
/* Writes text to a file in the test's build directory. */
static void write_text(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  assert_int_equal(fputs(text, f) >= 0, 1);
  assert_int_equal(fclose(f), 0);
}

enum { MAX_PTXAS = 64 };
typedef struct ptxas_job {
  pid_t pid;
  char path[4096], arch[16];
} ptxas_job;
static ptxas_job ptxas_jobs[MAX_PTXAS];
static int ptxas_running;
static char ptxas_failure[8192];

/* Waits for the oldest job (its own pid: other children are not ours to reap); the first
 * failure's log is kept. */
static void ptxas_reap_one(void) {
  ptxas_job *j = &ptxas_jobs[0];
  int status;
  if (waitpid(j->pid, &status, 0) != j->pid)
    fail_msg("waitpid: %s", strerror(errno));
  if ((!WIFEXITED(status) || WEXITSTATUS(status) != 0) && !ptxas_failure[0]) {
    char logp[4200];
    snprintf(logp, sizeof logp, "%s.log", j->path);
    size_t n;
    char *log = read_all(logp, &n);
    snprintf(ptxas_failure, sizeof ptxas_failure, "ptxas -arch=%s %s failed (0x%x):\n%.*s", j->arch,
             j->path, status, (int)n, log);
    free(log);
  }
  memmove(ptxas_jobs, ptxas_jobs + 1, (size_t)--ptxas_running * sizeof ptxas_jobs[0]);
}
#endif

static void assemble_wait(void) {
#ifdef CLDM_TEST_PTXAS
  while (ptxas_running > 0)
    ptxas_reap_one();
  if (ptxas_failure[0]) {
    char msg[sizeof ptxas_failure];
    memcpy(msg, ptxas_failure, sizeof msg);
    ptxas_failure[0] = '\0';
    fail_msg("%s", msg);
  }
#endif
}

/* Assembles PTX for `arch` (ptxas checks the instructions against the PTX's own .target too),
 * in the background; the file and its log stay in the test's build directory. */
static void assemble(const char *ptx, const char *arch, const char *label) {
#ifdef CLDM_TEST_PTXAS
  static long cpus;
  if (!cpus) {
    cpus = sysconf(_SC_NPROCESSORS_ONLN);
    cpus = cpus < 1 ? 1 : cpus > MAX_PTXAS ? MAX_PTXAS : cpus;
  }
  while (ptxas_running >= cpus)
    ptxas_reap_one();
  ptxas_job *j = &ptxas_jobs[ptxas_running];
  snprintf(j->path, sizeof j->path, "%s/%s.%s.ptx", CLDM_TEST_OUT_DIR, label, arch);
  snprintf(j->arch, sizeof j->arch, "%s", arch);
  char logp[4200], archopt[32];
  snprintf(logp, sizeof logp, "%s.log", j->path);
  snprintf(archopt, sizeof archopt, "-arch=%s", arch);
  write_text(j->path, ptx);
  posix_spawn_file_actions_t fa;
  assert_int_equal(posix_spawn_file_actions_init(&fa), 0);
  assert_int_equal(
      posix_spawn_file_actions_addopen(&fa, 1, logp, O_WRONLY | O_CREAT | O_TRUNC, 0644), 0);
  assert_int_equal(posix_spawn_file_actions_adddup2(&fa, 1, 2), 0);
  char *argv[] = {(char *)CLDM_TEST_PTXAS, archopt, "-o", "/dev/null", j->path, NULL};
  extern char **environ;
  int rc = posix_spawn(&j->pid, CLDM_TEST_PTXAS, &fa, NULL, argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0)
    fail_msg("cannot run %s: %s", CLDM_TEST_PTXAS, strerror(rc));
  ptxas_running++;
#else
  (void)ptx, (void)arch, (void)label;
#endif
}

static char *translate_ok(const void *spv, size_t size, const cldm_ptx_target *t, size_t *ptx_size,
                          const char *label) {
  char *ptx = NULL, *log = NULL;
  size_t n = 0;
  cldm_ptx_status st = api->translate(spv, size, t, &ptx, &n, &log);
  if (st != CLDM_PTX_OK)
    fail_msg("%s: %s\n%s", label, api->status_name(st), log ? log : "(no log)");
  assert_non_null(ptx);
  assert_int_equal(strlen(ptx), n);
  assert_non_null(log); /* a success log says which target was used */
  assert_non_null(strstr(log, "cldm-ptx:"));
  api->free_result(log);
  if (ptx_size)
    *ptx_size = n;
  return ptx;
}

/* A refusal: the status and a log naming the reason. */
static void translate_fails(const void *spv, size_t size, const cldm_ptx_target *t,
                            cldm_ptx_status want, const char *in_log) {
  char *ptx = (char *)1, *log = NULL;
  size_t n = 1;
  cldm_ptx_status st = api->translate(spv, size, t, &ptx, &n, &log);
  if (st != want)
    fail_msg("expected %s, got %s\n%s", api->status_name(want), api->status_name(st),
             log ? log : "(no log)");
  assert_null(ptx);
  assert_int_equal(n, 0);
  assert_non_null(log);
  if (in_log && !strstr(log, in_log))
    fail_msg("log lacks \"%s\":\n%s", in_log, log);
  api->free_result(log);
}

/* ---- the project's modules ---------------------------------------------------------------- */

/* Translates one module and checks the PTX for what the route promises. */
/* Translates one module, lowered with allocator variant `features` (0: cl12, the variant of
 * GPUs before compute capability 8.0; NV: the NVPTX allocator), and checks the PTX. */
static void check_module_with(const char *dir, const char *name, unsigned features) {
  module m;
  load_module(&m, dir, name, features);
  size_t n;
  char *ptx = translate_ok(m.spv, m.size, &h200, &n, name);
  char label[300];
  snprintf(label, sizeof label, "%s.%s", name,
           features & CLDM_DEVICE_FEATURE_TARGET_PTX ? "nv" : "cl12");
  printf("ptx: %-44s %7zu bytes of SPIR-V -> %7zu bytes of PTX\n", name, m.size, n);
  assert_non_null(strstr(ptx, ".version 7.5\n"));
  assert_non_null(strstr(ptx, ".target sm_86, texmode_independent\n"));
  assert_non_null(strstr(ptx, ".address_size 64\n"));
  for (size_t k = 0; k < m.report.num_kernels; k++) {
    const cldm_spirv_kernel *kr = &m.report.kernels[k];
    char last[256];
    int np = entry_params(ptx, kr->name, last, sizeof last);
    if (np < 0)
      fail_msg("%s: kernel %s is no .entry", name, kr->name);
    assert_int_equal((unsigned)np, kr->num_user_args + (kr->takes_heap ? 1u : 0u));
    if (kr->takes_heap && !strstr(last, ".param .u64 .ptr .global"))
      fail_msg("%s: %s: hidden heap argument is \"%s\", not a global pointer", name, kr->name,
               last);
  }
  /* fences are device-wide (cl12: membar.gl; the nv variant orders its atomics with .gpu
   * qualifiers, device/cl/cldm_atomic_nv.clh), work-item functions read the environment
   * registers */
  if (strstr(ptx, "membar.cta"))
    fail_msg("%s: membar.cta in the PTX", name);
  if (m.allocates && !(features & CLDM_DEVICE_FEATURE_TARGET_PTX))
    assert_true(count(ptx, "membar.gl") > 0);
  if (m.allocates && (features & CLDM_DEVICE_FEATURE_TARGET_PTX))
    assert_true(count(ptx, ".gpu.global.") > 0); /* atom.{acquire,release,acq_rel}.gpu */
  if (strstr(ptx, "%ctaid.") && !strstr(ptx, "%envreg"))
    fail_msg("%s: a group id without the environment registers (libclc's work-item "
             "functions)",
             name);
  if (strstr(ptx, "%nctaid."))
    fail_msg("%s: %%nctaid (libclc's get_num_groups) instead of %%envreg6..8", name);
  if (m.allocates && (features & CLDM_DEVICE_FEATURE_TARGET_PTX) && !strstr(ptx, "match.any.sync"))
    fail_msg("%s: lowered with the nv variant, but the NVPTX allocator is not in the PTX", name);
  /* what NVIDIA's driver does with it on an H200 (the PTX says sm_86: LLVM 15's newest) */
  assemble(ptx, "sm_90", label);
  free(ptx);
  free_module(&m);
}

#define NV CLDM_DEVICE_FEATURE_TARGET_PTX

/* Both variants the route gives a module: cl12 (compute capability < 8.0) and nv. */
static void check_module(const char *dir, const char *name) {
  check_module_with(dir, name, 0);
  check_module_with(dir, name, NV);
}

static void test_demo_and_examples(void **state) {
  (void)state;
  static const char *const names[] = {"lists.spv", "lists.extinst.spv", "producer.spv",
                                      "consumer.spv", "hip_shapes.spv"};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    check_module(CLDM_TEST_EXAMPLES_SPV, names[i]);
  assemble_wait();
}

static void test_demo_kernels_in_detail(void **state) {
  (void)state;
  module m;
  load_module(&m, CLDM_TEST_EXAMPLES_SPV, "lists.spv", 0);
  assert_true(m.allocates);
  char *ptx = translate_ok(m.spv, m.size, &h200, NULL, "lists.spv");
  char last[256];
  /* build_lists(global ulong *heads, uint max_len, global uint *failed) + heap */
  assert_int_equal(entry_params(ptx, "build_lists", last, sizeof last), 4);
  assert_non_null(strstr(ptx, ".param .u64 .ptr .global .align 8 build_lists_param_0"));
  assert_non_null(strstr(ptx, ".param .u32 build_lists_param_1"));
  assert_non_null(strstr(last, ".ptr .global"));
  assert_int_equal(entry_params(ptx, "consume_lists", last, sizeof last), 4);
  /* get_global_id(0) = tid.x + ntid.x * ctaid.x + %envreg3, as NVIDIA's compiler reads it */
  assert_non_null(strstr(ptx, "%envreg3"));
  /* the allocator's OpenCL 1.2 atomics: device-wide atom.global, fences membar.gl */
  assert_non_null(strstr(ptx, "atom.global.cas.b32"));
  assert_non_null(strstr(ptx, "atom.global.add.u32"));
  assert_true(count(ptx, "membar.gl") >= 4);
  assert_null(strstr(ptx, "membar.cta"));
  /* the kernels are the entries; everything else is internal (no .visible, no .extern) */
  assert_int_equal(count(ptx, ".entry "), 2);
  assert_null(strstr(ptx, ".visible"));
  assert_null(strstr(ptx, ".extern"));
  free(ptx);
  free_module(&m);
}

static void test_engine_test_modules(void **state) {
  (void)state;
  static const char *const bases[] = {"kernel_alloc", "calloc_realloc", "helper_two_kernels",
                                      "two_level",    "many_args",      "size64",
                                      "size32",       "existing_types", "generic"};
  static const char *const forms[] = {"O0.spir64.spv",     "O2.spir64.spv",
                                      "O0.spir64.ext.spv", "O2.spir64.ext.spv",
                                      "c22.spirv64.spv",   "c22.spirv64.ext.spv"};
  char name[256];
  for (size_t b = 0; b < sizeof bases / sizeof bases[0]; b++) {
    for (size_t f = 0; f < sizeof forms / sizeof forms[0]; f++) {
      snprintf(name, sizeof name, "%s.%s", bases[b], forms[f]);
      if (!strcmp(bases[b], "existing_types") && strstr(forms[f], "c22"))
        continue; /* OpUMulExtended: test_unsupported_opcode */
      check_module(CLDM_TEST_SPIRV_DATA, name);
    }
  }
  check_module(CLDM_TEST_SPIRV_DATA, "kernel_alloc.O0.spir64.v14.spv"); /* SPIR-V 1.4 */
  check_module(CLDM_TEST_SPIRV_DATA, "alloc64.spv");                    /* hand-written */
  check_module(CLDM_TEST_SPIRV_DATA, "alloc64.ext.spv");
  assemble_wait();
}

static void test_e2e_kernels(void **state) {
  (void)state;
  static const char *const names[] = {
      "alloc_basic.spv",   "alloc_basic.O2.spv", "alloc_basic.cl20.spv", "alloc_basic.extinst.spv",
      "alloc_generic.spv", "exhaust.spv",        "free_other.spv",       "link_lib.spv",
      "noalloc.spv",       "new_cxx.spv",        "new_hip.spv"};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    check_module(CLDM_TEST_E2E_KERNELS, names[i]);
  assemble_wait();
}

/* The allocator's own test kernels, linked with its cl12 variant by spirv-link, and with the
 * nv variant (imports left open: the NVPTX allocator resolves them). */
/* C++'s new and delete (spec 2.2), lowered: a kernel whose work-items may stop keeps its
 * arguments and the hidden heap, and the PTX counts a failed throwing new (the allocator's
 * new_failed: an atomic add on the heap's header) before the work-item returns. */
static void test_new_delete(void **state) {
  (void)state;
  for (int nv = 0; nv < 2; nv++) {
    module m;
    load_module(&m, CLDM_TEST_E2E_KERNELS, "new_hip.spv", nv ? NV : 0);
    const cldm_spirv_kernel *k = NULL;
    for (size_t i = 0; i < m.report.num_kernels; i++)
      if (!strcmp(m.report.kernels[i].name, "stop_on_full"))
        k = &m.report.kernels[i];
    assert_non_null(k);
    assert_true(k->takes_heap && k->throwing_new);
    char *ptx = translate_ok(m.spv, m.size, &h200, NULL, "new_hip.spv");
    char last[256];
    assert_int_equal(entry_params(ptx, "stop_on_full", last, sizeof last), 3);
    assert_non_null(strstr(last, ".ptr .global"));
    /* no operator new or delete is left to the driver's linker */
    assert_null(strstr(ptx, "_Znwm"));
    assert_null(strstr(ptx, "_Znam"));
    assert_null(strstr(ptx, "_ZdaPv"));
    assert_null(strstr(ptx, "old_llvm"));
    free(ptx);
    free_module(&m);
  }
}

static void test_allocator_test_kernels(void **state) {
  (void)state;
  check_module_with(CLDM_TEST_DEVICE_DIR, "alloc_test.cldm_alloc.cl12.spir64.spv", 0);
  check_module_with(CLDM_TEST_DEVICE_DIR, "alloc_test.cldm_alloc.nv.spir64.spv", 0);
  module m;
  load_module(&m, CLDM_TEST_DEVICE_DIR, "alloc_test.cldm_alloc.nv.spir64.spv", 0);
  char *ptx = translate_ok(m.spv, m.size, &h200, NULL, "alloc_test nv");
  assert_non_null(strstr(ptx, "match.any.sync"));
  assert_null(strstr(ptx, ".extern"));
  free(ptx);
  free_module(&m);
  assemble_wait();
}

/* The NVPTX allocator in a lowered module: a warp's calls combined (match.any, shfl, redux,
 * ballot), W's 64-bit fetch-and-add (acquire) and exchange (acq_rel) with their orders at GPU
 * scope, a bitmap take (acquire) and free (release) likewise, and no membar.gl
 * (cldm_atomic_nv.clh). */
static void test_nvptx_allocator(void **state) {
  (void)state;
  module m;
  load_module(&m, CLDM_TEST_EXAMPLES_SPV, "lists.spv", NV);
  char *ptx = translate_ok(m.spv, m.size, &h200, NULL, "lists.spv (nv)");
  static const char *const want[] = {"match.any.sync.b32",
                                     "shfl.sync.idx.b32",
                                     "redux.sync.add",
                                     "vote.sync.ballot.b32",
                                     "activemask.b32",
                                     "atom.acquire.gpu.global.add.u64",
                                     "atom.acq_rel.gpu.global.exch.b64",
                                     "atom.acquire.gpu.global.or.b32",
                                     "atom.release.gpu.global.and.b32",
                                     "fence.acq_rel.gpu",
                                     "%smid"};
  for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
    if (!strstr(ptx, want[i]))
      fail_msg("lists.spv with the nv variant: no %s in the PTX", want[i]);
  assert_null(strstr(ptx, "membar.cta"));
  assert_null(strstr(ptx, "membar.gl"));
  assert_null(strstr(ptx, ".extern"));
  assert_int_equal(count(ptx, ".entry "), 2);
  free(ptx);
  free_module(&m);
}

/* The directives between entry `name`'s parameter list and its body (malloc'd), or NULL if the
 * PTX has no such entry. */
static char *entry_directives(const char *ptx, const char *name) {
  char head[128];
  snprintf(head, sizeof head, ".entry %s(", name);
  const char *e = strstr(ptx, head);
  if (!e)
    return NULL;
  const char *close = strstr(e, "\n)"), *body = close ? strstr(close, "\n{") : NULL;
  if (!body)
    return NULL;
  return strndup(close, (size_t)(body - close));
}

/* Checks that entry `name` of ptx has the directive `want` (".maxnreg 112"), or no .maxnreg at
 * all if want is NULL; fails the test with the entry's directives otherwise. */
static void expect_cap(const char *ptx, const char *name, const char *want, const char *how) {
  char *d = entry_directives(ptx, name);
  if (!d)
    fail_msg("%s: no entry %s", how, name);
  const char *got = strstr(d, ".maxnreg");
  int ok = want ? got && !strncmp(got, want, strlen(want)) &&
                      (got[strlen(want)] == '\n' || got[strlen(want)] == ' ' || !got[strlen(want)])
                : !got;
  if (!ok)
    fail_msg("%s: entry %s has directives \"%s\", %s expected", how, name, d,
             want ? want : "no .maxnreg");
  free(d);
}

/* The register cap (spec 3.4, README "Settings"): no cap by default; CLDM_PTX_MAXNREG=N gives
 * kernels that can take memory .maxnreg N (0, or an empty value: none); kernels that only free
 * (release) or do not allocate (plain, check) never get one. The cap is part of the cache key,
 * so a cached translation with another cap is not reused. */
static void test_register_cap(void **state) {
  (void)state;
  module m;
  load_module(&m, CLDM_TEST_E2E_KERNELS, "alloc_basic.spv", NV);
  static const char *const allocating[] = {"fill", "fill_again", "aligned_fill", "variants",
                                           "many_args"};
  static const char *const others[] = {"release", "plain", "check"};
  static const struct {
    const char *env, *want;
  } runs[] = {
      {NULL, NULL}, {"112", ".maxnreg 112"}, {"80", ".maxnreg 80"}, {"0", NULL}, {"", NULL}};
  for (size_t r = 0; r < sizeof runs / sizeof runs[0]; r++) {
    if (runs[r].env)
      setenv("CLDM_PTX_MAXNREG", runs[r].env, 1);
    else
      unsetenv("CLDM_PTX_MAXNREG");
    char how[64];
    snprintf(how, sizeof how, "alloc_basic (nv), CLDM_PTX_MAXNREG=%s",
             runs[r].env ? runs[r].env : "(unset)");
    char *ptx = translate_ok(m.spv, m.size, &h200, NULL, how);
    for (size_t i = 0; i < sizeof allocating / sizeof allocating[0]; i++)
      expect_cap(ptx, allocating[i], runs[r].want, how);
    for (size_t i = 0; i < sizeof others / sizeof others[0]; i++)
      expect_cap(ptx, others[i], NULL, how);
    free(ptx);
  }
  unsetenv("CLDM_PTX_MAXNREG");
  free_module(&m);
}

/* ---- work-item functions, address spaces, generic pointers -------------------------------- */

static void test_workitem_registers(void **state) {
  (void)state;
  check_module(CLDM_TEST_PTX_KERNELS, "workitem.spv");
  module m;
  load_module(&m, CLDM_TEST_PTX_KERNELS, "workitem.spv", 0);
  char *ptx = translate_ok(m.spv, m.size, &h200, NULL, "workitem.spv");
  /* envreg0..2 group offset, 3..5 global offset, 6..8 group counts, 9 work dimension */
  for (int r = 0; r <= 9; r++) {
    char reg[16];
    snprintf(reg, sizeof reg, "%%envreg%d;", r);
    if (!strstr(ptx, reg))
      fail_msg("workitem: %s never read", reg);
  }
  assert_null(strstr(ptx, "%nctaid"));
  for (int k = 0; k < 3; k++) {
    char reg[16];
    snprintf(reg, sizeof reg, "%%tid.%c", "xyz"[k]);
    assert_non_null(strstr(ptx, reg));
    snprintf(reg, sizeof reg, "%%ntid.%c", "xyz"[k]);
    assert_non_null(strstr(ptx, reg));
  }
  free(ptx);
  free_module(&m);
  assemble_wait();
}

static void test_address_spaces(void **state) {
  (void)state;
  static const char *const names[] = {"spaces.spv", "spaces.O2.spv"};
  for (size_t i = 0; i < 2; i++) {
    check_module(CLDM_TEST_PTX_KERNELS, names[i]);
    module m;
    load_module(&m, CLDM_TEST_PTX_KERNELS, names[i], 0);
    char *ptx = translate_ok(m.spv, m.size, &h200, NULL, names[i]);
    assert_non_null(strstr(ptx, ".param .u64 .ptr .global .align 4 spaces_param_0"));
    assert_non_null(strstr(ptx, ".param .u64 .ptr .const .align 4 spaces_param_1"));
    assert_non_null(strstr(ptx, ".param .u64 .ptr .shared .align 4 spaces_param_2"));
    assert_non_null(strstr(ptx, ".const .align 4 .b8 table[16]"));
    assert_non_null(strstr(ptx, "ld.const"));
    assert_non_null(strstr(ptx, "bar.sync"));
    assert_true(count(ptx, "membar.gl") >= 3); /* mem_fence, read_, write_mem_fence */
    free(ptx);
    free_module(&m);
  }
  assemble_wait();
}

static void test_generic_pointers(void **state) {
  (void)state;
  check_module(CLDM_TEST_PTX_KERNELS, "generic.spv");
  module m;
  load_module(&m, CLDM_TEST_PTX_KERNELS, "generic.spv", 0);
  char *ptx = translate_ok(m.spv, m.size, &h200, NULL, "generic.spv");
  assert_non_null(strstr(ptx, "isspacep.global")); /* to_global */
  assert_non_null(strstr(ptx, "isspacep.shared")); /* to_local */
  assert_non_null(strstr(ptx, "cvta"));            /* casts to and from generic */
  free(ptx);
  free_module(&m);
  assemble_wait();
}

static void test_kernel_calls_kernel(void **state) {
  (void)state;
  check_module(CLDM_TEST_PTX_KERNELS, "calls.spv");
  check_module(CLDM_TEST_SPIRV_DATA, "helper_two_kernels.O0.spir64.spv");
  assemble_wait();
}

/* ---- refusals ----------------------------------------------------------------------------- */

static void expect_refused(const char *dir, const char *name, unsigned features,
                           cldm_ptx_status want, const char *in_log) {
  module m;
  load_module(&m, dir, name, features);
  translate_fails(m.spv, m.size, &h200, want, in_log);
  free_module(&m);
}

static void test_unsupported_features(void **state) {
  (void)state;
  expect_refused(CLDM_TEST_PTX_KERNELS, "image.spv", 0, CLDM_PTX_E_UNSUPPORTED,
                 "images and samplers are not supported by the PTX path");
  expect_refused(CLDM_TEST_PTX_KERNELS, "printf.spv", 0, CLDM_PTX_E_UNSUPPORTED,
                 "printf is not supported by the PTX path");
  expect_refused(CLDM_TEST_PTX_KERNELS, "ordered.spv", 0, CLDM_PTX_E_UNSUPPORTED,
                 "acquire/release/seq_cst memory semantics");
}

static void test_unsupported_opcode(void **state) {
  (void)state;
  expect_refused(CLDM_TEST_SPIRV_DATA, "existing_types.c22.spirv64.spv", 0, CLDM_PTX_E_UNSUPPORTED,
                 "OpUMulExtended");
}

/* The allocator variants with explicit memory orders or sub-groups are refused: only cl12's
 * fences survive LLVM 15's NVPTX back end. */
static void test_ordered_allocator_variants(void **state) {
  (void)state;
  expect_refused(CLDM_TEST_EXAMPLES_SPV, "lists.spv", CLDM_DEVICE_FEATURE_CL20_ATOMICS,
                 CLDM_PTX_E_UNSUPPORTED, "memory semantics");
  expect_refused(CLDM_TEST_DEVICE_DIR, "alloc_test.cldm_alloc.cl20.spir64.spv", 0,
                 CLDM_PTX_E_UNSUPPORTED, "cl12 variant");
}

static void test_physical32_refused(void **state) {
  (void)state;
  expect_refused(CLDM_TEST_SPIRV_DATA, "kernel_alloc.O0.spir.spv", 0, CLDM_PTX_E_UNSUPPORTED,
                 "Physical32");
}

static void test_not_lowered_refused(void **state) {
  (void)state;
  size_t n;
  void *spv = read_in(CLDM_TEST_EXAMPLES_SPV, "lists.spv", &n);
  translate_fails(spv, n, &h200, CLDM_PTX_E_UNSUPPORTED, "lower it first");
  free(spv);
}

static void test_undefined_function(void **state) {
  (void)state;
  expect_refused(CLDM_TEST_E2E_KERNELS, "link_main_plain.spv", 0, CLDM_PTX_E_LINK, "twice");
}

/* Modules translated together (clLinkProgram on the PTX route): an import of one module is
 * resolved by another's export, each lowered module's own allocator stays private to it, every
 * kernel of every module becomes an entry; a kernel defined twice fails to link. */
static void test_linked_modules(void **state) {
  (void)state;
  module lib, plain, alloc;
  load_module(&lib, CLDM_TEST_E2E_KERNELS, "link_lib.spv", 0);
  load_module(&plain, CLDM_TEST_E2E_KERNELS, "link_main_plain.spv", 0);
  load_module(&alloc, CLDM_TEST_E2E_KERNELS, "alloc_basic.spv", 0);
  const void *spv[3] = {plain.spv, lib.spv, alloc.spv};
  size_t sizes[3] = {plain.size, lib.size, alloc.size};
  char *ptx = NULL, *log = NULL;
  size_t n = 0;
  cldm_ptx_status st = api->translate_linked(spv, sizes, 3, &h200, &ptx, &n, &log);
  if (st != CLDM_PTX_OK)
    fail_msg("linked: %s\n%s", api->status_name(st), log ? log : "(no log)");
  assert_non_null(strstr(log, "3 modules linked"));
  api->free_result(log);
  assert_int_equal(strlen(ptx), n);
  char last[128];
  assert_true(entry_params(ptx, "use_twice", last, sizeof last) >= 1);
  assert_int_equal(entry_params(ptx, "lib_fill", last, sizeof last), 2); /* out + heap */
  for (size_t k = 0; k < alloc.report.num_kernels; k++)
    if (!strstr(ptx, alloc.report.kernels[k].name))
      fail_msg("kernel %s of the third module is missing", alloc.report.kernels[k].name);
  assemble(ptx, "sm_86", "linked modules");
  /* the same list again comes from the cache; a different order is another translation */
  char *again = NULL;
  cldm_ptx_cache_stats before, after;
  api->cache_stats(&before);
  assert_int_equal(api->translate_linked(spv, sizes, 3, &h200, &again, &n, NULL), CLDM_PTX_OK);
  api->cache_stats(&after);
  assert_int_equal(after.memory_hits, before.memory_hits + 1);
  assert_string_equal(again, ptx);
  api->free_result(again);
  api->free_result(ptx);
  /* one module alone still lacks `twice`; the same kernels twice do not link */
  const void *dup[2] = {alloc.spv, alloc.spv};
  size_t dup_sizes[2] = {alloc.size, alloc.size};
  ptx = (char *)1;
  st = api->translate_linked(dup, dup_sizes, 2, &h200, &ptx, &n, &log);
  assert_int_equal(st, CLDM_PTX_E_LINK);
  assert_null(ptx);
  assert_non_null(strstr(log, "cannot link module 2"));
  api->free_result(log);
  free_module(&lib);
  free_module(&plain);
  free_module(&alloc);
  assemble_wait();
}

/* ---- malformed input ---------------------------------------------------------------------- */

static uint32_t lcg(uint32_t *s) {
  *s = *s * 1664525u + 1013904223u;
  return *s >> 8;
}

static void test_bad_arguments(void **state) {
  (void)state;
  char *ptx, *log;
  size_t n;
  uint32_t w[8] = {0x07230203u};
  assert_int_equal(api->translate(NULL, 32, &h200, &ptx, &n, &log), CLDM_PTX_E_INVALID_ARG);
  assert_non_null(log);
  api->free_result(log);
  assert_int_equal(api->translate(w, 32, NULL, &ptx, &n, &log), CLDM_PTX_E_INVALID_ARG);
  api->free_result(log);
  assert_int_equal(api->translate(w, 32, &h200, NULL, &n, NULL), CLDM_PTX_E_INVALID_ARG);
  translate_fails(w, 6, &h200, CLDM_PTX_E_MALFORMED, "32-bit words");
  translate_fails(w, 0, &h200, CLDM_PTX_E_MALFORMED, NULL);
}

static void test_garbage(void **state) {
  (void)state;
  uint32_t s = 12345, w[64];
  for (int i = 0; i < 64; i++)
    w[i] = lcg(&s) * 2654435761u;
  translate_fails(w, sizeof w, &h200, CLDM_PTX_E_MALFORMED, "magic");
  w[0] = 0x07230203u; /* right magic, garbage after it: the version is the first to be wrong */
  translate_fails(w, sizeof w, &h200, CLDM_PTX_E_UNSUPPORTED, "version");
  w[1] = 0x00010000u;
  translate_fails(w, sizeof w, &h200, CLDM_PTX_E_UNSUPPORTED, "bound");
  w[3] = 100; /* then the instructions */
  translate_fails(w, sizeof w, &h200, CLDM_PTX_E_MALFORMED, "malformed SPIR-V: word");
}

static void test_truncated(void **state) {
  (void)state;
  module m;
  load_module(&m, CLDM_TEST_EXAMPLES_SPV, "lists.spv", 0);
  size_t cuts[] = {20, 24, 64, 400, m.size / 3, m.size / 2, m.size - 8, m.size - 4};
  for (size_t i = 0; i < sizeof cuts / sizeof cuts[0]; i++)
    translate_fails(m.spv, cuts[i] & ~(size_t)3, &h200, CLDM_PTX_E_MALFORMED, NULL);
  free_module(&m);
}

/* Finds instruction `op` number `nth` in host-order words; returns its word index or 0. */
static size_t find_op(const uint32_t *w, size_t nw, uint32_t op, int nth) {
  for (size_t i = 5; i < nw && (w[i] >> 16); i += w[i] >> 16)
    if ((w[i] & 0xffffu) == op && nth-- == 0)
      return i;
  return 0;
}

/* Well-formed but invalid: the kinds of ids LLVMSPIRVLib trusts. */
static void test_wrong_id_kinds(void **state) {
  (void)state;
  module m;
  load_module(&m, CLDM_TEST_EXAMPLES_SPV, "lists.spv", 0);
  uint32_t *w = m.spv;
  size_t nw = m.size / 4;
  size_t iadd = find_op(w, nw, 128 /* OpIAdd */, 0);
  assert_true(iadd > 0);
  uint32_t keep = w[iadd + 3];
  w[iadd + 3] = w[iadd + 1]; /* an operand replaced by the result type */
  translate_fails(w, m.size, &h200, CLDM_PTX_E_MALFORMED, "is a type, used as a value");
  w[iadd + 3] = keep;
  size_t ptr = find_op(w, nw, 32 /* OpTypePointer */, 0);
  size_t fty = find_op(w, nw, 33 /* OpTypeFunction */, 0);
  assert_true(ptr > 0 && fty > 0);
  if (fty < ptr) {
    keep = w[ptr + 3];
    w[ptr + 3] = w[fty + 1]; /* a pointer to a function type */
    translate_fails(w, m.size, &h200, CLDM_PTX_E_MALFORMED, "function type");
    w[ptr + 3] = keep;
  }
  size_t st = find_op(w, nw, 30 /* OpTypeStruct */, 0);
  assert_true(st > 0 && (w[st] >> 16) >= 3);
  if (fty < st) {
    keep = w[st + 2];
    w[st + 2] = w[fty + 1]; /* a struct member of function type (a mutant of the e2e suite) */
    translate_fails(w, m.size, &h200, CLDM_PTX_E_MALFORMED, "used in a type");
    w[st + 2] = keep;
  }
  size_t atom = find_op(w, nw, 234 /* OpAtomicIAdd */, 0);
  assert_true(atom > 0 && (w[atom] >> 16) == 7);
  keep = w[atom + 3];
  w[atom + 3] = w[atom + 6]; /* an atomic add on its own integer operand (a mutant that made
                              * LLVMSPIRVLib 15 use freed memory) */
  translate_fails(w, m.size, &h200, CLDM_PTX_E_MALFORMED, "is no pointer, used as an address");
  w[atom + 3] = keep;
  size_t br = find_op(w, nw, 249 /* OpBranch */, 0);
  assert_true(br > 0);
  keep = w[br + 1];
  w[br + 1] = w[iadd + 2]; /* a branch to a value */
  translate_fails(w, m.size, &h200, CLDM_PTX_E_MALFORMED, "should be a block label");
  w[br + 1] = keep;
  char *ptx = translate_ok(w, m.size, &h200, NULL, "lists.spv restored");
  free(ptx);
  free_module(&m);
}

/* One word changed at a time, 150 times: never a crash, a log whenever it fails. Run in a
 * child process, so that a crash is reported as a failure of this test only. */
static void test_mutants(void **state) {
  (void)state;
  module m;
  load_module(&m, CLDM_TEST_E2E_KERNELS, "free_other.spv", 0);
  fflush(NULL);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    uint32_t s = 2024, *w = malloc(m.size);
    size_t nw = m.size / 4;
    int bad = 0;
    for (int t = 0; t < 150 && !bad; t++) {
      memcpy(w, m.spv, m.size);
      size_t pos = 5 + lcg(&s) % (nw - 5);
      uint32_t r = lcg(&s);
      w[pos] = r % 3 == 0   ? r % 64
               : r % 3 == 1 ? w[pos] ^ (1u << (r % 32))
                            : (w[pos] & 0xffff0000u) | (r % 400);
      char *ptx = NULL, *log = NULL;
      size_t n;
      cldm_ptx_status st = api->translate(w, m.size, &h200, &ptx, &n, &log);
      if (st != CLDM_PTX_OK && !log)
        bad = 1;
      api->free_result(ptx);
      api->free_result(log);
    }
    _exit(bad ? 2 : 0);
  }
  int status;
  assert_int_equal(waitpid(pid, &status, 0), pid);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    fail_msg("a mutant crashed the backend or failed without a log (status 0x%x)", status);
  free_module(&m);
}

/* ---- byte order, options, targets --------------------------------------------------------- */

static void test_big_endian(void **state) {
  (void)state;
  module m;
  load_module(&m, CLDM_TEST_EXAMPLES_SPV, "lists.spv", 0);
  char *le = translate_ok(m.spv, m.size, &h200, NULL, "lists");
  uint32_t *w = m.spv;
  for (size_t i = 0; i < m.size / 4; i++)
    w[i] = __builtin_bswap32(w[i]);
  char *be = translate_ok(m.spv, m.size, &h200, NULL, "lists (big-endian)");
  assert_string_equal(le, be);
  free(le);
  free(be);
  free_module(&m);
}

static void test_options(void **state) {
  (void)state;
  module m;
  load_module(&m, CLDM_TEST_EXAMPLES_SPV, "lists.spv", 0);
  char *o2 = translate_ok(m.spv, m.size, &h200, NULL, "lists");
  cldm_ptx_target t = {9, 0, "-cl-mad-enable -cl-fast-relaxed-math -DX=1"};
  char *same = translate_ok(m.spv, m.size, &t, NULL, "lists, other options");
  assert_string_equal(o2, same); /* options without effect on the PTX change nothing */
  t.options = "-cl-std=CL1.2 -cl-opt-disable";
  char *o0 = translate_ok(m.spv, m.size, &t, NULL, "lists -cl-opt-disable");
  assert_string_not_equal(o2, o0);
  assert_null(strstr(o0, "membar.cta"));
  assert_non_null(strstr(o0, "%envreg3"));
  assert_non_null(strstr(o0, ".entry build_lists("));
  assemble(o0, "sm_86", "lists.O0");
  t.options = "-cl-opt-disabled"; /* not the option */
  char *again = translate_ok(m.spv, m.size, &t, NULL, "lists");
  assert_string_equal(o2, again);
  free(o2);
  free(same);
  free(o0);
  free(again);
  free_module(&m);
  assemble_wait();
}

static void test_targets(void **state) {
  (void)state;
  char sm[16], isa[16];
  static const struct {
    unsigned major, minor;
    const char *sm, *isa;
  } cases[] = {{9, 0, "sm_86", "7.5"}, {8, 9, "sm_86", "7.5"}, {8, 6, "sm_86", "7.5"},
               {8, 0, "sm_80", "7.0"}, {7, 5, "sm_75", "6.3"}, {7, 0, "sm_70", "6.0"},
               {6, 1, "sm_61", "5.0"}, {1, 0, "sm_20", "3.2"}, {12, 0, "sm_86", "7.5"}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    api->target_for(cases[i].major, cases[i].minor, sm, isa);
    assert_string_equal(sm, cases[i].sm);
    assert_string_equal(isa, cases[i].isa);
  }
  module m;
  load_module(&m, CLDM_TEST_EXAMPLES_SPV, "lists.spv", 0);
  cldm_ptx_target t75 = {7, 5, NULL}, t80 = {8, 0, NULL};
  char *p = translate_ok(m.spv, m.size, &t75, NULL, "lists sm_75");
  assert_non_null(strstr(p, ".version 6.3\n.target sm_75, texmode_independent"));
  assemble(p, "sm_75", "lists");
  free(p);
  p = translate_ok(m.spv, m.size, &t80, NULL, "lists sm_80");
  assert_non_null(strstr(p, ".version 7.0\n.target sm_80, texmode_independent"));
  assemble(p, "sm_80", "lists");
  free(p);
  free_module(&m);
  assemble_wait();
}

/* ---- cache -------------------------------------------------------------------------------- */

static void test_cache_memory(void **state) {
  (void)state;
  module m;
  load_module(&m, CLDM_TEST_E2E_KERNELS, "exhaust.spv", 0);
  api->cache_clear();
  cldm_ptx_cache_stats s;
  api->cache_stats(&s);
  assert_int_equal(s.entries, 0);
  char *a = translate_ok(m.spv, m.size, &h200, NULL, "exhaust");
  api->cache_stats(&s);
  assert_int_equal(s.misses, 1);
  assert_int_equal(s.memory_hits, 0);
  assert_int_equal(s.entries, 1);
  assert_int_equal(s.bytes, strlen(a));
  char *ptx, *log;
  size_t n;
  assert_int_equal(api->translate(m.spv, m.size, &h200, &ptx, &n, &log), CLDM_PTX_OK);
  assert_string_equal(a, ptx);
  assert_non_null(strstr(log, "cached translation (memory)"));
  api->cache_stats(&s);
  assert_int_equal(s.memory_hits, 1);
  assert_int_equal(s.misses, 1);
  api->free_result(ptx);
  api->free_result(log);
  /* another target is another entry */
  cldm_ptx_target t80 = {8, 0, NULL};
  char *b = translate_ok(m.spv, m.size, &t80, NULL, "exhaust sm_80");
  api->cache_stats(&s);
  assert_int_equal(s.misses, 2);
  assert_int_equal(s.entries, 2);
  assert_string_not_equal(a, b);
  free(a);
  free(b);
  free_module(&m);
}

static void test_cache_disk(void **state) {
  (void)state;
  char dir[4096];
  snprintf(dir, sizeof dir, "%s/ptx-cache-XXXXXX", CLDM_TEST_OUT_DIR);
  assert_non_null(mkdtemp(dir));
  setenv("CLDM_CACHE_DIR", dir, 1);
  module m;
  load_module(&m, CLDM_TEST_E2E_KERNELS, "free_other.spv", 0);
  api->cache_clear();
  char *a = translate_ok(m.spv, m.size, &h200, NULL, "free_other");
  int files = 0;
  DIR *d = opendir(dir);
  assert_non_null(d);
  for (struct dirent *e; (e = readdir(d));) {
    if (e->d_name[0] == '.')
      continue;
    assert_int_equal(strncmp(e->d_name, "cldm-ptx-", 9), 0);
    assert_non_null(strstr(e->d_name, ".ptx"));
    files++;
  }
  closedir(d);
  assert_int_equal(files, 1); /* no temporary file left behind */
  api->cache_clear();         /* memory only: the file stays */
  char *ptx, *log;
  size_t n;
  assert_int_equal(api->translate(m.spv, m.size, &h200, &ptx, &n, &log), CLDM_PTX_OK);
  assert_string_equal(a, ptx);
  assert_non_null(strstr(log, "cached translation (disk)"));
  cldm_ptx_cache_stats s;
  api->cache_stats(&s);
  assert_int_equal(s.disk_hits, 1);
  assert_int_equal(s.misses, 0);
  api->free_result(ptx);
  api->free_result(log);
  unsetenv("CLDM_CACHE_DIR");
  d = opendir(dir); /* the cache directory goes, with its one file */
  assert_non_null(d);
  for (struct dirent *e; (e = readdir(d));) {
    char path[8192];
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    if (e->d_name[0] != '.')
      assert_int_equal(unlink(path), 0);
  }
  closedir(d);
  assert_int_equal(rmdir(dir), 0);
  free(a);
  free_module(&m);
}

static void test_libclc_missing(void **state) {
  (void)state;
  module m;
  load_module(&m, CLDM_TEST_E2E_KERNELS, "free_other.spv", 0);
  setenv("CLDM_LIBCLC_DIR", "/nonexistent-libclc", 1);
  translate_fails(m.spv, m.size, &h200, CLDM_PTX_E_LIBCLC, "nvptx64--nvidiacl.bc not found");
  unsetenv("CLDM_LIBCLC_DIR");
  free_module(&m);
}

/* ---- threads, loading --------------------------------------------------------------------- */

typedef struct job {
  const module *m;
  const cldm_ptx_target *t;
  char *ptx;
  cldm_ptx_status st;
} job;

static void *run_job(void *arg) {
  job *j = arg;
  size_t n;
  char *log = NULL;
  j->st = api->translate(j->m->spv, j->m->size, j->t, &j->ptx, &n, &log);
  api->free_result(log);
  return NULL;
}

static void test_threads(void **state) {
  (void)state;
  module a, b;
  load_module(&a, CLDM_TEST_EXAMPLES_SPV, "producer.spv", 0);
  load_module(&b, CLDM_TEST_EXAMPLES_SPV, "consumer.spv", 0);
  api->cache_clear();
  cldm_ptx_target t75 = {7, 5, NULL};
  job jobs[6] = {{&a, &h200, NULL, 0}, {&b, &h200, NULL, 0}, {&a, &h200, NULL, 0},
                 {&b, &t75, NULL, 0},  {&a, &t75, NULL, 0},  {&b, &h200, NULL, 0}};
  pthread_t th[6];
  for (int i = 0; i < 6; i++)
    assert_int_equal(pthread_create(&th[i], NULL, run_job, &jobs[i]), 0);
  for (int i = 0; i < 6; i++)
    assert_int_equal(pthread_join(th[i], NULL), 0);
  for (int i = 0; i < 6; i++)
    assert_int_equal(jobs[i].st, CLDM_PTX_OK);
  assert_string_equal(jobs[0].ptx, jobs[2].ptx);
  assert_string_equal(jobs[1].ptx, jobs[5].ptx);
  assert_string_not_equal(jobs[0].ptx, jobs[4].ptx);
  for (int i = 0; i < 6; i++)
    free(jobs[i].ptx);
  free_module(&a);
  free_module(&b);
}

/* The layer's way in: dlopen, one symbol, a table checked by version and size. */
static void test_dlopen_api(void **state) {
  (void)state;
  void *h = dlopen(CLDM_TEST_PTX_LIB, RTLD_NOW | RTLD_LOCAL);
  if (!h)
    fail_msg("dlopen %s: %s", CLDM_TEST_PTX_LIB, dlerror());
  cldm_ptx_get_api_fn get = (cldm_ptx_get_api_fn)dlsym(h, CLDM_PTX_GET_API_SYMBOL);
  assert_non_null(get);
  const cldm_ptx_api *t = get(CLDM_PTX_API_VERSION);
  assert_non_null(t);
  assert_int_equal(t->api_version, CLDM_PTX_API_VERSION);
  assert_true(t->size >= sizeof(cldm_ptx_api));
  assert_non_null(strstr(t->version_string, "LLVM 15"));
  assert_null(get(CLDM_PTX_API_VERSION + 1));
  assert_null(dlsym(h, "cldm_ptx_check_spirv")); /* internals stay hidden */
  assert_null(dlsym(h, "cldm_ptx_codegen"));
  assert_string_equal(t->status_name(CLDM_PTX_E_UNSUPPORTED), "CLDM_PTX_E_UNSUPPORTED");
  dlclose(h);
}

int main(void) {
  api = cldm_ptx_get_api(CLDM_PTX_API_VERSION);
  if (!api) {
    fprintf(stderr, "cldm_ptx_get_api(%u) returned NULL\n", CLDM_PTX_API_VERSION);
    return 1;
  }
  unsetenv("CLDM_CACHE_DIR");
  unsetenv("CLDM_LIBCLC_DIR");
  if (getenv("CLDM_TEST_FILTER")) /* e.g. CLDM_TEST_FILTER=test_threads (the TSan stage) */
    cmocka_set_test_filter(getenv("CLDM_TEST_FILTER"));
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_demo_and_examples),
      cmocka_unit_test(test_demo_kernels_in_detail),
      cmocka_unit_test(test_engine_test_modules),
      cmocka_unit_test(test_e2e_kernels),
      cmocka_unit_test(test_new_delete),
      cmocka_unit_test(test_allocator_test_kernels),
      cmocka_unit_test(test_nvptx_allocator),
      cmocka_unit_test(test_register_cap),
      cmocka_unit_test(test_workitem_registers),
      cmocka_unit_test(test_address_spaces),
      cmocka_unit_test(test_generic_pointers),
      cmocka_unit_test(test_kernel_calls_kernel),
      cmocka_unit_test(test_unsupported_features),
      cmocka_unit_test(test_unsupported_opcode),
      cmocka_unit_test(test_ordered_allocator_variants),
      cmocka_unit_test(test_physical32_refused),
      cmocka_unit_test(test_not_lowered_refused),
      cmocka_unit_test(test_undefined_function),
      cmocka_unit_test(test_linked_modules),
      cmocka_unit_test(test_bad_arguments),
      cmocka_unit_test(test_garbage),
      cmocka_unit_test(test_truncated),
      cmocka_unit_test(test_wrong_id_kinds),
      cmocka_unit_test(test_mutants),
      cmocka_unit_test(test_big_endian),
      cmocka_unit_test(test_options),
      cmocka_unit_test(test_targets),
      cmocka_unit_test(test_cache_memory),
      cmocka_unit_test(test_cache_disk),
      cmocka_unit_test(test_libclc_missing),
      cmocka_unit_test(test_threads),
      cmocka_unit_test(test_dlopen_api),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
