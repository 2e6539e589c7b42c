#!/bin/sh
# tools/gpu-suite-ab.sh — on an NVIDIA machine, from a pack (tools/gpu-pack.sh): cases of the
# benchmark suite through this pack's layer and then through each --alt allocator's layer
# (alt/NAME/lib: its layer and the PTX backend beside it, which links its allocator), OpenCL
# only, one after another on the same GPU: an A/B comparison of whole workloads, where
# cldm_bench_alloc (tools/gpu-bench.sh) times single launch shapes.
#   sh tools/gpu-suite-ab.sh PACKDIR OUTDIR [CASES [CASE_SECONDS]]
# CASES: the suite's --cases list (default 5); CASE_SECONDS: bench/run.sh --case-timeout
# (default 90). OUTDIR/pack/ and OUTDIR/alt-NAME/ are bench/run.sh result folders.
set -u
p=$(cd "$1" && pwd) out=$2 cases=${3:-5} limit=${4:-90}
mkdir -p "$out"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
. "$p/env.sh" # tools/gpu-env.sh
cldm_pack_env "$p" "$work"
status=0
run_one() { # name layer
  echo "[gpu-suite-ab] $1: cases $cases" >&2
  "$p/bench-tree/bench/run.sh" --prebuilt "$p/bench-tree/build" --layer "$2" --no-cuda \
    --no-plots --scale full --out "$out/$1" --case-timeout "$limit" -- --cases "$cases" \
    > "$out/$1.log" 2>&1 || status=1
  grep -a "fragmentation\|utilisation\|oom\|throughput    S=" "$out/$1.log" | sed "s/^/$1 /"
}
run_one pack "$p/lib/libcldm-layer.so"
for alt in "$p"/alt/*/; do
  [ -f "$alt/lib/libcldm-layer.so" ] || continue
  run_one "alt-$(basename "$alt")" "$alt/lib/libcldm-layer.so"
done
exit $status
