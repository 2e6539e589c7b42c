#!/bin/sh
# $1 build, $2 out, rest: suite args
b=$1 out=$2; shift 2
cd $b && export OCL_ICD_VENDORS=/var/cache/cldm-deps/pocl-6.0-6-x86_64/vendors POCL_CACHE_DIR=$PWD/pocl-cache XDG_CACHE_HOME=$PWD/xdg-cache
mkdir -p $out
OPENCL_LAYERS=$PWD/layer/libcldm-layer.so timeout 500 ./bench/suite/cldm-bench-suite --out $out "$@"
