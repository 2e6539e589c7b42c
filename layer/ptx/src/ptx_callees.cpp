/*
 * ptx_callees.cpp — kernels that other code calls. OpenCL C lets a kernel call another kernel
 * like a function (clang -O0 keeps such calls), but a PTX .entry cannot be called: each called
 * kernel gets an internal, callable copy (CloneFunction; the C API has no clone), and the calls
 * go to the copy. The kernel itself stays an entry point.
 */
#include <vector>

#include <llvm/IR/InstrTypes.h>
#include <llvm/IR/Module.h>
#include <llvm/Transforms/Utils/Cloning.h>
#include <llvm/Transforms/Utils/ValueMapper.h>

#include "ptx_internal.h"

using namespace llvm;

extern "C" unsigned cldm_ptx_split_called_kernels(LLVMModuleRef mref) {
  Module &m = *unwrap(mref);
  std::vector<Function *> kernels;
  for (Function &f : m)
    if (f.getCallingConv() == CallingConv::SPIR_KERNEL && !f.isDeclaration())
      kernels.push_back(&f);
  unsigned copies = 0;
  for (Function *k : kernels) {
    std::vector<CallBase *> calls;
    for (User *u : k->users())
      if (auto *cb = dyn_cast<CallBase>(u))
        if (cb->getCalledOperand() == k)
          calls.push_back(cb);
    if (calls.empty())
      continue;
    ValueToValueMapTy vmap;
    Function *body = CloneFunction(k, vmap);
    body->setName(k->getName() + ".cldm_callable");
    body->setCallingConv(CallingConv::SPIR_FUNC);
    body->setLinkage(GlobalValue::InternalLinkage);
    body->clearMetadata(); /* kernel_arg_* describe the entry point, not this copy */
    for (CallBase *cb : calls) {
      cb->setCalledFunction(body);
      cb->setCallingConv(CallingConv::SPIR_FUNC);
    }
    copies++;
  }
  return copies;
}
