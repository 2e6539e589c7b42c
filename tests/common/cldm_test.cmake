# tests/common/cldm_test.cmake — helpers to register tests.
#
# cldm_add_unit_test(<name> SOURCES <src...> [LIBS <lib...>])
#     cmocka executable run once by ctest (label "unit").
# cldm_add_e2e_test(<name> SOURCES <src...> [LIBS <lib...>] [NO_LAYER] [ARGS <arg...>]
#                   [TIMEOUT <s>] [ENV <VAR=value...>] [VENDORS <dir>])
#     cmocka executable linked against libOpenCL and the support/ helpers (cldm_file.h,
#     cldm_cl_device.h), registered twice: <name>.ocl-icd runs under
#     Debian's ocl-icd 2.3.1 and <name>.khronos under the Khronos OpenCL-ICD-Loader (put first
#     on LD_LIBRARY_PATH). Both see only our pocl 6.0 (OCL_ICD_VENDORS) and, unless NO_LAYER,
#     the layer through OPENCL_LAYERS. CLDM_TEST_LOADER tells the test which loader it expects.
#     VENDORS replaces the pocl vendors dir (the layer tests use a stub ICD).
# cldm_add_e2e_executable(<name> SOURCES <src...> [LIBS <lib...>])
#     the executable of cldm_add_e2e_test without registering it (for cldm_add_e2e_run).
if(NOT CLDM_VENDORS_DIR OR NOT EXISTS "${CLDM_VENDORS_DIR}")
  message(WARNING "CLDM_VENDORS_DIR not set or missing: end-to-end tests will fail (run tools/deps.sh)")
endif()
if(NOT CLDM_KHRONOS_LIBDIR OR NOT EXISTS "${CLDM_KHRONOS_LIBDIR}/libOpenCL.so.1")
  message(WARNING "CLDM_KHRONOS_LIBDIR not set or missing: Khronos-loader tests will fail (run tools/deps.sh)")
endif()
set(CLDM_POCL_CACHE_DIR ${CMAKE_BINARY_DIR}/pocl-cache)
# ASan configuration (CLDM_ASAN=ON): leaks of the driver stack are suppressed, ours are not.
# CLDM_ASAN_DETECT_LEAKS=0 turns the leak check off (tools/test.sh, for tests whose run
# LeakSanitizer's own tracer crashed twice; ASan and UBSan still check them).
set(CLDM_ASAN_DETECT_LEAKS 1 CACHE STRING "ASan builds: 1 = LeakSanitizer checks the tests, 0 = not")
set(CLDM_SANITIZER_ENV)
if(CLDM_ASAN)
  set(CLDM_SANITIZER_ENV
    "LSAN_OPTIONS=suppressions=${CMAKE_SOURCE_DIR}/tests/asan/lsan.supp:print_suppressions=0"
    "ASAN_OPTIONS=detect_leaks=${CLDM_ASAN_DETECT_LEAKS}:detect_odr_violation=0:allocator_may_return_null=1"
    "UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1")
endif()
# TSan configuration (CLDM_TSAN=ON): reports inside the driver stack are suppressed, ours are
# not; any report fails the test (exit code 66).
if(CLDM_TSAN)
  set(CLDM_SANITIZER_ENV
    "TSAN_OPTIONS=suppressions=${CMAKE_SOURCE_DIR}/tests/tsan/tsan.supp:halt_on_error=1:exitcode=66:second_deadlock_stack=1:print_suppressions=0")
endif()

function(cldm_add_unit_test name)
  cmake_parse_arguments(T "" "TIMEOUT" "SOURCES;LIBS;ARGS;ENV" ${ARGN})
  add_executable(${name} ${T_SOURCES})
  target_include_directories(${name} PRIVATE ${CMAKE_SOURCE_DIR}/tests/common)
  target_link_libraries(${name} PRIVATE PkgConfig::CMOCKA ${T_LIBS})
  add_test(NAME ${name} COMMAND ${name} ${T_ARGS})
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 300)
  endif()
  set_tests_properties(${name} PROPERTIES LABELS unit TIMEOUT ${T_TIMEOUT}
    ENVIRONMENT "${T_ENV};${CLDM_SANITIZER_ENV}")
endfunction()

function(cldm_add_e2e_executable name)
  cmake_parse_arguments(T "" "" "SOURCES;LIBS" ${ARGN})
  add_executable(${name} ${T_SOURCES})
  target_include_directories(${name} PRIVATE ${CMAKE_SOURCE_DIR}/tests/common)
  target_link_libraries(${name} PRIVATE PkgConfig::CMOCKA cldm_opencl cldm_support cldm_support_cl
                        ${OpenCL_LIBRARY} ${T_LIBS})
endfunction()

function(cldm_add_e2e_test name)
  cmake_parse_arguments(T "NO_LAYER" "TIMEOUT;VENDORS" "SOURCES;LIBS;ARGS;ENV" ${ARGN})
  cldm_add_e2e_executable(${name} SOURCES ${T_SOURCES} LIBS ${T_LIBS})
  set(pass)
  if(T_NO_LAYER)
    list(APPEND pass NO_LAYER)
  endif()
  foreach(key TIMEOUT VENDORS)
    if(T_${key})
      list(APPEND pass ${key} ${T_${key}})
    endif()
  endforeach()
  cldm_add_e2e_run(${name} ${name} ${pass} ARGS ${T_ARGS} ENV ${T_ENV})
endfunction()

# cldm_add_e2e_run(<test name> <executable target> [NO_LAYER] [ARGS ...] [ENV ...]
#                  [TIMEOUT <s>] [VENDORS <dir>])
#     Registers <test name>.ocl-icd and <test name>.khronos for an existing executable (to run
#     one test program with other arguments or environment).
function(cldm_add_e2e_run name exe)
  cmake_parse_arguments(T "NO_LAYER" "TIMEOUT;VENDORS" "ARGS;ENV" ${ARGN})
  if(NOT T_VENDORS)
    set(T_VENDORS ${CLDM_VENDORS_DIR})
  endif()
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 600)
  endif()
  # XDG_CACHE_HOME: where the layer keeps its records of program binaries (layer_binary.c)
  set(common_env "OCL_ICD_VENDORS=${T_VENDORS}" "POCL_CACHE_DIR=${CLDM_POCL_CACHE_DIR}"
      "XDG_CACHE_HOME=${CMAKE_BINARY_DIR}/xdg-cache"
      "CLDM_TEST_DATA_DIR=${CMAKE_CURRENT_BINARY_DIR}" ${CLDM_SANITIZER_ENV} ${T_ENV})
  if(NOT T_NO_LAYER)
    list(APPEND common_env "OPENCL_LAYERS=$<TARGET_FILE:cldm_layer>")
  endif()
  add_test(NAME ${name}.ocl-icd COMMAND ${exe} ${T_ARGS})
  set_tests_properties(${name}.ocl-icd PROPERTIES LABELS "e2e;ocl-icd" TIMEOUT ${T_TIMEOUT}
    ENVIRONMENT "${common_env};CLDM_TEST_LOADER=ocl-icd")
  add_test(NAME ${name}.khronos COMMAND ${exe} ${T_ARGS})
  set_tests_properties(${name}.khronos PROPERTIES LABELS "e2e;khronos" TIMEOUT ${T_TIMEOUT}
    ENVIRONMENT "${common_env};CLDM_TEST_LOADER=khronos;LD_LIBRARY_PATH=${CLDM_KHRONOS_LIBDIR}")
endfunction()
