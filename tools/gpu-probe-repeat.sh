#!/bin/sh
# tools/gpu-probe-repeat.sh — on an NVIDIA machine, from a pack (tools/gpu-pack.sh): one size
# allocated again and again on one heap (cldm_bench_alloc with CLDM_BENCH_KEEP_HEAP, every launch
# timed), for this pack's allocator and each --alt one, so that a slowdown that grows with what
# the heap served before shows which launch it starts at.
#   sh tools/gpu-probe-repeat.sh PACKDIR OUTDIR [SIZES [HEAP [N]]]
# SIZES: comma-separated lists, separated by ';' (default "8192,8192,8192;4096,4096,4096");
# HEAP: at least this large (default 16G); N: work-items (default 1048576). CLDM_BENCH_CENSUS=1
# in the environment adds cldm_bench_alloc's census of the heap after each launch.
set -u
p=$(cd "$1" && pwd) out=$2
lists=${3:-8192,8192,8192;4096,4096,4096} heap=${4:-16G} n=${5:-1048576}
mkdir -p "$out"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
. "$p/env.sh" # tools/gpu-env.sh
cldm_pack_env "$p" "$work"
run_one() { # name layer bindir datadir sizes
  (
    export CLDM_TEST_DATA_DIR="$4" CLDM_BENCH_MODULES=cldm_alloc.nv.spir64
    export CLDM_BENCH_HEAP="$heap" CLDM_BENCH_KEEP_HEAP=1 CLDM_BENCH_VERBOSE=1
    export CLDM_BENCH_SIZES="$5" CLDM_LIBCLC_DIR="$p/share/clc" OPENCL_LAYERS="$2"
    exec timeout 60 "$3/cldm_bench_alloc" "$n" 1
  ) > "$out/$1-$(echo "$5" | tr ',' '-').txt" 2>&1
  grep -a 'spir64 ' "$out/$1-$(echo "$5" | tr ',' '-').txt" | sed "s/^/$1 /"
}
echo "$lists" | tr ';' '\n' | while read -r sizes; do
  [ -n "$sizes" ] || continue
  run_one pack "$p/lib/libcldm-layer.so" "$p/bin" "$p/share/spv/bench" "$sizes"
  for alt in "$p"/alt/*/; do
    [ -f "$alt/lib/libcldm-layer.so" ] || continue
    run_one "alt-$(basename "$alt")" "$alt/lib/libcldm-layer.so" "$alt/bin" "$alt/share/spv/bench" \
      "$sizes"
  done
done
