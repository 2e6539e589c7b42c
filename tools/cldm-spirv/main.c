/*
 * cldm-spirv — offline front end of the SPIR-V engine (layer/spirv):
 *   lower  rewrite a module that allocates into plain SPIR-V (spec 3.2), allocator linked in
 *   raise  Import-linkage malloc/free/... calls into SPV_EXT_device_malloc instructions
 *   info   which kernels allocate (and may stop at a throwing operator new), which forms are
 *          used, hidden-argument indices
 *   dis    a listing that knows SPV_EXT_device_malloc (spirv-dis rejects the unknown set)
 *   ptx    PTX for NVIDIA's OpenCL driver through the PTX backend (layer/ptx), lowering first
 *          when the module allocates
 * Exit status: 0 success, 1 the module was rejected (message names the word offset),
 * 2 usage error, 3 I/O error, 4 no usable allocator module, 5 PTX backend unavailable.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cldm_spirv.h"
#include "cldm_spirv_dis.h"
#include "cldm_device.h"
#include "cldm_file.h"
#ifdef CLDM_SPIRV_HAVE_PTX
#include "cldm_ptx.h"
#endif

enum { EXIT_REJECTED = 1, EXIT_USAGE = 2, EXIT_IO = 3, EXIT_ALLOCATOR = 4, EXIT_NO_PTX = 5 };

static const char usage_text[] =
    "usage: cldm-spirv COMMAND [options] INPUT.spv\n"
    "commands:\n"
    "  lower [-o OUT] [--allocator FILE.spv]... [--features LIST]\n"
    "        lower a module that uses SPV_EXT_device_malloc (or Import-linkage malloc/free/\n"
    "        calloc/realloc/aligned_alloc, C++ operator new/delete) into plain SPIR-V:\n"
    "        allocating kernels get the heap as their last argument, a work-item whose\n"
    "        throwing operator new gets NULL stops, and the allocator is linked in. A module\n"
    "        that does not allocate is written out unchanged. --allocator gives a Physical32\n"
    "        or Physical64\n"
    "        allocator module (repeat for both); without it the built-in allocator (device/) "
    "is used,\n"
    "        the variant chosen by --features: all (default: every device feature), none\n"
    "        (OpenCL 1.2 atomics), or a comma list of cl20,subgroups,generic,ptx (ptx: the\n"
    "        PTX route's variant, which imports the allocator the PTX backend links).\n"
    "        64-bit atomics (cl_khr_int64_base_atomics) are always assumed: every variant\n"
    "        needs them.\n"
    "  raise [-o OUT]   Import-linkage calls -> OpExtInst \"SPV_EXT_device_malloc\"\n"
    "                   (C++ operator new/delete stay calls)\n"
    "  info             kernels, whether each allocates, hidden-argument index, forms used\n"
    "  dis [-o OUT] [--malloc-only]\n"
    "                   text listing; --malloc-only prints only the set's instructions and\n"
    "                   calls of the Import-form functions, with word offsets\n"
    "  ptx [-o OUT.ptx] [--sm NN] [--options \"BUILD OPTIONS\"] [--allocator FILE.spv]...\n"
    "        [--features LIST]\n"
    "                   PTX text for NVIDIA's OpenCL driver (clCreateProgramWithBinary):\n"
    "                   --sm gives the compute capability (86 = 8.6, default; 90 for an\n"
    "                   H200: LLVM 15 emits sm_86 PTX for anything newer), --options the\n"
    "                   clBuildProgram options (-cl-opt-disable turns optimisation off).\n"
    "                   A module that allocates is lowered first, with the allocator\n"
    "                   variant of --features (default: ptx, the NVPTX allocator, for\n"
    "                   --sm 80 and newer; none, OpenCL 1.2 atomics and fences, below)\n"
    "INPUT or OUT may be '-' for stdin/stdout. Binary output is not written to a terminal.\n"
    "exit status: 0 ok, 1 module rejected, 2 usage, 3 I/O error, 4 no usable allocator,\n"
    "5 PTX backend unavailable (not built, or libclc missing)\n";

static const char *prog = "cldm-spirv";

static int usage_error(const char *msg) {
  fprintf(stderr, "%s: %s\n%s", prog, msg, usage_text);
  return EXIT_USAGE;
}

static int read_file(const char *path, void **data, size_t *size) {
  FILE *f = strcmp(path, "-") ? fopen(path, "rb") : stdin;
  if (!f) {
    fprintf(stderr, "%s: cannot open %s: %s\n", prog, path, strerror(errno));
    return -1;
  }
  void *buf = cldm_file_read_stream(f, size);
  if (f != stdin)
    fclose(f);
  if (!buf) {
    fprintf(stderr, "%s: cannot read %s\n", prog, path);
    return -1;
  }
  *data = buf;
  return 0;
}

static int write_file(const char *path, const void *data, size_t size) {
  int to_stdout = !path || !strcmp(path, "-");
  if (to_stdout && isatty(STDOUT_FILENO)) {
    fprintf(stderr, "%s: refusing to write a binary module to a terminal; use -o FILE\n", prog);
    return EXIT_USAGE;
  }
  FILE *f = to_stdout ? stdout : fopen(path, "wb");
  if (!f) {
    fprintf(stderr, "%s: cannot create %s: %s\n", prog, path, strerror(errno));
    return EXIT_IO;
  }
  int bad = fwrite(data, 1, size, f) != size;
  bad |= to_stdout ? fflush(f) != 0 : fclose(f) != 0;
  if (bad) {
    fprintf(stderr, "%s: cannot write %s\n", prog, to_stdout ? "stdout" : path);
    return EXIT_IO;
  }
  return 0;
}

static int rejected(const char *input, const cldm_spirv_error *err) {
  fprintf(stderr, "%s: %s: %s: %s\n", prog, input, cldm_spirv_status_name(err->status),
          err->message);
  return err->status == CLDM_SPIRV_E_ALLOCATOR ? EXIT_ALLOCATOR : EXIT_REJECTED;
}

typedef struct options {
  const char *command, *input, *output;
  const char *allocators[4];
  int nallocators;
  const char *features;
  const char *sm, *build_options;
  int malloc_only;
} options;

static int parse_args(int argc, char **argv, options *o) {
  if (argc < 2)
    return usage_error("no command given");
  o->command = argv[1];
  for (int i = 2; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "-o") || !strcmp(a, "--allocator") || !strcmp(a, "--features") ||
        !strcmp(a, "--sm") || !strcmp(a, "--options")) {
      if (i + 1 >= argc) {
        fprintf(stderr, "%s: %s needs an argument\n", prog, a);
        return EXIT_USAGE;
      }
      const char *v = argv[++i];
      if (!strcmp(a, "-o"))
        o->output = v;
      else if (!strcmp(a, "--features"))
        o->features = v;
      else if (!strcmp(a, "--sm"))
        o->sm = v;
      else if (!strcmp(a, "--options"))
        o->build_options = v;
      else if (o->nallocators < 4)
        o->allocators[o->nallocators++] = v;
      else
        return usage_error("too many --allocator options");
    } else if (!strcmp(a, "--malloc-only")) {
      o->malloc_only = 1;
    } else if (a[0] == '-' && a[1]) {
      fprintf(stderr, "%s: unknown option %s\n", prog, a);
      return EXIT_USAGE;
    } else if (o->input) {
      return usage_error("more than one input file");
    } else {
      o->input = a;
    }
  }
  if (!o->input)
    return usage_error("no input file");
  return 0;
}

/* Allocator modules: files given with --allocator, else the built-in ones. */
typedef struct allocators {
  cldm_spirv_allocator a;
  void *data[4];
} allocators;

static int load_allocators(const options *o, allocators *al) {
  for (int i = 0; i < o->nallocators; i++) {
    size_t size;
    if (read_file(o->allocators[i], &al->data[i], &size))
      return EXIT_IO;
    cldm_spirv_report r;
    cldm_spirv_error err;
    if (cldm_spirv_inspect(al->data[i], size, &r, &err)) {
      fprintf(stderr, "%s: allocator %s: %s\n", prog, o->allocators[i], err.message);
      return EXIT_ALLOCATOR;
    }
    unsigned bits = r.address_bits;
    cldm_spirv_report_free(&r);
    if (bits != 32 && bits != 64) {
      fprintf(stderr, "%s: allocator %s: neither Physical32 nor Physical64\n", prog,
              o->allocators[i]);
      return EXIT_ALLOCATOR;
    }
    if (bits == 32) {
      al->a.words32 = al->data[i];
      al->a.num_words32 = size / 4;
    } else {
      al->a.words64 = al->data[i];
      al->a.num_words64 = size / 4;
    }
  }
  unsigned features = CLDM_DEVICE_FEATURE_INT64_ATOMICS | CLDM_DEVICE_FEATURE_CL20_ATOMICS |
                      CLDM_DEVICE_FEATURE_SUBGROUPS | CLDM_DEVICE_FEATURE_GENERIC_AS;
  if (o->features && strcmp(o->features, "all")) {
    features = CLDM_DEVICE_FEATURE_INT64_ATOMICS;
    char list[256];
    snprintf(list, sizeof list, "%s", o->features);
    for (char *t = strtok(list, ","); t; t = strtok(NULL, ",")) {
      if (!strcmp(t, "cl20"))
        features |= CLDM_DEVICE_FEATURE_CL20_ATOMICS;
      else if (!strcmp(t, "int64"))
        features |= CLDM_DEVICE_FEATURE_INT64_ATOMICS;
      else if (!strcmp(t, "subgroups"))
        features |= CLDM_DEVICE_FEATURE_SUBGROUPS;
      else if (!strcmp(t, "generic"))
        features |= CLDM_DEVICE_FEATURE_GENERIC_AS;
      else if (!strcmp(t, "ptx"))
        features |= CLDM_DEVICE_FEATURE_TARGET_PTX;
      else if (strcmp(t, "none")) {
        fprintf(stderr, "%s: unknown feature '%s'\n", prog, t);
        return EXIT_USAGE;
      }
    }
  }
  const cldm_device_module *m32 = cldm_device_module_select(32, features);
  const cldm_device_module *m64 = cldm_device_module_select(64, features);
  if (!al->a.words32 && m32) {
    al->a.words32 = m32->words;
    al->a.num_words32 = m32->num_words;
  }
  if (!al->a.words64 && m64) {
    al->a.words64 = m64->words;
    al->a.num_words64 = m64->num_words;
  }
  return 0;
}

static int cmd_lower(const options *o, const void *in, size_t size) {
  allocators al = {0};
  int rc = load_allocators(o, &al);
  void *out = NULL;
  size_t out_size = 0;
  cldm_spirv_report r;
  cldm_spirv_error err;
  if (!rc) {
    if (cldm_spirv_lower(in, size, &al.a, &out, &out_size, &r, &err)) {
      rc = rejected(o->input, &err);
      if (rc == EXIT_ALLOCATOR && !o->nallocators)
        fprintf(stderr, "%s: give an allocator module with --allocator FILE.spv\n", prog);
    } else {
      if (!out)
        fprintf(stderr, "%s: %s does not allocate; written unchanged\n", prog, o->input);
      rc = write_file(o->output, out ? out : in, out ? out_size : size);
      cldm_spirv_report_free(&r);
    }
  }
  free(out);
  for (int i = 0; i < 4; i++)
    free(al.data[i]);
  return rc;
}

static int cmd_raise(const options *o, const void *in, size_t size) {
  void *out = NULL;
  size_t out_size = 0;
  cldm_spirv_error err;
  if (cldm_spirv_raise(in, size, &out, &out_size, &err))
    return rejected(o->input, &err);
  int rc = write_file(o->output, out, out_size);
  free(out);
  return rc;
}

static int cmd_info(const options *o, const void *in, size_t size) {
  cldm_spirv_report r;
  cldm_spirv_error err;
  if (cldm_spirv_inspect(in, size, &r, &err))
    return rejected(o->input, &err);
  printf("module: %s\n", o->input);
  printf("addressing: %s\n", r.address_bits == 32   ? "Physical32"
                             : r.address_bits == 64 ? "Physical64"
                                                    : "other");
  printf("allocates: %s", r.allocates ? "yes" : "no");
  if (r.allocates)
    printf(" (forms:%s%s%s)",
           r.forms & CLDM_SPIRV_FORM_EXTINST ? " OpExtInst SPV_EXT_device_malloc" : "",
           r.forms & CLDM_SPIRV_FORM_IMPORT ? " Import-linkage" : "",
           r.forms & CLDM_SPIRV_FORM_CXX ? " C++ operator new/delete" : "");
  printf("\nkernels: %zu\n", r.num_kernels);
  for (size_t i = 0; i < r.num_kernels; i++) {
    const cldm_spirv_kernel *k = &r.kernels[i];
    printf("  %s: %u argument%s, ", k->name, k->num_user_args, k->num_user_args == 1 ? "" : "s");
    if (k->takes_heap)
      printf("allocates, heap is hidden argument %u%s\n", k->heap_arg_index,
             k->throwing_new ? ", may stop at a throwing operator new" : "");
    else
      printf("does not allocate\n");
  }
  cldm_spirv_report_free(&r);
  return fflush(stdout) ? EXIT_IO : 0;
}

static int cmd_dis(const options *o, const void *in, size_t size) {
  FILE *f = o->output && strcmp(o->output, "-") ? fopen(o->output, "w") : stdout;
  if (!f) {
    fprintf(stderr, "%s: cannot create %s: %s\n", prog, o->output, strerror(errno));
    return EXIT_IO;
  }
  cldm_spirv_error err;
  unsigned flags = o->malloc_only ? CLDM_SPIRV_DIS_ONLY_MALLOC : CLDM_SPIRV_DIS_HEADER;
  int rc = cldm_spirv_disassemble(in, size, f, flags, &err) ? rejected(o->input, &err) : 0;
  if ((f != stdout ? fclose(f) : fflush(f)) && !rc)
    rc = EXIT_IO;
  return rc;
}

#ifdef CLDM_SPIRV_HAVE_PTX
/* --sm: "86", "sm_86" or "8.6" -> compute capability. */
static int parse_sm(const char *s, unsigned *major, unsigned *minor) {
  if (!strncmp(s, "sm_", 3))
    s += 3;
  char *end;
  unsigned long v = strtoul(s, &end, 10);
  if (end != s && *end == '.' && end[1] >= '0' && end[1] <= '9' && !end[2]) {
    *major = (unsigned)v;
    *minor = (unsigned)(end[1] - '0');
    return v < 100 ? 0 : -1;
  }
  if (end == s || *end || v < 10 || v > 999)
    return -1;
  *major = (unsigned)(v / 10);
  *minor = (unsigned)(v % 10);
  return 0;
}
#endif

static int cmd_ptx(const options *o, const void *in, size_t size) {
#ifndef CLDM_SPIRV_HAVE_PTX
  (void)o, (void)in, (void)size;
  fprintf(stderr, "%s: this build has no PTX backend (LLVM 15 development files were missing)\n",
          prog);
  return EXIT_NO_PTX;
#else
  cldm_ptx_target t = {8, 6, o->build_options};
  if (o->sm && parse_sm(o->sm, &t.cc_major, &t.cc_minor))
    return usage_error("--sm takes a compute capability such as 86, sm_90 or 9.0");
  const cldm_ptx_api *api = cldm_ptx_get_api(CLDM_PTX_API_VERSION);
  if (!api) {
    fprintf(stderr, "%s: the PTX backend does not offer API version %u\n", prog,
            CLDM_PTX_API_VERSION);
    return EXIT_NO_PTX;
  }
  void *lowered = NULL;
  size_t lowered_size = 0;
  cldm_spirv_report r;
  cldm_spirv_error err;
  if (cldm_spirv_inspect(in, size, &r, &err))
    return rejected(o->input, &err);
  int allocates = r.allocates;
  cldm_spirv_report_free(&r);
  int rc = 0;
  if (allocates) {
    options lo = *o;
    if (!lo.features) /* the variant the layer gives such a device (layer_device.c) */
      lo.features = t.cc_major >= 8 ? "ptx" : "none";
    allocators al = {0};
    rc = load_allocators(&lo, &al);
    if (!rc && cldm_spirv_lower(in, size, &al.a, &lowered, &lowered_size, NULL, &err))
      rc = rejected(o->input, &err);
    for (int i = 0; i < 4; i++)
      free(al.data[i]);
    if (rc)
      return rc;
  }
  char *ptx = NULL, *log = NULL;
  size_t ptx_size = 0;
  cldm_ptx_status st = api->translate(lowered ? lowered : in, lowered ? lowered_size : size, &t,
                                      &ptx, &ptx_size, &log);
  free(lowered);
  if (st) {
    fprintf(stderr, "%s: %s: %s\n%s", prog, o->input, api->status_name(st), log ? log : "");
    rc = st == CLDM_PTX_E_LIBCLC || st == CLDM_PTX_E_NOMEM ? EXIT_NO_PTX : EXIT_REJECTED;
  } else {
    FILE *f = o->output && strcmp(o->output, "-") ? fopen(o->output, "w") : stdout;
    if (!f) {
      fprintf(stderr, "%s: cannot create %s: %s\n", prog, o->output, strerror(errno));
      rc = EXIT_IO;
    } else {
      int bad = fwrite(ptx, 1, ptx_size, f) != ptx_size;
      bad |= f != stdout ? fclose(f) != 0 : fflush(f) != 0;
      if (bad) {
        fprintf(stderr, "%s: cannot write %s\n", prog, o->output ? o->output : "stdout");
        rc = EXIT_IO;
      }
    }
  }
  api->free_result(ptx);
  api->free_result(log);
  return rc;
#endif
}

int main(int argc, char **argv) {
  if (argc >= 2 &&
      (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "help"))) {
    fputs(usage_text, stdout);
    return 0;
  }
  options o = {0};
  int rc = parse_args(argc, argv, &o);
  if (rc)
    return rc;
  int (*cmd)(const options *, const void *, size_t) = !strcmp(o.command, "lower")   ? cmd_lower
                                                      : !strcmp(o.command, "raise") ? cmd_raise
                                                      : !strcmp(o.command, "info")  ? cmd_info
                                                      : !strcmp(o.command, "dis")   ? cmd_dis
                                                      : !strcmp(o.command, "ptx")   ? cmd_ptx
                                                                                    : NULL;
  if (!cmd) {
    fprintf(stderr, "%s: unknown command '%s'\n%s", prog, o.command, usage_text);
    return EXIT_USAGE;
  }
  void *in;
  size_t size;
  if (read_file(o.input, &in, &size))
    return EXIT_IO;
  rc = cmd(&o, in, size);
  free(in);
  return rc;
}
