/*
 * ptx_reader.cpp — SPIR-V -> LLVM IR with LLVMSPIRVLib (the C++ API; it has no C one), the
 * in-process equivalent of `llvm-spirv --spirv-target-env=CL1.2 -r`: OpenCL 1.2 built-in names
 * (atomic_add on a global pointer, mem_fence, get_global_id, ...), which is what libclc's NVPTX
 * library defines, and every extension the translator knows allowed (as the tool does when
 * reading).
 *
 * LLVMSPIRVLib 15 builds typed pointers, libclc-15 is opaque-pointer bitcode, and an LLVM 15
 * context holds one kind only: the module is read into a private typed-pointer context,
 * verified, written as bitcode in memory and parsed into the caller's opaque-pointer context
 * (the reader upgrades typed-pointer bitcode).
 */
#include <sstream>
#include <string>

#include <LLVMSPIRVLib/LLVMSPIRVLib.h>
#include <llvm/Bitcode/BitcodeReader.h>
#include <llvm/Bitcode/BitcodeWriter.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Support/Error.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm-c/Types.h>

#include "ptx_internal.h"

using namespace llvm;

extern "C" cldm_ptx_status cldm_ptx_read_spirv(LLVMContextRef ctx, const uint32_t *words,
                                               size_t num_words, LLVMModuleRef *out,
                                               cldm_ptx_log *log) {
  *out = nullptr;
  SmallVector<char, 0> bitcode;
  {
    LLVMContext typed;
    typed.setOpaquePointers(false);
    SPIRV::TranslatorOpts opts(SPIRV::VersionNumber::MaximumVersion);
    opts.enableAllExtensions();
    opts.setDesiredBIsRepresentation(SPIRV::BIsRepresentation::OpenCL12);
    std::string bytes(reinterpret_cast<const char *>(words), num_words * 4);
    std::istringstream in(bytes);
    Module *m = nullptr;
    std::string err;
    if (!readSpirv(typed, opts, in, m, err) || !m) {
      cldm_ptx_log_printf(log, "LLVMSPIRVLib cannot read the module: %s\n",
                          err.empty() ? "(no message)" : err.c_str());
      delete m;
      return CLDM_PTX_E_TRANSLATE;
    }
    std::unique_ptr<Module> owned(m);
    std::string verr;
    raw_string_ostream vs(verr);
    if (verifyModule(*owned, &vs)) {
      vs.flush();
      cldm_ptx_log_printf(log, "LLVMSPIRVLib produced an invalid module: %s\n", verr.c_str());
      return CLDM_PTX_E_TRANSLATE;
    }
    raw_svector_ostream os(bitcode);
    WriteBitcodeToFile(*owned, os);
  }
  LLVMContext &c = *reinterpret_cast<LLVMContext *>(ctx);
  auto parsed = parseBitcodeFile(
      MemoryBufferRef(StringRef(bitcode.data(), bitcode.size()), "spirv-module"), c);
  if (!parsed) {
    std::string msg = toString(parsed.takeError());
    cldm_ptx_log_printf(log, "cannot re-read the translated module: %s\n", msg.c_str());
    return CLDM_PTX_E_TRANSLATE;
  }
  *out = reinterpret_cast<LLVMModuleRef>(parsed->release());
  return CLDM_PTX_OK;
}
