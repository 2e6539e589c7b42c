/*
 * fuzz_spirv.c — libFuzzer target over the SPIR-V engine (layer/spirv): every input goes
 * through cldm_spirv_inspect, cldm_spirv_lower (with the stand-in allocators) and
 * cldm_spirv_raise, and the listing printer. Built with -fsanitize=fuzzer,address,undefined,
 * so any out-of-bounds read, leak or undefined behaviour is a crash. Properties checked beyond
 * "no crash":
 *   - a lowered module parses again and no longer allocates (no trace of the set is left);
 *   - if the input passes inspect, so does its raised module, with the same kernels and no
 *     Import form left; a raised module that inspect need not accept (raise does not check the
 *     call graph) still parses and walks (the printer reads every operand).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cldm_file.h"
#include "cldm_spirv.h"
#include "cldm_spirv_dis.h"

static cldm_spirv_allocator allocator;
static FILE *devnull;

static uint32_t *load(const char *path, size_t *words) {
  size_t size;
  uint32_t *w = cldm_file_read(path, &size);
  if (!w) {
    fprintf(stderr, "fuzz_spirv: cannot read allocator %s\n", path);
    exit(1);
  }
  *words = size / 4;
  return w;
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  allocator.words32 = load(CLDM_FUZZ_ALLOC32, &allocator.num_words32);
  allocator.words64 = load(CLDM_FUZZ_ALLOC64, &allocator.num_words64);
  devnull = fopen("/dev/null", "w");
  return 0;
}

static void check(int ok, const char *what, const cldm_spirv_error *err) {
  if (!ok) {
    fprintf(stderr, "fuzz_spirv: property violated: %s (%s)\n", what, err ? err->message : "");
    abort();
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  cldm_spirv_report in_report, r;
  cldm_spirv_error err;
  int inspected = cldm_spirv_inspect(data, size, &in_report, &err) == CLDM_SPIRV_OK;

  void *out = NULL;
  size_t out_size = 0;
  if (cldm_spirv_lower(data, size, &allocator, &out, &out_size, &r, &err) == CLDM_SPIRV_OK) {
    check(inspected, "lower accepted what inspect rejected", &err);
    check(r.num_kernels == in_report.num_kernels, "lower and inspect disagree", NULL);
    cldm_spirv_report_free(&r);
    if (out) {
      cldm_spirv_report again;
      check(cldm_spirv_inspect(out, out_size, &again, &err) == CLDM_SPIRV_OK,
            "lowered module does not parse", &err);
      check(!again.allocates, "lowered module still allocates", NULL);
      cldm_spirv_report_free(&again);
      free(out);
    }
  }

  out = NULL;
  if (cldm_spirv_raise(data, size, &out, &out_size, &err) == CLDM_SPIRV_OK) {
    if (inspected) {
      cldm_spirv_report again;
      check(cldm_spirv_inspect(out, out_size, &again, &err) == CLDM_SPIRV_OK,
            "raised module does not pass inspect", &err);
      check(!(again.forms & CLDM_SPIRV_FORM_IMPORT), "raised module keeps the Import form", NULL);
      check(again.num_kernels == in_report.num_kernels, "raise changed the kernels", NULL);
      cldm_spirv_report_free(&again);
    } else if (out_size != size || memcmp(out, data, size)) {
      check(cldm_spirv_disassemble(out, out_size, devnull, 0, &err) == CLDM_SPIRV_OK,
            "raised module does not parse", &err);
    }
  }
  free(out);

  cldm_spirv_disassemble(data, size, devnull, 0, &err);
  if (inspected)
    cldm_spirv_report_free(&in_report);
  return 0;
}
