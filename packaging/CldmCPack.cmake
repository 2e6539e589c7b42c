# packaging/CldmCPack.cmake — Debian packages from the install rules (CPack's DEB generator), one
# per install component. tools/package.sh builds them (a build configured with the prefix /usr):
#   cldm-layer          the layer, the launcher cldm-run, the loader manifest (not enabled)
#   cldm-layer-nvidia   libcldm-ptx.so, the PTX route for NVIDIA GPUs (pulls LLVM 15, libclc)
#   cldm-dev            the header, the spec and grammar, pkg-config file, CMake package
#   cldm-tools          cldm-spirv (links libcldm-ptx.so where that is built)
#   python3-cldm        the PyOpenCL module and its example
# Library dependencies come from dpkg-shlibdeps; the rest are stated below. Descriptions: the
# synopsis, then the long description (CPack indents its lines; "." separates paragraphs). The layer itself
# links no libOpenCL: it needs an ICD loader that reads OPENCL_LAYERS (ocl-icd, or the Khronos
# loader, which Debian packages as khronos-opencl-icd-libopencl1; both provide libopencl1).
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME cldm)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_VENDOR "cl_ext_device_malloc")
set(CLDM_PACKAGE_MAINTAINER "cl_ext_device_malloc developers <cldm@invalid>"
    CACHE STRING "Maintainer field of the Debian packages")
set(CPACK_PACKAGE_CONTACT "${CLDM_PACKAGE_MAINTAINER}")
set(CPACK_PACKAGE_DIRECTORY ${CMAKE_BINARY_DIR}/packages)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_RELEASE 1)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_STRIP_FILES ON)
# libcldm-ptx.so, which cldm-spirv links, is ours (cldm-tools states the dependency itself)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS_PRIVATE_DIRS ${PROJECT_BINARY_DIR}/layer)
set(CPACK_DEBIAN_PACKAGE_HOMEPAGE "")
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)

set(version "${PROJECT_VERSION}-${CPACK_DEBIAN_PACKAGE_RELEASE}")
set(CPACK_COMPONENTS_ALL layer dev python)
if(TARGET cldm_ptx)
  list(APPEND CPACK_COMPONENTS_ALL nvidia)
endif()
list(APPEND CPACK_COMPONENTS_ALL tools)

set(CPACK_DEBIAN_LAYER_PACKAGE_NAME cldm-layer)
set(CPACK_DEBIAN_LAYER_PACKAGE_SECTION libs)
set(CPACK_DEBIAN_LAYER_PACKAGE_DEPENDS "ocl-icd-libopencl1 (>= 2.3.1) | libopencl1")
set(CPACK_DEBIAN_LAYER_PACKAGE_SUGGESTS "cldm-layer-nvidia, cldm-dev, python3-cldm")
set(CPACK_COMPONENT_LAYER_DESCRIPTION
    "malloc and free in OpenCL kernels (cl_ext_device_malloc ICD layer)
An OpenCL ICD layer that implements the proposed cl_ext_device_malloc extension:
kernels in SPIR-V call malloc, free, calloc, realloc and aligned_alloc; the layer
rewrites such modules, links a lock-free device allocator and binds a hidden heap
argument at enqueue. Devices that accept SPIR-V report the extension.
.
The layer is not enabled by installing this package: run programs with cldm-run,
set OPENCL_LAYERS, or point the loader at /usr/share/cldm/layers (see README).")

set(CPACK_DEBIAN_NVIDIA_PACKAGE_NAME cldm-layer-nvidia)
set(CPACK_DEBIAN_NVIDIA_PACKAGE_SECTION libs)
# libllvm15 and libllvmspirvlib15 come from dpkg-shlibdeps; libclc-15 is read at run time
set(CPACK_DEBIAN_NVIDIA_PACKAGE_DEPENDS "cldm-layer (= ${version}), libclc-15")
set(CPACK_COMPONENT_NVIDIA_DESCRIPTION
    "cl_ext_device_malloc layer: PTX route for NVIDIA GPUs
The SPIR-V to PTX translator (libcldm-ptx.so) the cl_ext_device_malloc layer loads
for NVIDIA devices whose OpenCL driver accepts no SPIR-V: LLVMSPIRVLib 15, libclc's
NVPTX library and LLVM 15's NVPTX back end, in-process. Needed only with NVIDIA GPUs;
the layer loads it (and LLVM) only when such a device exists.")

set(CPACK_DEBIAN_DEV_PACKAGE_NAME cldm-dev)
set(CPACK_DEBIAN_DEV_PACKAGE_SECTION libdevel)
set(CPACK_DEBIAN_DEV_PACKAGE_DEPENDS
    "cldm-layer (= ${version}), ocl-icd-opencl-dev | opencl-dev, opencl-c-headers")
set(CPACK_COMPONENT_DEV_DESCRIPTION
    "cl_ext_device_malloc: host header, spec, pkg-config and CMake files
The host header CL/cl_ext_device_malloc.h, the extension's specification and the
SPV_EXT_device_malloc grammar, a pkg-config file (cldm) and a CMake package
(find_package(cldm): cldm::cldm, cldm::layer).")

set(CPACK_DEBIAN_TOOLS_PACKAGE_NAME cldm-tools)
set(CPACK_DEBIAN_TOOLS_PACKAGE_SECTION devel)
if(TARGET cldm_ptx)
  set(CPACK_DEBIAN_TOOLS_PACKAGE_DEPENDS "cldm-layer-nvidia (= ${version})")
endif()
set(CPACK_COMPONENT_TOOLS_DESCRIPTION
    "cl_ext_device_malloc: the cldm-spirv tool
cldm-spirv lowers, raises, inspects and disassembles SPIR-V modules that use
SPV_EXT_device_malloc, offline, and translates them to PTX.")

set(CPACK_DEBIAN_PYTHON_PACKAGE_NAME python3-cldm)
set(CPACK_DEBIAN_PYTHON_PACKAGE_SECTION python)
set(CPACK_DEBIAN_PYTHON_PACKAGE_DEPENDS "python3, cldm-layer (= ${version})")
set(CPACK_DEBIAN_PYTHON_PACKAGE_RECOMMENDS "python3-pyopencl")
set(CPACK_COMPONENT_PYTHON_DESCRIPTION
    "cl_ext_device_malloc for PyOpenCL
The Python module cldm_device_malloc: heap size, heap statistics and heap reset for
PyOpenCL objects (ctypes, no compiled part), and an example.")

include(CPack)
