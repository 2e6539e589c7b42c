#!/bin/sh
# tools/gpu-run.sh — runs, on an NVIDIA machine, the end-to-end tests and the demo of a pack that
# tools/gpu-pack.sh made (it is copied into the pack as run-tests.sh): every test of tests.list
# (tools/gpu-tests.py) under ocl-icd and the Khronos loader (both carried by the pack), with
# the layer enabled and NVIDIA's ICD as the only driver.
#
#   run-tests.sh [-p PACKDIR] [-o OUTDIR] [-k PATTERN] [-t SECONDS] [-T SECONDS]
#     -p  the unpacked pack (default: the script's own directory; first option only)
#     -o  where logs and summary.md go (default: $OUT if set, else ./gpu-results)
#     -k  run only tests whose name contains PATTERN
#     -t  time limit per test (default 240 s)
#     -T  time for the whole run (default 540 s): tests not started by then are listed as
#         not run
# CLDM_GPU_RUN_ICD names another ICD library (to try the runner with pocl, say).
# Exit status 0 if every test passed. summary.md lists each test with its result and time,
# the device (clinfo-like lines from the demo) and the pack's MANIFEST checksum.
set -u
root=$(cd "$(dirname "$0")" && pwd)
[ "${1:-}" = -p ] && { root=$(cd "$2" && pwd); shift 2; }
out=${OUT:-$PWD/gpu-results}
pattern=""
limit=240
total=540
while [ $# -gt 0 ]; do
  case $1 in
    -o) out=$2; shift 2 ;;
    -k) pattern=$2; shift 2 ;;
    -t) limit=$2; shift 2 ;;
    -T) total=$2; shift 2 ;;
    *) echo "usage: run-tests.sh [-o OUTDIR] [-k PATTERN] [-t SECONDS] [-T SECONDS]" >&2; exit 2 ;;
  esac
done
mkdir -p "$out/logs"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# NVIDIA's ICD only, through a vendors directory of our own (OCL_ICD_VENDORS, read by both
# loaders). The loaders are the pack's own (lib/ocl-icd: Debian 12's ocl-icd 2.3.1,
# lib/khronos: the Khronos loader of tools/deps.sh), not whatever libOpenCL.so.1 the machine
# has (summary.md names that one).
. "$root/env.sh"
cldm_pack_vendors "$work/vendors"
base_llp=$root/lib:$(cldm_pack_fallbacks "$root" "$work/fallback")

summary=$out/summary.md
suite_of() { case $1 in device_alloc_*) echo allocator ;; *) echo e2e ;; esac; }
pass=0 fail=0 skipped=0
start=$(date +%s)
{
  echo "# cl_ext_device_malloc on NVIDIA's OpenCL driver through the layer"
  echo
  echo "Run $(date -u '+%Y-%m-%d %H:%M UTC') on $(hostname)."
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null |
    sed 's/^/GPU: /'
  echo "Pack: $(md5sum "$root/MANIFEST" | cut -c1-12) (MANIFEST checksum)"
  echo "The machine's own libOpenCL.so.1: $(ldconfig -p 2>/dev/null | grep -m1 'libOpenCL.so.1 ' |
    sed 's/.*=> //') (not used: the tests run on the pack's two loaders)"
  echo
  echo "Suites: *e2e* = the end-to-end tests and examples (tests/e2e, tests/examples);"
  echo "*allocator* = the device allocator's tests (tests/device) of the variant the PTX route"
  echo "uses, reaching NVIDIA's driver through the layer."
  echo
  echo "| test | suite | loader | result | seconds |"
  echo "|---|---|---|---|---|"
} > "$summary"

while IFS='|' read -r name loader exe datadir envs args; do
  [ -n "$name" ] || continue
  case $name in *"$pattern"*) ;; *) continue ;; esac
  if [ $(($(date +%s) - start)) -ge "$total" ]; then
    echo "| $name | $(suite_of "$exe") | $loader | not run (time) | |" >> "$summary"
    skipped=$((skipped + 1))
    continue
  fi
  data=$(echo "$datadir" | sed "s|^@/|$root/data/|")
  old_ifs=$IFS
  IFS='|'
  # shellcheck disable=SC2086
  set -- $(echo "$args" | sed "s|@/|$root/data/|g")
  IFS=$old_ifs
  case $exe in cldm-*) [ $# -gt 0 ] || set -- "$root/data/examples/spv" ;; esac
  llp=$root/lib/$loader:$base_llp
  mkdir -p "$work/dumps-$loader"
  log=$out/logs/$name.log
  t0=$(date +%s.%N)
  (
    export LD_LIBRARY_PATH="$llp" CLDM_TEST_LOADER="$loader" OCL_ICD_VENDORS="$work/vendors"
    export CLDM_TEST_LOADER_DIR="$root/lib/$loader"
    export OPENCL_LAYERS="$root/lib/libcldm-layer.so" CLDM_TEST_DATA_DIR="$data"
    export CLDM_LIBCLC_DIR="$root/share/clc" CLDM_DUMP_DIR="$work/dumps-$loader"
    export CLDM_CACHE_DIR="$work/ptx-cache"
    mkdir -p "$CLDM_CACHE_DIR"
    old_ifs=$IFS
    IFS=,
    for e in $envs; do [ -n "$e" ] && export "$e"; done
    IFS=$old_ifs
    exec timeout "$limit" "$root/bin/$exe" "$@"
  ) > "$log" 2>&1
  rc=$?
  t1=$(date +%s.%N)
  secs=$(echo "$t1 $t0" | awk '{printf "%.1f", $1 - $2}')
  if [ $rc -eq 0 ]; then
    result=passed
    pass=$((pass + 1))
  else
    result="FAILED (exit $rc)"
    fail=$((fail + 1))
    echo "$name" >> "$work/failed"
  fi
  echo "| $name | $(suite_of "$exe") | $loader | $result | $secs |" >> "$summary"
  echo "$(suite_of "$exe") $rc" >> "$work/results"
  echo "[gpu-run] $name: $result ($secs s)" >&2
done < "$root/tests.list"

{
  echo
  echo "$pass passed, $fail failed, $skipped not run."
  for suite in e2e allocator; do
    awk -v s="$suite" '$1 == s { n++; if ($2 == 0) p++ } END { printf "- %s: %d of %d passed\n", s, p, n }' \
      "$work/results" 2>/dev/null
  done
  echo
  echo "## The demo (ocl-icd)"
  echo
  echo '```'
  cat "$out/logs/test_example_demo.ocl-icd.log" 2>/dev/null
  echo '```'
} >> "$summary"
[ -f "$work/failed" ] && while read -r name; do
  { echo; echo "## $name (failed: last 40 lines of its output)"; echo '```';
    tail -40 "$out/logs/$name.log"; echo '```'; } >> "$summary"
done < "$work/failed"
# the pack's location means nothing elsewhere: replaced by <pack>
sed -i "s#$root/#<pack>/#g" "$summary"
echo "[gpu-run] $pass passed, $fail failed; summary in $summary" >&2
[ $fail -eq 0 ] && [ $skipped -eq 0 ]
