#!/bin/sh
# tools/gpu-suite-session.sh — one session on an NVIDIA machine from a pack (tools/gpu-pack.sh)
# for a dated results table: the allocator tests of the pack (run-tests.sh -k device_alloc),
# the suite's cases whose CUDA side takes minutes through the pack's layer alone (OpenCL only),
# the others with CUDA's device malloc beside them (run-bench.sh), and, where the pack has --alt
# builds, a few cases through each alt's layer as well (tools/gpu-suite-ab.sh); each step in
# its own time limit, everything in OUT/results.tgz (machines that hand back a few files only
# take it whole).
#   sh tools/gpu-suite-session.sh PACK.tar.xz OUT
# Environment: CLDM_SESSION_OCL_CASES (default 1,4,6,8: CUDA's malloc takes minutes for cases
# 1, 4 and 6 at 2^20 work-items), CLDM_SESSION_CUDA_CASES (default 2,3,5,7),
# CLDM_SESSION_AB_CASES (default 5,6), CLDM_SESSION_BUDGET (the suite's --budget, default 20 s:
# cases 1-3 and each part of case 5), CLDM_SESSION_TESTS (the tests' -k pattern, default
# device_alloc). A list set empty skips its step.
set -u
pack=$1 out=$2
ocl_cases=${CLDM_SESSION_OCL_CASES-1,4,6,8} cuda_cases=${CLDM_SESSION_CUDA_CASES-2,3,5,7}
ab_cases=${CLDM_SESSION_AB_CASES-5,6} budget=${CLDM_SESSION_BUDGET:-20}
tests=${CLDM_SESSION_TESTS-device_alloc}
root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/tools/gpu-env.sh"
cldm_session_unpack "$pack" "$out" # $work, $p, $res
head -1 "$p/REVISION" > "$res/revision.txt"
if [ -n "$tests" ]; then
  timeout 130 sh "$p/run-tests.sh" -p "$p" -o "$res/tests" -k "$tests" -t 60 -T 110 \
    > "$res/tests.log" 2>&1
  tail -1 "$res/tests.log"
fi
if [ -n "$ocl_cases" ]; then
  CLDM_SUITE_RUN_OPTS=--no-cuda timeout 150 sh "$p/run-bench.sh" -p "$p" -o "$res/opencl" -n 0 \
    -s full -C 80 -b "$budget" -- --cases "$ocl_cases" > "$res/opencl.log" 2>&1
  tail -1 "$res/opencl.log"
fi
if [ -n "$cuda_cases" ]; then
  timeout 270 sh "$p/run-bench.sh" -p "$p" -o "$res/cuda" -n 0 -s full -C 110 -b "$budget" \
    -- --cases "$cuda_cases" > "$res/cuda.log" 2>&1
  tail -1 "$res/cuda.log"
fi
if [ -n "$ab_cases" ] && [ -n "$(ls "$p/alt" 2>/dev/null)" ]; then
  timeout 150 sh "$root/tools/gpu-suite-ab.sh" "$p" "$res/ab" "$ab_cases" 60 > "$res/ab.txt" 2>&1
  grep -a "fill\|oom" "$res/ab.txt" | head -20
fi
tar -czf "$out/results.tgz" -C "$out" res
