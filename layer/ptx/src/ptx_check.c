/*
 * ptx_check.c — what the PTX route accepts, checked on the SPIR-V before LLVMSPIRVLib reads it
 * (the translator asserts or miscompiles on some inputs rather than failing):
 *   - well-formed SPIR-V: the engine's parser (cldm_spirv_inspect) over the whole module, and
 *     its operand walk (check.c: every operand within its instruction, every id operand
 *     defined and in bound), which the engine otherwise runs on allocating modules only, and
 *     what each id may name (ptx_validate.c);
 *   - lowered: no SPV_EXT_device_malloc use is left (the engine lowers first);
 *   - SPIR-V 1.0-1.4 (LLVMSPIRVLib 15's range), Physical64 addressing, OpenCL memory model,
 *     Kernel entry points only;
 *   - capabilities from a fixed list; no image, sampler, pipe, queue or event-for-enqueue types;
 *     no printf;
 *   - nothing that makes LLVMSPIRVLib 15 call exit(): its error log ends the process on the
 *     first error (SPIRVDbgError defaults to Exit, and the library does not export it). From its
 *     sources (v15.0.0, SPIRVErrorLog::checkError callers on the reading side) those are: bad
 *     magic, unknown or too new version, nonzero schema, unknown extension names, extended
 *     instruction sets other than OpenCL.std / SPIRV.debug / OpenCL.DebugInfo.100, opcodes it
 *     declares unimplemented, invalid function-control masks, addressing and memory models
 *     other than the physical / OpenCL ones. Assertions (also on) are caught instead
 *     (ptx_recover.cpp);
 *   - atomics without acquire/release/seq_cst memory semantics. Read with OpenCL 1.2 built-in
 *     names, an ordered atomic becomes a plain atomic_*() call and its order is lost; and LLVM
 *     15's NVPTX back end cannot honour orders either (no fence, no acquire load or release
 *     store, ordering dropped on read-modify-write). OpenCL 1.2 atomics ordered by explicit
 *     fences (OpMemoryBarrier, compiled to membar.gl) are what the route supports.
 * Words are in host byte order here (ptx_api.c swaps big-endian input).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <spirv/unified1/spirv.h>

#include "cldm_spirv.h"
#include "internal.h" /* the engine's module parser and operand check (layer/spirv/src) */
#include "ptx_internal.h"

/* Extensions LLVMSPIRVLib knows (its own list); any other name makes it exit. */
static const char *const known_extensions[] = {
#define EXT(X) #X,
#include <LLVMSPIRVLib/LLVMSPIRVExtensions.inc>
#undef EXT
};

/* Opcodes LLVMSPIRVLib 15 declares but does not implement (SPIRVEntryUnimplemented in
 * SPIRVEntry.h); it exits on them. OpNop, OpSourceContinued and OpNoLine carry no meaning
 * for us and are dropped before the translator runs (ptx_spirv_fix.c). */
static const char *unimplemented(uint32_t op) {
  switch (op) {
  case SpvOpTypeRuntimeArray:
    return "OpTypeRuntimeArray";
  case SpvOpImage:
    return "OpImage";
  case SpvOpImageTexelPointer:
    return "OpImageTexelPointer";
  case SpvOpImageSampleDrefImplicitLod:
  case SpvOpImageSampleDrefExplicitLod:
  case SpvOpImageSampleProjImplicitLod:
  case SpvOpImageSampleProjExplicitLod:
  case SpvOpImageSampleProjDrefImplicitLod:
  case SpvOpImageSampleProjDrefExplicitLod:
  case SpvOpImageFetch:
  case SpvOpImageGather:
  case SpvOpImageDrefGather:
  case SpvOpImageSparseSampleImplicitLod:
  case SpvOpImageSparseSampleExplicitLod:
  case SpvOpImageSparseSampleDrefImplicitLod:
  case SpvOpImageSparseSampleDrefExplicitLod:
  case SpvOpImageSparseSampleProjImplicitLod:
  case SpvOpImageSparseSampleProjExplicitLod:
  case SpvOpImageSparseSampleProjDrefImplicitLod:
  case SpvOpImageSparseSampleProjDrefExplicitLod:
  case SpvOpImageSparseFetch:
  case SpvOpImageSparseGather:
  case SpvOpImageSparseDrefGather:
  case SpvOpImageSparseTexelsResident:
    return "image sampling instructions";
  case SpvOpQuantizeToF16:
    return "OpQuantizeToF16";
  case SpvOpArrayLength:
    return "OpArrayLength";
  case SpvOpOuterProduct:
    return "OpOuterProduct";
  case SpvOpIAddCarry:
    return "OpIAddCarry";
  case SpvOpISubBorrow:
    return "OpISubBorrow";
  case SpvOpSMulExtended:
    return "OpSMulExtended";
  case SpvOpUMulExtended:
    return "OpUMulExtended";
  case SpvOpDPdx:
  case SpvOpDPdy:
  case SpvOpFwidth:
  case SpvOpDPdxFine:
  case SpvOpDPdyFine:
  case SpvOpFwidthFine:
  case SpvOpDPdxCoarse:
  case SpvOpDPdyCoarse:
  case SpvOpFwidthCoarse:
    return "derivative instructions";
  case SpvOpEmitVertex:
  case SpvOpEndPrimitive:
  case SpvOpEmitStreamVertex:
  case SpvOpEndStreamPrimitive:
  case SpvOpKill:
    return "shader instructions";
  case SpvOpTypeNamedBarrier:
  case SpvOpNamedBarrierInitialize:
  case SpvOpMemoryNamedBarrier:
    return "named barriers";
  case SpvOpGetKernelMaxNumSubgroups:
  case SpvOpGetKernelLocalSizeForSubgroupCount:
    return "sub-group kernel queries";
  case SpvOpSizeOf:
    return "OpSizeOf";
  default:
    return NULL;
  }
}

enum { OPENCL_STD_PRINTF = 184 }; /* OpenCL.std extended instruction "printf" */

/* Capabilities the route compiles (SPIR-V spec 3.31). */
static int capability_ok(uint32_t c) {
  switch (c) {
  case SpvCapabilityAddresses:
  case SpvCapabilityLinkage:
  case SpvCapabilityKernel:
  case SpvCapabilityVector16:
  case SpvCapabilityFloat16Buffer:
  case SpvCapabilityFloat16:
  case SpvCapabilityFloat64:
  case SpvCapabilityInt64:
  case SpvCapabilityInt64Atomics:
  case SpvCapabilityInt16:
  case SpvCapabilityGenericPointer:
  case SpvCapabilityInt8:
    return 1;
  default:
    return 0;
  }
}

static const char *capability_feature(uint32_t c) {
  switch (c) {
  case SpvCapabilityImageBasic:
  case SpvCapabilityImageReadWrite:
  case SpvCapabilityImageMipmap:
  case SpvCapabilityLiteralSampler:
  case SpvCapabilitySampled1D:
  case SpvCapabilityImage1D:
  case SpvCapabilitySampledBuffer:
  case SpvCapabilityImageBuffer:
    return "images and samplers";
  case SpvCapabilityPipes:
  case SpvCapabilityPipeStorage:
    return "pipes";
  case SpvCapabilityDeviceEnqueue:
    return "device-side enqueue";
  case SpvCapabilityGroups:
    return "work-group collective functions (Groups)";
  case SpvCapabilitySubgroupDispatch:
  case SpvCapabilityGroupNonUniform:
  case SpvCapabilityGroupNonUniformVote:
  case SpvCapabilityGroupNonUniformArithmetic:
  case SpvCapabilityGroupNonUniformBallot:
  case SpvCapabilityGroupNonUniformShuffle:
  case SpvCapabilitySubgroupBallotKHR:
    return "sub-groups";
  case SpvCapabilityNamedBarrier:
    return "named barriers";
  default:
    return NULL;
  }
}

typedef struct constant {
  uint32_t id, value;
} constant;

static int by_id(const void *a, const void *b) {
  uint32_t x = ((const constant *)a)->id, y = ((const constant *)b)->id;
  return x < y ? -1 : x > y;
}

static const char *atomic_name(uint32_t op) {
  static const char *const names[] = {"OpAtomicLoad",
                                      "OpAtomicStore",
                                      "OpAtomicExchange",
                                      "OpAtomicCompareExchange",
                                      "OpAtomicCompareExchangeWeak",
                                      "OpAtomicIIncrement",
                                      "OpAtomicIDecrement",
                                      "OpAtomicIAdd",
                                      "OpAtomicISub",
                                      "OpAtomicSMin",
                                      "OpAtomicUMin",
                                      "OpAtomicSMax",
                                      "OpAtomicUMax",
                                      "OpAtomicAnd",
                                      "OpAtomicOr",
                                      "OpAtomicXor"};
  if (op >= SpvOpAtomicLoad && op <= SpvOpAtomicXor)
    return names[op - SpvOpAtomicLoad];
  return op == SpvOpAtomicFlagTestAndSet ? "OpAtomicFlagTestAndSet"
         : op == SpvOpAtomicFlagClear    ? "OpAtomicFlagClear"
                                         : "OpAtomicF*EXT";
}

static cldm_ptx_status unsupported(cldm_ptx_log *log, size_t word, const char *fmt,
                                   const char *what) {
  cldm_ptx_log_printf(log, "unsupported: ");
  cldm_ptx_log_printf(log, fmt, what);
  cldm_ptx_log_printf(log, " (word %zu)\n", word);
  return CLDM_PTX_E_UNSUPPORTED;
}

/* Reads a literal string of at most `max` words into buf, non-printable bytes as '?' (it may
 * end up in a log). */
static void literal(const uint32_t *w, size_t max, char *buf, size_t size) {
  size_t n = 0;
  for (size_t i = 0; i < max * 4 && n + 1 < size; i++) {
    unsigned char c = (unsigned char)(w[i / 4] >> (8 * (i % 4)));
    if (!c)
      break;
    buf[n++] = c < 0x20 || c > 0x7e ? '?' : (char)c;
  }
  buf[n] = '\0';
}

/* An error of the engine's parser or operand walk ("word N: ..." messages). */
static cldm_ptx_status engine_error(cldm_ptx_log *log, cldm_spirv_status sst,
                                    const cldm_spirv_error *err) {
  switch (sst) {
  case CLDM_SPIRV_E_NOMEM:
    return CLDM_PTX_E_NOMEM;
  case CLDM_SPIRV_E_UNSUPPORTED:
    cldm_ptx_log_printf(log, "unsupported SPIR-V: %s\n", err->message);
    return CLDM_PTX_E_UNSUPPORTED;
  case CLDM_SPIRV_E_INVALID:
    cldm_ptx_log_printf(log, "invalid SPIR-V: %s\n", err->message);
    return CLDM_PTX_E_MALFORMED;
  default:
    cldm_ptx_log_printf(log, "malformed SPIR-V: %s\n", err->message);
    return CLDM_PTX_E_MALFORMED;
  }
}

cldm_ptx_status cldm_ptx_check_spirv(const uint32_t *words, size_t num_words, cldm_ptx_log *log) {
  cldm_spirv_report r;
  cldm_spirv_error err;
  cldm_spirv_status sst = cldm_spirv_inspect(words, num_words * 4, &r, &err);
  if (sst) {
    cldm_spirv_report_free(&r);
    return engine_error(log, sst, &err);
  }
  int allocates = r.allocates;
  unsigned bits = r.address_bits;
  cldm_spirv_report_free(&r);
  cldm_spirv_module m;
  sst = cldm_spirv_module_parse(&m, words, num_words * 4, &err);
  if (!sst)
    sst = cldm_spirv_check(&m, NULL, &err);
  cldm_ptx_status vst = sst ? CLDM_PTX_OK : cldm_ptx_validate_ids(&m, log);
  cldm_spirv_module_free(&m);
  if (vst)
    return vst;
  if (sst)
    return engine_error(log, sst, &err);
  if (allocates) {
    cldm_ptx_log_printf(log, "unsupported: the module still allocates (SPV_EXT_device_malloc "
                             "or Import-linkage malloc/free): lower it first "
                             "(cldm_spirv_lower, `cldm-spirv lower --features none`)\n");
    return CLDM_PTX_E_UNSUPPORTED;
  }
  if (bits != 64) {
    cldm_ptx_log_printf(log,
                        "unsupported: %s addressing: the PTX path compiles Physical64 "
                        "modules only (NVIDIA devices have 64-bit addresses)\n",
                        bits == 32 ? "Physical32" : "non-physical");
    return CLDM_PTX_E_UNSUPPORTED;
  }
  uint32_t version = words[1];
  if ((version & 0xffff00ffu) != 0x00010000u || ((version >> 8) & 0xffu) > 4)
    return unsupported(log, 1, "%s",
                       "SPIR-V version other than 1.0-1.4 (LLVMSPIRVLib 15's "
                       "range)");
  if (words[4] != 0) {
    cldm_ptx_log_printf(log, "malformed SPIR-V: word 4: instruction schema %u (must be 0)\n",
                        words[4]);
    return CLDM_PTX_E_MALFORMED;
  }

  cldm_ptx_status st = CLDM_PTX_OK;
  size_t ncon = 0, capcon = 64;
  constant *con = malloc(capcon * sizeof *con);
  /* Atomics seen, checked once all constants are known (they precede functions anyway). */
  size_t nat = 0, capat = 64;
  size_t *at = malloc(capat * sizeof *at);
  uint32_t opencl_std = 0;
  if (!con || !at) {
    st = CLDM_PTX_E_NOMEM;
    goto done;
  }
  for (size_t i = 5; i < num_words && !st;) {
    uint32_t wc = words[i] >> 16, op = words[i] & 0xffffu;
    const uint32_t *w = words + i;
    if (wc == 0 || wc > num_words - i) { /* the parser has ruled this out; be safe anyway */
      cldm_ptx_log_printf(log, "malformed SPIR-V: word %zu: bad word count\n", i);
      st = CLDM_PTX_E_MALFORMED;
      break;
    }
    char text[128];
    const char *unimpl = unimplemented(op);
    if (unimpl) {
      st = unsupported(log, i,
                       "%s: not supported by the PTX path (LLVMSPIRVLib 15 does not "
                       "implement it)",
                       unimpl);
      break;
    }
    switch (op) {
    case SpvOpExtension: {
      literal(w + 1, wc - 1, text, sizeof text);
      size_t k = 0, n = sizeof known_extensions / sizeof known_extensions[0];
      while (k < n && strcmp(known_extensions[k], text))
        k++;
      if (k == n)
        st = unsupported(log, i, "extension \"%s\" is not known to LLVMSPIRVLib 15", text);
      break;
    }
    case SpvOpFunction:
      if (wc >= 4 && (w[3] & ~0x1000fu))
        st = unsupported(log, i, "%s", "function control bits LLVMSPIRVLib 15 does not know");
      break;
    case SpvOpCapability:
      if (wc >= 2 && !capability_ok(w[1])) {
        const char *f = capability_feature(w[1]);
        if (f) {
          st = unsupported(log, i, "%s are not supported by the PTX path", f);
        } else {
          snprintf(text, sizeof text, "capability %u", w[1]);
          st = unsupported(log, i, "%s is not supported by the PTX path", text);
        }
      }
      break;
    case SpvOpExtInstImport:
      if (wc < 3)
        break;
      literal(w + 2, wc - 2, text, sizeof text);
      if (!strcmp(text, "OpenCL.std")) {
        opencl_std = wc >= 2 ? w[1] : 0;
      } else if (strcmp(text, "OpenCL.DebugInfo.100") && strcmp(text, "SPIRV.debug")) {
        st = unsupported(log, i,
                         "extended instruction set \"%s\" is not supported by the "
                         "PTX path",
                         text);
      }
      break;
    case SpvOpMemoryModel:
      if (wc >= 3 && (w[1] != SpvAddressingModelPhysical64 || w[2] != SpvMemoryModelOpenCL))
        st = unsupported(log, i, "%s",
                         "addressing or memory model other than Physical64 / "
                         "OpenCL");
      break;
    case SpvOpEntryPoint:
      if (wc >= 2 && w[1] != SpvExecutionModelKernel)
        st = unsupported(log, i, "%s", "entry point that is not a Kernel");
      break;
    case SpvOpTypeImage:
    case SpvOpTypeSampler:
    case SpvOpTypeSampledImage:
      st = unsupported(log, i, "%s are not supported by the PTX path", "image types");
      break;
    case SpvOpTypePipe:
    case SpvOpTypePipeStorage:
    case SpvOpTypeReserveId:
      st = unsupported(log, i, "%s are not supported by the PTX path", "pipes");
      break;
    case SpvOpTypeQueue:
    case SpvOpTypeDeviceEvent:
      st = unsupported(log, i, "%s is not supported by the PTX path", "device-side enqueue");
      break;
    case SpvOpTypeNamedBarrier:
      st = unsupported(log, i, "%s are not supported by the PTX path", "named barriers");
      break;
    case SpvOpExtInst:
      if (wc >= 5 && opencl_std && w[3] == opencl_std && w[4] == OPENCL_STD_PRINTF)
        st = unsupported(log, i, "%s is not supported by the PTX path", "printf");
      break;
    case SpvOpConstant:
    case SpvOpConstantNull:
    case SpvOpSpecConstant:
      if (wc >= 3) {
        if (ncon == capcon) {
          constant *c = realloc(con, 2 * capcon * sizeof *con);
          if (!c) {
            st = CLDM_PTX_E_NOMEM;
            break;
          }
          con = c;
          capcon *= 2;
        }
        con[ncon].id = w[2];
        con[ncon].value = op == SpvOpConstantNull || wc < 4 ? 0 : w[3];
        ncon++;
      }
      break;
    default: {
      unsigned a, b;
      cldm_ptx_atomic_semantics(op, &a, &b);
      if (a) {
        if (nat == capat) {
          size_t *n = realloc(at, 2 * capat * sizeof *at);
          if (!n) {
            st = CLDM_PTX_E_NOMEM;
            break;
          }
          at = n;
          capat *= 2;
        }
        at[nat++] = i;
      }
      break;
    }
    }
    i += wc;
  }
  if (st)
    goto done;
  qsort(con, ncon, sizeof *con, by_id);
  for (size_t k = 0; k < nat && !st; k++) {
    const uint32_t *w = words + at[k];
    uint32_t wc = w[0] >> 16, op = w[0] & 0xffffu;
    unsigned pos[2];
    cldm_ptx_atomic_semantics(op, &pos[0], &pos[1]);
    for (int j = 0; j < 2 && pos[j] && !st; j++) {
      if (pos[j] >= wc) {
        cldm_ptx_log_printf(log, "malformed SPIR-V: word %zu: %s has too few operands\n", at[k],
                            atomic_name(op));
        st = CLDM_PTX_E_MALFORMED;
        break;
      }
      constant key = {w[pos[j]], 0};
      const constant *c = bsearch(&key, con, ncon, sizeof *con, by_id);
      if (!c) {
        st = unsupported(log, at[k], "%s with memory semantics that are not a constant",
                         atomic_name(op));
      } else if (c->value & (SpvMemorySemanticsAcquireMask | SpvMemorySemanticsReleaseMask |
                             SpvMemorySemanticsAcquireReleaseMask |
                             SpvMemorySemanticsSequentiallyConsistentMask)) {
        cldm_ptx_log_printf(
            log,
            "unsupported: %s with acquire/release/seq_cst memory semantics (0x%x) at word "
            "%zu: the PTX path (OpenCL 1.2 built-ins, LLVM 15's NVPTX back end) cannot honour "
            "memory orders; use OpenCL 1.2 atomics ordered by explicit fences (the allocator's "
            "cl12 variant)\n",
            atomic_name(op), c->value, at[k]);
        st = CLDM_PTX_E_UNSUPPORTED;
      }
    }
  }
done:
  free(con);
  free(at);
  if (st == CLDM_PTX_E_NOMEM)
    cldm_ptx_log_printf(log, "out of memory while checking the module\n");
  return st;
}
