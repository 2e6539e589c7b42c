# cmake/CldmLLVM15.cmake — finds LLVM 15 (libLLVM-15, its C API headers) and LLVMSPIRVLib, as
# Debian's llvm-15-dev and libllvmspirvlib-15-dev install them (tools/deps.sh), for the PTX
# backend (layer/ptx) and the OpenCL C compiler library (layer/clc). Sets the cached
# CLDM_LLVM15_DIR, CLDM_LIBLLVM15, CLDM_LLVM15_INCLUDE, CLDM_LLVMSPIRV_INCLUDE and
# CLDM_LIBLLVMSPIRV (NOTFOUND where missing: the caller decides).
include_guard(GLOBAL)
set(CLDM_LLVM15_DIR /usr/lib/llvm-15 CACHE PATH "LLVM 15 prefix (lib/, include/, bin/)")
find_library(CLDM_LIBLLVM15 NAMES LLVM-15 PATHS ${CLDM_LLVM15_DIR}/lib NO_DEFAULT_PATH)
find_path(CLDM_LLVM15_INCLUDE llvm-c/Core.h PATHS ${CLDM_LLVM15_DIR}/include NO_DEFAULT_PATH)
find_path(CLDM_LLVMSPIRV_INCLUDE LLVMSPIRVLib/LLVMSPIRVLib.h)
find_library(CLDM_LIBLLVMSPIRV NAMES LLVMSPIRVLib)
