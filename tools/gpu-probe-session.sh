#!/bin/sh
# tools/gpu-probe-session.sh — on an NVIDIA machine, one command for a change of the allocator's
# last resort: the pack's allocator tests, an A/B of suite cases between the pack's layer and
# --alt builds (tools/gpu-probe-regcap.sh, no register cap), and the suite's case 5 through a
# probe build's layer (an --alt built with -DCLDM_DEVICE_EXTRA_CFLAGS=-DCLDM_PROBE_COUNTERS=1)
# with its path counters per launch (tools/probe-counters.py) and CLDM_OOM's census of the heap
# after each launch with NULLs; everything in OUT/results.tgz.
#   sh tools/gpu-probe-session.sh PACK.tar.xz OUT [ALTS [CASES [REPEATS]]]
# ALTS: the --alt builds to compare with the pack's (comma-separated; default: every alt but
# `probe`); CASES (default 1,5) with case 1 up to 4 KiB; REPEATS (default 3). The probe build,
# if the pack has one, is the alt named `probe`. CLDM_PROBE_TESTS: run-tests.sh's -k pattern
# (default device_alloc; empty: no tests).
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
pack=$1 out=$2 cases=${4:-1,5} reps=${5:-3}
. "$root/tools/gpu-env.sh"
cldm_session_unpack "$pack" "$out" # $work, $p, $res
alts=${3:-$(for a in "$p"/alt/*/; do
  n=$(basename "$a")
  [ "$n" = probe ] || printf '%s,' "$n"
done)}
alts=${alts%,}
tests=${CLDM_PROBE_TESTS-device_alloc}
if [ -n "$tests" ]; then
  timeout 130 sh "$p/run-tests.sh" -p "$p" -o "$res/tests" -k "$tests" -t 60 -T 110 \
    > "$res/tests.log" 2>&1
  tail -3 "$res/tests.log"
fi
CLDM_REGCAP_SUITE_ARGS="--max-size 4096" sh "$root/tools/gpu-probe-regcap.sh" "$p" "$res/ab" 0 \
  "$reps" "$cases" "" "$alts" > "$res/ab.txt" 2>&1
grep -a "^suite\|^fill" "$res/ab.txt"
if [ -f "$p/alt/probe/lib/libcldm-layer.so" ]; then
  cldm_pack_env "$p" "$work"
  CLDM_OOM=report CLDM_PROBE_COUNTERS=1 timeout 300 "$p/bench-tree/bench/run.sh" \
    --prebuilt "$p/bench-tree/build" --layer "$p/alt/probe/lib/libcldm-layer.so" --no-cuda \
    --no-plots --scale full --out "$res/probe" -- --cases 5 > "$res/probe.log" 2>&1
  python3 "$root/tools/probe-counters.py" "$res/probe.log" --kernel k_malloc > "$res/probe.txt"
  # CLDM_OOM's census of the launches with NULLs, and the suite's line on the first of them
  grep -a "in free slots\|first NULL" "$res/probe.log" >> "$res/probe.txt"
  cat "$res/probe.txt"
fi
tar -czf "$out/results.tgz" -C "$out" res
