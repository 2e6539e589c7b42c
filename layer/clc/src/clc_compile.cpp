/*
 * clc_compile.cpp — one compilation: OpenCL C -> LLVM bitcode with opencl-clang's Compile
 * (extern "C", results through its small C++ interface IOCLFEBinaryResult), or C++ for OpenCL ->
 * an LLVM module with clang itself (clc_cxx.cpp), the kernels' argument information read from
 * the module's metadata (kernel_arg_*), then SPIR-V 1.0 with LLVMSPIRVLib's writeSpirv (no
 * SPIR-V extensions, so every reader of SPIR-V 1.0 takes it). LLVMSPIRVLib 15 cannot translate
 * llvm.uadd.with.overflow, which clang uses for the size of new T[n] of a type with a
 * destructor: such calls become an add and a compare first.
 *
 * opencl-clang gives spir64 bitcode with opaque pointers unless told otherwise; LLVMSPIRVLib 15
 * needs typed pointers, so the front end gets -no-opaque-pointers (clc_options.c) and the
 * bitcode is read into a typed-pointer context. The extension's header lives in the front
 * end's in-memory file system under a directory that does not exist on disk, so it can be
 * found by `#include <cl_ext_device_malloc.h>` without exposing any real directory.
 * Debian builds these libraries with assertions on: both steps run under
 * llvm::CrashRecoveryContext, so an assertion becomes a failed compilation.
 */
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

#include <LLVMSPIRVLib/LLVMSPIRVLib.h>
#include <cclang/common_clang.h>
#include <llvm/Bitcode/BitcodeReader.h>
#include <llvm/Bitcode/BitcodeWriter.h>
#include <llvm/IR/CallingConv.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/IntrinsicInst.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Metadata.h>
#include <llvm/IR/Module.h>
#include <llvm/Support/CrashRecoveryContext.h>
#include <llvm/Support/Error.h>
#include <llvm/Support/MemoryBuffer.h>

#include "clc_header.h" /* generated: cldm_clc_header[] (include/opencl-c/cl_ext_device_malloc.h) */
#include "clc_internal.h"

using namespace llvm;
using Intel::OpenCL::ClangFE::IOCLFEBinaryResult;

namespace {

const char kIncludeDir[] = "/cl_ext_device_malloc/include";
const char kHeaderName[] = "cl_ext_device_malloc.h";

char *copy_string(const std::string &s) {
  char *p = static_cast<char *>(std::malloc(s.size() + 1));
  if (p)
    std::memcpy(p, s.c_str(), s.size() + 1);
  return p;
}

/* The work of one compilation, run under crash recovery. */
struct Job {
  const cldm_clc_request *req;
  cldm_clc_result *out;
  cldm_clc_status status = CLDM_CLC_E_COMPILE;
  std::string log;
  std::string options, extra;
  int opt_disable = 0;
  int cxx = 0; /* C++ for OpenCL: clang's own front end (clc_cxx.cpp) */
  std::vector<char> bitcode;
  LLVMContext ctx;
};

void run_front_end(void *arg) {
  Job &job = *static_cast<Job *>(arg);
  std::string header(reinterpret_cast<const char *>(cldm_clc_header), sizeof(cldm_clc_header));
  std::string header_path = std::string(kIncludeDir) + "/" + kHeaderName;
  if (job.cxx) {
    job.ctx.setOpaquePointers(false);
    std::unique_ptr<Module> m;
    job.status = cldm_clc_cxx_compile(job.req, job.options, job.extra, header_path, header, job.ctx,
                                      &m, &job.log);
    if (job.status == CLDM_CLC_OK) { /* as bitcode: reading it back upgrades the bad casts */
      std::string bc;
      raw_string_ostream os(bc);
      WriteBitcodeToFile(*m, os);
      os.flush();
      job.bitcode.assign(bc.begin(), bc.end());
    }
    return;
  }
  std::vector<const char *> sources{header.c_str()}, names{header_path.c_str()};
  for (size_t i = 0; i < job.req->num_headers; i++) {
    sources.push_back(job.req->header_sources[i] ? job.req->header_sources[i] : "");
    names.push_back(job.req->header_names[i] ? job.req->header_names[i] : "");
  }
  std::string version = std::to_string(job.req->opencl_version ? job.req->opencl_version : 120);
  IOCLFEBinaryResult *result = nullptr;
  int rc =
      Compile(job.req->source, sources.data(), static_cast<unsigned>(sources.size()), names.data(),
              nullptr, 0, job.options.c_str(), job.extra.c_str(), version.c_str(), &result);
  if (result && result->GetErrorLog())
    job.log = result->GetErrorLog();
  if (rc == 0 && result && result->GetIR() && result->GetIRSize()) {
    const char *ir = static_cast<const char *>(result->GetIR());
    job.bitcode.assign(ir, ir + result->GetIRSize());
    job.status = CLDM_CLC_OK;
  } else if (job.log.empty()) {
    job.log = result ? "error: the OpenCL C front end failed without a message\n"
                     : "error: the OpenCL C front end rejected the build options\n";
  }
  if (result)
    result->Release();
}

/* The string operands of metadata `kind` of kernel `f`, or empty. */
std::vector<std::string> md_strings(const Function &f, const char *kind) {
  std::vector<std::string> v;
  if (const MDNode *n = f.getMetadata(kind))
    for (const MDOperand &op : n->operands()) {
      const auto *s = dyn_cast_or_null<MDString>(op.get());
      v.push_back(s ? s->getString().str() : std::string());
    }
  return v;
}

unsigned access_code(const std::string &s) {
  if (s == "read_only")
    return 1;
  if (s == "write_only")
    return 2;
  if (s == "read_write")
    return 3;
  return 0;
}

unsigned qual_bits(const std::string &s) {
  unsigned q = 0;
  std::istringstream in(s);
  for (std::string w; in >> w;) {
    if (w == "const")
      q |= CLDM_CLC_QUAL_CONST;
    else if (w == "restrict")
      q |= CLDM_CLC_QUAL_RESTRICT;
    else if (w == "volatile")
      q |= CLDM_CLC_QUAL_VOLATILE;
    else if (w == "pipe")
      q |= CLDM_CLC_QUAL_PIPE;
  }
  return q;
}

/* Fills out->kernels from the module's kernels and their kernel_arg_* metadata. */
cldm_clc_status read_kernels(const Module &m, cldm_clc_result *out) {
  std::vector<const Function *> kernels;
  for (const Function &f : m)
    if (f.getCallingConv() == CallingConv::SPIR_KERNEL && !f.isDeclaration())
      kernels.push_back(&f);
  if (kernels.empty())
    return CLDM_CLC_OK;
  out->kernels =
      static_cast<cldm_clc_kernel *>(std::calloc(kernels.size(), sizeof(cldm_clc_kernel)));
  if (!out->kernels)
    return CLDM_CLC_E_NOMEM;
  out->num_kernels = kernels.size();
  for (size_t k = 0; k < kernels.size(); k++) {
    const Function &f = *kernels[k];
    cldm_clc_kernel &dst = out->kernels[k];
    if (!(dst.name = copy_string(f.getName().str())))
      return CLDM_CLC_E_NOMEM;
    std::vector<std::string> access = md_strings(f, "kernel_arg_access_qual"),
                             types = md_strings(f, "kernel_arg_type"),
                             quals = md_strings(f, "kernel_arg_type_qual"),
                             names = md_strings(f, "kernel_arg_name");
    std::vector<unsigned> spaces;
    if (const MDNode *n = f.getMetadata("kernel_arg_addr_space"))
      for (const MDOperand &op : n->operands()) {
        const auto *c = mdconst::dyn_extract_or_null<ConstantInt>(op.get());
        spaces.push_back(c ? static_cast<unsigned>(c->getZExtValue()) : 0u);
      }
    size_t n = f.arg_size();
    if (!n)
      continue;
    dst.args = static_cast<cldm_clc_arg *>(std::calloc(n, sizeof(cldm_clc_arg)));
    if (!dst.args)
      return CLDM_CLC_E_NOMEM;
    dst.num_args = n;
    for (size_t a = 0; a < n; a++) {
      cldm_clc_arg &arg = dst.args[a];
      arg.name = copy_string(a < names.size() ? names[a] : std::string());
      arg.type_name = copy_string(a < types.size() ? types[a] : std::string());
      if (!arg.name || !arg.type_name)
        return CLDM_CLC_E_NOMEM;
      arg.addr_space = a < spaces.size() ? spaces[a] : 0u;
      arg.access = a < access.size() ? access_code(access[a]) : 0u;
      arg.type_qual = a < quals.size() ? qual_bits(quals[a]) : 0u;
    }
  }
  return CLDM_CLC_OK;
}

/* Every call of llvm.uadd.with.overflow.iN(a, b) as {a + b, a + b < a}. */
void lower_uadd_with_overflow(Module &m) {
  std::vector<CallInst *> calls;
  for (Function &f : m)
    if (f.getIntrinsicID() == Intrinsic::uadd_with_overflow)
      for (User *u : f.users())
        if (auto *c = dyn_cast<CallInst>(u))
          calls.push_back(c);
  for (CallInst *c : calls) {
    IRBuilder<> b(c);
    Value *sum = b.CreateAdd(c->getArgOperand(0), c->getArgOperand(1));
    Value *carry = b.CreateICmpULT(sum, c->getArgOperand(0));
    Value *pair = b.CreateInsertValue(UndefValue::get(c->getType()), sum, 0);
    pair = b.CreateInsertValue(pair, carry, 1);
    c->replaceAllUsesWith(pair);
    c->eraseFromParent();
  }
}

void run_translator(void *arg) {
  Job &job = *static_cast<Job *>(arg);
  LLVMContext ctx;
  ctx.setOpaquePointers(false);
  std::unique_ptr<MemoryBuffer> mb = MemoryBuffer::getMemBuffer(
      StringRef(job.bitcode.data(), job.bitcode.size()), "cldm-clc", false);
  Expected<std::unique_ptr<Module>> parsed = parseBitcodeFile(*mb, ctx);
  if (!parsed) {
    job.log += "error: cannot read the front end's module: " + toString(parsed.takeError()) + "\n";
    job.status = CLDM_CLC_E_TRANSLATE;
    return;
  }
  Module *m = parsed->get();
  lower_uadd_with_overflow(*m);
  job.status = read_kernels(*m, job.out);
  if (job.status != CLDM_CLC_OK)
    return;
  SPIRV::TranslatorOpts opts(SPIRV::VersionNumber::SPIRV_1_0);
  opts.setMemToRegEnabled(!job.opt_disable);
  opts.setPreserveOCLKernelArgTypeMetadataThroughString(true);
  std::ostringstream os;
  std::string err;
  if (!writeSpirv(m, opts, os, err)) {
    job.log += "error: cannot translate the module to SPIR-V: " + err + "\n";
    job.status = CLDM_CLC_E_TRANSLATE;
    return;
  }
  std::string words = os.str();
  job.out->spirv = std::malloc(words.size() ? words.size() : 1);
  if (!job.out->spirv) {
    job.status = CLDM_CLC_E_NOMEM;
    return;
  }
  std::memcpy(job.out->spirv, words.data(), words.size());
  job.out->spirv_size = words.size();
}

/* Runs fn under crash recovery: 0, or -1 if it crashed (what it allocated is leaked). */
int run_recoverable(void (*fn)(void *), void *arg) {
  CrashRecoveryContext::Enable();
  bool ok;
  {
    CrashRecoveryContext crc;
    ok = crc.RunSafely(fn, arg);
  }
  CrashRecoveryContext::Disable();
  return ok ? 0 : -1;
}

} // namespace

extern "C" cldm_clc_status cldm_clc_run(const cldm_clc_request *req, cldm_clc_result *out) {
  Job job;
  job.req = req;
  job.out = out;
  char *options = cldm_clc_filter_options(req->options, &job.opt_disable);
  char *extra = options
                    ? cldm_clc_extra_options(req->device_extensions, cldm_clc_options_std(options),
                                             kIncludeDir, kHeaderName)
                    : nullptr;
  if (!options || !extra) {
    std::free(options);
    std::free(extra);
    return CLDM_CLC_E_NOMEM;
  }
  job.options = options;
  job.extra = extra;
  job.cxx = cldm_clc_options_cxx(options);
  std::free(options);
  std::free(extra);
  if (req->source_name && *req->source_name && !job.cxx) /* clc_cxx.cpp names its buffer */
    job.options += std::string(job.options.empty() ? "" : " ") + "-s " + req->source_name;
  if (run_recoverable(run_front_end, &job) != 0) {
    job.status = CLDM_CLC_E_COMPILE;
    job.log += job.cxx ? "error: the C++ for OpenCL front end crashed on this source or these "
                         "options\n"
                       : "error: the OpenCL C front end crashed on this source or these options\n";
  }
  if (job.status == CLDM_CLC_OK && run_recoverable(run_translator, &job) != 0) {
    job.status = CLDM_CLC_E_TRANSLATE;
    job.log += "error: the SPIR-V translator crashed on this module\n";
  }
  if (job.status != CLDM_CLC_OK) {
    cldm_clc_result_free(out);
  }
  if (!job.log.empty() && !(out->log = copy_string(job.log)) && job.status == CLDM_CLC_OK) {
    cldm_clc_result_free(out);
    return CLDM_CLC_E_NOMEM;
  }
  return job.status;
}

extern "C" const char *cldm_clc_header_text(size_t *size) {
  *size = sizeof(cldm_clc_header);
  return reinterpret_cast<const char *>(cldm_clc_header);
}

extern "C" void cldm_clc_result_free(cldm_clc_result *r) {
  std::free(r->spirv);
  std::free(r->log);
  for (size_t k = 0; k < r->num_kernels; k++) {
    for (size_t a = 0; a < r->kernels[k].num_args; a++) {
      std::free(r->kernels[k].args[a].name);
      std::free(r->kernels[k].args[a].type_name);
    }
    std::free(r->kernels[k].args);
    std::free(r->kernels[k].name);
  }
  std::free(r->kernels);
  std::memset(r, 0, sizeof(*r));
}
