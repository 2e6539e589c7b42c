/*
 * ptx_recover.cpp — a translation that aborts inside LLVM is a failed translation, not a dead
 * process. Debian builds LLVMSPIRVLib 15 with assertions on, and its reader asserts on many
 * kinds of invalid SPIR-V (operand types, phi operands, unknown ids); LLVM's report_fatal_error
 * ("Cannot select", ...) aborts too. ptx_check.c rules out what it can name; this is the net
 * under it: llvm::CrashRecoveryContext (what libclang uses to survive compiler crashes) turns
 * SIGABRT/SIGSEGV/... on this thread into a return. Its signal handlers are installed only
 * while a translation runs (ptx_api.c holds the translation lock around it); a signal on
 * another thread meanwhile goes to the handlers that were there before.
 * report_fatal_error(..., GenCrashDiag=false), which LLVMSPIRVLib uses for some invalid
 * modules ("Attempt to redefine function"), calls exit(1) instead of abort(), which no signal
 * handler sees: a fatal-error handler, installed for the same span, leaves through the
 * recovery context instead (CrashRecoveryContext::HandleExit, what clang's in-process cc1
 * uses).
 * What the aborted code allocated is leaked on purpose: it may be inconsistent.
 */
#include <llvm/Support/CrashRecoveryContext.h>
#include <llvm/Support/ErrorHandling.h>

#include <cstdio>
#include <cstdlib>

#include "ptx_internal.h"

using namespace llvm;

static void cldm_ptx_fatal(void *user, const char *reason, bool gen_crash_diag) {
  (void)user;
  (void)gen_crash_diag;
  fprintf(stderr, "LLVM ERROR: %s\n", reason);
  if (CrashRecoveryContext *crc = CrashRecoveryContext::GetCurrent())
    crc->HandleExit(1);
  abort();
}

extern "C" int cldm_ptx_run_recoverable(void (*fn)(void *), void *arg) {
  CrashRecoveryContext::Enable();
  install_fatal_error_handler(cldm_ptx_fatal, nullptr);
  bool ok;
  {
    CrashRecoveryContext crc;
    ok = crc.RunSafely(fn, arg);
  }
  remove_fatal_error_handler();
  CrashRecoveryContext::Disable();
  return ok ? 0 : -1;
}
