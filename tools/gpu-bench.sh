#!/bin/sh
# tools/gpu-bench.sh — the benchmarks on an NVIDIA machine, from a pack tools/gpu-pack.sh made
# (copied into it as run-bench.sh), with NVIDIA's ICD as the only driver and the pack's
# ocl-icd, as tools/gpu-run.sh runs the tests:
#   1. cldm_bench_alloc: the allocator modules timed directly (bench/alloc/README.md), the
#      route's variants nv and cl12, N work-items, sizes CLDM_BENCH_SIZES; then nv again with
#      heaps of at least each size of CLDM_BENCH_HEAPS (default "1G 8G"; empty: none), into
#      alloc-heap-<size>.txt; then sizes one after another on one heap, as the suite's case 1
#      runs them, every launch timed as it ends (CLDM_BENCH_PROBE=SIZES:HEAP, default
#      16,32,...,8192:16G; empty: none), into alloc-probe.txt;
#      for each allocator the pack has under alt/NAME/ (tools/gpu-pack.sh --alt), its nv
#      variant on the default heap and on those heaps, into alt-NAME-alloc-heap-<size>.txt
#      (CLDM_BENCH_ALT_MODULES replaces the nv variant in the runs after the first, e.g. to try
#      a pack on pocl);
#   2. the suite (bench/run.sh --prebuilt: every case through the layer as an application
#      would, then CUDA's device malloc on the same GPU with the same heap sizes), once per
#      scale given.
#
#   run-bench.sh [-p PACKDIR] [-o OUTDIR] [-n N] [-s SCALES] [-C CASE_SECONDS] [-b BUDGET]
#                [-- SUITE OPTIONS]
#     -o  results (default: $OUT, else ./gpu-bench): alloc.txt, alloc-heap-*.txt, suite-<scale>/ (bench/run.sh's
#         folder: opencl.csv, cuda.csv, meta, summary.md; plots where matplotlib exists)
#     -n  work-items of cldm_bench_alloc (default 1048576); 0 skips it
#     -s  suite scales, comma-separated (default full); "none" skips the suite
#     -C  seconds each case of each program may run, in a process of its own (bench/run.sh
#         --case-timeout; default 150): a case that hangs or takes minutes loses only itself
#     -b  soft time limit of cases 1-3 per case and program (bench/run.sh --budget; default 45,
#         0: none): shapes reached after it are skipped, so that a slow case reports the others
#   CLDM_SUITE_RUN_OPTS: more options of bench/run.sh (e.g. --no-cuda); SUITE OPTIONS go to the
#   suite's program itself
set -u
root=$(cd "$(dirname "$0")" && pwd)
[ "${1:-}" = -p ] && { root=$(cd "$2" && pwd); shift 2; }
out=${OUT:-$PWD/gpu-bench}
n=1048576 scales=full case_timeout=150 budget=45
while [ $# -gt 0 ]; do
  case $1 in
    -o) out=$2; shift 2 ;;
    -n) n=$2; shift 2 ;;
    -s) scales=$2; shift 2 ;;
    -C) case_timeout=$2; shift 2 ;;
    -b) budget=$2; shift 2 ;;
    --) shift; break ;;
    *) echo "usage: run-bench.sh [-p PACKDIR] [-o OUTDIR] [-n N] [-s SCALES] [-C SECONDS]" \
         "[-b SECONDS] [-- ...]" >&2
       exit 2 ;;
  esac
done
mkdir -p "$out"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
. "$root/env.sh" # tools/gpu-env.sh
cldm_pack_env "$root" "$work"
status=0

# run_alloc OUT SECONDS BINDIR DATADIR MODULES HEAP SIZES REPS [VERBOSE]: BINDIR's
# cldm_bench_alloc on DATADIR's modules, $n work-items, into OUT (and stderr), under a time
# limit; HEAP empty: the default heap; VERBOSE, KEEP non-empty: CLDM_BENCH_VERBOSE=1,
# CLDM_BENCH_KEEP_HEAP=1
run_alloc() {
  (
    export OPENCL_LAYERS="${layer:-$root/lib/libcldm-layer.so}" CLDM_TEST_DATA_DIR="$4"
    export CLDM_LIBCLC_DIR="$root/share/clc" # an alt's PTX backend has none beside it
    export CLDM_BENCH_MODULES="$5" CLDM_BENCH_SIZES="$7"
    [ -z "$6" ] || export CLDM_BENCH_HEAP="$6"
    [ -z "${9:-}" ] || export CLDM_BENCH_VERBOSE=1
    [ -z "${10:-}" ] || export CLDM_BENCH_KEEP_HEAP=1
    exec timeout "$2" "$3/cldm_bench_alloc" "$n" "$8"
  ) > "$1" 2>&1 || status=1
  cat "$1" >&2
}

if [ "$n" != 0 ]; then
  nv=${CLDM_BENCH_ALT_MODULES:-cldm_alloc.nv.spir64}
  echo "[gpu-bench] cldm_bench_alloc, $n work-items" >&2
  run_alloc "$out/alloc.txt" 300 "$root/bin" "$root/share/spv/bench" \
    "${CLDM_BENCH_MODULES:-cldm_alloc.nv.spir64,cldm_alloc.cl12.spir64}" "" \
    "${CLDM_BENCH_SIZES:-16,64,256,1024,4096}" 3
  # the nv variant again on larger heaps (more shards per class, cldm_class_shards)
  for heap in ${CLDM_BENCH_HEAPS-1G 8G}; do
    echo "[gpu-bench] cldm_bench_alloc, $n work-items, heaps of at least $heap" >&2
    run_alloc "$out/alloc-heap-$heap.txt" 120 "$root/bin" "$root/share/spv/bench" "$nv" "$heap" \
      "${CLDM_BENCH_SIZES:-16,256,4096}" 3
  done
  # the pack's other allocators (tools/gpu-pack.sh --alt), timed the same way in the same run
  layer=""
  for alt in "$root"/alt/*/; do
    [ -x "$alt/bin/cldm_bench_alloc" ] || continue
    name=$(basename "$alt")
    # its own layer and PTX backend: the nv variant imports the allocator, which the PTX
    # backend links in, so this pack's backend would time this pack's allocator (and on a
    # heap laid out by the other's host code, when the layouts differ)
    layer=$alt/lib/libcldm-layer.so
    if [ ! -f "$layer" ]; then
      echo "[gpu-bench] alt $name: no lib/libcldm-layer.so (a pack older than this script)," \
        "skipped" >&2
      layer=""
      continue
    fi
    for heap in default ${CLDM_BENCH_HEAPS-1G 8G}; do
      echo "[gpu-bench] alt $name ($(head -1 "$alt/REVISION")): cldm_bench_alloc, $n work-items," \
        "heap $heap" >&2
      h=$heap
      [ "$h" = default ] && h=""
      run_alloc "$out/alt-$name-alloc-heap-$heap.txt" 120 "$alt/bin" "$alt/share/spv/bench" "$nv" \
        "$h" "${CLDM_BENCH_SIZES:-16,256,4096}" 3
    done
    layer=""
  done
  # the full-scale suite's case 1 sizes in its order on one heap (CLDM_BENCH_KEEP_HEAP), every
  # launch's time printed as it ends: how the heap's history slows later sizes
  probe=${CLDM_BENCH_PROBE-16,32,64,128,256,512,1024,2048,4096,8192:16G}
  if [ -n "$probe" ]; then
    echo "[gpu-bench] cldm_bench_alloc, $n work-items, sizes ${probe%%:*} on one heap of" \
      "${probe#*:}" >&2
    run_alloc "$out/alloc-probe.txt" 90 "$root/bin" "$root/share/spv/bench" "$nv" "${probe#*:}" \
      "${probe%%:*}" 1 verbose keep
  fi
fi

for scale in $(echo "$scales" | tr ',' ' '); do
  [ "$scale" = none ] && break
  echo "[gpu-bench] suite, scale $scale" >&2
  if [ $# -gt 0 ]; then set -- -- "$@"; fi
  "$root/bench-tree/bench/run.sh" --prebuilt "$root/bench-tree/build" --layer \
    "$root/lib/libcldm-layer.so" --scale "$scale" --out "$out/suite-$scale" \
    --case-timeout "$case_timeout" $([ "$budget" = 0 ] || echo --budget "$budget") \
    ${CLDM_SUITE_RUN_OPTS:-} "$@" ||
    status=1
  [ "${1:-}" = -- ] && shift
done
sed -i "s#$root/#<pack>/#g" "$out"/alloc.txt "$out"/suite-*/run.log 2>/dev/null
exit $status
