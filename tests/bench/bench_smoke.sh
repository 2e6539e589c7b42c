#!/usr/bin/env bash
# tests/bench/bench_smoke.sh BUILD_DIR OUT_DIR — CI smoke test of the benchmark suite (ctest
# label "bench"): `bench/run.sh --quick` from the build directory, without CUDA, then checks
# that it wrote rows for every case, a meta file without failed checks, and a summary.md with
# every section. Then a run stopped by --opencl-timeout in its first case: it fails, says so in
# run.log, and leaves the meta data (marked unfinished) and the CSV header. No timing is
# asserted (the stopped run asks for far more repetitions than its limit allows).
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
for k in malloc free malloc_free bump prealloc; do
  grep -q "^opencl,throughput,$k," "$out/opencl.csv" || fail "opencl.csv: no throughput rows for $k"
done
grep -q '^opencl,overhead,noalloc,0,[0-9]*,nolayer,' "$out/opencl.csv" ||
  fail "opencl.csv: no overhead rows without the layer"
grep -q '"failures": ""' "$out/opencl.meta.json" || fail "opencl.meta.json reports failed checks"
for s in "1. Throughput" "2. Mixed sizes" "3. Divergent callers" "4. Heap utilisation" \
         "5. Fragmentation" "6. Out of memory" "7. A real workload" "8. Layer overhead"; do
  grep -q "^## $s" "$out/summary.md" || fail "summary.md: no section '$s'"
done
echo "bench_smoke: $out: every case ran, checks passed, summary.md complete"

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
