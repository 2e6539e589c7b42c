#!/usr/bin/env bash
# tools/deps.sh — installs and builds everything the project needs outside the repo.
#
# On a fresh Debian 12 machine (as root) this:
#   1. installs the Debian packages the build, the tests and the benchmark plots need (only
#      those missing; libclc-15 is the PTX backend's NVPTX built-in library, layer/ptx;
#      libopencl-clang-15-dev, with its run-time libopencl-clang15, is the OpenCL C front end of
#      the compiler for source programs, layer/clc; python3-matplotlib draws bench/report.py's
#      plots);
#   2. builds pocl 6.0 with SPIR-V support from Debian trixie's source package into the
#      dependency cache (bookworm's pocl 3.1 does not accept SPIR-V);
#   3. unpacks the Khronos OpenCL-ICD-Loader (Debian sid's binary package
#      khronos-opencl-icd-libopencl1) into the cache, next to the system's ocl-icd;
#   4. writes a vendors directory naming only our pocl (OCL_ICD_VENDORS);
#   5. unpacks Debian's python3-pyopencl and the Python packages it needs that the system lacks
#      into the cache (tests/python): installing it would pull an ICD package, and apt would
#      pick Debian's pocl 3.1, which must never be installed beside ours.
# The system's apt configuration is never changed: trixie and sid are reached through
# private source lists under the cache. With the cache present a re-run takes seconds.
#
# Cache: ${CLDM_DEPS_DIR:-/var/cache/cldm-deps}/pocl-<version>-<arch>. pocl's kernel library
# is built in Debian's "distro" variants (sse2 ... avx512, picked at run time by CPU features),
# as Debian itself does: LLVM 15 does not know every host CPU (this one reports "unknown"),
# and the cache then stays valid on any x86-64 machine.
# Prints nothing but progress; `tools/env.sh` computes the same paths for other scripts.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=tools/env.sh
. "$here/env.sh"

log() { printf '[deps] %s\n' "$*" >&2; }

packages=(
  build-essential cmake ninja-build pkg-config python3 xz-utils dpkg-dev ca-certificates
  llvm-15-dev libclang-15-dev libclang-cpp15-dev clang-15 libllvmspirvlib-15-dev llvm-spirv-15
  libclc-15 libopencl-clang-15-dev libopencl-clang15
  libhwloc-dev ocl-icd-dev ocl-icd-libopencl1 ocl-icd-opencl-dev opencl-c-headers clinfo
  spirv-headers spirv-tools libcmocka-dev clang-22 libclang-rt-14-dev clang-14
  python3-numpy python3-matplotlib
)
# Unpacked, never installed (step 5): python3-pyopencl and those of its Python dependencies
# (apt-cache depends python3-pyopencl, recursively) that the packages above do not bring.
pyopencl_packages=(
  python3-pytools python3-platformdirs python3-typing-extensions python3-mako python3-markupsafe
)

install_packages() {
  local missing=()
  for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  if [ "$(id -u)" != 0 ]; then
    log "missing Debian packages (run as root to install): ${missing[*]}"; exit 1
  fi
  log "installing: ${missing[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

# The Debian archive the system's apt already uses (so set-up works behind local mirrors): the
# repository configured for the release's own suite (e.g. "bookworm", from /etc/os-release),
# as apt-get reads /etc/apt/sources.list{,.d}; CLDM_DEBIAN_MIRROR overrides it.
debian_mirror() {
  if [ -n "${CLDM_DEBIAN_MIRROR:-}" ]; then echo "${CLDM_DEBIAN_MIRROR%/}"; return; fi
  local codename uri
  codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
  uri=$(apt-get indextargets --format '$(RELEASE) $(REPO_URI)' 2>/dev/null |
    awk -v s="$codename" '$1 == s { print $2; exit }')
  if [ -z "$uri" ]; then
    log "no apt source for suite '$codename' found; set CLDM_DEBIAN_MIRROR"; exit 1
  fi
  echo "${uri%/}"
}

# private_apt <name> <sources line>: runs apt-get with a private source list and state dir
private_apt() {
  local name=$1 line=$2; shift 2
  local dir="$CLDM_DEPS_DIR/apt-$name"
  mkdir -p "$dir/lists/partial"
  echo "$line" > "$dir/sources.list"
  apt-get -q -o Dir::Etc::SourceList="$dir/sources.list" -o Dir::Etc::SourceParts=- \
    -o Dir::State::Lists="$dir/lists" -o APT::Get::List-Cleanup=0 "$@"
}

fetch_khronos_loader() {
  [ -e "$CLDM_KHRONOS_LIBDIR/libOpenCL.so.1" ] && return 0
  log "fetching the Khronos OpenCL-ICD-Loader $CLDM_KHRONOS_VERSION (Debian sid binary)"
  local tmp; tmp=$(mktemp -d)
  local line; line="deb $(debian_mirror) sid main"
  private_apt sid "$line" update >/dev/null
  # the pinned version, or (if sid has moved on) sid's current one
  (cd "$tmp" && { private_apt sid "$line" \
      download "khronos-opencl-icd-libopencl1=$CLDM_KHRONOS_VERSION" >/dev/null 2>&1 ||
    { log "version $CLDM_KHRONOS_VERSION is gone from sid; taking sid's current one";
      private_apt sid "$line" download khronos-opencl-icd-libopencl1 >/dev/null; }; })
  rm -rf "$CLDM_KHRONOS_DIR.tmp"; mkdir -p "$CLDM_KHRONOS_DIR.tmp"
  dpkg -x "$tmp"/khronos-opencl-icd-libopencl1_*.deb "$CLDM_KHRONOS_DIR.tmp"
  rm -rf "$tmp" "$CLDM_KHRONOS_DIR"; mv "$CLDM_KHRONOS_DIR.tmp" "$CLDM_KHRONOS_DIR"
}

build_pocl() {
  [ -e "$CLDM_POCL_PREFIX/.complete" ] && return 0
  log "building pocl $CLDM_POCL_VERSION with SPIR-V (trixie source package); takes ~10-15 min on 2 cores"
  local src="$CLDM_DEPS_DIR/src-pocl-$CLDM_POCL_VERSION"
  if [ ! -d "$src/pocl-src" ]; then
    rm -rf "$src"; mkdir -p "$src"
    local line; line="deb-src $(debian_mirror) trixie main"
    private_apt trixie "$line" update >/dev/null
    # the pinned version, or (after a trixie point release) trixie's current one
    (cd "$src" && { private_apt trixie "$line" \
        source --only-source "pocl=$CLDM_POCL_VERSION" >/dev/null 2>&1 ||
      { log "pocl $CLDM_POCL_VERSION is gone from trixie; taking trixie's current pocl";
        private_apt trixie "$line" source --only-source pocl >/dev/null 2>&1; }; })
    local d; d=$(find "$src" -maxdepth 1 -type d -name 'pocl-*' | head -1)
    [ -n "$d" ] || { log "apt-get source pocl=$CLDM_POCL_VERSION failed"; exit 1; }
    mv "$d" "$src/pocl-src"
  fi
  rm -rf "$CLDM_POCL_PREFIX"   # an interrupted build directory is resumed, not restarted
  # pocl's configure checks write probe files (compile_test_*) into the working directory:
  # run it from the build directory
  mkdir -p "$src/build"
  (cd "$src/build" && cmake -S "$src/pocl-src" -B "$src/build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_INSTALL_PREFIX="$CLDM_POCL_PREFIX" \
    -DWITH_LLVM_CONFIG=/usr/bin/llvm-config-15 -DLLVM_SPIRV=/usr/bin/llvm-spirv-15 \
    -DENABLE_ICD=ON -DENABLE_TESTS=OFF -DENABLE_EXAMPLES=OFF -DENABLE_POCL_BUILDING=ON \
    -DLLC_HOST_CPU=GENERIC -DKERNELLIB_HOST_CPU_VARIANTS=distro \
    -DENABLE_IPO=OFF -DCMAKE_POSITION_INDEPENDENT_CODE=ON \
    > "$src/configure.log" 2>&1) || { tail -30 "$src/configure.log"; exit 1; }
  ninja -C "$src/build" -j "$(nproc)" > "$src/build.log" 2>&1 || { tail -40 "$src/build.log"; exit 1; }
  ninja -C "$src/build" install > "$src/install.log" 2>&1 || { tail -20 "$src/install.log"; exit 1; }
  rm -rf "$src/build"
  touch "$CLDM_POCL_PREFIX/.complete"
}

fetch_pyopencl() {
  [ -e "$CLDM_PYOPENCL_DIR/.complete" ] && return 0
  local codename; codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
  log "fetching python3-pyopencl $CLDM_PYOPENCL_VERSION (Debian $codename binaries, unpacked only)"
  local tmp; tmp=$(mktemp -d)
  local line; line="deb $(debian_mirror) $codename main"
  private_apt "$codename" "$line" update >/dev/null
  (cd "$tmp" && { private_apt "$codename" "$line" \
      download "python3-pyopencl=$CLDM_PYOPENCL_VERSION" >/dev/null 2>&1 ||
    { log "python3-pyopencl $CLDM_PYOPENCL_VERSION is gone; taking $codename's current one";
      private_apt "$codename" "$line" download python3-pyopencl >/dev/null; }; } &&
    private_apt "$codename" "$line" download "${pyopencl_packages[@]}" >/dev/null)
  rm -rf "$CLDM_PYOPENCL_DIR.tmp"; mkdir -p "$CLDM_PYOPENCL_DIR.tmp"
  local deb
  for deb in "$tmp"/*.deb; do dpkg -x "$deb" "$CLDM_PYOPENCL_DIR.tmp"; done
  rm -rf "$tmp"
  # it must import with Debian's Python and numpy (no driver needed for that)
  PYTHONPATH="$CLDM_PYOPENCL_DIR.tmp/usr/lib/python3/dist-packages" OCL_ICD_VENDORS=/nonexistent \
    /usr/bin/python3 -c 'import pyopencl' ||
    { log "the unpacked pyopencl does not import (a Python dependency missing?)"; exit 1; }
  rm -rf "$CLDM_PYOPENCL_DIR"; mv "$CLDM_PYOPENCL_DIR.tmp" "$CLDM_PYOPENCL_DIR"
  touch "$CLDM_PYOPENCL_DIR/.complete"
}

write_vendors() {
  mkdir -p "$CLDM_VENDORS_DIR"
  local lib; lib=$(find "$CLDM_POCL_PREFIX" -name 'libpocl.so*' -type f | head -1)
  [ -n "$lib" ] || { log "libpocl.so not found under $CLDM_POCL_PREFIX"; exit 1; }
  echo "$lib" > "$CLDM_VENDORS_DIR/pocl.icd"
}

mkdir -p "$CLDM_DEPS_DIR"
install_packages
fetch_khronos_loader
build_pocl
write_vendors
fetch_pyopencl
log "ready: pocl in $CLDM_POCL_PREFIX, Khronos loader in $CLDM_KHRONOS_LIBDIR, PyOpenCL in $CLDM_PYOPENCL_PYTHONPATH"
