#!/usr/bin/env bash
# tools/demo.sh — README's demo command: sets up dependencies, builds, and runs the demo
# (examples/) on pocl 6.0 with the layer enabled through OPENCL_LAYERS, under ocl-icd
# (CLDM_LOADER=khronos runs it under the Khronos OpenCL-ICD-Loader instead).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
"$root/tools/build.sh"
. "$root/tools/env.sh"
build=${CLDM_BUILD_DIR:-$root/build}
export OCL_ICD_VENDORS="$CLDM_VENDORS_DIR"
export OPENCL_LAYERS="$build/layer/libcldm-layer.so"
export POCL_CACHE_DIR="$build/pocl-cache"
if [ "${CLDM_LOADER:-ocl-icd}" = khronos ]; then
  export LD_LIBRARY_PATH="$CLDM_KHRONOS_LIBDIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi
echo "== demo: OPENCL_LAYERS=$OPENCL_LAYERS, loader ${CLDM_LOADER:-ocl-icd}"
exec "$build/examples/cldm-demo" "$@"
