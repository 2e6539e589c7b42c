#!/bin/sh
# tests/device/probe_builds.sh — the allocator's probe builds (device/cl/cldm_probe.clh) compile:
# their code is in no default build, so nothing else would see it break. For the PTX route's
# allocator, as device/CMakeLists.txt builds it (its flags in NVPTX_CFLAGS):
#   1. the path counters (CLDM_PROBE_COUNTERS=1): bitcode that opt verifies, PTX (llc) with
#      atomic adds to the header's counter words;
#   2. the time probe (CLDM_PROBE_TIMES=1 as well): the same, and its PTX reads the SM's cycle
#      counter (clock64) and sums over a warp (redux.sync);
#   3. the time probe asked of a SPIR-V variant: refused, with the #error that names it.
#
#   probe_builds.sh CLANG OPT LLC SRC OUTDIR NVPTX_CFLAGS...
set -u
clang=$1 opt=$2 llc=$3 src=$4 out=$5
shift 5
mkdir -p "$out"
fail() {
  echo "FAIL: $*" >&2
  exit 1
}
build() { # NAME EXTRA-FLAGS...: bitcode, verified, then PTX
  name=$1
  shift
  "$clang" "$@" -o "$out/$name.bc" "$src" 2> "$out/$name.err" ||
    fail "$name: clang: $(head -5 "$out/$name.err")"
  "$opt" -verify -disable-output "$out/$name.bc" 2> "$out/$name.err" ||
    fail "$name: opt -verify: $(head -5 "$out/$name.err")"
  "$llc" -march=nvptx64 -mcpu=sm_80 -mattr=+ptx70 "$out/$name.bc" -o "$out/$name.ptx" \
    2> "$out/$name.err" || fail "$name: llc: $(head -5 "$out/$name.err")"
}

build counters "$@" -DCLDM_PROBE_COUNTERS=1
grep -q "atom.*add" "$out/counters.ptx" || fail "counters: no atomic add in the PTX"

build times "$@" -DCLDM_PROBE_COUNTERS=1 -DCLDM_PROBE_TIMES=1
grep -q "clock64" "$out/times.ptx" || fail "times: the PTX reads no clock64"
grep -q "redux.sync" "$out/times.ptx" || fail "times: the PTX sums no warp (redux.sync)"

# a SPIR-V variant: the same front end, the target and the route's macro changed
if "$clang" -target spir64 -x cl -cl-std=CL1.2 -Xclang -finclude-default-header -fsyntax-only \
  -I"$(dirname "$src")/../include" -DCLDM_ATOMICS_CL20=0 -DCLDM_NV=0 -DCLDM_PROBE_COUNTERS=1 \
  -DCLDM_PROBE_TIMES=1 "$src" 2> "$out/spirv-times.err"; then
  fail "spirv-times: a SPIR-V variant compiled with CLDM_PROBE_TIMES"
fi
grep -q "CLDM_PROBE_TIMES: the PTX route" "$out/spirv-times.err" ||
  fail "spirv-times: not refused by the #error: $(head -3 "$out/spirv-times.err")"
echo "probe builds: counters, times, the time probe refused on SPIR-V: ok"
