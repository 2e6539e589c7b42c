#!/usr/bin/env bash
# tests/nvidia/nvidia_session_test.sh BUILD_DIR OUT_DIR VENDORS_DIR — tools/nvidia tried on pocl
# (the ICD that VENDORS_DIR names) instead of NVIDIA's driver:
#   1. pack.sh --dir: the pack's layout and its tests.list;
#   2. the pack's run.sh: its own loader first in LD_LIBRARY_PATH (the one the dynamic linker
#      then loads), a vendors folder naming NVIDIA's ICD alone, OCL_ICD_FILENAMES unset, the
#      layer with --layer only; the demo through the layer under both loaders;
#   3. session.sh with every part: tests, the quick suite (cold rows, the docs section with a
#      stand-in peers harness's CSV), peers, an extra command; what comes back; the part of
#      several devices skipped, saying why, on pocl's one device;
#   4. the part of several devices (--multi) on pocl's two CPU devices (POCL_DEVICES="cpu
#      cpu"): case 9's rows of both devices, its summary and docs section;
#   5. its deadline: a part that would outlast it is stopped in time, the session fails;
#      an unknown option is refused.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=$1 out=$2 vendors=$3
fail() { echo "FAIL: $*" >&2; exit 1; }
rm -rf "$out"
mkdir -p "$out"
icd=$(head -1 "$(ls "$vendors"/*.icd | head -1)")
[ -f "$icd" ] || fail "no ICD library named in $vendors"

# 1. the pack (a quarter of a GiB: removed at the end, whatever happens)
pack=$out/pack
trap 'rm -rf "$pack"' EXIT
"$root/tools/nvidia/pack.sh" --build "$build" --dir "$pack" > /dev/null
for f in session.sh run-tests.sh run.sh env.sh tests.list REVISION MANIFEST \
  lib/libcldm-layer.so lib/libcldm-ptx.so lib/libLLVM-15.so.1 lib/ocl-icd/libOpenCL.so.1 \
  lib/khronos/libOpenCL.so.1 share/clc/nvptx64--nvidiacl.bc bin/cldm-demo \
  bench-tree/bench/run.sh bench-tree/bench/report_doc.py \
  bench-tree/build/bench/suite/cldm-bench-suite bench-tree/build/bench/suite/kernels/alloc.spv; do
  [ -e "$pack/$f" ] || fail "pack: no $f"
done
for t in test_e2e_alloc.ocl-icd test_e2e_alloc.khronos device_alloc_nv_basic.khronos \
  device_alloc_cl12_basic.ocl-icd test_example_demo.ocl-icd test_e2e_multidev.ocl-icd \
  test_e2e_multidev.khronos; do
  grep -q "^$t|" "$pack/tests.list" || fail "tests.list: no $t"
done
echo "ok   pack: layout and tests.list"

# 2. run.sh's environment
show_env() {
  OCL_ICD_FILENAMES=/nonexistent/libdriver.so "$pack/run.sh" "$@" sh -c \
    'printf "%s\n" "$LD_LIBRARY_PATH" "$OCL_ICD_VENDORS" "${OCL_ICD_FILENAMES-unset}" "${OPENCL_LAYERS-none}"'
}
show_env --layer > "$out/env.txt"
{ read -r llp; read -r ven; read -r names; read -r layers; } < "$out/env.txt"
case $llp in "$pack/lib/ocl-icd:$pack/lib:"*) ;; *) fail "run.sh: LD_LIBRARY_PATH $llp" ;; esac
[ "$(ls "$ven")" = driver.icd ] || fail "run.sh: vendors folder $ven holds $(ls "$ven")"
[ "$(cat "$ven/driver.icd")" = libnvidia-opencl.so.1 ] || fail "run.sh: the ICD is not NVIDIA's"
[ "$names" = unset ] || fail "run.sh: OCL_ICD_FILENAMES=$names"
[ "$layers" = "$pack/lib/libcldm-layer.so" ] || fail "run.sh --layer: OPENCL_LAYERS=$layers"
show_env --loader khronos > "$out/env.txt"
{ read -r llp; read -r ven; read -r names; read -r layers; } < "$out/env.txt"
case $llp in "$pack/lib/khronos:$pack/lib:"*) ;; *) fail "run.sh --loader khronos: $llp" ;; esac
[ "$layers" = none ] || fail "run.sh without --layer: OPENCL_LAYERS=$layers"
for loader in ocl-icd khronos; do
  got=$("$pack/run.sh" --loader $loader ldd "$pack/bin/cldm-demo" | awk '$1 == "libOpenCL.so.1" {print $3}')
  [ "$got" = "$pack/lib/$loader/libOpenCL.so.1" ] || fail "run.sh --loader $loader: loads $got"
done
if "$pack/run.sh" --loader other true 2> /dev/null; then fail "run.sh --loader other accepted"; fi
for loader in ocl-icd khronos; do
  "$pack/run.sh" --layer --loader $loader --icd "$icd" cldm-demo "$pack/data/examples/spv" \
    > "$out/demo-$loader.log" 2>&1 || fail "the demo under $loader: $(tail -3 "$out/demo-$loader.log")"
  grep -q "demo passed" "$out/demo-$loader.log" || fail "the demo under $loader did not pass"
done
echo "ok   run.sh: the pack's loader, NVIDIA's ICD alone, the demo through the layer on both loaders"

# 3. a session with every part
peers=$out/peers-harness
mkdir -p "$peers"
cat > "$peers/run.sh" << 'EOF'
#!/bin/sh
# a stand-in for the external peers harness: one CSV into $1
mkdir -p "$1"
{ echo "allocator,commit,size,threads,cold_ms,warm_ms,free_ms,bump_cold_ms,bump_warm_ms,nulls,overlaps"
  echo "StandIn,0123abc,16,16384,0.5,0.4,0.2,0.3,0.25,0,0"; } > "$1/standin.csv"
EOF
chmod +x "$peers/run.sh"
s1=$out/session
rc=0
"$pack/session.sh" --out "$s1" --icd "$icd" --tests 400 --tests-only test_e2e_alloc. \
  --suite 300 --scale quick --cases 1 --peers "$peers" \
  --extra 'ls "$1" > "$2/files.txt"' > "$out/session.log" 2>&1 || rc=$?
[ $rc = 0 ] || fail "session: exit status $rc: $(tail -5 "$out/session.log")"
for f in session.md tests.md suite.md performance.md results.tgz; do
  [ -s "$s1/$f" ] || fail "session: no $f"
done
for part in tests suite peers extra; do
  grep -q "^| $part | [0-9]* | [0-9]* | passed |$" "$s1/session.md" || fail "session.md: $part"
done
for loader in ocl-icd khronos; do
  grep -q "^| test_e2e_alloc.$loader | e2e | $loader | passed |" "$s1/tests.md" ||
    fail "tests.md: test_e2e_alloc.$loader"
done
grep -q "^| S | N | ours | StandIn | bump (OpenCL) |$" "$s1/performance.md" ||
  fail "performance.md: no table with the peer"
grep -q "^| 16 B | 16384 | [0-9.]* / [0-9.]* | 0.400 / 0.500 |" "$s1/performance.md" ||
  fail "performance.md: no warm / cold row at 16 B"
mkdir -p "$s1/x"
tar -xzf "$s1/results.tgz" -C "$s1/x"
for f in suite/opencl.csv suite/peers/standin.csv peers/standin.csv extra/files.txt \
  tests/summary.md session.md; do
  [ -s "$s1/x/$f" ] || fail "results.tgz: no $f"
done
for k in malloc bump; do
  grep -q "^opencl,throughput,$k,16,16384,,cold,ms," "$s1/x/suite/opencl.csv" ||
    fail "suite: no cold row of $k"
done
grep -q "^tests.list$" "$s1/x/extra/files.txt" || fail "extra: \$1 is not the pack"
grep -q "^| multi | | | skipped: 1 device(s) of one platform report cl_ext_device_malloc, 2 needed |$" \
  "$s1/session.md" || fail "session.md: multi not skipped on one device"
[ ! -e "$s1/multi.md" ] || fail "session: multi.md from one device"
echo "ok   session: tests, suite, peers and extra ran; results back; multi skipped on one device"

# 4. case 9 on two devices
s2=$out/session-multi
rc=0
POCL_DEVICES="cpu cpu" "$pack/session.sh" --out "$s2" --icd "$icd" --tests 0 --suite 0 \
  --scale quick --multi 300 > "$out/session-multi.log" 2>&1 || rc=$?
[ $rc = 0 ] || fail "session --multi: exit status $rc: $(tail -5 "$out/session-multi.log")"
grep -q "^| multi | [0-9]* | [0-9]* | passed |$" "$s2/session.md" || fail "session.md: multi"
grep -q "^## 9. Several devices" "$s2/multi.md" || fail "multi.md: no section 9"
grep -q "^### Several devices in one context" "$s2/multi-performance.md" ||
  fail "multi-performance.md: no table"
mkdir -p "$s2/x"
tar -xzf "$s2/results.tgz" -C "$s2/x"
for d in 0 1; do
  for p in alone together; do
    grep -q "^opencl,multidevice,malloc,16,[0-9]*,$p-$d,time,ms," "$s2/x/multi/opencl.csv" ||
      fail "results.tgz: no malloc row $p-$d"
  done
done
grep -q '"failures": ""' "$s2/x/multi/opencl.meta.json" || fail "multi: failed checks"
echo "ok   session: --multi ran case 9 on two devices; its summary and docs section back"

# 5. the deadline, and an unknown option
rc=0
"$pack/session.sh" --out "$out/late" --icd "$icd" --deadline 30 --tests 0 --suite 0 --multi 0 \
  --extra 'sleep 100' --extra-seconds 100 > "$out/late.log" 2>&1 || rc=$?
[ $rc = 1 ] || fail "a session past its deadline: exit status $rc"
# allowed: the deadline less the 20 s kept for the results; stopped when that ran out
awk -F' [|] ' '$1 == "| extra" { ok = $2 <= 10 && $2 >= 8 && $3 >= $2 && $3 <= $2 + 11 &&
    $4 == "stopped after " $2 " s |" } END { exit !ok }' "$out/late/session.md" ||
  fail "session.md: extra not stopped at the deadline: $(grep extra "$out/late/session.md")"
rc=0
"$pack/session.sh" --bogus 1 2> /dev/null || rc=$?
[ $rc = 2 ] || fail "an unknown option: exit status $rc"
echo "ok   session: a part stopped at the deadline; an unknown option refused"
