/*
 * spirv_test.h — helpers shared by the SPIR-V engine's tests (tests/spirv): test data built at
 * build time (CLDM_TEST_SPIRV_DATA), SPIRV-Tools run as independent judges (spirv-as to write
 * inputs inline, spirv-val for validity, spirv-dis for structure), the stand-in allocator, and
 * a small listing model over spirv-dis text so that structure is asserted without trusting the
 * engine's own parser.
 */
#ifndef CLDM_SPIRV_TEST_H
#define CLDM_SPIRV_TEST_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "cldm_spirv.h"

/* Reads CLDM_TEST_SPIRV_DATA/<name>; fails the test if missing. */
void *st_data(const char *name, size_t *size);
/* 1 if the data file exists (optional variants, e.g. clang-22 outputs). */
int st_data_exists(const char *name);
/* Assembles SPIR-V text with spirv-as --target-env spv1.0; fails the test on error. */
uint32_t *st_asm(const char *text, size_t *size);
/* Like st_asm, for modules in the OpExtInst form (spec 2.1), which spirv-as cannot assemble:
 * the text's OpExtInstImport "SPV_EXT_device_malloc" is assembled as a NonSemantic set (spirv-as
 * takes any instruction number there, written as a number: `OpExtInst %p %set 1 %size`) and its
 * name patched in the binary. */
uint32_t *st_asm_ext(const char *text, size_t *size);
/* spirv-val --target-env opencl2.2 (spv1.5 for modules with Int64Atomics, which SPIRV-Tools'
 * OpenCL environments reject): 0 if valid, else -1 with the message in msg. */
int st_validate(const void *bytes, size_t size, char *msg, size_t cap);
/* The same with another target environment (e.g. "spv1.4"). */
int st_validate_env(const void *bytes, size_t size, const char *env, char *msg, size_t cap);
/* Asserts validity, printing spirv-val's message and `what` otherwise. */
void st_assert_valid(const void *bytes, size_t size, const char *what);
/* Raises with the engine (asserts success). */
void *st_raise(const void *bytes, size_t size, size_t *out_size);
/* The stand-in bump allocator for both widths (tests/spirv/data/bump_alloc.cl). */
const cldm_spirv_allocator *st_bump_allocator(void);
/* Lowers with the bump allocator, asserting success; out is NULL for non-allocating input. */
void *st_lower(const void *bytes, size_t size, size_t *out_size, cldm_spirv_report *report);

/* A spirv-dis --raw-id listing split into lines ("%12 = OpFoo %3 %4" / "OpBar ..."). */
typedef struct st_listing {
  char *text;
  char **line;
  size_t n;
} st_listing;

st_listing *st_dis(const void *bytes, size_t size);
void st_listing_free(st_listing *l);
/* The line defining id ("%12"), or NULL. */
const char *st_def(const st_listing *l, const char *id);
/* Number of lines containing needle. */
size_t st_count(const st_listing *l, const char *needle);
/* Parameter type ids ("%5") of the entry point named `kernel`; returns the count, -1 if the
 * kernel is not found. types has room for max entries of 16 chars. */
int st_kernel_params(const st_listing *l, const char *kernel, char (*types)[16], int max);
/* Parameter types of the function `%id`. */
int st_function_params(const st_listing *l, const char *id, char (*types)[16], int max);
/* 1 if type id is OpTypePointer CrossWorkgroup to OpTypeInt 8. */
int st_is_heap_type(const st_listing *l, const char *type);
/* Asserts that no non-aggregate type (anything but OpTypeStruct) is declared twice. */
void st_assert_unique_types(const st_listing *l);
/* Asserts no trace of SPV_EXT_device_malloc: no import, no extension, no Import-linkage
 * declaration of malloc/free/calloc/realloc/aligned_alloc. */
void st_assert_no_trace(const st_listing *l);

/* Word offset of the n-th (0-based) instruction with opcode op, or 0 if none (a scanner of
 * its own, independent of the engine). */
size_t st_find_op(const uint32_t *w, size_t nwords, uint32_t op, unsigned n);

#endif
