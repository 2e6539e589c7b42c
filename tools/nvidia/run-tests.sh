#!/bin/sh
# tools/nvidia/run-tests.sh — copied into the pack (tools/nvidia/pack.sh) as run-tests.sh: runs,
# on an NVIDIA machine, every test of the pack's tests.list (tools/nvidia/tests.py: the
# end-to-end tests, the examples and the allocator's tests) under both of the pack's loaders
# (ocl-icd and the Khronos loader), with the layer enabled and NVIDIA's ICD as the only driver,
# each in a time limit of its own.
#
#   run-tests.sh [-o OUTDIR] [-k PATTERN] [-t SECONDS] [-T SECONDS] [--icd LIB]
#     -o     where logs/ and summary.md go (default: ./nvidia-tests)
#     -k     run only the tests whose name contains PATTERN
#     -t     time limit per test (default 60 s)
#     -T     time for the whole run (default 300 s): tests not started by then are listed as
#            not run
#     --icd  the OpenCL driver library (default libnvidia-opencl.so.1; another ICD, such as
#            pocl's, to try the pack elsewhere)
# Exit status 0 if every test passed. summary.md lists each test with its result and time,
# the GPU, the pack's revision and the demo's output, and the end of each failed test's log.
set -u
root=$(cd "$(dirname "$0")" && pwd)
out=$PWD/nvidia-tests
pattern="" icd=""
limit=60
total=300
usage="usage: run-tests.sh [-o OUTDIR] [-k PATTERN] [-t SECONDS] [-T SECONDS] [--icd LIB]"
while [ $# -gt 0 ]; do
  case $1 in
    -o) out=${2:?}; shift 2 ;;
    -k) pattern=${2?}; shift 2 ;;
    -t) limit=${2:?}; shift 2 ;;
    -T) total=${2:?}; shift 2 ;;
    --icd) icd=${2:?}; shift 2 ;;
    *) echo "$usage" >&2; exit 2 ;;
  esac
done
mkdir -p "$out/logs"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The driver alone in a vendors directory of its own; the loaders are the pack's (env.sh),
# not whatever libOpenCL.so.1 the machine has (summary.md names that one).
. "$root/env.sh"
cldm_pack_vendors "$work/vendors" "$icd"
base_llp=$root/lib:$(cldm_pack_fallbacks "$root" "$work/fallback")

summary=$out/summary.md
suite_of() { case $1 in device_alloc_*) echo allocator ;; *) echo e2e ;; esac; }
pass=0 fail=0 skipped=0
start=$(date +%s)
when=$(date -u '+%Y-%m-%d %H:%M UTC')
driver=$(cat "$work/vendors/driver.icd")
revision=$(head -1 "$root/REVISION")
manifest=$(md5sum "$root/MANIFEST" | cut -c1-12)
system_loader=$(ldconfig -p 2>/dev/null | grep -m1 'libOpenCL.so.1 ' | sed 's/.*=> //')
{
  echo "# cl_ext_device_malloc's tests through the layer on $driver"
  echo
  echo "Run $when on $(hostname)."
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null |
    sed 's/^/GPU: /'
  echo "Pack: revision $revision, MANIFEST checksum $manifest"
  echo "The machine's own libOpenCL.so.1: $system_loader (not used: the tests run on the pack's two loaders)"
  echo
  echo "Suites: *e2e* = the end-to-end tests and examples (tests/e2e, tests/examples);"
  echo "*allocator* = the device allocator's tests (tests/device) of the variants the PTX route"
  echo "uses (cl12, nv), reaching the driver through the layer."
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
  IFS='|' # the arguments, split at "|" only
  # shellcheck disable=SC2046
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
    # shellcheck disable=SC2163 # each e is KEY=VALUE
    for e in $envs; do [ -n "$e" ] && export "$e"; done
    IFS=$old_ifs
    exec timeout "$limit" "$root/bin/$exe" "$@"
  ) > "$log" 2>&1
  rc=$?
  t1=$(date +%s.%N)
  secs=$(echo "$t1 $t0" | awk '{printf "%.1f", $1 - $2}')
  if [ $rc -eq 0 ]; then
    result=passed
    # cmocka's skipped cases (test_e2e_multidev's on a machine with one GPU) pass: say so
    n_skip=$(sed -n 's/^ \([0-9]*\) SKIPPED TEST(S)$/\1/p' "$log" | tail -1)
    [ -z "$n_skip" ] || result="passed, $n_skip case(s) skipped"
    pass=$((pass + 1))
  else
    result="FAILED (exit $rc)"
    fail=$((fail + 1))
    echo "$name" >> "$work/failed"
  fi
  echo "| $name | $(suite_of "$exe") | $loader | $result | $secs |" >> "$summary"
  echo "$(suite_of "$exe") $rc" >> "$work/results"
  echo "[run-tests] $name: $result ($secs s)" >&2
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
echo "[run-tests] $pass passed, $fail failed, $skipped not run; summary in $summary" >&2
[ $fail -eq 0 ] && [ $skipped -eq 0 ]
