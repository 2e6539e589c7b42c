#!/bin/sh
# tools/gpu-suite-session.sh — one session on an NVIDIA machine from a pack (tools/gpu-pack.sh)
# for a dated results table: the allocator tests of the pack (run-tests.sh -k device_alloc),
# every case of the benchmark suite through the pack's layer (OpenCL only), then the cases
# whose CUDA side ends in minutes again with CUDA's device malloc beside them (run-bench.sh),
# each step in its own time limit, everything in OUT/results.tgz (machines that hand back a few
# files only take it whole).
#   sh tools/gpu-suite-session.sh PACK.tar.xz OUT [CUDA_CASES [BUDGET]]
# CUDA_CASES: the suite's --cases for the run with CUDA (default 2,3,5,7: CUDA's malloc takes
# minutes for cases 1, 4 and 6 at 2^20 work-items); BUDGET: the suite's --budget (default 20 s;
# cases 1-3 and each part of case 5).
set -u
pack=$1 out=$2 cuda_cases=${3:-2,3,5,7} budget=${4:-20}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
tar -xJf "$pack" -C "$work"
p=$work/cldm-gpu-pack res=$out/res
mkdir -p "$res"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv > "$res/gpu.txt" 2>&1
head -1 "$p/REVISION" > "$res/revision.txt"
timeout 150 sh "$p/run-tests.sh" -p "$p" -o "$res/tests" -k device_alloc -t 60 -T 120 \
  > "$res/tests.log" 2>&1
tail -1 "$res/tests.log"
CLDM_SUITE_RUN_OPTS=--no-cuda timeout 240 sh "$p/run-bench.sh" -p "$p" -o "$res/opencl" -n 0 \
  -s full -C 80 -b "$budget" > "$res/opencl.log" 2>&1
tail -2 "$res/opencl.log"
timeout 280 sh "$p/run-bench.sh" -p "$p" -o "$res/cuda" -n 0 -s full -C 110 -b "$budget" \
  -- --cases "$cuda_cases" > "$res/cuda.log" 2>&1
tail -2 "$res/cuda.log"
tar -czf "$out/results.tgz" -C "$out" res
