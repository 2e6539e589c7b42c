#!/bin/sh
# $1 build dir, $2 module, $3 sizes, $4 N, $5 reps
cd $1 && export OCL_ICD_VENDORS=/var/cache/cldm-deps/pocl-6.0-6-x86_64/vendors POCL_CACHE_DIR=$PWD/pocl-cache XDG_CACHE_HOME=$PWD/xdg-cache
OPENCL_LAYERS=$PWD/layer/libcldm-layer.so CLDM_TEST_DATA_DIR=$PWD/bench/alloc CLDM_BENCH_MODULES=$2 CLDM_BENCH_HEAP=1G CLDM_BENCH_SIZES=$3 timeout 600 bench/alloc/cldm_bench_alloc $4 $5 2>&1 | grep -a "spir64 "
