# cmake/CldmOpenCL.cmake — compile OpenCL C, C++ for OpenCL and HIP device code to SPIR-V at
# build time (examples, end-to-end tests): clang-15 (typed pointers, as llvm-spirv-15 needs) +
# llvm-spirv-15 + spirv-val.
#
# cldm_cl_to_spirv(<out.spv> SOURCE <file.cl> [TRIPLE spir|spir64] [OPT <-O0|-O2>]
#                  [STD <CL1.2|CL2.0|CL3.0>] [FLAGS <clang flags...>] [NO_VALIDATE])
#   Adds a custom command producing <out.spv> (SPIR-V 1.0). Defaults: spir64, -O0, CL1.2.
#   The output is validated with spirv-val (target env opencl2.2) unless NO_VALIDATE: clang-15
#   -O2 output sometimes fails validation (blocks laid out before their dominators, against
#   SPIR-V spec 2.16.1) though drivers (pocl) accept it.
function(cldm_cl_to_spirv out)
  cmake_parse_arguments(A "NO_VALIDATE" "SOURCE;TRIPLE;OPT;STD" "FLAGS;DEPENDS" ${ARGN})
  if(NOT A_TRIPLE)
    set(A_TRIPLE spir64)
  endif()
  if(NOT A_OPT)
    set(A_OPT -O0)
  endif()
  if(NOT A_STD)
    set(A_STD CL1.2)
  endif()
  set(opt_flags ${A_OPT})
  if(NOT A_OPT STREQUAL "-O0")
    # llvm-spirv-15 cannot translate the `freeze` instructions the vectorisers emit
    list(APPEND opt_flags -fno-vectorize -fno-slp-vectorize)
  endif()
  get_filename_component(src ${A_SOURCE} ABSOLUTE)
  set(bc ${out}.bc)
  set(validate)
  if(NOT A_NO_VALIDATE)
    set(validate COMMAND ${CLDM_SPIRV_VAL} --target-env opencl2.2 ${out})
  endif()
  add_custom_command(OUTPUT ${out}
    COMMAND ${CLDM_CLANG} -target ${A_TRIPLE} -x cl -cl-std=${A_STD} -c -emit-llvm ${opt_flags}
            -fno-builtin -Xclang -no-opaque-pointers ${A_FLAGS} -o ${bc} ${src}
    COMMAND ${CLDM_LLVM_SPIRV} --spirv-max-version=1.0 ${bc} -o ${out}
    ${validate}
    DEPENDS ${src} ${A_DEPENDS}
    COMMENT "OpenCL C -> SPIR-V ${out}" VERBATIM)
endfunction()

# cldm_clcpp_to_spirv(<out.spv> SOURCE <file.clcpp> [TRIPLE spir|spir64] [STD clc++2021|clc++]
#                     [FLAGS <clang flags...>] [DEPENDS <files...>])
#   C++ for OpenCL -> SPIR-V 1.0, at -O0 (clang-15 -O1 and above emits invalid IR for new[] in
#   C++ for OpenCL, which llvm-spirv-15 cannot read), validated. Defaults: spir64, clc++2021.
function(cldm_clcpp_to_spirv out)
  cmake_parse_arguments(A "" "SOURCE;TRIPLE;STD" "FLAGS;DEPENDS" ${ARGN})
  if(NOT A_TRIPLE)
    set(A_TRIPLE spir64)
  endif()
  if(NOT A_STD)
    set(A_STD clc++2021)
  endif()
  get_filename_component(src ${A_SOURCE} ABSOLUTE)
  add_custom_command(OUTPUT ${out}
    COMMAND ${CLDM_CLANG} -target ${A_TRIPLE} -x clcpp -cl-std=${A_STD} -c -emit-llvm -O0
            -fno-builtin -Xclang -no-opaque-pointers ${A_FLAGS} -o ${out}.bc ${src}
    COMMAND ${CLDM_LLVM_SPIRV} --spirv-max-version=1.0 ${out}.bc -o ${out}
    COMMAND ${CLDM_SPIRV_VAL} --target-env opencl2.2 ${out}
    DEPENDS ${src} ${A_DEPENDS}
    COMMENT "C++ for OpenCL -> SPIR-V ${out}" VERBATIM)
endfunction()

# cldm_hip_to_spirv(<out.spv> SOURCE <file.hip> [FLAGS <clang flags...>] [DEPENDS <files...>])
#   HIP device code -> SPIR-V 1.0: clang-15's HIP front end for spirv64 with no HIP headers or
#   device libraries (the kernel includes what it needs, examples/kernels/hip_device.h), then
#   llvm-spirv-15, validated. Not optimised, but not -O0 either: -O1 with LLVM's passes off. At
#   -O0 clang marks every function noinline, and pocl, which must inline the callers of the
#   work-item functions (calls here, not built-in variables) into the kernel, then fails
#   ("undefined symbol: _group_id_x"); with the passes on, clang-15 makes integer types
#   llvm-spirv-15 rejects (i3 for a switch).
function(cldm_hip_to_spirv out)
  cmake_parse_arguments(A "" "SOURCE" "FLAGS;DEPENDS" ${ARGN})
  get_filename_component(src ${A_SOURCE} ABSOLUTE)
  add_custom_command(OUTPUT ${out}
    COMMAND ${CLDM_CLANG} -x hip -std=c++17 --offload=spirv64 -nogpulib -nogpuinc
            --cuda-device-only -c -emit-llvm -O1 -Xclang -disable-llvm-passes
            -Xclang -no-opaque-pointers ${A_FLAGS}
            -o ${out}.bc ${src}
    COMMAND ${CLDM_LLVM_SPIRV} --spirv-max-version=1.0 ${out}.bc -o ${out}
    COMMAND ${CLDM_SPIRV_VAL} --target-env opencl2.2 ${out}
    DEPENDS ${src} ${A_DEPENDS}
    COMMENT "HIP -> SPIR-V ${out}" VERBATIM)
endfunction()
