#!/usr/bin/env bash
# tools/test.sh — README's test command: sets up dependencies, builds, and runs the whole test
# suite with ctest: unit tests, end-to-end tests on pocl 6.0 under ocl-icd and the Khronos
# loader, the bounded fuzzer run; then the layer's end-to-end tests again in an ASan+UBSan
# build (build-asan/; pocl's own leaks suppressed, ours not), and the unit tests and the
# layer's end-to-end tests (concurrent enqueues, builds and releases among them) in a
# ThreadSanitizer build (build-tsan/; suppressions, for the driver stack only, in
# tests/tsan/tsan.supp); last the Debian packages (tools/package.sh --check in build-deb/: their
# files, dependencies, an install and a removal in a scratch root). Extra arguments go to the
# first ctest run only and skip the later stages (e.g. tools/test.sh -R layer).
# CLDM_SKIP_ASAN=1 skips the ASan stage, CLDM_SKIP_TSAN=1 the TSan stage, CLDM_SKIP_PACKAGE=1
# the packages.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
"$root/tools/build.sh"
build=${CLDM_BUILD_DIR:-$root/build}
jobs=$(nproc)
(cd "$build" && ctest --output-on-failure -j "$jobs" "$@")
if [ $# -gt 0 ]; then
  exit 0
fi
if [ -z "${CLDM_SKIP_ASAN:-}" ]; then
  echo "== ASan + UBSan configuration (build-asan/)"
  asan=${CLDM_ASAN_BUILD_DIR:-$root/build-asan}
  CLDM_BUILD_DIR=$asan "$root/tools/build.sh" -DCLDM_ASAN=ON -DCLDM_BUILD_FUZZER=OFF
  # LeakSanitizer's tracer sometimes crashes as a process exits, after its tests passed ("Tracer
  # caught signal 11 ... LeakSanitizer has encountered a fatal error": seen on test_e2e_source
  # and test_example_demo, each passing when run again; on a Linux 6.18 VM, test_e2e_source
  # every time, run from its build folder, 190b319 as well). When that message is in the output,
  # the failed tests run once more (ctest --rerun-failed); a leak or any other failure fails
  # again. If the tracer crashes again, they run a third time without the leak check
  # (CLDM_ASAN_DETECT_LEAKS=0; ASan and UBSan still check them), and the build goes back to it.
  (cd "$asan" && ctest --output-on-failure -j "$jobs" -L unit)
  (cd "$asan" && {
    tracer_crashed() { grep -q 'LeakSanitizer has encountered a fatal error' "$1"; }
    rc=0
    ctest --output-on-failure -j "$jobs" -L ocl-icd -R 'test_layer|test_e2e|test_example' \
      2>&1 | tee e2e.log || rc=$?
    [ "$rc" = 0 ] || { tracer_crashed e2e.log &&
      echo "== LeakSanitizer's tracer crashed: the failed tests once more" && {
        rc=0
        ctest --output-on-failure --rerun-failed 2>&1 | tee e2e-again.log || rc=$?
        [ "$rc" = 0 ] || { tracer_crashed e2e-again.log &&
          echo "== its tracer crashed again: those tests once more without the leak check" &&
          cmake -DCLDM_ASAN_DETECT_LEAKS=0 . > /dev/null && rc=0 &&
          { ctest --output-on-failure --rerun-failed || rc=$?; } &&
          cmake -DCLDM_ASAN_DETECT_LEAKS=1 . > /dev/null && [ "$rc" = 0 ]; }
      }; }
  })
fi
if [ -z "${CLDM_SKIP_TSAN:-}" ]; then
  echo "== TSan configuration (build-tsan/)"
  tsan=${CLDM_TSAN_BUILD_DIR:-$root/build-tsan}
  CLDM_BUILD_DIR=$tsan "$root/tools/build.sh" -DCLDM_TSAN=ON -DCLDM_BUILD_FUZZER=OFF
  # ptx_translate whole takes minutes under TSan: ptx_translate_threads runs its threads test
  (cd "$tsan" && ctest --output-on-failure -j "$jobs" -L unit -E '^ptx_translate$' &&
    ctest --output-on-failure -j "$jobs" -L ocl-icd -R 'test_layer|test_e2e|test_example' &&
    ctest --output-on-failure -j "$jobs" -L khronos -R 'test_e2e_threads')
fi
if [ -z "${CLDM_SKIP_PACKAGE:-}" ]; then
  echo "== Debian packages (build-deb/)"
  "$root/tools/package.sh" --check
fi
