/*
 * ptx_link.cpp — linking with only what is needed (Linker::LinkOnlyNeeded: the C API's
 * LLVMLinkModules2 has no flags, and linking all of libclc's ~9700 functions lazily loaded
 * would materialise every one), and demangled names for messages.
 */
#include <cstring>
#include <string>

#include <llvm/Demangle/Demangle.h>
#include <llvm/IR/Module.h>
#include <llvm/Linker/Linker.h>

#include "ptx_internal.h"

using namespace llvm;

extern "C" cldm_ptx_status cldm_ptx_link_needed(LLVMModuleRef dst, LLVMModuleRef src,
                                                const char *what, cldm_ptx_log *log) {
  std::unique_ptr<Module> s(unwrap(src));
  if (Linker::linkModules(*unwrap(dst), std::move(s), Linker::Flags::LinkOnlyNeeded)) {
    cldm_ptx_log_printf(log, "linking %s failed\n", what);
    return CLDM_PTX_E_LINK;
  }
  return CLDM_PTX_OK;
}

extern "C" void cldm_ptx_demangle(const char *name, char *buf, size_t size) {
  std::string d = demangle(name);
  snprintf(buf, size, "%s", d.c_str());
}
