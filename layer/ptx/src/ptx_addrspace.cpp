/*
 * ptx_addrspace.cpp — SPIR address-space numbers -> NVPTX's, over a whole module.
 *
 *   OpenCL        SPIR (LLVMSPIRVLib)   NVPTX
 *   private       0                     0 (generic; allocas are lowered to .local)
 *   global        1                     1
 *   constant      2                     4
 *   local         3                     3
 *   generic       4                     0
 *
 * An address space is part of every pointer type, so the numbers cannot be patched in place:
 * every global and function is re-created with remapped types and the bodies are cloned into
 * the new functions with a type remapper (CloneFunctionInto + ValueMapTypeRemapper; the LLVM
 * C API has neither). What the clone leaves for us: typed attributes (byval, sret, ...) of the
 * new functions, intrinsic names that encode pointer types (llvm.memcpy.p0.p4 -> .p0.p0), and
 * casts between private and generic, which become casts from a space to itself and are
 * dropped. Debug information is stripped first (PTX for the driver carries none).
 */
#include <string>
#include <vector>

#include <llvm/IR/Constants.h>
#include <llvm/IR/DebugInfo.h>
#include <llvm/IR/DerivedTypes.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/IntrinsicInst.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Transforms/Utils/Cloning.h>
#include <llvm/Transforms/Utils/ValueMapper.h>

#include "ptx_internal.h"

using namespace llvm;

extern "C" int cldm_ptx_nvptx_addrspace(unsigned spir_as) {
  switch (spir_as) {
  case 0:
    return 0;
  case 1:
    return 1;
  case 2:
    return 4;
  case 3:
    return 3;
  case 4:
    return 0;
  default:
    return -1;
  }
}

namespace {

class NvptxTypes final : public ValueMapTypeRemapper {
public:
  explicit NvptxTypes(LLVMContext &c) : ctx(c) {}
  Type *remapType(Type *t) override { return map(t); }
  unsigned bad_as = 0; /* an address space with no NVPTX counterpart, if nonzero */

private:
  LLVMContext &ctx;
  DenseMap<Type *, Type *> cache;

  unsigned space(unsigned as) {
    int n = cldm_ptx_nvptx_addrspace(as);
    if (n < 0) {
      bad_as = as;
      return as;
    }
    return (unsigned)n;
  }

  Type *map(Type *t) {
    auto it = cache.find(t);
    if (it != cache.end())
      return it->second;
    Type *r = t;
    if (auto *p = dyn_cast<PointerType>(t)) {
      /* opaque pointers only: the module comes from an opaque-pointer context */
      r = p->isOpaque() ? PointerType::get(ctx, space(p->getAddressSpace()))
                        : PointerType::get(map(p->getNonOpaquePointerElementType()),
                                           space(p->getAddressSpace()));
    } else if (auto *a = dyn_cast<ArrayType>(t)) {
      r = ArrayType::get(map(a->getElementType()), a->getNumElements());
    } else if (auto *v = dyn_cast<VectorType>(t)) {
      r = VectorType::get(map(v->getElementType()), v->getElementCount());
    } else if (auto *f = dyn_cast<FunctionType>(t)) {
      SmallVector<Type *, 8> params;
      for (Type *p : f->params())
        params.push_back(map(p));
      r = FunctionType::get(map(f->getReturnType()), params, f->isVarArg());
    } else if (auto *s = dyn_cast<StructType>(t)) {
      if (!s->isOpaque()) {
        /* No cycles: with opaque pointers a struct can only contain itself through a
         * pointer, which names no struct. */
        SmallVector<Type *, 8> elems;
        bool changed = false;
        for (Type *e : s->elements()) {
          elems.push_back(map(e));
          changed |= elems.back() != e;
        }
        if (changed) {
          if (s->isLiteral()) {
            r = StructType::get(ctx, elems, s->isPacked());
          } else {
            std::string name = s->getName().str();
            s->setName(name + ".spir");
            r = StructType::create(ctx, elems, name, s->isPacked());
          }
        }
      }
    }
    cache[t] = r;
    return r;
  }
};

/* Typed attributes (byval(T), sret(T), elementtype(T), ...) of a function or call site. */
AttributeList remap_attribute_types(LLVMContext &ctx, AttributeList attrs, NvptxTypes &types) {
  for (unsigned i : attrs.indexes()) {
    for (int k = Attribute::FirstTypeAttr; k <= Attribute::LastTypeAttr; k++) {
      auto kind = static_cast<Attribute::AttrKind>(k);
      if (Type *t = attrs.getAttributeAtIndex(i, kind).getValueAsType())
        attrs = attrs.replaceAttributeTypeAtIndex(ctx, i, kind, types.remapType(t));
    }
  }
  return attrs;
}

} // namespace

extern "C" cldm_ptx_status cldm_ptx_remap_address_spaces(LLVMModuleRef mref, cldm_ptx_log *log) {
  Module &m = *unwrap(mref);
  LLVMContext &ctx = m.getContext();
  StripDebugInfo(m);
  if (!m.alias_empty() || !m.ifunc_empty()) {
    cldm_ptx_log_printf(log, "unsupported: global aliases are not supported by the PTX path\n");
    return CLDM_PTX_E_UNSUPPORTED;
  }
  NvptxTypes types(ctx);
  ValueToValueMapTy vmap;
  std::vector<GlobalVariable *> old_globals;
  std::vector<Function *> old_functions;
  for (GlobalVariable &g : m.globals())
    old_globals.push_back(&g);
  for (Function &f : m)
    old_functions.push_back(&f);

  for (GlobalVariable *g : old_globals) {
    int as = cldm_ptx_nvptx_addrspace(g->getAddressSpace());
    if (as < 0) {
      cldm_ptx_log_printf(log,
                          "unsupported: global %s in address space %u, which has no "
                          "NVPTX counterpart\n",
                          g->getName().str().c_str(), g->getAddressSpace());
      return CLDM_PTX_E_UNSUPPORTED;
    }
    std::string name = g->getName().str();
    g->setName("");
    auto *ng = new GlobalVariable(m, types.remapType(g->getValueType()), g->isConstant(),
                                  g->getLinkage(), nullptr, name, nullptr, g->getThreadLocalMode(),
                                  (unsigned)as, g->isExternallyInitialized());
    ng->copyAttributesFrom(g);
    ng->copyMetadata(g, 0);
    vmap[g] = ng;
  }
  std::vector<std::pair<Function *, Function *>> pairs;
  for (Function *f : old_functions) {
    std::string name = f->getName().str();
    f->setName("");
    auto *fty = cast<FunctionType>(types.remapType(f->getFunctionType()));
    Function *nf = Function::Create(fty, f->getLinkage(), f->getAddressSpace(), name, &m);
    nf->copyAttributesFrom(f);
    nf->setAttributes(remap_attribute_types(ctx, nf->getAttributes(), types));
    vmap[f] = nf;
    pairs.emplace_back(f, nf);
  }
  /* Intrinsics overloaded on pointer types need the name of their new types. */
  std::vector<Function *> superseded;
  for (auto &p : pairs) {
    if (!p.second->isIntrinsic())
      continue;
    if (Optional<Function *> r = Intrinsic::remangleIntrinsicFunction(p.second)) {
      vmap[p.first] = *r;
      superseded.push_back(p.second);
      p.second = *r;
    }
  }
  for (Function *f : superseded)
    if (f->use_empty())
      f->eraseFromParent();

  for (GlobalVariable *g : old_globals)
    if (g->hasInitializer())
      cast<GlobalVariable>(vmap[g])->setInitializer(
          MapValue(g->getInitializer(), vmap, RF_None, &types));
  for (auto &p : pairs) {
    Function *f = p.first, *nf = p.second;
    if (f->isDeclaration())
      continue;
    auto na = nf->arg_begin();
    for (Argument &a : f->args()) {
      na->setName(a.getName());
      vmap[&a] = &*na;
      ++na;
    }
    SmallVector<ReturnInst *, 8> returns;
    CloneFunctionInto(nf, f, vmap, CloneFunctionChangeType::GlobalChanges, returns, "", nullptr,
                      &types, nullptr);
    nf->setAttributes(remap_attribute_types(ctx, nf->getAttributes(), types));
  }
  for (NamedMDNode &nmd : m.named_metadata())
    for (unsigned i = 0; i < nmd.getNumOperands(); i++)
      nmd.setOperand(i, MapMetadata(nmd.getOperand(i), vmap, RF_None, &types));

  for (Function *f : old_functions)
    f->dropAllReferences();
  for (GlobalVariable *g : old_globals)
    g->dropAllReferences();
  for (Function *f : old_functions) {
    if (!f->use_empty())
      f->replaceAllUsesWith(PoisonValue::get(f->getType()));
    f->eraseFromParent();
  }
  for (GlobalVariable *g : old_globals) {
    if (!g->use_empty())
      g->replaceAllUsesWith(PoisonValue::get(g->getType()));
    g->eraseFromParent();
  }

  /* private <-> generic casts are now casts from a space to itself */
  for (Function &f : m) {
    for (BasicBlock &bb : f) {
      for (auto it = bb.begin(); it != bb.end();) {
        Instruction &inst = *it++;
        auto *cast = dyn_cast<AddrSpaceCastInst>(&inst);
        if (cast && cast->getSrcAddressSpace() == cast->getDestAddressSpace()) {
          cast->replaceAllUsesWith(cast->getPointerOperand());
          cast->eraseFromParent();
        }
      }
    }
  }
  if (types.bad_as) {
    cldm_ptx_log_printf(log,
                        "unsupported: a pointer into address space %u, which has no NVPTX "
                        "counterpart\n",
                        types.bad_as);
    return CLDM_PTX_E_UNSUPPORTED;
  }
  std::string err;
  raw_string_ostream es(err);
  if (verifyModule(m, &es)) {
    es.flush();
    cldm_ptx_log_printf(log, "address-space renumbering produced an invalid module: %s\n",
                        err.c_str());
    return CLDM_PTX_E_TRANSLATE;
  }
  return CLDM_PTX_OK;
}
