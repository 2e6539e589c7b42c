/*
 * spirv_test.c — see spirv_test.h. SPIRV-Tools are run through the shell on temporary files;
 * paths come from CMake (CLDM_SPIRV_AS/VAL/DIS).
 */
#define _GNU_SOURCE
#include "spirv_test.h"
#include "cldm_file.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char *tmp_path(const char *suffix) {
  char *p = malloc(256);
  snprintf(p, 256, "/tmp/cldm_spirv_test_XXXXXX%s", suffix);
  int fd = mkstemps(p, (int)strlen(suffix));
  assert_true(fd >= 0);
  close(fd);
  return p;
}

static void write_all(const char *path, const void *data, size_t size) {
  FILE *f = fopen(path, "wb");
  assert_non_null(f);
  assert_int_equal(fwrite(data, 1, size, f), size);
  fclose(f);
}

/* Runs cmd, returns its exit status; output (stdout+stderr) into *out if out != NULL. */
static int run(const char *cmd, char **out) {
  char full[1024];
  snprintf(full, sizeof full, "%s 2>&1", cmd);
  FILE *p = popen(full, "r");
  assert_non_null(p);
  size_t cap = 4096, n = 0;
  char *buf = malloc(cap);
  size_t r;
  while ((r = fread(buf + n, 1, cap - n - 1, p)) > 0) {
    n += r;
    if (cap - n < 2) {
      cap *= 2;
      buf = realloc(buf, cap);
    }
  }
  buf[n] = '\0';
  int status = pclose(p);
  if (out)
    *out = buf;
  else
    free(buf);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

void *st_data(const char *name, size_t *size) {
  char path[512];
  snprintf(path, sizeof path, "%s/%s", CLDM_TEST_SPIRV_DATA, name);
  void *d = cldm_file_read(path, size);
  if (!d)
    fail_msg("test data %s missing (built by tests/spirv/CMakeLists.txt)", path);
  return d;
}

int st_data_exists(const char *name) {
  char path[512];
  snprintf(path, sizeof path, "%s/%s", CLDM_TEST_SPIRV_DATA, name);
  return access(path, R_OK) == 0;
}

uint32_t *st_asm(const char *text, size_t *size) {
  char *in = tmp_path(".spvasm"), *outp = tmp_path(".spv");
  write_all(in, text, strlen(text));
  char cmd[1024], *msg;
  snprintf(cmd, sizeof cmd, "%s --target-env spv1.0 %s -o %s", CLDM_SPIRV_AS, in, outp);
  if (run(cmd, &msg))
    fail_msg("spirv-as failed: %s\n%s", msg, text);
  free(msg);
  uint32_t *w = cldm_file_read(outp, size);
  assert_non_null(w);
  unlink(in), unlink(outp), free(in), free(outp);
  return w;
}

#define ST_SET_NAME "SPV_EXT_device_malloc"
#define ST_PLACEHOLDER "NonSemantic.cldm_tests1" /* same word count as the set's name */

uint32_t *st_asm_ext(const char *text, size_t *size) {
  static const char from[] = "OpExtInstImport \"" ST_SET_NAME "\"";
  static const char to[] = "OpExtInstImport \"" ST_PLACEHOLDER "\"";
  char *t = malloc(strlen(text) * 2 + 64), *d = t;
  for (const char *s = text; *s;) {
    if (!strncmp(s, from, sizeof from - 1)) {
      d += sprintf(d, "%s", to);
      s += sizeof from - 1;
    } else {
      *d++ = *s++;
    }
  }
  *d = '\0';
  uint32_t *w = st_asm(t, size);
  free(t);
  size_t n = *size / 4;
  for (unsigned k = 0;; k++) {
    size_t at = st_find_op(w, n, 11 /* OpExtInstImport */, k);
    if (!at)
      break;
    char name[32] = {0};
    memcpy(name, &w[at + 2], ((w[at] >> 16) - 2) * 4 < sizeof name ? ((w[at] >> 16) - 2) * 4 : 31);
    if (strcmp(name, ST_PLACEHOLDER))
      continue;
    memset(&w[at + 2], 0, 6 * 4);
    memcpy(&w[at + 2], ST_SET_NAME, strlen(ST_SET_NAME));
  }
  return w;
}

int st_validate(const void *bytes, size_t size, char *msg, size_t cap) {
  return st_validate_env(bytes, size, "opencl2.2", msg, cap);
}

int st_validate_env(const void *bytes, size_t size, const char *env, char *msg, size_t cap) {
  char *p = tmp_path(".spv");
  write_all(p, bytes, size);
  char cmd[1024], *out;
  snprintf(cmd, sizeof cmd, "%s --target-env %s %s", CLDM_SPIRV_VAL, env, p);
  int rc = run(cmd, &out);
  if (msg && cap)
    snprintf(msg, cap, "%s", out);
  free(out);
  unlink(p), free(p);
  return rc ? -1 : 0;
}

void st_assert_valid(const void *bytes, size_t size, const char *what) {
  char msg[2048];
  if (st_validate(bytes, size, msg, sizeof msg))
    fail_msg("%s does not validate: %s", what, msg);
}

void *st_raise(const void *bytes, size_t size, size_t *out_size) {
  void *out = NULL;
  cldm_spirv_error err;
  cldm_spirv_status st = cldm_spirv_raise(bytes, size, &out, out_size, &err);
  if (st)
    fail_msg("raise failed: %s", err.message);
  return out;
}

const cldm_spirv_allocator *st_bump_allocator(void) {
  static cldm_spirv_allocator a;
  if (!a.words64) {
    size_t n32, n64;
    a.words32 = st_data("bump_alloc.spir.spv", &n32);
    a.words64 = st_data("bump_alloc.spir64.spv", &n64);
    a.num_words32 = n32 / 4;
    a.num_words64 = n64 / 4;
  }
  return &a;
}

void *st_lower(const void *bytes, size_t size, size_t *out_size, cldm_spirv_report *report) {
  void *out = NULL;
  cldm_spirv_error err;
  cldm_spirv_status st =
      cldm_spirv_lower(bytes, size, st_bump_allocator(), &out, out_size, report, &err);
  if (st)
    fail_msg("lower failed: %s", err.message);
  return out;
}

st_listing *st_dis(const void *bytes, size_t size) {
  char *p = tmp_path(".spv");
  write_all(p, bytes, size);
  char cmd[1024], *out;
  snprintf(cmd, sizeof cmd, "%s --raw-id --no-indent --no-header --no-color %s", CLDM_SPIRV_DIS, p);
  if (run(cmd, &out))
    fail_msg("spirv-dis failed: %s", out);
  unlink(p), free(p);
  st_listing *l = calloc(1, sizeof *l);
  l->text = out;
  size_t cap = 0;
  for (char *s = strtok(out, "\n"); s; s = strtok(NULL, "\n")) {
    if (l->n == cap) {
      cap = cap ? cap * 2 : 256;
      l->line = realloc(l->line, cap * sizeof *l->line);
    }
    l->line[l->n++] = s;
  }
  return l;
}

void st_listing_free(st_listing *l) {
  if (!l)
    return;
  free(l->text);
  free(l->line);
  free(l);
}

const char *st_def(const st_listing *l, const char *id) {
  size_t n = strlen(id);
  for (size_t i = 0; i < l->n; i++)
    if (!strncmp(l->line[i], id, n) && !strncmp(l->line[i] + n, " = ", 3))
      return l->line[i];
  return NULL;
}

size_t st_count(const st_listing *l, const char *needle) {
  size_t c = 0;
  for (size_t i = 0; i < l->n; i++)
    c += strstr(l->line[i], needle) != NULL;
  return c;
}

int st_function_params(const st_listing *l, const char *id, char (*types)[16], int max) {
  const char *def = st_def(l, id);
  if (!def || !strstr(def, "OpFunction "))
    return -1;
  size_t i = 0;
  while (l->line[i] != def)
    i++;
  int n = 0;
  for (i++; i < l->n && strstr(l->line[i], "OpFunctionParameter "); i++) {
    const char *t = strstr(l->line[i], "OpFunctionParameter ") + strlen("OpFunctionParameter ");
    if (n < max)
      sscanf(t, "%15s", types[n]);
    n++;
  }
  return n;
}

int st_kernel_params(const st_listing *l, const char *kernel, char (*types)[16], int max) {
  char quoted[128];
  snprintf(quoted, sizeof quoted, "\"%s\"", kernel);
  for (size_t i = 0; i < l->n; i++) {
    char id[16];
    if (strncmp(l->line[i], "OpEntryPoint Kernel ", 20) || !strstr(l->line[i], quoted))
      continue;
    const char *q = strstr(l->line[i], quoted);
    if (q[strlen(quoted)] != ' ' && q[strlen(quoted)] != '\0')
      continue;
    sscanf(l->line[i] + 20, "%15s", id);
    return st_function_params(l, id, types, max);
  }
  return -1;
}

int st_is_heap_type(const st_listing *l, const char *type) {
  const char *def = st_def(l, type);
  char pointee[16];
  if (!def || sscanf(def, "%*s = OpTypePointer CrossWorkgroup %15s", pointee) != 1)
    return 0;
  const char *p = st_def(l, pointee);
  return p && strstr(p, "= OpTypeInt 8 0") != NULL;
}

void st_assert_unique_types(const st_listing *l) {
  for (size_t i = 0; i < l->n; i++) {
    const char *a = strstr(l->line[i], " = OpType");
    if (!a || strstr(a, "OpTypeStruct"))
      continue;
    for (size_t j = i + 1; j < l->n; j++) {
      const char *b = strstr(l->line[j], " = OpType");
      if (b && !strcmp(a, b))
        fail_msg("duplicate type declarations: '%s' and '%s'", l->line[i], l->line[j]);
    }
  }
}

void st_assert_no_trace(const st_listing *l) {
  static const char *const names[] = {"malloc", "free", "calloc", "realloc", "aligned_alloc"};
  assert_int_equal(st_count(l, "SPV_EXT_device_malloc"), 0);
  for (size_t k = 0; k < 5; k++) {
    char needle[64];
    snprintf(needle, sizeof needle, "LinkageAttributes \"%s\" Import", names[k]);
    if (st_count(l, needle))
      fail_msg("Import-linkage %s left in the output", names[k]);
  }
}

size_t st_find_op(const uint32_t *w, size_t nwords, uint32_t op, unsigned n) {
  for (size_t i = 5; i < nwords && (w[i] >> 16);) {
    if ((w[i] & 0xFFFFu) == op && n-- == 0)
      return i;
    i += w[i] >> 16;
  }
  return 0;
}
