# cmake/CldmOpenCL.cmake — compile OpenCL C to SPIR-V at build time (examples, end-to-end
# tests): clang-15 (typed pointers, as llvm-spirv-15 needs) + llvm-spirv-15 + spirv-val.
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
