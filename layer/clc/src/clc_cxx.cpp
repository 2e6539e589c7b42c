/*
 * clc_cxx.cpp — the front end for C++ for OpenCL (-cl-std=CLC++, CLC++1.0, CLC++2021): clang's
 * own CompilerInstance, since Debian's opencl-clang 15 knows no C++ for OpenCL standard (it drops
 * the option) and gives clang -fgnu89-inline, which clang refuses for C++. The arguments are
 * those clang's driver gives C++ for OpenCL, and those opencl-clang gives OpenCL C where they
 * apply: spir64, typed pointers, no LLVM passes, kernel argument information, the default
 * header (opencl-c-base.h and the built-in declarations clang makes itself), the device's
 * extensions and features (-cl-ext), __OPENCL_VERSION__, the extension's header included first.
 * Files live in an in-memory file system over the real one (for -I): the extension's header,
 * clang's opencl-c-base.h (built into the library, so that no clang resource directory is needed
 * where the layer runs), and clCompileProgram's input headers, found by #include "name".
 *
 * clang 15's code for new T[n] in C++ for OpenCL casts the generic result to a private pointer
 * and back with bitcasts, invalid IR that its driver lets through (-disable-llvm-verifier) and
 * that LLVM's bitcode reader upgrades to integer conversions: the verifier is off here as it is
 * there, and clc_compile.cpp reads the module back from bitcode.
 */
#include <cstring>
#include <string>
#include <vector>

#include <clang/Basic/Diagnostic.h>
#include <clang/Basic/DiagnosticOptions.h>
#include <clang/CodeGen/CodeGenAction.h>
#include <clang/Frontend/CompilerInstance.h>
#include <clang/Frontend/CompilerInvocation.h>
#include <clang/Frontend/TextDiagnosticPrinter.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/VirtualFileSystem.h>
#include <llvm/Support/raw_ostream.h>

#include "clc_base_header.h" /* generated: cldm_clc_base_header[] (clang's opencl-c-base.h) */
#include "clc_internal.h"

using namespace llvm;

namespace {

const char kResourceDir[] = "/cl_ext_device_malloc/clang";
const char kSourceDir[] = "/cl_ext_device_malloc/src";

/* Splits `s` at blanks (double quotes group, and are dropped). */
void split_words(const std::string &s, std::vector<std::string> *out) {
  std::string w;
  bool quoted = false, any = false;
  for (char c : s) {
    if (c == '"') {
      quoted = !quoted;
      any = true;
    } else if (!quoted && (c == ' ' || c == '\t' || c == '\n' || c == '\r')) {
      if (any)
        out->push_back(w);
      w.clear();
      any = false;
    } else {
      w += c;
      any = true;
    }
  }
  if (any)
    out->push_back(w);
}

} // namespace

cldm_clc_status cldm_clc_cxx_compile(const cldm_clc_request *req, const std::string &options,
                                     const std::string &extra, const std::string &header_path,
                                     const std::string &header, LLVMContext &ctx,
                                     std::unique_ptr<Module> *module, std::string *log) {
  std::vector<std::string> words = {
      "-triple",
      "spir64-unknown-unknown",
      "-disable-llvm-passes",
      "-disable-llvm-verifier",
      "-cl-kernel-arg-info",
      "-finclude-default-header",
      "-fdeclare-opencl-builtins",
      "-resource-dir",
      kResourceDir,
      "-I",
      kSourceDir,
      "-D",
      "__OPENCL_VERSION__=" + std::to_string(req->opencl_version ? req->opencl_version : 120),
      "-cl-ext=-all"};
  std::vector<std::string> user;
  split_words(options, &user);
  for (const std::string &w : user) /* clc_options.c kept what the front end takes */
    words.push_back(w == "-cl-denorms-are-zero" ? "-fdenormal-fp-math=preserve-sign" : w);
  split_words(extra, &words);
  std::vector<const char *> argv;
  for (const std::string &w : words)
    argv.push_back(w.c_str());

  std::string text;
  raw_string_ostream os(text);
  IntrusiveRefCntPtr<clang::DiagnosticOptions> diag_opts = new clang::DiagnosticOptions();
  auto *printer = new clang::TextDiagnosticPrinter(os, diag_opts.get());
  IntrusiveRefCntPtr<clang::DiagnosticIDs> ids(new clang::DiagnosticIDs());
  clang::DiagnosticsEngine diags(ids, diag_opts, printer, /*ShouldOwnClient=*/true);

  auto inv = std::make_shared<clang::CompilerInvocation>();
  bool parsed = clang::CompilerInvocation::CreateFromArgs(*inv, argv, diags);
  std::string name = req->source_name && *req->source_name ? req->source_name : "source";
  std::unique_ptr<MemoryBuffer> source = MemoryBuffer::getMemBufferCopy(req->source, name);
  inv->getFrontendOpts().Inputs.clear();
  inv->getFrontendOpts().Inputs.emplace_back(source->getMemBufferRef(),
                                             clang::InputKind(clang::Language::OpenCLCXX));
  inv->getFrontendOpts().ProgramAction = clang::frontend::EmitLLVMOnly;

  IntrusiveRefCntPtr<vfs::InMemoryFileSystem> mem(new vfs::InMemoryFileSystem());
  mem->addFile(header_path, 0, MemoryBuffer::getMemBufferCopy(header, header_path));
  std::string base_path = std::string(kResourceDir) + "/include/opencl-c-base.h";
  mem->addFile(
      base_path, 0,
      MemoryBuffer::getMemBufferCopy(StringRef(reinterpret_cast<const char *>(cldm_clc_base_header),
                                               sizeof(cldm_clc_base_header)),
                                     base_path));
  for (size_t i = 0; i < req->num_headers; i++) {
    const char *hn = req->header_names[i], *hs = req->header_sources[i];
    if (!hn || !*hn)
      continue;
    std::string path = *hn == '/' ? hn : std::string(kSourceDir) + "/" + hn;
    mem->addFile(path, 0, MemoryBuffer::getMemBufferCopy(hs ? hs : "", path));
  }
  IntrusiveRefCntPtr<vfs::OverlayFileSystem> fs(
      new vfs::OverlayFileSystem(vfs::getRealFileSystem()));
  fs->pushOverlay(mem);

  cldm_clc_status status = CLDM_CLC_E_COMPILE;
  if (parsed && !diags.hasErrorOccurred()) {
    clang::CompilerInstance ci;
    ci.setInvocation(inv);
    ci.createDiagnostics(new clang::TextDiagnosticPrinter(os, diag_opts.get()), true);
    ci.createFileManager(fs);
    ci.setVerboseOutputStream(os); /* "1 error generated." goes into the log, as opencl-clang's */
    clang::EmitLLVMOnlyAction act(&ctx);
    if (ci.ExecuteAction(act) && (*module = act.takeModule()))
      status = CLDM_CLC_OK;
  }
  os.flush();
  *log += text;
  if (status != CLDM_CLC_OK && log->empty())
    *log = "error: the C++ for OpenCL front end failed without a message\n";
  return status;
}
