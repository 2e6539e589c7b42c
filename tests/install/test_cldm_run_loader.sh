#!/usr/bin/env bash
# test_cldm_run_loader.sh — which ICD loader cldm-run runs a program with (label unit, no
# driver): with the stand-in loader without layer support (stub_loader.c) first in
# LD_LIBRARY_PATH, --print-env names it as found and a loader that reads OPENCL_LAYERS as used
# (the ld.so cache's ocl-icd, the Khronos loader after the stub in LD_LIBRARY_PATH, or the one
# CLDM_RUN_LOADER_DIRS names), LD_LIBRARY_PATH starts with a directory holding only a link to
# it, and a real run gets that environment; a loader of another ELF machine is skipped; with no
# such loader cldm-run stops (status 2, a message naming the stub and what to install, nothing
# run); a program that finds the stub through its DT_RPATH is refused, one with DT_RUNPATH is
# switched. The runs of real OpenCL programs through the switch are test_cldm_run_stub.*.
#   test_cldm_run_loader.sh CLDM_RUN STUB_DIR KHRONOS_LIBDIR PROGRAM RPATH_CLIENT RUNPATH_CLIENT
# PROGRAM links libOpenCL.so.1 with no search path of its own; the clients are
# stub_loader_client.c. This machine's ld.so cache must list a loader that reads OPENCL_LAYERS
# (Debian's ocl-icd, a dependency of the project).
set -uo pipefail
run=$1 stub_dir=$2 khronos_dir=$3 program=$4 rpath_client=$5 runpath_client=$6
stub=$stub_dir/libOpenCL.so.1
failures=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export XDG_CACHE_HOME=$tmp/cache # where cldm-run makes its loader directories
unset LD_LIBRARY_PATH CLDM_RUN_LOADER_DIRS CLDM_CACHE_DIR OPENCL_LAYERS CLDM_LOG

check() { # check <description> <expected> <actual>
  if [ "$2" = "$3" ]; then
    printf 'ok    %s\n' "$1"
  else
    printf 'FAIL  %s\n  want: %s\n  got:  %s\n' "$1" "$2" "$3"
    failures=$((failures + 1))
  fi
}
field() { # field <name> < print-env output: the value of "# loader NAME: VALUE" or "NAME=VALUE"
  sed -n -e "s/^# loader $1: //p" -e "s/^$1=//p"
}
real() { readlink -f -- "$1"; }

cache_loader=$( (ldconfig -p 2>/dev/null || /sbin/ldconfig -p) |
  sed -n 's/^[[:space:]]*libOpenCL\.so\.1 (.*) => \(\/.*\)$/\1/p' | head -n 1)
if [ -z "$cache_loader" ] || ! LC_ALL=C grep -q OPENCL_LAYERS "$cache_loader"; then
  echo "FAIL  this machine's ld.so cache lists no loader that reads OPENCL_LAYERS: '$cache_loader'"
  exit 1
fi
LC_ALL=C grep -q OPENCL_LAYERS "$stub"
check "the stub does not name OPENCL_LAYERS" 1 $?

# without the stub: the program's own loader, nothing changed
"$run" --print-env "$program" > "$tmp/out"
check "own loader: found" "$cache_loader (linked by the program; reads OPENCL_LAYERS)" \
  "$(field found < "$tmp/out")"
check "own loader: used" "$cache_loader (linked by the program)" "$(field used < "$tmp/out")"
check "own loader: LD_LIBRARY_PATH not set" "" "$(field LD_LIBRARY_PATH < "$tmp/out")"

# the stub first: the ld.so cache's loader instead, through a directory of its own
LD_LIBRARY_PATH=$stub_dir "$run" --print-env "$program" > "$tmp/out"
check "stub: found" "$stub (linked by the program; does not read OPENCL_LAYERS)" \
  "$(field found < "$tmp/out")"
check "stub: used" "$cache_loader (the ld.so cache)" "$(field used < "$tmp/out")"
llp=$(field LD_LIBRARY_PATH < "$tmp/out")
dir=${llp%%:*}
check "stub: LD_LIBRARY_PATH keeps the old value after the new directory" "$dir:$stub_dir" "$llp"
check "stub: the new directory is under the cache directory" "$tmp/cache/cl_ext_device_malloc" \
  "$(dirname -- "$dir")"
check "stub: the new directory holds only libOpenCL.so.1" "libOpenCL.so.1" "$(ls -A "$dir")"
check "stub: its libOpenCL.so.1 is the loader used" "$(real "$cache_loader")" \
  "$(real "$dir/libOpenCL.so.1")"
mapped=$(LD_LIBRARY_PATH=$llp ldd "$program" |
  sed -n 's/^[[:space:]]*libOpenCL\.so\.1 => \(.*\) (0x.*/\1/p')
check "stub: the dynamic linker then maps the loader used" "$(real "$cache_loader")" \
  "$(real "$mapped")"
check "stub, the OPENCL_LAYERS line kept" 1 "$(grep -c '^OPENCL_LAYERS=' "$tmp/out")"

# the Khronos loader after the stub in LD_LIBRARY_PATH: that one
LD_LIBRARY_PATH=$stub_dir:$khronos_dir "$run" --print-env "$program" > "$tmp/out"
check "stub, Khronos: used" "$khronos_dir/libOpenCL.so.1 (LD_LIBRARY_PATH)" \
  "$(field used < "$tmp/out")"
check "stub, Khronos: its directory's link" "$(real "$khronos_dir/libOpenCL.so.1")" \
  "$(real "$(field LD_LIBRARY_PATH < "$tmp/out" | cut -d: -f1)/libOpenCL.so.1")"

# CLDM_RUN_LOADER_DIRS replaces the places searched; a loader of another machine is skipped
mkdir -p "$tmp/other-machine"
cp "$(real "$cache_loader")" "$tmp/other-machine/libOpenCL.so.1"
printf '\267\000' | dd of="$tmp/other-machine/libOpenCL.so.1" bs=1 seek=18 conv=notrunc 2>/dev/null
LD_LIBRARY_PATH=$stub_dir CLDM_RUN_LOADER_DIRS="$tmp/none:$tmp/other-machine:$khronos_dir" \
  "$run" --print-env "$program" > "$tmp/out"
check "CLDM_RUN_LOADER_DIRS: used" "$khronos_dir/libOpenCL.so.1 (CLDM_RUN_LOADER_DIRS)" \
  "$(field used < "$tmp/out")"

# no loader that reads OPENCL_LAYERS: status 2, a message, nothing run
for dirs in "$stub_dir:$tmp/none:$tmp/other-machine" ""; do
  LD_LIBRARY_PATH=$stub_dir CLDM_RUN_LOADER_DIRS=$dirs "$run" -- touch "$tmp/ran" \
    > "$tmp/out" 2> "$tmp/err"
  check "none in '$dirs': exit status" 2 $?
  grep -qF "touch would load $stub," "$tmp/err" &&
    grep -qF "an OpenCL ICD loader that does not read OPENCL_LAYERS" "$tmp/err"
  check "none in '$dirs': the message names the loader found" 0 $?
  grep -qF "ocl-icd-libopencl1" "$tmp/err"
  check "none in '$dirs': the message names the package to install" 0 $?
  grep -qF "CLDM_RUN_LOADER_DIRS ($dirs)" "$tmp/err"
  check "none in '$dirs': the message names where it looked" 0 $?
  [ ! -e "$tmp/ran" ]
  check "none in '$dirs': nothing run" 0 $?
  LD_LIBRARY_PATH=$stub_dir CLDM_RUN_LOADER_DIRS=$dirs "$run" --print-env "$program" \
    > /dev/null 2>&1
  check "none in '$dirs': --print-env, exit status" 2 $?
done

# a script (the dlopen search: LD_LIBRARY_PATH first), a real run, and a run inside it
# shellcheck disable=SC2016 # expanded by the script
printf '#!/bin/sh\necho "$LD_LIBRARY_PATH|$OPENCL_LAYERS"\n' > "$tmp/script"
chmod +x "$tmp/script"
LD_LIBRARY_PATH=$stub_dir "$run" --print-env "$tmp/script" > "$tmp/out"
check "script: found" "$stub (LD_LIBRARY_PATH; does not read OPENCL_LAYERS)" \
  "$(field found < "$tmp/out")"
check "script: used" "$cache_loader (the ld.so cache)" "$(field used < "$tmp/out")"
want="$(field LD_LIBRARY_PATH < "$tmp/out")|$(field OPENCL_LAYERS < "$tmp/out")"
check "script: the real run gets the environment printed" "$want" \
  "$(LD_LIBRARY_PATH=$stub_dir "$run" "$tmp/script")"
check "no program: the same search" "$(grep '^#' "$tmp/out")" \
  "$(LD_LIBRARY_PATH=$stub_dir "$run" --print-env | grep '^#')"
LD_LIBRARY_PATH=$stub_dir "$run" -- "$run" --print-env "$program" > "$tmp/out"
check "cldm-run inside cldm-run: the loader given is kept" "" \
  "$(field LD_LIBRARY_PATH < "$tmp/out")"
LD_LIBRARY_PATH=$stub_dir "$run" --log info -- true 2> "$tmp/err"
grep -qF "true would load $stub, which does not read OPENCL_LAYERS; it runs with $cache_loader" \
  "$tmp/err"
check "--log info: the switch is said" 0 $?
LD_LIBRARY_PATH=$stub_dir "$run" -- true 2> "$tmp/err"
check "without --log: nothing said" "" "$(cat "$tmp/err")"

# programs that name the stub's directory themselves
"$run" --print-env "$runpath_client" > "$tmp/out"
check "DT_RUNPATH: found" "$stub (linked by the program; does not read OPENCL_LAYERS)" \
  "$(field found < "$tmp/out")"
check "DT_RUNPATH: used" "$cache_loader (the ld.so cache)" "$(field used < "$tmp/out")"
"$run" -- "$rpath_client" > "$tmp/out" 2> "$tmp/err"
check "DT_RPATH: exit status" 2 $?
grep -qF "the program finds it through its DT_RPATH" "$tmp/err"
check "DT_RPATH: the message says why" 0 $?

[ "$failures" -eq 0 ] || { echo "$failures check(s) failed"; exit 1; }
echo "all checks passed"
