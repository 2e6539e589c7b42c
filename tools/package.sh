#!/usr/bin/env bash
# tools/package.sh — builds the Debian packages (packaging/CldmCPack.cmake): a build configured
# with the prefix /usr and without tests in $CLDM_PACKAGE_BUILD_DIR (default build-deb/), then
# CPack's DEB generator; the .deb files land in build-deb/packages/.
#   tools/package.sh           build the packages
#   tools/package.sh --check   and check them in a scratch root: the files each package lists,
#                              their dependencies, an install with dpkg --root (the system's
#                              dpkg database is not touched) and a removal that leaves nothing
# Extra arguments after the option go to cmake.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
check=
if [ "${1:-}" = --check ]; then
  check=1
  shift
fi
"$root/tools/deps.sh"
build=${CLDM_PACKAGE_BUILD_DIR:-$root/build-deb}
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_INSTALL_PREFIX=/usr \
  -DCLDM_BUILD_TESTS=OFF -DCLDM_BUILD_FUZZER=OFF "$@" >/dev/null
ninja -C "$build" -j "$(nproc)"
rm -rf "$build/packages"
(cd "$build" && cpack -G DEB >/dev/null)
debs=("$build"/packages/*.deb)
printf '%s\n' "${debs[@]}"
[ -n "$check" ] || exit 0

fail() {
  printf 'package check: FAIL: %s\n' "$*" >&2
  exit 1
}
ma=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
deb_of() { find "$build/packages" -maxdepth 1 -name "$1_*.deb" | head -1; }
field() { dpkg-deb -f "$(deb_of "$1")" "$2"; }
lists() { dpkg-deb -c "$(deb_of "$1")" | awk '{ print $6 }' | sed 's#^\./#/#' | grep -qx -- "$2" ||
  fail "$1 does not hold $2"; }

# what each package holds
lists cldm-layer "/usr/lib/$ma/libcldm-layer.so"
lists cldm-layer /usr/bin/cldm-run
lists cldm-layer /usr/share/cldm/layers/cldm.lay
lists cldm-dev /usr/include/CL/cl_ext_device_malloc.h
lists cldm-dev "/usr/lib/$ma/pkgconfig/cldm.pc"
lists cldm-dev "/usr/lib/$ma/cmake/cldm/cldmConfig.cmake"
lists cldm-dev /usr/share/cldm/cl_ext_device_malloc.asciidoc
lists cldm-dev /usr/share/cldm/extinst.spv-ext-device-malloc.grammar.json
lists cldm-tools /usr/bin/cldm-spirv
lists python3-cldm /usr/lib/python3/dist-packages/cldm_device_malloc/__init__.py
if [ -n "$(deb_of cldm-layer-nvidia)" ]; then
  lists cldm-layer-nvidia "/usr/lib/$ma/libcldm-ptx.so"
  for d in libllvm15 libllvmspirvlib15 libclc-15 cldm-layer; do
    field cldm-layer-nvidia Depends | grep -q "$d" || fail "cldm-layer-nvidia does not depend on $d"
  done
fi
# installing the layer enables it nowhere
if dpkg-deb -c "$(deb_of cldm-layer)" | grep -q ' \./etc/'; then
  fail "cldm-layer installs into /etc"
fi
# the layer package pulls no LLVM
if field cldm-layer Depends | grep -qi llvm; then fail "cldm-layer depends on LLVM"; fi
field cldm-layer Depends | grep -q 'ocl-icd-libopencl1' || fail "cldm-layer: no ICD loader dependency"

# install and remove in a scratch root (dependencies are not in that root: --force-depends)
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
mkdir -p "$scratch/var/lib/dpkg/info" "$scratch/var/lib/dpkg/updates" "$scratch/var/lib/dpkg/triggers"
touch "$scratch/var/lib/dpkg/status" "$scratch/var/lib/dpkg/available"
# maintainer scripts (CPack's: ldconfig) run outside the root (there is no shell inside it):
# an ldconfig stub first in PATH records them instead of touching the system's cache
mkdir -p "$scratch.bin"
printf '#!/bin/sh\necho "ldconfig $*" >> "%s"\n' "$scratch.bin/calls" > "$scratch.bin/ldconfig"
chmod +x "$scratch.bin/ldconfig"
trap 'rm -rf "$scratch" "$scratch.bin"' EXIT
dpkg_s() { PATH="$scratch.bin:$PATH" dpkg --root="$scratch" --force-depends --force-not-root \
  --force-script-chrootless --log=/dev/null "$@"; }
dpkg_s -i "${debs[@]}" >/dev/null
[ -s "$scratch.bin/calls" ] || fail "the maintainer scripts did not run"
for d in "${debs[@]}"; do
  p=$(dpkg-deb -f "$d" Package)
  dpkg_s -L "$p" | sed "s#^#$p: #"
  dpkg_s -s "$p" | grep -q '^Status: install ok installed' || fail "$p not installed"
done
[ "$(cat "$scratch/usr/share/cldm/layers/cldm.lay")" = "/usr/lib/$ma/libcldm-layer.so" ] ||
  fail "the installed manifest names $(cat "$scratch/usr/share/cldm/layers/cldm.lay")"
grep -qx 'prefix=/usr' "$scratch/usr/lib/$ma/pkgconfig/cldm.pc" || fail "cldm.pc prefix"
[ "$(OPENCL_LAYERS='' "$scratch/usr/bin/cldm-run" --print-env | grep '^OPENCL_LAYERS=')" = \
  "OPENCL_LAYERS=$scratch/usr/lib/$ma/libcldm-layer.so" ] || fail "cldm-run in the scratch root"
[ "$(PYTHONDONTWRITEBYTECODE=1 PYTHONPATH="$scratch/usr/lib/python3/dist-packages" /usr/bin/python3 -c \
  'import cldm_device_malloc as c; print(c.layer_path())')" = "$scratch/usr/lib/$ma/libcldm-layer.so" ] ||
  fail "the Python module does not find the installed layer"
mapfile -t names < <(for d in "${debs[@]}"; do dpkg-deb -f "$d" Package; done)
dpkg_s --purge "${names[@]}" >/dev/null
left=$(find "$scratch" -mindepth 1 \( -path "$scratch/var" -o -path "$scratch/var/lib" -o \
  -path "$scratch/var/lib/dpkg" \) -prune -o -print)
[ -z "$left" ] || fail "files left after removal: $left"
echo "package check: ${#debs[@]} packages hold their files, install and remove cleanly"
