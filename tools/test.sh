#!/usr/bin/env bash
# tools/test.sh — README's test command: sets up dependencies, builds, and runs the whole test
# suite with ctest (unit tests, end-to-end tests on pocl 6.0 under ocl-icd and the Khronos
# loader, the bounded fuzzer run). Extra arguments go to ctest (e.g. -R layer).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
"$root/tools/build.sh"
build=${CLDM_BUILD_DIR:-$root/build}
cd "$build"
ctest --output-on-failure -j "$(nproc)" "$@"
