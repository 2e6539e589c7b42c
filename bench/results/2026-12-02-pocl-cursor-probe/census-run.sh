#!/bin/sh
# $1 build dir, $2 sizes, $3 N, $4 module
cd $1 && export OCL_ICD_VENDORS=/var/cache/cldm-deps/pocl-6.0-6-x86_64/vendors POCL_CACHE_DIR=$PWD/pocl-cache XDG_CACHE_HOME=$PWD/xdg-cache
OPENCL_LAYERS=$PWD/layer/libcldm-layer.so CLDM_TEST_DATA_DIR=$PWD/bench/alloc CLDM_BENCH_MODULES=${4:-cldm_alloc.cl20spread.spir64} CLDM_BENCH_HEAP=1G CLDM_BENCH_SIZES=$2 CLDM_BENCH_KEEP_HEAP=1 CLDM_BENCH_VERBOSE=1 CLDM_BENCH_CENSUS=1 timeout 300 bench/alloc/cldm_bench_alloc $3 1
