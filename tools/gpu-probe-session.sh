#!/bin/sh
# tools/gpu-probe-session.sh — on an NVIDIA machine, one command for a change of the allocator's
# last resort: the pack's allocator tests, an A/B of suite cases between the pack's layer and
# --alt builds (tools/gpu-probe-regcap.sh, no register cap), and the suite's case 5 through a
# probe build's layer (an --alt built with -DCLDM_DEVICE_EXTRA_CFLAGS=-DCLDM_PROBE_COUNTERS=1)
# with its path counters per launch (tools/probe-counters.py) and CLDM_OOM's census of the heap
# after each launch with NULLs; everything in OUT/results.tgz.
#   sh tools/gpu-probe-session.sh PACK.tar.xz OUT [ALTS [CASES [REPEATS]]]
# ALTS: the --alt builds to compare with the pack's (comma-separated; default: every alt whose
# name does not start with `probe`); CASES (default 1,5), case 1 up to 4 KiB (see below); REPEATS
# (default 3). The probe builds, if the pack has any, are the alts named `probe` or `probe-*`
# (each runs the probe cases; probe-prev, say, a probe build of the revision before); one named
# probe-times or probe-times-* is a time probe build (CLDM_PROBE_TIMES, device/cl/cldm_probe.clh:
# CLDM_DEVICE_NVPTX_EXTRA_CFLAGS="-DCLDM_PROBE_COUNTERS=1 -DCLDM_PROBE_TIMES=1"), whose table is
# tools/probe-counters.py --times.
# CLDM_PROBE_TESTS: run-tests.sh's -k pattern (default device_alloc; empty: no tests).
# CLDM_PROBE_SUITE_ARGS: the A/B's options for cldm-bench-suite (default "--max-size 4096";
# empty: case 1 at every size, whose larger sizes leave the pool as the next pass finds it).
# CLDM_PROBE_CASES: the cases the probe builds run (default 5; counters of k_malloc for case 5,
# of every kernel otherwise).
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
pack=$1 out=$2 cases=${4:-1,5} reps=${5:-3}
. "$root/tools/gpu-env.sh"
cldm_session_unpack "$pack" "$out" # $work, $p, $res
alts=${3:-$(for a in "$p"/alt/*/; do
  n=$(basename "$a")
  case $n in probe | probe-*) ;; *) printf '%s,' "$n" ;; esac
done)}
alts=${alts%,}
tests=${CLDM_PROBE_TESTS-device_alloc}
if [ -n "$tests" ]; then
  timeout 130 sh "$p/run-tests.sh" -p "$p" -o "$res/tests" -k "$tests" -t 60 -T 110 \
    > "$res/tests.log" 2>&1
  tail -3 "$res/tests.log"
fi
suite_args=${CLDM_PROBE_SUITE_ARGS---max-size 4096}
CLDM_REGCAP_SUITE_ARGS=$suite_args sh "$root/tools/gpu-probe-regcap.sh" "$p" "$res/ab" 0 \
  "$reps" "$cases" "" "$alts" > "$res/ab.txt" 2>&1
grep -a "^suite\|^fill" "$res/ab.txt"
pcases=${CLDM_PROBE_CASES:-5}
kernel=
[ "$pcases" = 5 ] && kernel="--kernel k_malloc"
cldm_pack_env "$p" "$work"
for a in "$p"/alt/probe "$p"/alt/probe-*; do
  [ -f "$a/lib/libcldm-layer.so" ] || continue
  n=$(basename "$a")
  times=
  case $n in probe-times | probe-times-*) times=--times ;; esac
  CLDM_OOM=report CLDM_PROBE_COUNTERS=1 timeout 300 "$p/bench-tree/bench/run.sh" \
    --prebuilt "$p/bench-tree/build" --layer "$a/lib/libcldm-layer.so" --no-cuda \
    --no-plots --scale full --out "$res/$n" -- --cases "$pcases" > "$res/$n.log" 2>&1
  python3 "$root/tools/probe-counters.py" "$res/$n.log" $kernel $times > "$res/$n.txt"
  # CLDM_OOM's census of the launches with NULLs, and the suite's line on the first of them
  grep -a "in free slots\|first NULL" "$res/$n.log" >> "$res/$n.txt"
  echo "== $n"
  cat "$res/$n.txt"
done
tar -czf "$out/results.tgz" -C "$out" res
