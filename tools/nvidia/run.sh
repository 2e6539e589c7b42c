#!/bin/sh
# tools/nvidia/run.sh — copied into the pack (tools/nvidia/pack.sh) as run.sh: runs a command
# with the pack's libraries on NVIDIA's OpenCL driver, the way the pack's tests and benchmarks
# run (env.sh, cldm_pack_env): the pack's own loader first in LD_LIBRARY_PATH, a vendors
# directory naming NVIDIA's ICD alone (OCL_ICD_VENDORS, read by both loaders), libclc for the
# PTX backend; with --layer, the cl_ext_device_malloc layer (OPENCL_LAYERS).
#
#   run.sh [--layer] [--loader ocl-icd|khronos] [--icd LIB] COMMAND [ARGS...]
#     --layer   enable the layer (the pack's lib/libcldm-layer.so)
#     --loader  the pack's loader to use (default ocl-icd)
#     --icd     the OpenCL driver library (default libnvidia-opencl.so.1; another ICD, such as
#               pocl's, to try the pack elsewhere)
# Scratch files (the vendors directory, links to fallback libraries, the PTX cache) go under
# the pack's var/: the pack's folder must be writable.
set -eu
root=$(cd "$(dirname "$0")" && pwd)
. "$root/env.sh"
layer=0 loader=ocl-icd icd=""
while [ $# -gt 0 ]; do
  case $1 in
    --layer) layer=1; shift ;;
    --loader) loader=${2:?}; shift 2 ;;
    --icd) icd=${2:?}; shift 2 ;;
    --) shift; break ;;
    -*) echo "usage: run.sh [--layer] [--loader ocl-icd|khronos] [--icd LIB] COMMAND [ARGS...]" >&2
        exit 2 ;;
    *) break ;;
  esac
done
[ $# -gt 0 ] || { echo "usage: run.sh [--layer] [--loader ocl-icd|khronos] [--icd LIB] COMMAND [ARGS...]" >&2; exit 2; }
var=$root/var/$loader-$(printf %s "$icd" | cksum | cut -d' ' -f1) # one per loader and ICD
mkdir -p "$var"
cldm_pack_env "$root" "$var" "$loader" "$icd"
PATH=$root/bin:$PATH
export PATH
if [ $layer = 1 ]; then
  OPENCL_LAYERS=$root/lib/libcldm-layer.so
  export OPENCL_LAYERS
fi
exec "$@"
