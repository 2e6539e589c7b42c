#!/bin/sh
# tools/gpu-ab-session.sh — one A/B session on an NVIDIA machine from a pack with --alt builds
# (tools/gpu-pack.sh), every run in one command so that all builds meet the same GPU: the
# pack's allocator tests, suite cases through each build's layer (tools/gpu-suite-ab.sh), one
# size again and again on one heap (tools/gpu-probe-repeat.sh) and cldm_bench_alloc (the pack's
# run-bench.sh, alts included), then everything in OUT/results.tgz (machines that hand back a
# few files only take it whole).
#   sh tools/gpu-ab-session.sh PACK.tar.xz OUT [CASES [CASE_SECONDS]]
# Environment: CLDM_AB_REPEAT (gpu-probe-repeat.sh's lists, default "4096,4096,4096"),
# CLDM_AB_REPEAT_HEAP (default 8G), CLDM_AB_TESTS (run-tests.sh -k pattern, default
# device_alloc_nv; empty skips the tests).
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
pack=$1 out=$2 cases=${3:-4,5,6} limit=${4:-100}
. "$root/tools/gpu-env.sh"
cldm_session_unpack "$pack" "$out" # $work, $p, $res
tests=${CLDM_AB_TESTS-device_alloc_nv}
if [ -n "$tests" ]; then
  "$p/run-tests.sh" -p "$p" -o "$res/tests" -k "$tests" > "$res/tests.log" 2>&1
  tail -3 "$res/tests.log"
fi
sh "$root/tools/gpu-suite-ab.sh" "$p" "$res/ab" "$cases" "$limit" > "$res/ab.txt" 2>&1
grep -a "fragmentation\|oom\|utilisation" "$res/ab.txt" | head -40
sh "$root/tools/gpu-probe-repeat.sh" "$p" "$res/repeat" "${CLDM_AB_REPEAT:-4096,4096,4096}" \
  "${CLDM_AB_REPEAT_HEAP:-8G}" > "$res/repeat.txt" 2>&1
cat "$res/repeat.txt"
CLDM_BENCH_HEAPS=${CLDM_BENCH_HEAPS:-8G} CLDM_BENCH_SIZES=${CLDM_BENCH_SIZES:-16,64,256,1024,4096} \
  CLDM_BENCH_PROBE= sh "$p/run-bench.sh" -p "$p" -o "$res/bench" -n 1048576 -s none \
  > "$res/bench.log" 2>&1
tail -40 "$res/bench.log"
tar -czf "$out/results.tgz" -C "$out" res
