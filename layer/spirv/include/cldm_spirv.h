/*
 * cldm_spirv.h — public API of the SPIR-V engine (layer/spirv/): detect, lower and raise
 * modules that use SPV_EXT_device_malloc (spec 2, spec 3.2).
 *
 * Conventions: inputs are byte buffers as given to clCreateProgramWithIL (either endianness;
 * size a multiple of 4). Outputs are malloc'd, host byte order, freed by the caller with free().
 * Every function returns a cldm_spirv_status; on failure `err` (if not NULL) holds the status,
 * the word offset where the problem was found and a one-line message that names it, e.g.
 * "word 1234: OpExtInst SPV_EXT_device_malloc malloc: Size operand %17 is not an integer".
 * No function reads outside its input or crashes on malformed input (fuzzed with ASan+UBSan:
 * tests/spirv/fuzz). All functions are reentrant: the engine has no global state.
 *
 * What a lowered module looks like (spec 3.2): every function that allocates, directly or
 * through calls, has one more parameter, last, named "__cldm_heap" (OpTypePointer
 * CrossWorkgroup to i8, the allocator's heap type); for a kernel it is the hidden argument at
 * index num_user_args. The allocator's functions are linked in as internal functions (their
 * Export linkage stripped, except llvm-spirv's "spirv.*" intrinsic stand-ins, which readers need
 * external); no OpExtInstImport/OpExtension "SPV_EXT_device_malloc" and no Import-linkage
 * malloc/free/... remain. A module counts as allocating if it imports the set, declares the
 * extension, or declares an Import-linkage malloc/free/calloc/realloc/aligned_alloc or C++
 * operator new or delete (spec 2.2). A function that may stop its work-item at a throwing
 * operator new that failed also has a stop flag parameter after the heap (a Function-storage
 * pointer to a 32-bit integer; a kernel keeps it in a variable of its own): spec 2.2.
 * A text listing that knows the set: cldm_spirv_dis.h.
 */
#ifndef CLDM_SPIRV_H
#define CLDM_SPIRV_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum cldm_spirv_status {
  CLDM_SPIRV_OK = 0,
  CLDM_SPIRV_E_MALFORMED,   /* not well-formed SPIR-V: magic, bounds, word counts, ids, sections */
  CLDM_SPIRV_E_INVALID,     /* well-formed, but breaks spec 2 (operand types, unknown number) */
  CLDM_SPIRV_E_UNSUPPORTED, /* valid but cannot be lowered: recursion, function pointers,
                               missing function bodies, addressing model, ... */
  CLDM_SPIRV_E_ALLOCATOR,   /* the allocator module given is unusable */
  CLDM_SPIRV_E_NOMEM
} cldm_spirv_status;

typedef struct cldm_spirv_error {
  cldm_spirv_status status;
  size_t word_offset; /* word index in the input where the problem was found */
  char message[256];  /* one line, no trailing newline */
} cldm_spirv_error;

/* Forms of allocation use found in a module (bit set). */
enum {
  CLDM_SPIRV_FORM_EXTINST = 1u << 0, /* OpExtInst of the SPV_EXT_device_malloc set */
  CLDM_SPIRV_FORM_IMPORT = 1u << 1,  /* calls to Import-linkage malloc/free/... */
  CLDM_SPIRV_FORM_CXX = 1u << 2,     /* calls to Import-linkage C++ operator new/delete */
};

typedef struct cldm_spirv_kernel {
  char *name;              /* entry point name (OpEntryPoint Kernel) */
  int takes_heap;          /* 1 if the lowered kernel has the hidden heap argument */
  uint32_t num_user_args;  /* arguments the application sees */
  uint32_t heap_arg_index; /* == num_user_args when takes_heap, else UINT32_MAX */
  int throwing_new;        /* 1 if a work-item of the kernel may stop at a throwing operator
                              new that failed (spec 2.2): its launches are watched */
} cldm_spirv_kernel;

typedef struct cldm_spirv_report {
  int allocates;         /* 1 if the module uses spec 2 in any form */
  unsigned forms;        /* CLDM_SPIRV_FORM_* */
  unsigned address_bits; /* 32 or 64 (addressing model) */
  size_t num_kernels;
  cldm_spirv_kernel *kernels;
  /* Linking across modules (spec 1.5): names of the functions this module exports
   * (LinkageAttributes Export) that allocate, so the lowered module gives them the heap
   * parameter; and names of the functions it imports, other than spec 2.2's malloc family. */
  size_t num_heap_exports;
  char **heap_exports;
  size_t num_imports;
  char **imports;
} cldm_spirv_report;

/* Ownership: a filled report owns its arrays and strings (malloc'd); its holder frees them
 * once, with cldm_spirv_report_free, which leaves the report zeroed. Assigning the struct moves
 * that ownership when the source is then zeroed (or simply dropped) instead of freed. A
 * zeroed report is a valid empty one. */
void cldm_spirv_report_free(cldm_spirv_report *report);

/* Appends copies of src's kernels and allocating exports to dst (a zeroed or filled report):
 * what a program linked from several modules offers. dst's other fields are left as they are.
 * On E_NOMEM dst holds part of the copies and is still freed with cldm_spirv_report_free. */
cldm_spirv_status cldm_spirv_report_append(cldm_spirv_report *dst, const cldm_spirv_report *src,
                                           cldm_spirv_error *err);

/* An allocator module parsed and checked once (header, layout, ids, every operand), to lower
 * many modules against it without parsing it again. Never modified after
 * cldm_spirv_allocator_parse made it: any number of threads may lower with one at once. The
 * checks that depend on the module being lowered (addressing and memory model, the exports it
 * needs) still happen when it is lowered. */
typedef struct cldm_spirv_parsed_allocator cldm_spirv_parsed_allocator;

/* Parses and checks an allocator module (device/include/cldm_device.h's contract; bytes as for
 * every input). Problems are E_ALLOCATOR, with the messages lowering with its words would give;
 * *out is NULL then. Freed with cldm_spirv_allocator_free. */
cldm_spirv_status cldm_spirv_allocator_parse(const uint32_t *words, size_t num_words,
                                             cldm_spirv_parsed_allocator **out,
                                             cldm_spirv_error *err);
void cldm_spirv_allocator_free(cldm_spirv_parsed_allocator *allocator);

/* Functions an allocator module may import (and the lowered module then imports in turn):
 * those a target backend defines, e.g. the PTX backend's NVPTX allocator (spec 3.4). */
#define CLDM_SPIRV_TARGET_PREFIX "cldm_target_"

/* Allocator modules to link, by addressing model (spec 3.2): the words, or (where not NULL,
 * used instead of the words) the same module parsed. Either width may be missing when the
 * caller knows the input's width; lowering a module whose width has no allocator is
 * E_ALLOCATOR. */
typedef struct cldm_spirv_allocator {
  const uint32_t *words32;
  size_t num_words32; /* Physical32 */
  const uint32_t *words64;
  size_t num_words64; /* Physical64 */
  const cldm_spirv_parsed_allocator *parsed32, *parsed64;
} cldm_spirv_allocator;

/* Parses the module and fills `report` (kernels, forms; takes_heap says which kernels WOULD take
 * the heap). Cheap enough to call on every clCreateProgramWithIL. Returns the same errors as
 * cldm_spirv_lower except allocator errors. A module that does not allocate is checked only for
 * what every reader needs (header, word counts, logical layout, result ids, function structure):
 * the engine never rejects a module it would pass on unchanged because of instructions it does
 * not need to understand. `report` is freed with cldm_spirv_report_free (also after errors). */
cldm_spirv_status cldm_spirv_inspect(const void *bytes, size_t size, cldm_spirv_report *report,
                                     cldm_spirv_error *err);

/* Lowers a module (spec 3.2). If it does not allocate, returns OK with *out = NULL,
 * *out_size = 0 and report->allocates = 0: the caller passes its input on unchanged.
 * Otherwise *out and *out_size hold the lowered module (bytes, host order) and `report` the
 * per-kernel hidden-argument indices. `report` may be NULL. On failure *out is NULL. */
cldm_spirv_status cldm_spirv_lower(const void *bytes, size_t size,
                                   const cldm_spirv_allocator *allocator, void **out,
                                   size_t *out_size, cldm_spirv_report *report,
                                   cldm_spirv_error *err);

/* Raises the Import-linkage form into the OpExtInst form (spec 2.2). A module without the
 * Import form is returned as an identical copy (same bytes). Adds OpExtInstImport
 * "SPV_EXT_device_malloc" unless present; removes the declarations, their names/decorations. */
cldm_spirv_status cldm_spirv_raise(const void *bytes, size_t size, void **out, size_t *out_size,
                                   cldm_spirv_error *err);

const char *cldm_spirv_status_name(cldm_spirv_status status);

#ifdef __cplusplus
}
#endif
#endif /* CLDM_SPIRV_H */
