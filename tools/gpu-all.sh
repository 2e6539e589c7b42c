#!/bin/sh
# tools/gpu-all.sh — one session on an NVIDIA machine, from a pack tools/gpu-pack.sh made
# (copied into it as run-all.sh): the end-to-end and allocator tests (run-tests.sh), the
# allocator benchmark and the benchmark suite with CUDA side by side (run-bench.sh), each
# under its own time limit so that the whole session ends in time, then everything in one
# archive (machines that hand back a few files only take it whole).
#
#   run-all.sh [-o OUTDIR] [-T TEST_SECONDS] [-A ALLOC_SECONDS] [-B SUITE_SECONDS] [-s SCALES]
#              [-C CASE_SECONDS] [-b BUDGET]
#     -o  where results.tgz goes (default: $OUT, else ./gpu-all)
#     -T  time for the tests (default 150; 0 skips them)
#     -A  time for the allocator benchmark, the pack's --alt allocators included (default 450;
#         0 skips it)
#     -B  time for the suite, all scales together (default 300; 0 skips it)
#     -s  suite scales (default full)
#     -C  seconds each case of each program may run, in a process of its own (default 90): a
#         case that does not end loses only itself
#     -b  soft time limit of cases 1-3 per case and program (default 25; run-bench.sh -b)
# results.tgz holds tests/ (summary.md, logs/), tests.log, bench/ (alloc.txt, suite-<scale>/),
# bench.log and suite.log.
set -u
root=$(cd "$(dirname "$0")" && pwd)
out=${OUT:-$PWD/gpu-all}
tests=150 alloc=450 suite=300 scales=full case_timeout=90 budget=25
while [ $# -gt 0 ]; do
  case $1 in
    -o) out=$2; shift 2 ;;
    -T) tests=$2; shift 2 ;;
    -A) alloc=$2; shift 2 ;;
    -B) suite=$2; shift 2 ;;
    -s) scales=$2; shift 2 ;;
    -C) case_timeout=$2; shift 2 ;;
    -b) budget=$2; shift 2 ;;
    *) echo "usage: run-all.sh [-o DIR] [-T SECONDS] [-A SECONDS] [-B SECONDS] [-s SCALES]" \
         "[-C SECONDS] [-b SECONDS]" >&2
       exit 2 ;;
  esac
done
mkdir -p "$out"
res=$(mktemp -d)
trap 'rm -rf "$res"' EXIT
status=0
if [ "$tests" != 0 ]; then
  timeout $((tests + 30)) sh "$root/run-tests.sh" -o "$res/tests" -t 60 -T "$tests" \
    > "$res/tests.log" 2>&1 || status=1
  tail -1 "$res/tests.log"
fi
if [ "$alloc" != 0 ]; then
  timeout "$alloc" sh "$root/run-bench.sh" -o "$res/bench" -s none > "$res/bench.log" 2>&1 ||
    status=1
  tail -4 "$res/bench.log"
fi
if [ "$suite" != 0 ]; then
  rc=0
  timeout "$suite" sh "$root/run-bench.sh" -o "$res/bench" -n 0 -s "$scales" -C "$case_timeout" \
    -b "$budget" > "$res/suite.log" 2>&1 || rc=$?
  [ $rc = 0 ] || { status=1; echo "[run-all] the suite ended with status $rc"; }
  tail -2 "$res/suite.log"
fi
tar -C "$res" -czf "$out/results.tgz" .
echo "[run-all] $out/results.tgz ($(wc -c < "$out/results.tgz") bytes)"
exit $status
