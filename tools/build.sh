#!/usr/bin/env bash
# tools/build.sh — dependencies (tools/deps.sh) + configure + build into $CLDM_BUILD_DIR
# (default: build/). Extra arguments go to cmake, e.g. tools/build.sh -DCLDM_ASAN=ON.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
"$root/tools/deps.sh"
. "$root/tools/env.sh"
build=${CLDM_BUILD_DIR:-$root/build}
cmake -S "$root" -B "$build" -G Ninja -DCLDM_VENDORS_DIR="$CLDM_VENDORS_DIR" \
  -DCLDM_KHRONOS_LIBDIR="$CLDM_KHRONOS_LIBDIR" "$@" >/dev/null
ninja -C "$build" -j "$(nproc)"
