/*
 * internal.h — private interfaces of the SPIR-V engine, grouped by the file that defines them;
 * read top to bottom it is the map of the engine:
 *
 *   grammar.c    lookups in the generated grammar tables: opcodes, enumerants, ext-inst sets
 *   error.c      status names, the one-line "word N: reason" messages
 *   buf.c        growable word buffers, instruction and string emission
 *   module.c     pass 1: header, endianness, instruction split, logical layout, ids, functions
 *   operands.c   grammar-driven operand walker (tables generated from SPIRV-Headers)
 *   check.c      pass 2: every operand inside its instruction, ids in bound and defined,
 *                function ids used other than by calls (function pointers)
 *   callee.c     spec 2.2's names (C's malloc/free/..., C++'s operator new and delete) and
 *                what a call of each means
 *   detect.c     spec 2: the SPV_EXT_device_malloc set, Import-linkage functions, their uses
 *   callgraph.c  who allocates (directly or through calls), who may stop at a throwing
 *                operator new, recursion, address-taken functions
 *   typetab.c    hash of types and constants, for unification and lookup-or-create
 *   blockorder.c reverse post-order of a function's blocks (the allocator's must validate)
 *   out.c        the output module, section by section; capability and linkage fix-ups
 *   link.c       the allocator module: contract checks, id map, type/constant unification
 *   link_emit.c  the allocator module written out: mapped, merged, renamed, blocks reordered
 *   rewrite.c    lowering of the user's functions: the plan (heap parameter, stop flag),
 *                allocation sites
 *   umul.c       llvm-spirv's llvm.umul.with.overflow stand-in made an ordinary function
 *   rewrite_emit.c the user's functions written out: calls, sites, stops at throwing new
 *   report.c     cldm_spirv_report: kernels, hidden-argument indices
 *   lower.c      cldm_spirv_inspect / cldm_spirv_lower: the pipeline
 *   raise.c      cldm_spirv_raise: Import-linkage form -> OpExtInst form
 *   dis.c        cldm_spirv_disassemble: a printer that knows SPV_EXT_device_malloc
 *
 * Dependencies go one way: each file calls only files listed above it (grammar.c, error.c and
 * buf.c call none).
 *
 * Conventions: functions returning cldm_spirv_status fill `err` on failure (error.c);
 * instruction indices (`ii`) index cldm_spirv_module.inst; word offsets are into the input.
 */
#ifndef CLDM_SPIRV_INTERNAL_H
#define CLDM_SPIRV_INTERNAL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <spirv/unified1/spirv.h>

#include "cldm_spirv.h"
#include "cldm_spirv_ext_malloc.h"
#include "cldm_spirv_tables.h"

#define CLDM_SPIRV_MAGIC 0x07230203u
#define CLDM_SPIRV_HEADER_WORDS 5u
/* Largest id bound accepted (SPIRV-Tools' default limit is 0x3FFFFF). */
#define CLDM_SPIRV_MAX_BOUND 0x400000u
#define CLDM_SPIRV_HEAP_PARAM_NAME "__cldm_heap"
#define CLDM_SPIRV_STOP_FLAG_NAME "__cldm_stop" /* the stop flag (spec 2.2, rewrite.c) */
#define CLDM_SPIRV_NONE 0xFFFFFFFFu

/* ---- grammar.c ---------------------------------------------------------------------------- */
/* Description of `opcode` (NULL if the grammar does not know it). */
const cldm_spirv_opcode_desc *cldm_spirv_opdesc(uint32_t opcode);
const char *cldm_spirv_opname(uint32_t opcode); /* "OpFoo" or "Op<unknown>" */
/* Enumerant `value` of operand kind `kind` (NULL if none); set/number: CLDM_SPIRV_EXTSET_*. */
const cldm_spirv_enumerant_desc *cldm_spirv_enumerant(uint32_t kind, uint32_t value);
const cldm_spirv_extinst_desc *cldm_spirv_extinst(uint32_t set, uint32_t number);

/* ---- error.c ------------------------------------------------------------------------------ */
cldm_spirv_status cldm_spirv_fail(cldm_spirv_error *err, cldm_spirv_status status, size_t word,
                                  const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/* E_ALLOCATOR, "word N: allocator module: <message>". */
cldm_spirv_status cldm_spirv_fail_allocator_at(cldm_spirv_error *err, size_t word, const char *fmt,
                                               ...) __attribute__((format(printf, 3, 4)));
/* Re-labels an error found in the allocator module (E_NOMEM passes through): E_ALLOCATOR,
 * "word N: <reason>" becomes "word N: allocator module: <reason>". */
cldm_spirv_status cldm_spirv_fail_allocator(cldm_spirv_error *err, cldm_spirv_status status);
void cldm_spirv_error_clear(cldm_spirv_error *err);

/* ---- buf.c -------------------------------------------------------------------------------- */
typedef struct cldm_spirv_buf {
  uint32_t *w;
  size_t n, cap;
  int failed; /* allocation failed or an instruction grew past 65535 words */
} cldm_spirv_buf;

void cldm_spirv_buf_free(cldm_spirv_buf *b);
int cldm_spirv_buf_reserve(cldm_spirv_buf *b, size_t extra);
void cldm_spirv_buf_push(cldm_spirv_buf *b, uint32_t word);
void cldm_spirv_buf_push_n(cldm_spirv_buf *b, const uint32_t *w, size_t n);
void cldm_spirv_buf_append(cldm_spirv_buf *dst, const cldm_spirv_buf *src);
/* Starts an instruction (returns its position), ends it by patching the word count. */
size_t cldm_spirv_buf_begin(cldm_spirv_buf *b, uint32_t opcode);
void cldm_spirv_buf_end(cldm_spirv_buf *b, size_t start);
void cldm_spirv_buf_string(cldm_spirv_buf *b, const char *s, size_t len);
/* Emits a whole instruction of `n` operand words. */
void cldm_spirv_buf_inst(cldm_spirv_buf *b, uint32_t opcode, const uint32_t *ops, size_t n);

/* Decodes the literal string at w[0..nw) into dst (NUL-terminated, truncated to cap-1 bytes).
 * Returns the words the string occupies, or 0 if it has no terminator within nw words. */
size_t cldm_spirv_string(const uint32_t *w, size_t nw, char *dst, size_t cap);
/* Bytes of the literal string at w[0..nw) before its NUL, or SIZE_MAX without terminator. */
size_t cldm_spirv_string_len(const uint32_t *w, size_t nw);
/* Compares the literal string at w[0..nw) with s. */
int cldm_spirv_string_eq(const uint32_t *w, size_t nw, const char *s);

/* ---- module.c ----------------------------------------------------------------------------- */
/* Sections of the logical layout (SPIR-V spec 2.4), in order. */
enum cldm_spirv_section {
  CLDM_SPIRV_SEC_CAPABILITY,
  CLDM_SPIRV_SEC_EXTENSION,
  CLDM_SPIRV_SEC_EXTINSTIMPORT,
  CLDM_SPIRV_SEC_MEMORYMODEL,
  CLDM_SPIRV_SEC_ENTRYPOINT,
  CLDM_SPIRV_SEC_EXECMODE,
  CLDM_SPIRV_SEC_DEBUG_A, /* OpString, OpSource* */
  CLDM_SPIRV_SEC_DEBUG_B, /* OpName, OpMemberName */
  CLDM_SPIRV_SEC_DEBUG_C, /* OpModuleProcessed */
  CLDM_SPIRV_SEC_ANNOTATION,
  CLDM_SPIRV_SEC_GLOBAL,   /* types, constants, global variables */
  CLDM_SPIRV_SEC_FUNCTION, /* declarations, then definitions */
  CLDM_SPIRV_SEC_COUNT
};

typedef struct cldm_spirv_inst {
  uint32_t off; /* word offset in the module */
  uint16_t op;
  uint16_t wc;
} cldm_spirv_inst;

typedef struct cldm_spirv_idinfo {
  uint32_t def;  /* index + 1 of the defining instruction; 0: not defined */
  uint32_t type; /* result type id, 0 if none */
  uint32_t aux;  /* OpFunction: function index; OpExtInstImport: CLDM_SPIRV_EXTSET_* */
} cldm_spirv_idinfo;

typedef struct cldm_spirv_function {
  uint32_t id, result_type, type_id;
  uint32_t begin, end; /* instruction indices of OpFunction and OpFunctionEnd */
  uint32_t nparams;    /* parameters are instructions begin+1 .. begin+nparams */
  uint32_t body;       /* index of the first OpLabel; 0 for a declaration */
} cldm_spirv_function;

typedef struct cldm_spirv_entry {
  uint32_t ii;    /* the OpEntryPoint */
  uint32_t model; /* SpvExecutionModel */
  uint32_t fn;    /* function index */
  char *name;
} cldm_spirv_entry;

typedef struct cldm_spirv_module {
  uint32_t *w; /* host byte order, owned */
  size_t nw;
  uint32_t version, generator, bound;
  cldm_spirv_inst *inst;
  uint32_t ninst;
  cldm_spirv_idinfo *ids;                 /* [bound] */
  uint32_t sec[CLDM_SPIRV_SEC_COUNT + 1]; /* section s: instructions [sec[s], sec[s+1]) */
  uint32_t addressing, memory_model;      /* CLDM_SPIRV_NONE if no OpMemoryModel */
  cldm_spirv_function *fn;
  uint32_t nfn;
  cldm_spirv_entry *ep;
  uint32_t nep;
  uint32_t first_unknown;  /* index + 1 of the first instruction unknown to the grammar */
  uint32_t *fn_addr_taken; /* check.c: per function, index + 1 of a use other than a call */
} cldm_spirv_module;

/* Pass 1: copies and byte-swaps as needed, splits instructions, checks the header, word counts,
 * the logical layout, function structure and result ids. Enough for non-allocating modules. */
cldm_spirv_status cldm_spirv_module_parse(cldm_spirv_module *m, const void *bytes, size_t size,
                                          cldm_spirv_error *err);
void cldm_spirv_module_free(cldm_spirv_module *m);

static inline const uint32_t *cldm_spirv_iw(const cldm_spirv_module *m, uint32_t ii) {
  return m->w + m->inst[ii].off;
}
/* Defining instruction of `id` (NULL if id is out of bound or undefined); *wc its word count. */
const uint32_t *cldm_spirv_def(const cldm_spirv_module *m, uint32_t id, uint32_t *wc);
uint32_t cldm_spirv_def_op(const cldm_spirv_module *m, uint32_t id);
/* Width of OpTypeInt `type`, 0 if it is not one. */
uint32_t cldm_spirv_int_width(const cldm_spirv_module *m, uint32_t type);
/* 1 if `type` is OpTypePointer; fills storage class and pointee. */
int cldm_spirv_pointer(const cldm_spirv_module *m, uint32_t type, uint32_t *storage,
                       uint32_t *pointee);
/* Function index of function id `id`, or CLDM_SPIRV_NONE. */
uint32_t cldm_spirv_fn_index(const cldm_spirv_module *m, uint32_t id);
/* The OpName of `id` decoded into dst ("" if none). */
const char *cldm_spirv_name_of(const cldm_spirv_module *m, uint32_t id, char *dst, size_t cap);
/* Word position of instruction ii's result id (0 if it has none). */
uint32_t cldm_spirv_result_pos(const cldm_spirv_module *m, uint32_t ii);
/* Section of instruction ii. */
unsigned cldm_spirv_section_of(const cldm_spirv_module *m, uint32_t ii);

/* ---- operands.c --------------------------------------------------------------------------- */
enum { CLDM_SPIRV_ROLE_OPERAND, CLDM_SPIRV_ROLE_TYPE, CLDM_SPIRV_ROLE_RESULT };
/* Pseudo kind for words the walker cannot classify (unknown ext-inst set or number). */
#define CLDM_SPIRV_KIND_OPAQUE CLDM_SPIRV_KIND_COUNT

typedef struct cldm_spirv_opnd {
  uint16_t kind; /* CLDM_SPIRV_KIND_* or CLDM_SPIRV_KIND_OPAQUE */
  uint8_t role;  /* CLDM_SPIRV_ROLE_* */
  uint8_t is_id; /* 1 for id operands (one word) */
  uint16_t pos;  /* first word, relative to the instruction */
  uint16_t len;  /* words */
} cldm_spirv_opnd;

typedef cldm_spirv_status (*cldm_spirv_opnd_fn)(void *ctx, const cldm_spirv_module *m, uint32_t ii,
                                                const cldm_spirv_opnd *o, cldm_spirv_error *err);
/* Calls fn for every operand of instruction ii in order (ids, literals, enums and their
 * parameters). Errors: unknown opcode (E_UNSUPPORTED), operands past the word count or
 * words left over (E_MALFORMED), or the callback's status. */
cldm_spirv_status cldm_spirv_walk(const cldm_spirv_module *m, uint32_t ii, cldm_spirv_opnd_fn fn,
                                  void *ctx, cldm_spirv_error *err);
/* Collects the positions of all id words of instruction ii (result type and result included)
 * into pos[0..*n); cap must be >= the word count. */
cldm_spirv_status cldm_spirv_id_positions(const cldm_spirv_module *m, uint32_t ii, uint16_t *pos,
                                          size_t *n, int *has_opaque, cldm_spirv_error *err);

/* ---- check.c ------------------------------------------------------------------------------ */
/* Pass 2 over every instruction (operand layout, ids < bound and defined); fills
 * m->fn_addr_taken. drop (per id, may be NULL): ids the output removes, whose uses are
 * restricted (see check.c). */
cldm_spirv_status cldm_spirv_check(cldm_spirv_module *m, const uint8_t *drop,
                                   cldm_spirv_error *err);

/* ---- callee.c ----------------------------------------------------------------------------- */
#define CLDM_SPIRV_CALLEE_ROLE_TAG                                                                 \
  3u /* a pointer parameter the call does not read (the
                                         std::nothrow_t & of nothrow new) */
#define CLDM_SPIRV_CALLEE_MAX_PARAMS 4u
#define CLDM_SPIRV_CALLEE_NAME_MAX 64u /* longer names are no allocation functions */

/* What a call of an Import-linkage allocation function means (spec 2.2). */
typedef struct cldm_spirv_callee {
  uint8_t op;      /* CLDM_SPIRV_EXT_*: the instruction of spec 2.1 the call performs */
  uint8_t cxx;     /* a C++ operator new or delete, not one of C's names */
  uint8_t throws;  /* a throwing operator new: a NULL result stops the work-item */
  uint8_t nparams; /* the declaration's parameters */
  uint8_t role[CLDM_SPIRV_CALLEE_MAX_PARAMS]; /* per parameter: CLDM_SPIRV_EXT_ROLE_*, _TAG */
  uint8_t arg[CLDM_SPIRV_EXT_MAX_OPERANDS];   /* the parameter giving each operand of op */
} cldm_spirv_callee;

/* Fills *c for `name` (an Import-linkage function's name): 1 if it names an allocation
 * function, else 0. */
int cldm_spirv_callee_of(const char *name, cldm_spirv_callee *c);

/* ---- detect.c ----------------------------------------------------------------------------- */
enum { CLDM_SPIRV_SITE_EXTINST = 1, CLDM_SPIRV_SITE_IMPORT = 2 };

typedef struct cldm_spirv_site {
  uint32_t ii;    /* the OpExtInst or OpFunctionCall */
  uint32_t fn;    /* function index containing it */
  uint8_t op;     /* CLDM_SPIRV_EXT_* */
  uint8_t form;   /* CLDM_SPIRV_SITE_* */
  uint8_t throws; /* a call of a throwing operator new */
} cldm_spirv_site;

typedef struct cldm_spirv_detect {
  int allocates;
  unsigned forms;            /* CLDM_SPIRV_FORM_* */
  uint8_t *import_op;        /* per function index: CLDM_SPIRV_EXT_* of an Import-form decl, 0 */
  cldm_spirv_callee *callee; /* per function index: what calls of it mean (where import_op) */
  uint8_t *drop;             /* per id: removed from the output (set import, Import decls) */
  uint32_t set_id;           /* an OpExtInstImport of the set (0 if none) */
  uint32_t nimport_fns;      /* Import-form declarations */
  uint32_t nthrowing;        /* sites that call a throwing operator new */
  cldm_spirv_site *sites;
  uint32_t nsites;
} cldm_spirv_detect;

/* What detect_uses looks for besides the set and C's names (bit set). */
enum { CLDM_SPIRV_DETECT_CXX = 1u << 0 /* C++'s operator new and delete (spec 2.2) */ };

/* Phase A (after pass 1): set imports, OpExtension, Import-form declarations (C++ operators
 * only with CLDM_SPIRV_DETECT_CXX in `which`: raising leaves them to the lowering). */
cldm_spirv_status cldm_spirv_detect_uses(const cldm_spirv_module *m, cldm_spirv_detect *d,
                                         unsigned which, cldm_spirv_error *err);
/* spec 2.1's rules for a module that uses the extension: Kernel capability, Physical32/64. */
cldm_spirv_status cldm_spirv_detect_module_rules(const cldm_spirv_module *m, cldm_spirv_error *err);
/* Phase B (after pass 2): every allocation site, operands checked against spec 2. */
cldm_spirv_status cldm_spirv_detect_sites(const cldm_spirv_module *m, cldm_spirv_detect *d,
                                          cldm_spirv_error *err);
void cldm_spirv_detect_free(cldm_spirv_detect *d);
/* 1 if decoration instruction ii is `OpDecorate %t LinkageAttributes "name" <type>`; fills
 * target and linkage type, and the name (decoded) if name != NULL. */
int cldm_spirv_linkage(const cldm_spirv_module *m, uint32_t ii, uint32_t *target, uint32_t *type,
                       char *name, size_t cap);
/* The linkage name of function index f decoded into dst ("" if it has none). */
const char *cldm_spirv_linkage_name(const cldm_spirv_module *m, uint32_t f, char *dst, size_t cap);

/* ---- callgraph.c -------------------------------------------------------------------------- */
typedef struct cldm_spirv_callgraph {
  uint8_t *allocates; /* per function index */
  uint8_t *throws;    /* per function index: calls a throwing operator new, directly or through
                         calls (each such function allocates) */
  uint8_t *root;      /* per function index: a root of the stops (callgraph.c): an entry point,
                         or a function of an entry point's name */
} cldm_spirv_callgraph;

/* Marks functions that allocate directly or through calls, those that may stop at a throwing
 * operator new, and the roots of the stops; rejects recursion among allocating functions,
 * taken addresses of them, entry points without bodies, and calls of roots that may stop other
 * than llvm-spirv's wrappers (E_UNSUPPORTED). */
cldm_spirv_status cldm_spirv_callgraph_build(const cldm_spirv_module *m, const cldm_spirv_detect *d,
                                             cldm_spirv_callgraph *cg, cldm_spirv_error *err);
void cldm_spirv_callgraph_free(cldm_spirv_callgraph *cg);

/* ---- typetab.c ---------------------------------------------------------------------------- */
typedef struct cldm_spirv_typetab {
  struct cldm_spirv_typetab_entry {
    uint32_t hash, off, len, id;
  } * e;
  size_t cap, n;
  cldm_spirv_buf keys;
} cldm_spirv_typetab;

/* Keys are instructions without their result id: key[0] = opcode | wc << 16 of the key. */
uint32_t cldm_spirv_typetab_find(const cldm_spirv_typetab *t, const uint32_t *key, size_t len);
int cldm_spirv_typetab_add(cldm_spirv_typetab *t, const uint32_t *key, size_t len, uint32_t id);
void cldm_spirv_typetab_free(cldm_spirv_typetab *t);
/* 1 if opcode declares a type or constant that may be unified (not opaque types, forward
 * pointers, spec constants, variables). */
int cldm_spirv_typetab_unifiable(uint32_t opcode);
/* Adds every unifiable, undecorated type/constant of m's global section. */
int cldm_spirv_typetab_fill(cldm_spirv_typetab *t, const cldm_spirv_module *m,
                            const uint8_t *decorated);
/* Per id: 1 if some decoration targets it (OpDecorate*, OpMemberDecorate*, OpGroupDecorate). */
uint8_t *cldm_spirv_decorated_ids(const cldm_spirv_module *m);

/* ---- blockorder.c ------------------------------------------------------------------------- */
/* Fills order[0..*n) with the OpLabel instruction indices of function f in reverse post-order
 * from its entry block, unreachable blocks last in their original order. order has room for
 * every block. Returns 0, -1 on allocation failure. */
int cldm_spirv_blockorder(const cldm_spirv_module *m, const cldm_spirv_function *f, uint32_t *order,
                          uint32_t *n);

/* ---- out.c -------------------------------------------------------------------------------- */
typedef struct cldm_spirv_out {
  cldm_spirv_buf sec[CLDM_SPIRV_SEC_COUNT];
  cldm_spirv_buf decls; /* function declarations (before definitions) */
  uint32_t version, generator, bound;
} cldm_spirv_out;

void cldm_spirv_out_free(cldm_spirv_out *o);
/* Copies instruction ii of m into section buffer b unchanged. */
void cldm_spirv_out_copy(cldm_spirv_buf *b, const cldm_spirv_module *m, uint32_t ii);
/* Copies the debug/annotation instruction ii unless it only targets dropped ids (drop[id]);
 * OpGroupDecorate target lists are filtered. */
void cldm_spirv_out_copy_filtered(cldm_spirv_buf *b, const cldm_spirv_module *m, uint32_t ii,
                                  const uint8_t *drop);
/* Adds OpCapability cap to o unless present. */
void cldm_spirv_out_capability(cldm_spirv_out *o, uint32_t cap);
/* Removes OpCapability Linkage when no LinkageAttributes remain and the module has entry
 * points (not a library). */
void cldm_spirv_out_fix_linkage(cldm_spirv_out *o);
/* Concatenates header and sections into malloc'd bytes. */
cldm_spirv_status cldm_spirv_out_finish(cldm_spirv_out *o, void **out, size_t *out_size,
                                        cldm_spirv_error *err);

/* ---- link.c, link_emit.c ------------------------------------------------------------------ */
/* cldm_spirv.h's parsed allocator: the module after passes 1 and 2, and what linking needs of
 * it that does not depend on the user's module. Read-only once parsed. */
struct cldm_spirv_parsed_allocator {
  cldm_spirv_module a;
  uint8_t *decorated; /* per id: some decoration targets it */
};

typedef struct cldm_spirv_link {
  const cldm_spirv_module *a; /* the allocator (of a parsed allocator, not owned) */
  const cldm_spirv_module *u; /* the user's module */
  uint32_t *map;              /* allocator id -> output id */
  uint8_t *unified;           /* allocator id unified with a user id (names/decorations dropped) */
  const uint8_t *decorated;   /* the parsed allocator's */
  uint8_t *shared_fn;         /* per allocator function: the user's identical copy is used */
  uint32_t fn[CLDM_SPIRV_EXT_MAX + 1];       /* output ids of cldm_<op> (0 if absent) */
  uint32_t fn_index[CLDM_SPIRV_EXT_MAX + 1]; /* allocator function index */
  uint32_t ret[CLDM_SPIRV_EXT_MAX + 1];      /* output id of the result type */
  uint32_t param[CLDM_SPIRV_EXT_MAX + 1][3]; /* output ids of parameter types */
  uint32_t new_failed; /* output id of cldm_new_failed (0 if absent), which counts a throwing
                          operator new that failed (spec 2.2) */
  uint32_t *globals;   /* output ids of the allocator's module-scope variables */
  uint32_t nglobals;
  uint32_t heap_type; /* output id of the heap pointer type */
  uint32_t size_type; /* output id of the allocator's size_t */
  uint32_t size_bits;
} cldm_spirv_link;

/* Checks the parsed allocator against user module u and the contract of
 * device/include/cldm_device.h, maps its ids (unifying types/constants through tt, whose
 * entries it extends). needed[op]: the module calls cldm_<op>; need_new_failed: it calls
 * cldm_new_failed. l borrows pa, which must outlive it. */
cldm_spirv_status cldm_spirv_link_prepare(cldm_spirv_link *l, const cldm_spirv_parsed_allocator *pa,
                                          const cldm_spirv_module *u, cldm_spirv_typetab *tt,
                                          uint32_t *next_id, const uint8_t *needed,
                                          int need_new_failed, cldm_spirv_error *err);
/* Appends the allocator's instructions, remapped, to the output sections. */
cldm_spirv_status cldm_spirv_link_emit(cldm_spirv_link *l, cldm_spirv_out *o,
                                       cldm_spirv_error *err);
void cldm_spirv_link_free(cldm_spirv_link *l);

/* ---- rewrite.c, rewrite_emit.c ------------------------------------------------------------ */
/* A stop point: a call after which the work-item may stop (a throwing operator new, or a
 * function that may stop). */
typedef struct cldm_spirv_stop {
  uint32_t ii;   /* the call */
  uint32_t cont; /* label of the block that goes on after it */
  uint32_t stop; /* label of the block that stops */
} cldm_spirv_stop;

typedef struct cldm_spirv_rewrite cldm_spirv_rewrite;
struct cldm_spirv_rewrite {
  const cldm_spirv_module *m;
  const cldm_spirv_detect *d;
  const cldm_spirv_callgraph *cg;
  const cldm_spirv_link *l;
  cldm_spirv_typetab *tt;
  cldm_spirv_buf *globals; /* types and constants created by the rewrite */
  uint32_t *next_id;
  uint32_t *fn_type; /* per function index: new OpTypeFunction (allocating functions) */
  uint32_t *fn_heap; /* per function index: id of the heap parameter */
  /* Stops at a throwing operator new (spec 2.2); all NULL / 0 if the module has none. */
  uint32_t *fn_flag;      /* per function index: its stop flag (a parameter, or the variable of
                             a root), where cg->throws */
  const uint8_t *is_root; /* per function index: the call graph's roots (own flag variable) */
  cldm_spirv_stop *stops; /* every stop point, in instruction order */
  uint32_t nstops;
  uint32_t *relabel; /* per id: for a block that stops split, the label of its last part */
  uint32_t flag_type, flag_ptr_type, bool_type, void_type, flag_zero, flag_one, size_zero;
};

/* Gives every allocating function its heap parameter id and new function type, and plans the
 * stops (flags, split blocks' labels). */
cldm_spirv_status cldm_spirv_rewrite_plan(cldm_spirv_rewrite *r, cldm_spirv_error *err);
/* Emits the lowering of allocation site s (its call of the allocator, operands and result
 * converted) into b; returns the id of the allocator's own result (`__global void *`). */
uint32_t cldm_spirv_rewrite_site(cldm_spirv_rewrite *r, cldm_spirv_buf *b, const cldm_spirv_site *s,
                                 uint32_t heap);
/* rewrite_emit.c: an OpName of id into o's debug names; a fresh OpUndef of `type` among the
 * globals (its id). */
void cldm_spirv_rewrite_name(cldm_spirv_out *o, uint32_t id, const char *name);
uint32_t cldm_spirv_rewrite_undef(cldm_spirv_rewrite *r, uint32_t type);
/* Emits `op type result args...` into b and returns result. */
uint32_t cldm_spirv_rewrite_op(cldm_spirv_buf *b, uint32_t op, uint32_t type, uint32_t result,
                               const uint32_t *args, size_t n);
/* umul.c: 1 if function index f is llvm-spirv's stand-in for llvm.umul.with.overflow.iN,
 * "spirv.llvm_umul_with_overflow_iN" with a body; cldm_spirv_umul_emit writes its replacement,
 * an ordinary function of the same id and type, into b and its OpName into o. */
int cldm_spirv_umul_stand_in(const cldm_spirv_module *m, uint32_t f);
void cldm_spirv_umul_emit(cldm_spirv_rewrite *r, cldm_spirv_buf *b, uint32_t f, cldm_spirv_out *o);
/* rewrite_emit.c: emits the user's functions, lowered, into o (declarations and definitions)
 * and the heap parameters' and stop flags' OpName into o's debug section. */
cldm_spirv_status cldm_spirv_rewrite_functions(cldm_spirv_rewrite *r, cldm_spirv_out *o,
                                               cldm_spirv_error *err);
/* lookup-or-create helpers (new instructions go to r->globals) */
uint32_t cldm_spirv_rewrite_type(cldm_spirv_rewrite *r, uint32_t opcode, const uint32_t *ops,
                                 size_t n);
uint32_t cldm_spirv_rewrite_constant(cldm_spirv_rewrite *r, uint32_t type, uint32_t lo, uint32_t hi,
                                     int wide);
void cldm_spirv_rewrite_free(cldm_spirv_rewrite *r);

/* ---- report.c ----------------------------------------------------------------------------- */
/* Fills report from m's entry points; cg (who allocates, who may stop) may be NULL or hold
 * NULL arrays (a module that does not allocate). */
cldm_spirv_status cldm_spirv_report_fill(cldm_spirv_report *report, const cldm_spirv_module *m,
                                         const cldm_spirv_detect *d, const cldm_spirv_callgraph *cg,
                                         cldm_spirv_error *err);

#endif /* CLDM_SPIRV_INTERNAL_H */
