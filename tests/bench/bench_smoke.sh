#!/usr/bin/env bash
# tests/bench/bench_smoke.sh BUILD_DIR OUT_DIR — CI smoke test of the benchmark suite (ctest
# label "bench"): `bench/run.sh --quick` from the build directory, without CUDA, then checks
# that it wrote rows for every case, a meta file without failed checks, and a summary.md with
# every section. Then a run stopped by --opencl-timeout in its first case: it fails, says so in
# run.log, and leaves the meta data (marked unfinished) and the CSV header. No timing is
# asserted (the stopped run asks for far more repetitions than its limit allows). Then the
# per-case mode (--case-timeout): a case that cannot finish (100000 repetitions) is stopped
# while the next one runs, the parts are merged, and summary.md names the stopped case; and the
# time budget
# (--budget), under which a case asked for 1000 repetitions ends with what it measured; and
# --max-size, which leaves out the larger blocks of cases 1 and 3, with --local (the work-group
# size, which the meta data records). Also case 1's cold rows, report.py --doc's section of
# the first run, and the default result folder: the build directory's bench-results/. Then case
# 9 on pocl's two CPU devices (POCL_DEVICES="cpu cpu"): every row of every device, mode and size
# and no failed check, its tables in summary.md and in the --doc section; and with one device it
# is skipped, saying why, with no rows and no failure.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=$1 out=$2
rm -rf "$out"
"$root/bench/run.sh" --quick --prebuilt "$build" --out "$out" --no-cuda
fail() { echo "bench_smoke: $*" >&2; exit 1; }
[ "$(head -1 "$out/opencl.csv")" = "impl,case,kernel,size,n,param,metric,unit,value,median,reps,ops" ] ||
  fail "opencl.csv: unexpected header"
for c in throughput mixed divergent utilisation fragmentation oom workload overhead; do
  grep -q "^opencl,$c," "$out/opencl.csv" || fail "opencl.csv: no rows for case $c"
done
for k in malloc free malloc_free bump prealloc check; do
  grep -q "^opencl,throughput,$k," "$out/opencl.csv" || fail "opencl.csv: no throughput rows for $k"
done
grep -q '^opencl,overhead,noalloc,0,[0-9]*,nolayer,' "$out/opencl.csv" ||
  fail "opencl.csv: no overhead rows without the layer"
grep -q '"failures": ""' "$out/opencl.meta.json" || fail "opencl.meta.json reports failed checks"
for s in "1. Throughput" "2. Mixed sizes" "3. Divergent callers" "4. Heap utilisation" \
         "5. Fragmentation" "6. Out of memory" "7. A real workload" "8. Layer overhead"; do
  grep -q "^## $s" "$out/summary.md" || fail "summary.md: no section '$s'"
done
for k in malloc bump; do
  grep -q "^opencl,throughput,$k,16,[0-9]*,,cold,ms," "$out/opencl.csv" ||
    fail "opencl.csv: no cold row of case 1's $k"
done
grep -q "bench/run.sh --quick --prebuilt" "$out/command.txt" || fail "command.txt: no command"
echo "bench_smoke: $out: every case ran, checks passed, summary.md complete"

python3 "$root/bench/report.py" --doc "$out/section.md" "$out" ||
  fail "report.py --doc failed"
grep -q "^### malloc, one block size per launch" "$out/section.md" || fail "section: no malloc table"
grep -q "^| 16 B | [0-9]* | [0-9.]* / [0-9.]* | [0-9.]* / [0-9.]* |$" "$out/section.md" ||
  fail "section: no warm / cold row at 16 B"
grep -q "^bench/run.sh --quick --prebuilt" "$out/section.md" || fail "section: no command"
echo "bench_smoke: $out/section.md: docs/performance.md's section, warm and cold"

default_log=$out-default.log
"$root/bench/run.sh" --quick --prebuilt "$build" --no-cuda --no-plots -- --cases 6 \
  2> "$default_log" > /dev/null || fail "a run into the default folder failed"
folder=$(sed -n 's/^\[bench\] results: //p' "$default_log")
case $folder in /*) ;; *) folder=$PWD/$folder ;; esac # printed relative to the current folder
case $folder in "$(cd "$build" && pwd)"/bench-results/*) ;; *) fail "default folder: $folder" ;; esac
[ -s "$folder/opencl.csv" ] || fail "default folder: no opencl.csv in $folder"
rm -rf "$folder"
echo "bench_smoke: without --out, the results went into the build directory's bench-results/"

stopped=$out-stopped
rm -rf "$stopped"
if "$root/bench/run.sh" --scale medium --prebuilt "$build" --out "$stopped" --no-cuda \
  --opencl-timeout 3 -- --cases 1 --reps 1000; then
  fail "a run stopped in its first case (no rows) reported success"
fi
grep -q "stopped after 3 s (--opencl-timeout)" "$stopped/run.log" || fail "run.log: no stop line"
grep -q '"seconds": -1.0' "$stopped/opencl.meta.json" || fail "meta data not marked unfinished"
[ "$(head -1 "$stopped/opencl.csv")" = "$(head -1 "$out/opencl.csv")" ] ||
  fail "stopped run: no CSV header"
echo "bench_smoke: $stopped: the stopped run failed, with its meta data and the stop in run.log"

parts=$out-parts
rm -rf "$parts"
rc=0
"$root/bench/run.sh" --quick --prebuilt "$build" --out "$parts" --no-cuda --case-timeout 20 \
  -- --cases 1,5 --reps 100000 || rc=$?
[ $rc = 3 ] || fail "per-case run with a stopped case: exit status $rc, 3 expected"
grep -q "opencl case 1: stopped after 20 s (--case-timeout)" "$parts/run.log" ||
  fail "per-case run: no stop line for case 1"
grep -q "^opencl,fragmentation," "$parts/opencl.csv" || fail "per-case run: no rows for case 5"
grep -q '"stopped": "1"' "$parts/opencl.meta.json" || fail "per-case meta: not case 1 alone stopped"
grep -q '"cases": "1,5"' "$parts/opencl.meta.json" || fail "per-case meta: cases not merged"
grep -q "stopped before their end: OpenCL case(s) 1" "$parts/summary.md" ||
  fail "summary.md does not name the stopped case"
echo "bench_smoke: $parts: case 1 stopped, case 5 ran, parts merged"

budget=$out-budget
rm -rf "$budget"
"$root/bench/run.sh" --quick --prebuilt "$build" --out "$budget" --no-cuda --case-timeout 120 \
  --budget 0.5 -- --cases 1 --reps 1000 || fail "a run within its budget failed"
grep -q "time budget of 0.5 s spent after" "$budget/run.log" || fail "budget: no line"
grep -q "^opencl,throughput,malloc,16," "$budget/opencl.csv" || fail "budget: no rows"
if grep -q '^opencl,throughput,malloc,16,.*,1000,[0-9]*$' "$budget/opencl.csv"; then
  fail "budget: all 1000 repetitions ran"
fi
grep -q "time budget of 0.5 s per case" "$budget/summary.md" || fail "summary.md: no budget"
echo "bench_smoke: $budget: the budget ended case 1 with what it measured"

small=$out-maxsize
rm -rf "$small"
"$root/bench/run.sh" --quick --prebuilt "$build" --out "$small" --no-cuda \
  -- --cases 1,3 --max-size 64 --local 64 || fail "a run with --max-size failed"
grep -q '"local_size": 64,' "$small/opencl.meta.json" || fail "local: the meta data has no local_size 64"
grep -q "^opencl,throughput,malloc,64," "$small/opencl.csv" || fail "max-size: no 64 B rows"
grep -q "^opencl,divergent,malloc,64," "$small/opencl.csv" || fail "max-size: no divergent rows"
if awk -F, '($2 == "throughput" || $2 == "divergent") && $4 > 64 { found = 1 } END { exit !found }' \
  "$small/opencl.csv"; then
  fail "max-size: rows of blocks above 64 B"
fi
echo "bench_smoke: $small: --max-size 64 ran cases 1 and 3 up to 64 B only, work-groups of 64"

multi=$out-multi
rm -rf "$multi"
POCL_DEVICES="cpu cpu" "$root/bench/run.sh" --quick --prebuilt "$build" --out "$multi" --no-cuda \
  --no-plots -- --cases 9 || fail "case 9 on two devices failed"
grep -q '"failures": ""' "$multi/opencl.meta.json" || fail "case 9: failed checks"
grep -q '"multi_devices": \["[^"]*", "[^"]*"\]' "$multi/opencl.meta.json" ||
  fail "case 9: the meta data does not name two devices"
rows=$multi/opencl.csv
for s in 16 64 256 1024 4096; do
  for d in 0 1; do
    for k in malloc free bump; do
      for p in alone-$d together-$d; do
        grep -q "^opencl,multidevice,$k,$s,[0-9]*,$p,time,ms," "$rows" || fail "case 9: no $k $p at $s B"
      done
      grep -q "^opencl,multidevice,$k,$s,[0-9]*,alone-$d,wall,ms," "$rows" ||
        fail "case 9: no host clock of $k alone-$d at $s B"
    done
    for k in malloc bump; do
      for p in alone-$d together-$d; do
        grep -q "^opencl,multidevice,$k,$s,[0-9]*,$p,cold,ms,[0-9.e-]*,[0-9.e-]*,1," "$rows" ||
          fail "case 9: no cold $k $p at $s B"
      done
    done
  done
  for k in malloc free bump; do
    grep -q "^opencl,multidevice,$k,$s,[0-9]*,together-all,wall,ms," "$rows" ||
      fail "case 9: no host clock of $k together at $s B"
  done
done
if grep -q "^opencl,multidevice,[a-z]*,[0-9]*,[0-9]*,[a-z]*-2," "$rows"; then
  fail "case 9: rows of a third device"
fi
grep -q "^## 9. Several devices" "$multi/summary.md" || fail "summary.md: no section 9"
python3 "$root/bench/report.py" --doc "$multi/section.md" "$multi" || fail "case 9: --doc failed"
grep -q "^### Several devices in one context" "$multi/section.md" || fail "case 9: no --doc table"
grep -q "^| 16 B | [0-9]* | 1 | [0-9.]* / [0-9.]* | [0-9.]* |" "$multi/section.md" ||
  fail "case 9: no --doc row of device 1 at 16 B"
echo "bench_smoke: $multi: case 9 on two devices, every row, checks passed, its tables"

single=$out-single
rm -rf "$single"
env -u POCL_DEVICES "$root/bench/run.sh" --quick --prebuilt "$build" --out "$single" --no-cuda \
  --no-plots -- --cases 9 || fail "case 9 on one device failed"
grep -q "multidevice *skipped: 2 devices asked for (--devices), 1 of platform" "$single/run.log" ||
  fail "case 9 on one device: no line saying why it was skipped"
if grep -q "^opencl,multidevice," "$single/opencl.csv"; then fail "case 9 on one device: rows"; fi
echo "bench_smoke: $single: case 9 skipped on one device, saying why"
