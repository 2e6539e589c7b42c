/*
 * ptx_codegen.c — the LLVM part of the route, in order (LLVM C API; the C++ steps are behind
 * ptx_reader.cpp, ptx_addrspace.cpp, ptx_callees.cpp and ptx_link.cpp):
 *   1. read the SPIR-V (LLVMSPIRVLib, OpenCL 1.2 built-in names) into an opaque-pointer context;
 *   2. renumber address spaces SPIR -> NVPTX;
 *   3. retarget: triple nvptx64-nvidia-nvcl, NVPTX data layout; kernels that are also called get
 *      a callable copy (ptx_callees.cpp); spir_kernel -> ptx_kernel (the NVPTX back end makes
 *      those .entry), spir_func -> C;
 *   4. refuse what LLVM 15's NVPTX back end cannot select or would compile without its memory
 *      order: fence, acquire loads, release stores, ordered read-modify-write and cmpxchg;
 *   5. built-in declarations renamed to libclc's NVPTX mangling (ptx_mangle.c);
 *   6. link the embedded overrides (work-item functions, membar.gl fences), then libclc, each
 *      only for what is still undefined; anything left undefined is an error naming it;
 *   7. internalise everything but the kernels, optimise (default<O2>, or O0 for
 *      -cl-opt-disable), emit PTX for the chosen sm / PTX ISA version.
 * Each translation has its own LLVMContext and runs under ptx_recover.cpp's crash recovery;
 * callers serialise translations (ptx_api.c), since LLVMSPIRVLib keeps global state.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <llvm-c/Analysis.h>
#include <llvm-c/BitReader.h>
#include <llvm-c/Core.h>
#include <llvm-c/Linker.h>
#include <llvm-c/Target.h>
#include <llvm-c/TargetMachine.h>
#include <llvm-c/Transforms/PassBuilder.h>

#include "ptx_internal.h"
#include "cldm_ptx_allocator_bc.h" /* generated: cldm_ptx_allocator_bc[] */
#include "cldm_ptx_overrides_bc.h" /* generated: cldm_ptx_overrides_bc[] */

#define NVPTX_TRIPLE "nvptx64-nvidia-nvcl"
#define NVPTX_DATALAYOUT "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"

const unsigned char *cldm_ptx_overrides_bitcode(size_t *size) {
  *size = sizeof cldm_ptx_overrides_bc;
  return cldm_ptx_overrides_bc;
}

const unsigned char *cldm_ptx_allocator_bitcode(size_t *size) {
  *size = sizeof cldm_ptx_allocator_bc;
  return cldm_ptx_allocator_bc;
}

/* 1 if f is a declaration of a function the NVPTX allocator defines (cldm_target_*). */
static int is_allocator_import(LLVMValueRef f) {
  size_t n;
  const char *name = LLVMGetValueName2(f, &n);
  return LLVMIsDeclaration(f) && n > 12 && !strncmp(name, "cldm_target_", 12);
}

/* 1 if m declares a function the NVPTX allocator defines (a module lowered with the "nv"
 * allocator variant calls cldm_target_*). */
static int wants_allocator(LLVMModuleRef m) {
  for (LLVMValueRef f = LLVMGetFirstFunction(m); f; f = LLVMGetNextFunction(f))
    if (is_allocator_import(f))
      return 1;
  return 0;
}

/* Removes the "// callseq N" comments the NVPTX back end writes at calls: N counts calls
 * over the whole process, so the same module would give different texts in one process
 * (translations are compared and cached by content). Returns the new length. */
static size_t strip_callseq(char *text, size_t n) {
  static const char tag[] = " // callseq ";
  size_t out = 0;
  for (size_t i = 0; i < n;) {
    if (text[i] == ' ' && n - i >= sizeof tag - 1 && !memcmp(text + i, tag, sizeof tag - 1)) {
      while (i < n && text[i] != '\n')
        i++; /* the comment runs to the end of its line */
      continue;
    }
    text[out++] = text[i++];
  }
  text[out] = '\0';
  return out;
}

static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static void init_nvptx(void) {
  LLVMInitializeNVPTXTargetInfo();
  LLVMInitializeNVPTXTarget();
  LLVMInitializeNVPTXTargetMC();
  LLVMInitializeNVPTXAsmPrinter();
}

static void on_diagnostic(LLVMDiagnosticInfoRef di, void *ctx) {
  cldm_ptx_log *log = ctx;
  LLVMDiagnosticSeverity sev = LLVMGetDiagInfoSeverity(di);
  if (sev != LLVMDSError && sev != LLVMDSWarning)
    return;
  char *d = LLVMGetDiagInfoDescription(di);
  cldm_ptx_log_printf(log, "llvm %s: %s\n", sev == LLVMDSError ? "error" : "warning", d ? d : "");
  LLVMDisposeMessage(d);
}

static const char *name_of(LLVMValueRef v) {
  size_t len;
  const char *n = LLVMGetValueName2(v, &len);
  return n && *n ? n : "(unnamed)";
}

static int is_kernel(LLVMValueRef f) { return LLVMGetFunctionCallConv(f) == LLVMPTXKernelCallConv; }

/* Step 3: calling conventions. */
static cldm_ptx_status retarget(LLVMModuleRef m, cldm_ptx_log *log, unsigned *nkernels) {
  LLVMSetTarget(m, NVPTX_TRIPLE);
  LLVMSetDataLayout(m, NVPTX_DATALAYOUT);
  *nkernels = 0;
  for (LLVMValueRef f = LLVMGetFirstFunction(m); f; f = LLVMGetNextFunction(f)) {
    unsigned cc = LLVMGetFunctionCallConv(f);
    if (cc == LLVMSPIRKERNELCallConv) {
      LLVMSetFunctionCallConv(f, LLVMPTXKernelCallConv);
      ++*nkernels;
    } else if (cc == LLVMSPIRFUNCCallConv) {
      LLVMSetFunctionCallConv(f, LLVMCCallConv);
    }
  }
  for (LLVMValueRef f = LLVMGetFirstFunction(m); f; f = LLVMGetNextFunction(f)) {
    for (LLVMBasicBlockRef b = LLVMGetFirstBasicBlock(f); b; b = LLVMGetNextBasicBlock(b)) {
      for (LLVMValueRef i = LLVMGetFirstInstruction(b); i; i = LLVMGetNextInstruction(i)) {
        LLVMOpcode op = LLVMGetInstructionOpcode(i);
        if (op != LLVMCall && op != LLVMInvoke)
          continue;
        LLVMValueRef callee = LLVMIsAFunction(LLVMGetCalledValue(i));
        if (callee && is_kernel(callee)) {
          cldm_ptx_log_printf(log, "%s calls kernel %s, which has no callable copy\n", name_of(f),
                              name_of(callee));
          return CLDM_PTX_E_TRANSLATE;
        }
        if (LLVMGetInstructionCallConv(i) == LLVMSPIRFUNCCallConv ||
            LLVMGetInstructionCallConv(i) == LLVMSPIRKERNELCallConv)
          LLVMSetInstructionCallConv(i, LLVMCCallConv);
      }
    }
  }
  return CLDM_PTX_OK;
}

/* Step 4: instructions LLVM 15's NVPTX back end cannot select (fence, acquire/release load and
 * store: "Cannot select", which aborts the process) or selects without their order (ordered
 * atomicrmw/cmpxchg). `ordered_rmw` also refuses the latter: set for the user's module, not
 * once libclc (whose OpenCL 1.2 atomics are seq_cst atomicrmw, unordered by definition) is in. */
static cldm_ptx_status check_atomics(LLVMModuleRef m, int ordered_rmw, cldm_ptx_log *log) {
  for (LLVMValueRef f = LLVMGetFirstFunction(m); f; f = LLVMGetNextFunction(f)) {
    for (LLVMBasicBlockRef b = LLVMGetFirstBasicBlock(f); b; b = LLVMGetNextBasicBlock(b)) {
      for (LLVMValueRef i = LLVMGetFirstInstruction(b); i; i = LLVMGetNextInstruction(i)) {
        LLVMOpcode op = LLVMGetInstructionOpcode(i);
        const char *what = NULL;
        if (op == LLVMFence)
          what = "a fence instruction";
        else if (op == LLVMLoad && LLVMGetOrdering(i) > LLVMAtomicOrderingMonotonic)
          what = "an atomic load with acquire/seq_cst order";
        else if (op == LLVMStore && LLVMGetOrdering(i) > LLVMAtomicOrderingMonotonic)
          what = "an atomic store with release/seq_cst order";
        else if (ordered_rmw && op == LLVMAtomicRMW &&
                 LLVMGetOrdering(i) > LLVMAtomicOrderingMonotonic)
          what = "an atomic read-modify-write with a memory order";
        else if (ordered_rmw && op == LLVMAtomicCmpXchg &&
                 (LLVMGetCmpXchgSuccessOrdering(i) > LLVMAtomicOrderingMonotonic ||
                  LLVMGetCmpXchgFailureOrdering(i) > LLVMAtomicOrderingMonotonic))
          what = "an atomic compare-exchange with a memory order";
        if (what) {
          cldm_ptx_log_printf(log,
                              "unsupported: %s holds %s: LLVM 15's NVPTX back end cannot "
                              "compile it correctly; use OpenCL 1.2 atomics ordered by "
                              "explicit fences (mem_fence)\n",
                              name_of(f), what);
          return CLDM_PTX_E_UNSUPPORTED;
        }
      }
    }
  }
  return CLDM_PTX_OK;
}

/* Step 5: SPIR address-space mangling -> libclc's. Two SPIR names may become one (a private
 * and a generic overload): their declarations are merged. */
static cldm_ptx_status rename_builtins(LLVMModuleRef m, cldm_ptx_log *log) {
  for (LLVMValueRef f = LLVMGetFirstFunction(m), next; f; f = next) {
    next = LLVMGetNextFunction(f);
    if (!LLVMIsDeclaration(f) || LLVMGetIntrinsicID(f))
      continue;
    char *nv = cldm_ptx_mangle_nvptx(name_of(f));
    if (!nv)
      continue;
    LLVMValueRef existing = LLVMGetNamedFunction(m, nv);
    if (!existing) {
      LLVMSetValueName2(f, nv, strlen(nv));
    } else if (LLVMGlobalGetValueType(existing) == LLVMGlobalGetValueType(f)) {
      LLVMReplaceAllUsesWith(f, existing);
      LLVMDeleteFunction(f);
    } else {
      cldm_ptx_log_printf(log, "built-in %s and %s have different types\n", name_of(f), nv);
      free(nv);
      return CLDM_PTX_E_LINK;
    }
    free(nv);
  }
  return CLDM_PTX_OK;
}

static cldm_ptx_status link_bitcode(LLVMContextRef ctx, LLVMModuleRef m, const void *data,
                                    size_t size, int lazy, const char *what,
                                    cldm_ptx_status unreadable, cldm_ptx_log *log) {
  LLVMMemoryBufferRef buf =
      LLVMCreateMemoryBufferWithMemoryRange(data, size, what, 0 /* no NUL needed */);
  LLVMModuleRef src = NULL;
  /* Both calls take the buffer (a view of `data`, which stays ours). */
  LLVMBool bad = lazy ? LLVMGetBitcodeModuleInContext2(ctx, buf, &src)
                      : LLVMParseBitcodeInContext2(ctx, buf, &src);
  if (!lazy)
    LLVMDisposeMemoryBuffer(buf);
  if (bad || !src) {
    cldm_ptx_log_printf(log, "cannot read %s (bitcode)\n", what);
    return unreadable;
  }
  LLVMSetTarget(src, NVPTX_TRIPLE);
  LLVMSetDataLayout(src, NVPTX_DATALAYOUT);
  return cldm_ptx_link_needed(m, src, what, log);
}

/* Step 6, after linking: nothing may stay undefined. */
static cldm_ptx_status check_resolved(LLVMModuleRef m, cldm_ptx_log *log) {
  unsigned missing = 0;
  for (LLVMValueRef f = LLVMGetFirstFunction(m), next; f; f = next) {
    next = LLVMGetNextFunction(f);
    if (!LLVMIsDeclaration(f) || LLVMGetIntrinsicID(f))
      continue;
    if (!LLVMGetFirstUse(f)) {
      LLVMDeleteFunction(f);
      continue;
    }
    char dem[256];
    cldm_ptx_demangle(name_of(f), dem, sizeof dem);
    if (!missing++)
      cldm_ptx_log_printf(log, "undefined functions (neither in the module nor in libclc's "
                               "NVPTX library; the PTX path compiles each module on its own):\n");
    cldm_ptx_log_printf(log, "  %s%s%s%s\n", dem, strcmp(dem, name_of(f)) ? " [" : "",
                        strcmp(dem, name_of(f)) ? name_of(f) : "",
                        strcmp(dem, name_of(f)) ? "]" : "");
  }
  for (LLVMValueRef g = LLVMGetFirstGlobal(m); g; g = LLVMGetNextGlobal(g)) {
    if (LLVMGetInitializer(g) || !LLVMGetFirstUse(g))
      continue;
    if (!missing++)
      cldm_ptx_log_printf(log, "undefined symbols:\n");
    cldm_ptx_log_printf(log, "  program-scope variable %s (declared, never defined)\n", name_of(g));
  }
  return missing ? CLDM_PTX_E_LINK : CLDM_PTX_OK;
}

/* 1 if f is an allocator entry that can take memory (every cldm_target_* but free). */
static int is_allocating_import(LLVMValueRef f) {
  size_t n;
  const char *name = LLVMGetValueName2(f, &n);
  return is_allocator_import(f) && strcmp(name, "cldm_target_free") != 0;
}

/* 1 if f calls (directly or through functions defined in the module) a cldm_target_*
 * declaration that can take memory: the kernel allocates (one that only frees does not: free
 * is a few atomics, and its kernels' registers are few already). `seen` bounds the walk (each
 * function once). */
static int reaches_allocator(LLVMValueRef f, LLVMValueRef *seen, size_t *nseen, size_t cap) {
  for (size_t i = 0; i < *nseen; i++)
    if (seen[i] == f)
      return 0;
  if (*nseen == cap)
    return 0;
  seen[(*nseen)++] = f;
  for (LLVMBasicBlockRef b = LLVMGetFirstBasicBlock(f); b; b = LLVMGetNextBasicBlock(b))
    for (LLVMValueRef in = LLVMGetFirstInstruction(b); in; in = LLVMGetNextInstruction(in)) {
      if (LLVMGetInstructionOpcode(in) != LLVMCall)
        continue;
      LLVMValueRef callee = LLVMGetCalledValue(in);
      if (!callee || LLVMGetValueKind(callee) != LLVMFunctionValueKind)
        continue;
      if (LLVMIsDeclaration(callee) ? is_allocating_import(callee)
                                    : reaches_allocator(callee, seen, nseen, cap))
        return 1;
    }
  return 0;
}

/* Step 6a: caps the registers of the kernels that allocate at `maxnreg` per thread (the
 * "maxnreg" annotation, which the NVPTX back end emits as .maxnreg): the allocator's rare paths
 * (refills, the last resort) need many registers, ptxas sizes the kernel for them, and
 * occupancy falls with it (128 registers: 16 warps of an H100/H200 SM's 64); the fast path is a
 * few atomics whose latency more warps hide. Before the allocator is linked (its entry points are
 * declarations then). */
static void cap_registers(LLVMContextRef ctx, LLVMModuleRef m, unsigned maxnreg) {
  size_t cap = 0;
  for (LLVMValueRef f = LLVMGetFirstFunction(m); f; f = LLVMGetNextFunction(f))
    cap++;
  LLVMValueRef *seen = malloc((cap ? cap : 1) * sizeof *seen);
  if (!seen)
    return;
  LLVMTypeRef i32 = LLVMInt32TypeInContext(ctx);
  for (LLVMValueRef f = LLVMGetFirstFunction(m); f; f = LLVMGetNextFunction(f)) {
    size_t nseen = 0;
    if (LLVMIsDeclaration(f) || !is_kernel(f) || !reaches_allocator(f, seen, &nseen, cap))
      continue;
    LLVMMetadataRef md[3] = {LLVMValueAsMetadata(f), LLVMMDStringInContext2(ctx, "maxnreg", 7),
                             LLVMValueAsMetadata(LLVMConstInt(i32, maxnreg, 0))};
    LLVMAddNamedMetadataOperand(m, "nvvm.annotations",
                                LLVMMetadataAsValue(ctx, LLVMMDNodeInContext2(ctx, md, 3)));
  }
  free(seen);
}

/* Step 7a: only the kernels stay visible. */
static void internalise(LLVMModuleRef m) {
  for (LLVMValueRef f = LLVMGetFirstFunction(m); f; f = LLVMGetNextFunction(f)) {
    if (LLVMIsDeclaration(f) || is_kernel(f))
      continue;
    LLVMSetLinkage(f, LLVMInternalLinkage);
    LLVMSetVisibility(f, LLVMDefaultVisibility);
  }
  for (LLVMValueRef g = LLVMGetFirstGlobal(m); g; g = LLVMGetNextGlobal(g)) {
    if (!LLVMGetInitializer(g))
      continue;
    LLVMSetLinkage(g, LLVMInternalLinkage);
    LLVMSetVisibility(g, LLVMDefaultVisibility);
  }
}

static cldm_ptx_status verify(LLVMModuleRef m, const char *when, cldm_ptx_log *log) {
  char *msg = NULL;
  if (LLVMVerifyModule(m, LLVMReturnStatusAction, &msg)) {
    cldm_ptx_log_printf(log, "invalid module %s: %s\n", when, msg ? msg : "");
    LLVMDisposeMessage(msg);
    return CLDM_PTX_E_TRANSLATE;
  }
  LLVMDisposeMessage(msg);
  return CLDM_PTX_OK;
}

static cldm_ptx_status optimise_and_emit(LLVMModuleRef m, const cldm_ptx_codegen_opts *o,
                                         char **ptx, size_t *ptx_size, cldm_ptx_log *log) {
  char *err = NULL;
  LLVMTargetRef target;
  if (LLVMGetTargetFromTriple(NVPTX_TRIPLE, &target, &err)) {
    cldm_ptx_log_printf(log, "NVPTX target unavailable in this LLVM: %s\n", err ? err : "");
    LLVMDisposeMessage(err);
    return CLDM_PTX_E_CODEGEN;
  }
  char features[16];
  snprintf(features, sizeof features, "+ptx%c%c", o->isa[0], o->isa[2]);
  LLVMTargetMachineRef tm =
      LLVMCreateTargetMachine(target, NVPTX_TRIPLE, o->sm, features,
                              o->optimize ? LLVMCodeGenLevelDefault : LLVMCodeGenLevelNone,
                              LLVMRelocDefault, LLVMCodeModelDefault);
  if (!tm) {
    cldm_ptx_log_printf(log, "cannot create the NVPTX target machine for %s %s\n", o->sm, features);
    return CLDM_PTX_E_CODEGEN;
  }
  cldm_ptx_status st = CLDM_PTX_OK;
  LLVMPassBuilderOptionsRef pbo = LLVMCreatePassBuilderOptions();
  LLVMErrorRef e = LLVMRunPasses(m, o->optimize ? "default<O2>" : "default<O0>,globaldce", tm, pbo);
  LLVMDisposePassBuilderOptions(pbo);
  if (e) {
    char *msg = LLVMGetErrorMessage(e);
    cldm_ptx_log_printf(log, "optimisation failed: %s\n", msg);
    LLVMDisposeErrorMessage(msg);
    st = CLDM_PTX_E_CODEGEN;
  }
  if (!st)
    st = verify(m, "after optimisation", log);
  if (!st)
    st = check_atomics(m, 0, log);
  LLVMMemoryBufferRef out = NULL;
  if (!st && LLVMTargetMachineEmitToMemoryBuffer(tm, m, LLVMAssemblyFile, &err, &out)) {
    cldm_ptx_log_printf(log, "NVPTX code generation failed: %s\n", err ? err : "");
    LLVMDisposeMessage(err);
    st = CLDM_PTX_E_CODEGEN;
  }
  if (!st) {
    size_t n = LLVMGetBufferSize(out);
    const char *s = LLVMGetBufferStart(out);
    while (n && s[n - 1] == '\0') /* the back end may count a terminator */
      n--;
    *ptx = malloc(n + 1);
    if (!*ptx) {
      st = CLDM_PTX_E_NOMEM;
    } else {
      memcpy(*ptx, s, n);
      (*ptx)[n] = '\0';
      *ptx_size = strip_callseq(*ptx, n);
    }
  }
  if (out)
    LLVMDisposeMemoryBuffer(out);
  LLVMDisposeTargetMachine(tm);
  return st;
}

typedef struct job {
  const uint32_t *const *words;
  const size_t *num_words;
  size_t num_modules;
  const cldm_ptx_codegen_opts *opts;
  cldm_ptx_log *log;
  const char *stage; /* what runs now, for the message if it aborts */
  char *ptx;
  size_t ptx_size;
  cldm_ptx_status status;
} job;

static void run_job(void *arg) {
  job *j = arg;
  cldm_ptx_log *log = j->log;
  pthread_once(&init_once, init_nvptx);
  LLVMContextRef ctx = LLVMContextCreate();
  LLVMContextSetOpaquePointers(ctx, 1);
  LLVMContextSetDiagnosticHandler(ctx, on_diagnostic, log);
  LLVMModuleRef m = NULL;
  unsigned nkernels = 0;
  size_t ovr_size;
  const unsigned char *ovr = cldm_ptx_overrides_bitcode(&ovr_size);
  cldm_ptx_status st = CLDM_PTX_OK;
  for (size_t i = 0; i < j->num_modules && !st; i++) {
    LLVMModuleRef mi = NULL;
    unsigned ki = 0;
    j->stage = "LLVMSPIRVLib reading the module";
    st = cldm_ptx_read_spirv(ctx, j->words[i], j->num_words[i], &mi, log);
    j->stage = "retargeting to NVPTX";
    if (!st)
      st = cldm_ptx_remap_address_spaces(mi, log);
    if (!st && cldm_ptx_split_called_kernels(mi))
      cldm_ptx_log_printf(log, "cldm-ptx: kernels called by other code got callable copies\n");
    if (!st)
      st = retarget(mi, log, &ki);
    if (!st)
      st = check_atomics(mi, 1, log);
    if (!st)
      st = rename_builtins(mi, log);
    nkernels += ki;
    j->stage = "linking the modules";
    if (!m) {
      m = mi;
    } else if (mi && !st) {
      if (LLVMLinkModules2(m, mi)) { /* consumes mi; diagnostics went to the log */
        cldm_ptx_log_printf(log,
                            "cannot link module %zu with the modules before it (a function "
                            "or kernel defined twice, or with other types)\n",
                            i + 1);
        st = CLDM_PTX_E_LINK;
      }
    } else if (mi) {
      LLVMDisposeModule(mi);
    }
  }
  j->stage = "linking";
  if (!st && wants_allocator(m)) { /* before the overrides: it calls some of them */
    if (j->opts->maxnreg)
      cap_registers(ctx, m, j->opts->maxnreg);
    size_t alloc_size;
    const unsigned char *alloc = cldm_ptx_allocator_bitcode(&alloc_size);
    st = link_bitcode(ctx, m, alloc, alloc_size, 0, "the NVPTX allocator", CLDM_PTX_E_LINK, log);
  }
  if (!st)
    st = link_bitcode(ctx, m, ovr, ovr_size, 0, "the work-item function overrides", CLDM_PTX_E_LINK,
                      log);
  if (!st)
    st = link_bitcode(ctx, m, j->opts->libclc, j->opts->libclc_size, 1, "libclc", CLDM_PTX_E_LIBCLC,
                      log);
  if (!st)
    st = check_resolved(m, log);
  if (!st) {
    internalise(m);
    st = verify(m, "after linking", log);
  }
  j->stage = "optimisation and NVPTX code generation";
  if (!st)
    st = optimise_and_emit(m, j->opts, &j->ptx, &j->ptx_size, log);
  if (!st && !nkernels)
    cldm_ptx_log_printf(log, "note: the module has no kernels\n");
  j->stage = "cleaning up";
  if (m)
    LLVMDisposeModule(m);
  LLVMContextDispose(ctx);
  j->status = st;
}

cldm_ptx_status cldm_ptx_codegen(const uint32_t *const *words, const size_t *num_words, size_t n,
                                 const cldm_ptx_codegen_opts *opts, char **ptx, size_t *ptx_size,
                                 cldm_ptx_log *log) {
  job j = {words, num_words, n, opts, log, "starting", NULL, 0, CLDM_PTX_E_TRANSLATE};
  if (cldm_ptx_run_recoverable(run_job, &j)) {
    cldm_ptx_log_printf(log,
                        "LLVM aborted during %s (an assertion or fatal error; its message "
                        "went to stderr): the module is most likely invalid SPIR-V "
                        "(check it with spirv-val)\n",
                        j.stage);
    free(j.ptx);
    return CLDM_PTX_E_TRANSLATE;
  }
  if (j.status) {
    free(j.ptx);
    return j.status;
  }
  *ptx = j.ptx;
  *ptx_size = j.ptx_size;
  return CLDM_PTX_OK;
}
