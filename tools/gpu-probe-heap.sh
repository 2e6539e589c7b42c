#!/bin/sh
# tools/gpu-probe-heap.sh — on an NVIDIA machine, from a pack (tools/gpu-pack.sh): cldm_bench_alloc
# of this pack's allocator and of each --alt one at a few work-item counts, on the heap
# cldm_bench_alloc sizes for the launch (the blocks + 1/8 + 16 MiB, as small as a user's heap
# that holds them) and on a large one, a fresh image before every repetition: how the heap's
# size (the shards a class may use, cldm_class_shards) changes the rate. Environment variables
# such as CLDM_PROF pass through to the runs (an alt built with path counters prints them).
#   sh tools/gpu-probe-heap.sh PACKDIR OUTDIR [SIZES [COUNTS [LARGE_HEAP]]]
# SIZES: cldm_bench_alloc's CLDM_BENCH_SIZES (default 16,64,256); COUNTS: work-item counts,
# comma-separated (default 65536,262144); LARGE_HEAP (default 8G).
set -u
p=$(cd "$1" && pwd) out=$2 sizes=${3:-16,64,256} counts=${4:-65536,262144} large=${5:-8G}
mkdir -p "$out"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
. "$p/env.sh" # tools/gpu-env.sh
cldm_pack_env "$p" "$work"
run_one() { # name layer bindir datadir n heap
  (
    export CLDM_TEST_DATA_DIR="$4" CLDM_BENCH_MODULES=cldm_alloc.nv.spir64
    export CLDM_BENCH_SIZES="$sizes" CLDM_LIBCLC_DIR="$p/share/clc" OPENCL_LAYERS="$2"
    [ "$6" = sized ] || export CLDM_BENCH_HEAP="$6"
    exec timeout 60 "$3/cldm_bench_alloc" "$5" 3
  ) > "$out/$1-$5-$6.txt" 2>&1
  grep -a 'spir64 ' "$out/$1-$5-$6.txt" | sed "s/^/$1 n=$5 heap=$6 /"
}
for n in $(echo "$counts" | tr ',' ' '); do
  for heap in sized "$large"; do
    run_one pack "$p/lib/libcldm-layer.so" "$p/bin" "$p/share/spv/bench" "$n" "$heap"
    for alt in "$p"/alt/*/; do
      [ -f "$alt/lib/libcldm-layer.so" ] || continue
      run_one "alt-$(basename "$alt")" "$alt/lib/libcldm-layer.so" "$alt/bin" \
        "$alt/share/spv/bench" "$n" "$heap"
    done
  done
done
