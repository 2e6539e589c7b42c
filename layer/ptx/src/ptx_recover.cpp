/*
 * ptx_recover.cpp — a translation that aborts inside LLVM is a failed translation, not a dead
 * process. Debian builds LLVMSPIRVLib 15 with assertions on, and its reader asserts on many
 * kinds of invalid SPIR-V (operand types, phi operands, unknown ids); LLVM's report_fatal_error
 * ("Cannot select", ...) aborts too. ptx_check.c rules out what it can name; this is the net
 * under it: llvm::CrashRecoveryContext (what libclang uses to survive compiler crashes) turns
 * SIGABRT/SIGSEGV/... on this thread into a return. Its signal handlers are installed only
 * while a translation runs (ptx_api.c holds the translation lock around it); a signal on
 * another thread meanwhile goes to the handlers that were there before.
 * What the aborted code allocated is leaked on purpose: it may be inconsistent.
 */
#include <llvm/Support/CrashRecoveryContext.h>

#include "ptx_internal.h"

using namespace llvm;

extern "C" int cldm_ptx_run_recoverable(void (*fn)(void *), void *arg) {
  CrashRecoveryContext::Enable();
  bool ok;
  {
    CrashRecoveryContext crc;
    ok = crc.RunSafely(fn, arg);
  }
  CrashRecoveryContext::Disable();
  return ok ? 0 : -1;
}
