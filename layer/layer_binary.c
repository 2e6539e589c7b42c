/*
 * layer_binary.c — program binaries of the layer's programs that come back (spec 1.5.2,
 * 3.6): CL_PROGRAM_BINARIES of a program whose kernels take the hidden heap
 * argument, given again to clCreateProgramWithBinary (in this or a later process, as binary
 * caches do), must give kernels that hide the argument and get the heap bound.
 *
 * The layer recognises such a binary by its content:
 *   - every route: when the application reads CL_PROGRAM_BINARIES of a program with a record,
 *     each binary's SHA-256 is remembered with the record's kernel table (which kernels take
 *     the heap, at which index; the argument information the layer answers), in memory and
 *     as a file <cache>/cldm-binary-<sha256>.rec, <cache> being $CLDM_CACHE_DIR, else
 *     $XDG_CACHE_HOME/cl_ext_device_malloc, else ~/.cache/cl_ext_device_malloc (written under a
 *     temporary name and renamed, so readers never see a partial file; failures to write only
 *     cost the recognition in later processes);
 *   - the PTX route also: the layer's PTX starts with a comment line naming those kernels
 *     (layer_ptx.c), which travels with the binary to any machine.
 * Nothing is added to binaries: what the driver returns is returned unchanged, and a binary
 * the layer does not recognise makes a program the layer does not touch.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cldm_layer.h"
#include "cldm_sha256.h"

#define CLDM_BINARY_RECORD_MAGIC "cl_ext_device_malloc program binary record 1"
#define CLDM_BINARY_RECORD_MAX ((off_t)1 << 20) /* a record file larger than this is not ours */

typedef struct cldm_binary_entry {
  uint8_t key[32];
  cldm_program *rec; /* kernels and argument table only */
} cldm_binary_entry;

static pthread_mutex_t cldm_binary_lock = PTHREAD_MUTEX_INITIALIZER;
static cldm_binary_entry *cldm_binary_entries;
static size_t cldm_binary_len, cldm_binary_cap;
static unsigned long cldm_binary_tmp_seq;

static void cldm_binary_key(const void *bin, size_t n, uint8_t key[32]) {
  cldm_sha256 s;
  cldm_sha256_init(&s);
  cldm_sha256_update(&s, bin, n);
  cldm_sha256_final(&s, key);
}

/* Creates directory `path` and its missing parents (mode 0700). 0, or -1. */
static int cldm_binary_mkdirs(char *path) {
  for (char *p = path + 1; *p; p++)
    if (*p == '/') {
      *p = '\0';
      int bad = mkdir(path, 0700) != 0 && errno != EEXIST;
      *p = '/';
      if (bad)
        return -1;
    }
  return mkdir(path, 0700) != 0 && errno != EEXIST ? -1 : 0;
}

/* The record directory (malloc'd), created if missing; NULL if there is none. */
static char *cldm_binary_dir(void) {
  const char *dir = cldm_config_cache_dir();
  const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
  char buf[4096];
  if (dir)
    snprintf(buf, sizeof(buf), "%s", dir);
  else if (xdg && *xdg == '/')
    snprintf(buf, sizeof(buf), "%s/cl_ext_device_malloc", xdg);
  else if (home && *home == '/')
    snprintf(buf, sizeof(buf), "%s/.cache/cl_ext_device_malloc", home);
  else
    return NULL;
  return cldm_binary_mkdirs(buf) == 0 ? strdup(buf) : NULL;
}

static char *cldm_binary_path(const uint8_t key[32]) {
  char *dir = cldm_binary_dir();
  if (!dir)
    return NULL;
  size_t len = strlen(dir) + 96;
  char *path = malloc(len);
  if (path) {
    int n = snprintf(path, len, "%s/cldm-binary-", dir);
    for (int i = 0; i < 32; i++)
      n += snprintf(path + n, len - (size_t)n, "%02x", key[i]);
    snprintf(path + n, len - (size_t)n, ".rec");
  }
  free(dir);
  return path;
}

/* ---- record files -------------------------------------------------------------------------
 * Text, one item per line:
 *   cl_ext_device_malloc program binary record 1
 *   kernel <name> <bits: 1 takes the heap, 2 may stop at a throwing operator new (spec 2.2)>
 *          <heap argument index> <arguments the application sees>
 *          <argument-information lines that follow>
 *   arg <address> <access> <type qualifiers> <name or -> <type name (rest of the line)>
 * Names are identifiers; the numbers are the CL_KERNEL_ARG_* values in hexadecimal. */

static char *cldm_binary_format(const cldm_program *rec) {
  size_t cap = 128;
  for (size_t k = 0; k < rec->report.num_kernels; k++)
    cap += strlen(rec->report.kernels[k].name) + 64;
  for (size_t k = 0; k < rec->args.num_kernels; k++)
    for (size_t a = 0; a < rec->args.kernels[k].num_args; a++)
      cap += strlen(rec->args.kernels[k].args[a].name) +
             strlen(rec->args.kernels[k].args[a].type_name) + 64;
  char *text = malloc(cap);
  if (!text)
    return NULL;
  size_t n = (size_t)snprintf(text, cap, "%s\n", CLDM_BINARY_RECORD_MAGIC);
  for (size_t k = 0; k < rec->report.num_kernels; k++) {
    const cldm_spirv_kernel *kr = &rec->report.kernels[k];
    const cldm_kernel_args *ka = cldm_arg_table_find(&rec->args, kr->name);
    n += (size_t)snprintf(text + n, cap - n, "kernel %s %d %u %u %zu\n", kr->name,
                          (kr->takes_heap ? 1 : 0) | (kr->throwing_new ? 2 : 0),
                          (unsigned)kr->heap_arg_index, (unsigned)kr->num_user_args,
                          ka ? ka->num_args : 0);
    for (size_t a = 0; ka && a < ka->num_args; a++) {
      const cldm_arg_info *ai = &ka->args[a];
      n += (size_t)snprintf(text + n, cap - n, "arg %x %x %lx %s %s\n", (unsigned)ai->address,
                            (unsigned)ai->access, (unsigned long)ai->type_qual,
                            *ai->name ? ai->name : "-", ai->type_name);
    }
  }
  return text;
}

/* Parses a record file's text into a record; NULL if it is not one (or out of memory). */
static cldm_program *cldm_binary_parse(char *text) {
  char *save = NULL, *line = strtok_r(text, "\n", &save);
  if (!line || strcmp(line, CLDM_BINARY_RECORD_MAGIC))
    return NULL;
  cldm_program *rec = cldm_program_new(CLDM_PROGRAM_BINARY);
  int ok = rec != NULL;
  size_t pending = 0; /* argument lines still expected for the last kernel */
  while (ok && (line = strtok_r(NULL, "\n", &save))) {
    char name[1024], type[1024];
    int heap, used = 0;
    unsigned index, user, address, access;
    unsigned long qual;
    size_t nargs;
    if (!pending &&
        sscanf(line, "kernel %1023s %d %u %u %zu%n", name, &heap, &index, &user, &nargs, &used) ==
            5 &&
        !line[used]) {
      cldm_spirv_kernel k = {name, (heap & 1) != 0, user, index, (heap & 2) != 0};
      cldm_spirv_report one = {0};
      one.num_kernels = 1;
      one.kernels = &k;
      ok = cldm_spirv_report_append(&rec->report, &one, NULL) == CLDM_SPIRV_OK;
      if (ok && nargs) {
        cldm_kernel_args *grown =
            realloc(rec->args.kernels, (rec->args.num_kernels + 1) * sizeof(*grown));
        ok = grown != NULL;
        if (ok) {
          rec->args.kernels = grown;
          cldm_kernel_args *e = &grown[rec->args.num_kernels++];
          memset(e, 0, sizeof(*e));
          e->kernel = strdup(name);
          e->args = calloc(nargs < 4096 ? nargs : 1, sizeof(*e->args));
          ok = e->kernel && e->args && nargs < 4096;
          pending = nargs;
        }
      }
    } else if (pending &&
               sscanf(line, "arg %x %x %lx %1023s %n", &address, &access, &qual, name, &used) ==
                   4 &&
               used > 0) {
      snprintf(type, sizeof(type), "%s", line + used);
      cldm_kernel_args *e = &rec->args.kernels[rec->args.num_kernels - 1];
      cldm_arg_info *ai = &e->args[e->num_args];
      ai->name = strdup(strcmp(name, "-") ? name : "");
      ai->type_name = strdup(type);
      ai->address = address;
      ai->access = access;
      ai->type_qual = qual;
      e->num_args++; /* counted at once: a partial entry is still freed */
      ok = ai->name && ai->type_name;
      pending--;
    } else
      ok = 0;
  }
  if (!ok || pending || !rec->report.num_kernels) {
    cldm_program_free(rec);
    return NULL;
  }
  rec->report.allocates = 1;
  rec->report.address_bits = 64;
  return rec;
}

static void cldm_binary_write(const uint8_t key[32], const cldm_program *rec) {
  char *path = cldm_binary_path(key), *text = cldm_binary_format(rec);
  if (path && text) {
    size_t len = strlen(path) + 64;
    char *tmp = malloc(len);
    if (tmp) {
      snprintf(tmp, len, "%s.%d.%lu.tmp", path, (int)getpid(),
               __atomic_fetch_add(&cldm_binary_tmp_seq, 1, __ATOMIC_RELAXED));
      FILE *f = fopen(tmp, "w");
      int ok = f && fputs(text, f) >= 0;
      if (f && fclose(f) != 0)
        ok = 0;
      if (!ok || rename(tmp, path) != 0) {
        unlink(tmp);
        cldm_log(CLDM_LOG_WARN, "cannot write the binary record %s", path);
      } else
        cldm_log(CLDM_LOG_INFO, "binary record written to %s", path);
      free(tmp);
    }
  }
  free(path);
  free(text);
}

static cldm_program *cldm_binary_read(const uint8_t key[32]) {
  char *path = cldm_binary_path(key);
  int fd = path ? open(path, O_RDONLY) : -1;
  cldm_program *rec = NULL;
  struct stat st;
  if (fd >= 0 && fstat(fd, &st) == 0 && st.st_size > 0 && st.st_size < CLDM_BINARY_RECORD_MAX) {
    char *text = malloc((size_t)st.st_size + 1);
    if (text && read(fd, text, (size_t)st.st_size) == st.st_size) {
      text[st.st_size] = '\0';
      rec = cldm_binary_parse(text);
      if (!rec)
        cldm_log(CLDM_LOG_WARN, "%s is not a binary record of this layer; ignored", path);
    }
    free(text);
  }
  if (fd >= 0)
    close(fd);
  free(path);
  return rec;
}

/* ---- the registry ------------------------------------------------------------------------ */

/* A copy of the kernel table and argument table of `rec`, NULL if out of memory. */
static cldm_program *cldm_binary_copy(const cldm_program *rec) {
  cldm_program *copy = cldm_program_new_kernels(CLDM_PROGRAM_BINARY, &rec->report);
  if (copy && cldm_arg_table_append(&copy->args, &rec->args) != 0) {
    cldm_program_free(copy);
    return NULL;
  }
  return copy;
}

/* Index of `key` in the registry, or -1; the caller holds the lock. */
static long cldm_binary_find(const uint8_t key[32]) {
  for (size_t i = 0; i < cldm_binary_len; i++)
    if (!memcmp(cldm_binary_entries[i].key, key, 32))
      return (long)i;
  return -1;
}

/* Adds `rec` (taken over) under `key` unless present; 1 if added. */
static int cldm_binary_add(const uint8_t key[32], cldm_program *rec) {
  int added = 0;
  pthread_mutex_lock(&cldm_binary_lock);
  if (cldm_binary_find(key) < 0) {
    if (cldm_binary_len == cldm_binary_cap) {
      size_t cap = cldm_binary_cap ? 2 * cldm_binary_cap : 16;
      cldm_binary_entry *grown = realloc(cldm_binary_entries, cap * sizeof(*grown));
      if (grown) {
        cldm_binary_entries = grown;
        cldm_binary_cap = cap;
      }
    }
    if (cldm_binary_len < cldm_binary_cap) {
      memcpy(cldm_binary_entries[cldm_binary_len].key, key, 32);
      cldm_binary_entries[cldm_binary_len++].rec = rec;
      added = 1;
    }
  }
  pthread_mutex_unlock(&cldm_binary_lock);
  if (!added)
    cldm_program_free(rec);
  return added;
}

/* 1 if the record has something the layer must answer for its kernels. */
static int cldm_binary_worth(const cldm_program *rec) {
  for (size_t k = 0; k < rec->report.num_kernels; k++)
    if (rec->report.kernels[k].takes_heap)
      return 1;
  return rec->args.num_kernels > 0;
}

void cldm_binary_remember(cl_program program, size_t n, unsigned char *const *binaries) {
  cldm_program_lock();
  const cldm_program *p = cldm_program_find(program);
  cldm_program *copy = p && cldm_binary_worth(p) ? cldm_binary_copy(p) : NULL;
  cldm_program_unlock();
  if (!copy)
    return;
  size_t *sizes = calloc(n ? n : 1, sizeof(*sizes));
  if (sizes && cldm_next->clGetProgramInfo(program, CL_PROGRAM_BINARY_SIZES, n * sizeof(*sizes),
                                           sizes, NULL) == CL_SUCCESS)
    for (size_t i = 0; i < n; i++) {
      if (!binaries[i] || !sizes[i])
        continue;
      uint8_t key[32];
      cldm_binary_key(binaries[i], sizes[i], key);
      cldm_program *entry = cldm_binary_copy(copy);
      if (entry && cldm_binary_add(key, entry))
        cldm_binary_write(key, copy);
    }
  free(sizes);
  cldm_program_free(copy);
}

/* The record for a binary the layer made, or NULL: the PTX marker, the registry, the files. */
static cldm_program *cldm_binary_recognise(const unsigned char *bin, size_t n) {
  cldm_spirv_report marked;
  int m = cldm_ptx_marker_parse(bin, n, &marked);
  uint8_t key[32];
  cldm_binary_key(bin, n, key);
  pthread_mutex_lock(&cldm_binary_lock);
  long i = cldm_binary_find(key);
  cldm_program *rec = i >= 0 ? cldm_binary_copy(cldm_binary_entries[i].rec) : NULL;
  pthread_mutex_unlock(&cldm_binary_lock);
  if (!rec && (rec = cldm_binary_read(key)) != NULL) {
    cldm_program *entry = cldm_binary_copy(rec);
    if (entry)
      cldm_binary_add(key, entry);
  }
  if (!rec && m == 1)
    rec = cldm_program_new_kernels(CLDM_PROGRAM_BINARY, &marked);
  if (m == 1)
    cldm_spirv_report_free(&marked);
  return rec;
}

cl_program CL_API_CALL clCreateProgramWithBinary_wrap(cl_context context, cl_uint num_devices,
                                                      const cl_device_id *device_list,
                                                      const size_t *lengths,
                                                      const unsigned char **binaries,
                                                      cl_int *binary_status, cl_int *errcode_ret) {
  cl_program program = cldm_next->clCreateProgramWithBinary(
      context, num_devices, device_list, lengths, binaries, binary_status, errcode_ret);
  if (!program || !lengths || !binaries)
    return program;
  unsigned features;
  cldm_device_route route = cldm_device_context_route(context, &features);
  if (route == CLDM_ROUTE_NONE)
    return program;
  cldm_program *rec = NULL;
  for (cl_uint i = 0; i < num_devices && !rec; i++)
    if (binaries[i] && lengths[i])
      rec = cldm_binary_recognise(binaries[i], lengths[i]);
  if (rec) {
    rec->ptx = route == CLDM_ROUTE_PTX;
    cldm_log(CLDM_LOG_INFO, "program %p: a binary of the layer's (%zu kernels)", (void *)program,
             rec->report.num_kernels);
    cldm_program_register(program, rec);
  }
  return program;
}
