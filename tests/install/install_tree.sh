#!/usr/bin/env bash
# install_tree.sh — the set-up of the installed-tree tests (tests/install/CMakeLists.txt): runs
# `cmake --install` of the build into an empty prefix, checks what it installed, then builds the
# consumer project against that prefix only, twice: with CMake (find_package(cldm)) and with
# pkg-config (cldm.pc) and cc. The programs are run by the tests that require this one.
#   install_tree.sh BUILD_DIR PREFIX WORK_DIR SOURCE_DIR LIBDIR PYTHONDIR HAVE_PTX
# LIBDIR and PYTHONDIR: the configured install directories, relative to the prefix.
set -euo pipefail
build=$1 prefix=$2 work=$3 src=$4 libdir=$5 pydir=$6 have_ptx=$7

fail() {
  printf 'install_tree: FAIL: %s\n' "$*" >&2
  exit 1
}
expect_file() { [ -f "$prefix/$1" ] || fail "not installed: $1"; }

rm -rf "$prefix" "$work"
mkdir -p "$work"
cmake --install "$build" --prefix "$prefix" > "$work/install.log" ||
  { cat "$work/install.log"; fail "cmake --install"; }

# the files of the install rules, and nothing from the build tree's paths
layer="$prefix/$libdir/libcldm-layer.so"
for f in "$libdir/libcldm-layer.so" include/CL/cl_ext_device_malloc.h bin/cldm-run bin/cldm-spirv \
  share/cldm/layers/cldm.lay share/cldm/cl_ext_device_malloc.asciidoc \
  share/cldm/extinst.spv-ext-device-malloc.grammar.json "$libdir/pkgconfig/cldm.pc" \
  "$libdir/cmake/cldm/cldmConfig.cmake" "$libdir/cmake/cldm/cldmConfigVersion.cmake" \
  "$pydir/cldm_device_malloc/__init__.py" "$pydir/cldm_device_malloc/_layout.py" \
  share/cldm/examples/pyopencl_lists.py share/doc/cldm/README.md; do
  expect_file "$f"
done
[ "$have_ptx" = ON ] && expect_file "$libdir/libcldm-ptx.so"
for f in bin/cldm-run bin/cldm-spirv; do [ -x "$prefix/$f" ] || fail "$f is not executable"; done
[ ! -e "$prefix/etc" ] || fail "etc/ installed: the manifest must not be enabled globally by default"
# (paths inside the prefix aside: the prefix may lie in the build tree)
naming=$(grep -rlIF --exclude=README.md --exclude='*.asciidoc' -e "$src/" "$prefix" || true)
for f in $naming; do
  if awk -v p="$prefix" '{ gsub(p, "") } 1' "$f" | grep -qF -e "$src/"; then
    fail "installed file $f names the source or build tree"
  fi
done

# the manifest and cldm.pc name the installed layer (the prefix given at install time)
[ "$(cat "$prefix/share/cldm/layers/cldm.lay")" = "$layer" ] ||
  fail "cldm.lay holds '$(cat "$prefix/share/cldm/layers/cldm.lay")', want '$layer'"
export PKG_CONFIG_PATH="$prefix/$libdir/pkgconfig"
[ "$(pkg-config --variable=layer cldm)" = "$layer" ] || fail "pkg-config's layer variable"
[ "$(pkg-config --variable=layerdir cldm)" = "$prefix/share/cldm/layers" ] ||
  fail "pkg-config's layerdir variable"
[ "$(pkg-config --modversion cldm)" = "$(sed -n 's/^Version: //p' "$PKG_CONFIG_PATH/cldm.pc")" ] ||
  fail "pkg-config --modversion"
case " $(pkg-config --cflags cldm) " in *" -I$prefix/include "*) ;; *) fail "pkg-config --cflags" ;; esac
case " $(pkg-config --libs cldm) " in *" -lOpenCL "*) ;; *) fail "pkg-config --libs" ;; esac

# the installed launcher names the installed layer, also when the tree is reached by a link
[ "$(OPENCL_LAYERS='' "$prefix/bin/cldm-run" --print-env | grep '^OPENCL_LAYERS=')" = \
  "OPENCL_LAYERS=$layer" ] || fail "cldm-run --print-env: $("$prefix/bin/cldm-run" --print-env)"
ln -s "$prefix/bin/cldm-run" "$work/cldm-run-link"
[ "$(OPENCL_LAYERS='' "$work/cldm-run-link" --print-env | grep '^OPENCL_LAYERS=')" = \
  "OPENCL_LAYERS=$layer" ] || fail "cldm-run through a symbolic link"
# cldm-spirv runs from the installed tree and finds the installed PTX backend
"$prefix/bin/cldm-spirv" --help > /dev/null 2>&1 || fail "installed cldm-spirv does not run"
if [ "$have_ptx" = ON ]; then
  ptx=$(ldd "$prefix/bin/cldm-spirv" | awk '/libcldm-ptx/ { print $3 }')
  if [ -z "$ptx" ] || [ "$(readlink -f "$ptx")" != "$(readlink -f "$prefix/$libdir/libcldm-ptx.so")" ]; then
    fail "installed cldm-spirv loads libcldm-ptx.so from '$ptx'"
  fi
fi

# the consumer, with CMake: only the installed prefix is searched
cmake -S "$src/tests/install/consumer" -B "$work/cmake" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" \
  -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF -DCONSUMER_TEST_UTIL_DIR="$src/tests/common" \
  > "$work/cmake-configure.log" 2>&1 || { cat "$work/cmake-configure.log"; fail "consumer: configure"; }
cmake --build "$work/cmake" > "$work/cmake-build.log" 2>&1 ||
  { cat "$work/cmake-build.log"; fail "consumer: build"; }
grep -qF -e "-I$prefix/include" -e "-isystem $prefix/include" "$work/cmake/compile_commands.json" ||
  fail "consumer: the installed include directory is not used"
if grep -qF -e "-I$src/include" -e "-isystem $src/include" -e "$build/include" \
  "$work/cmake/compile_commands.json"; then
  fail "consumer: compiled with the source or build tree's files"
fi
info="$work/cmake/cldm-package.txt"
want="layer_target=$layer
layer=$layer
manifest_dir=$prefix/share/cldm/layers
run=$prefix/bin/cldm-run
spirv=$prefix/bin/cldm-spirv
grammar=$prefix/share/cldm/extinst.spv-ext-device-malloc.grammar.json
include=$prefix/include"
[ "$(cat "$info")" = "$want" ] || fail "find_package(cldm) reports:
$(cat "$info")
want:
$want"

# the consumer, with pkg-config and cc
mkdir -p "$work/pc"
# shellcheck disable=SC2046 # pkg-config's flags are words
cc -std=c11 -DCL_TARGET_OPENCL_VERSION=300 -DCONSUMER_CHECK_LOADER=1 -I"$src/tests/common" \
  -o "$work/pc/consumer" "$src/tests/install/consumer/consumer.c" $(pkg-config --cflags --libs cldm) ||
  fail "consumer: cc with pkg-config"

echo "install_tree: installed into $prefix; consumers built in $work"
