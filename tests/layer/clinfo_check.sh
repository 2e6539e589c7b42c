#!/bin/sh
# clinfo_check.sh — clinfo (Debian's) lists cl_ext_device_malloc for pocl with the layer
# enabled, and does not without it. Runs under whichever loader the environment selects.
# Usage: clinfo_check.sh <path of libcldm-layer.so> [layers|layer-path]
#   layers      enable the layer with OPENCL_LAYERS (both loaders)
#   layer-path  enable it with a .lay file in an OPENCL_LAYER_PATH directory (Khronos loader)
set -u
layer=$1
mode=${2:-layers}
if [ "$mode" = layer-path ]; then
  dir=$(mktemp -d); trap 'rm -rf "$dir"' EXIT
  echo "$layer" > "$dir/cldm.lay"
  with=$(env -u OPENCL_LAYERS OPENCL_LAYER_PATH="$dir" clinfo 2>&1) || { echo "clinfo failed: $with"; exit 1; }
else
  with=$(OPENCL_LAYERS=$layer clinfo 2>&1) || { echo "clinfo failed: $with"; exit 1; }
fi
without=$(env -u OPENCL_LAYERS clinfo 2>&1) || { echo "clinfo failed without layer"; exit 1; }
echo "$with" | grep -q 'Device Extensions .*cl_ext_device_malloc' || { echo "device extension missing"; exit 1; }
echo "$with" | grep -q 'Platform Extensions .*cl_ext_device_malloc' || { echo "platform extension missing"; exit 1; }
echo "$with" | grep -q 'cl_ext_device_malloc  *0x1000 (0.1.0)' || { echo "versioned entry missing"; exit 1; }
if echo "$without" | grep -q cl_ext_device_malloc; then echo "extension shown without the layer"; exit 1; fi
echo "clinfo shows cl_ext_device_malloc with the layer ($mode), and not without"
