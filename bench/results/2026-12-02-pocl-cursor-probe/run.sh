#!/bin/sh
# run.sh — the runs of this folder, on pocl (tools/env.sh's pocl and vendors), from a build dir:
#   sh run.sh BUILD bench MODULE SIZES N REPS   cldm_bench_alloc, fresh 1 GiB heaps
#   sh run.sh BUILD census SIZES N [MODULE]     one 1 GiB heap kept, every launch, census after
#   sh run.sh BUILD suite OUT SUITE-ARGS...     cldm-bench-suite (e.g. --cases 4,5)
set -eu
repo=$(cd "$(dirname "$0")/../../.." && pwd)
. "$repo/tools/env.sh"
cd "$1"
mode=$2
shift 2
export OCL_ICD_VENDORS="$CLDM_VENDORS_DIR" POCL_CACHE_DIR="$PWD/pocl-cache"
export XDG_CACHE_HOME="$PWD/xdg-cache" OPENCL_LAYERS="$PWD/layer/libcldm-layer.so"
case $mode in
bench | census) export CLDM_TEST_DATA_DIR="$PWD/bench/alloc" CLDM_BENCH_HEAP=1G ;;
esac
case $mode in
bench)
  CLDM_BENCH_MODULES=$1 CLDM_BENCH_SIZES=$2 timeout 600 bench/alloc/cldm_bench_alloc "$3" "$4" \
    2>&1 | grep -a "spir64 " ;;
census)
  CLDM_BENCH_MODULES=${3:-cldm_alloc.cl20spread.spir64} CLDM_BENCH_SIZES=$1 \
    CLDM_BENCH_KEEP_HEAP=1 CLDM_BENCH_VERBOSE=1 CLDM_BENCH_CENSUS=1 \
    timeout 300 bench/alloc/cldm_bench_alloc "$2" 1 ;;
suite)
  out=$1
  shift
  mkdir -p "$out"
  timeout 500 ./bench/suite/cldm-bench-suite --out "$out" "$@" ;;
*)
  echo "run.sh: unknown mode $mode (bench, census, suite)" >&2
  exit 2 ;;
esac
