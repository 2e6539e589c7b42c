#!/usr/bin/env bash
# tools/nvidia/pack.sh — packs what an NVIDIA machine needs to run the project through the PTX
# route into one tar.xz: the layer, the PTX backend, the OpenCL C compiler, the LLVM 15 and
# clang 15 run-time libraries they need, libclc's NVPTX library, two ICD loaders, the
# end-to-end tests with their data, the demos, the benchmark suite (with the CUDA program where
# nvcc built it) and the scripts that run them there (tools/nvidia/README.md). Built from an
# existing build directory (tools/build.sh first). The archive and the repository's files
# travel to the machine together, within the device tool's 64 MiB.
#
#   tools/nvidia/pack.sh [-o OUT.tar.xz | --dir DIR] [--build DIR] [--alt NAME=DIR]...
#                        [--bin FILE]... [--no-clc]
#
#   -o        the archive (default: BUILD/cldm-nvidia-pack.tar.xz)
#   --dir     write the pack unpacked into DIR (a new folder) instead of an archive
#   --build   the build directory (default: $CLDM_BUILD_DIR, else build/)
#   --alt     NAME=DIR: the build directory of another build of the allocator (a branch's
#             worktree, or a build with CLDM_DEVICE_EXTRA_CFLAGS; repeat for several): its layer
#             and PTX backend go to alt/NAME/, and session.sh runs suite cases through each
#             alt's layer next to the pack's own, on the same GPU in the same command (an A/B)
#   --bin     one more executable for bin/ (repeat), with the libraries it needs
#   --no-clc  without the OpenCL C compiler (libcldm-clc.so, and clang's libraries unless
#             something else needs them): a smaller archive for runs of the benchmarks, whose
#             programs are SPIR-V; the demo and the tests of source programs need the compiler
#
# Layout of the archive (one top directory, cldm-nvidia-pack/):
#   session.sh      tools/nvidia/session.sh: the whole session in one command
#   run-tests.sh    tools/nvidia/run-tests.sh: the tests of tests.list under both loaders
#   run.sh          tools/nvidia/run.sh: any command with the pack's libraries and loader
#   env.sh          tools/nvidia/env.sh: the functions the scripts above share
#   tests.list      the end-to-end tests (tools/nvidia/tests.py); data/ their SPIR-V
#   bench-tree/     the benchmark suite for `bench-tree/bench/run.sh --prebuilt bench-tree/build`
#   bin/            executables (stripped of debug information)
#   lib/            libcldm-layer.so, libcldm-ptx.so, libcldm-clc.so (unless --no-clc),
#                   libLLVM-15.so.1, libLLVMSPIRVLib.so.15; lib/ocl-icd/ and lib/khronos/ the two
#                   ICD loaders (the machine's own is not used: env.sh says why)
#   lib/fallback/   the other non-glibc libraries they need (ldd): used only where the machine
#                   lacks them (ldconfig -p), so that newer system copies win
#   share/clc/      nvptx64--nvidiacl.bc (libcldm-ptx.so finds it through CLDM_LIBCLC_DIR)
#   alt/NAME/       --alt: lib/ (its layer and PTX backend) and REVISION
#   REVISION        git describe of the sources, and the last commit's subject
#   MANIFEST        the files with their sizes
# glibc, libstdc++ and libgcc_s are the machine's own (Ubuntu 24.04's are newer than Debian
# 12's), as is NVIDIA's driver.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
build=${CLDM_BUILD_DIR:-$root/build}
out="" dir="" no_clc=0
extra_bins=() alts=()
while [ $# -gt 0 ]; do
  case $1 in
    -o) out=${2:?}; shift 2 ;;
    --dir) dir=${2:?}; shift 2 ;;
    --build) build=$(cd "${2:?}" && pwd); shift 2 ;;
    --bin) extra_bins+=("${2:?}"); shift 2 ;;
    --alt) alts+=("${2:?}"); shift 2 ;;
    --no-clc) no_clc=1; shift ;;
    -h|--help) sed -n '2,43p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "pack.sh: unknown argument $1 (--help)" >&2; exit 2 ;;
  esac
done
[ -z "$out" ] || [ -z "$dir" ] || { echo "pack.sh: -o or --dir, not both" >&2; exit 2; }
out=${out:-$build/cldm-nvidia-pack.tar.xz}
limit=$((64 * 1024 * 1024))
log() { printf '[pack] %s\n' "$*" >&2; }
die() { log "$*"; exit 1; }

bins=("$build/tools/cldm-spirv/cldm-spirv")
# the end-to-end tests (and the examples) that run-tests.sh runs, from ctest's own list
while read -r exe; do bins+=("$exe"); done < <(python3 "$here/tests.py" --executables "$build")
bins+=(${extra_bins[@]+"${extra_bins[@]}"})
core_libs=("$build/layer/libcldm-layer.so" "$build/layer/libcldm-ptx.so")
# the OpenCL C compiler: the demo and the examples build their kernels from source
[ "$no_clc" = 0 ] && [ -f "$build/layer/libcldm-clc.so" ] && core_libs+=("$build/layer/libcldm-clc.so")
for f in "${bins[@]}" "${core_libs[@]}"; do
  [ -f "$f" ] || die "$f not built (tools/build.sh)"
done
libclc=$(sed -n 's/^CLDM_PTX_LIBCLC_DIR:INTERNAL=//p' "$build/CMakeCache.txt")/nvptx64--nvidiacl.bc
[ -f "$libclc" ] || die "libclc's nvptx64--nvidiacl.bc not found ($libclc): install libclc-15"

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
top=$stage/cldm-nvidia-pack
mkdir -p "$top"/{bin,lib/fallback,share/clc}

# Executables and our libraries, without debug information.
for f in "${bins[@]}"; do strip --strip-debug -o "$top/bin/$(basename "$f")" "$f"; done
for f in "${core_libs[@]}"; do strip --strip-debug -o "$top/lib/$(basename "$f")" "$f"; done

# Shared-library dependencies (ldd, resolved here): LLVM's two in lib/, the rest in
# lib/fallback/, except what every Linux system has and must keep its own.
system_re='^(linux-vdso|ld-linux|libc|libm|libdl|libpthread|librt|libresolv|libutil|libstdc\+\+|libgcc_s|libOpenCL)\.so'
declare -A seen=()
for f in "${bins[@]}" "${core_libs[@]}"; do
  if ldd "$f" | grep -q "not found"; then die "$f: $(ldd "$f" | grep 'not found' | head -1)"; fi
  while read -r so path; do
    [[ $so =~ $system_re ]] && continue
    [ -n "${seen[$so]:-}" ] && continue
    seen[$so]=1
    case $so in
      libcldm-*) ;;
      libLLVM-15.so*|libLLVMSPIRVLib.so*) cp -L "$path" "$top/lib/$so" ;;
      *) cp -L "$path" "$top/lib/fallback/$so" ;;
    esac
  done < <(ldd "$f" | awk '$2 == "=>" && $3 ~ /^\// {print $1, $3}')
done
[ -f "$top/lib/libLLVM-15.so.1" ] || die "libLLVM-15.so.1 not among libcldm-ptx.so's dependencies"
cp "$libclc" "$top/share/clc/"

# The two loaders: the Khronos loader of tools/deps.sh and the system's ocl-icd.
khronos=$(sed -n 's/^CLDM_KHRONOS_LIBDIR:PATH=//p' "$build/CMakeCache.txt")
[ -f "$khronos/libOpenCL.so.1" ] || die "the Khronos loader is not in '$khronos' (tools/deps.sh)"
mkdir -p "$top/lib/khronos" "$top/lib/ocl-icd"
cp -L "$khronos/libOpenCL.so.1" "$top/lib/khronos/"
ocl_icd=$(ldconfig -p | sed -n 's/^[[:space:]]*libOpenCL.so.1 (libc6,x86-64) => //p' | head -1)
[ -f "$ocl_icd" ] || die "ocl-icd's libOpenCL.so.1 not found (ocl-icd-libopencl1)"
cp -L "$ocl_icd" "$top/lib/ocl-icd/libOpenCL.so.1"

# The scripts, the tests' list and their data (SPIR-V under the build directory's own paths).
cp "$here/session.sh" "$top/session.sh"
cp "$here/run-tests.sh" "$top/run-tests.sh"
cp "$here/run.sh" "$top/run.sh"
cp "$here/env.sh" "$top/env.sh"
chmod +x "$top/session.sh" "$top/run-tests.sh" "$top/run.sh"
python3 "$here/tests.py" "$build" > "$top/tests.list"
(cd "$build" && find tests/e2e/kernels examples/spv -name '*.spv' &&
  ls tests/device/alloc_test.cldm_alloc.cl12.spir64.spv \
    tests/device/alloc_test.cldm_alloc.nv.spir64.spv) | while read -r f; do
  mkdir -p "$top/data/$(dirname "$f")"
  cp "$build/$f" "$top/data/$f"
done

# The benchmark suite as `bench/run.sh --prebuilt` takes it (bench/README.md): its files under
# bench-tree/ with their paths relative to the repository (the build directory as "build"),
# without the layer, which session.sh takes from lib/ (bench/run.sh --layer).
bench_files=$("$root/bench/run.sh" --prebuilt "$build" --list-files | sed "s#^${build#"$root"/}/#build/#") ||
  die "bench/run.sh --list-files failed"
for f in $bench_files; do
  src=$root/$f
  case $f in build/layer/*) continue ;; build/*) src=$build/${f#build/} ;; esac
  [ -f "$src" ] || continue
  mkdir -p "$top/bench-tree/$(dirname "$f")"
  case $f in *.so|*/cldm-bench-*) strip --strip-debug -o "$top/bench-tree/$f" "$src" ;;
    *) cp -p "$src" "$top/bench-tree/$f" ;; esac
done

# Other builds of the allocator (--alt): their layer and PTX backend, whose allocator the nv
# variant links.
for a in ${alts[@]+"${alts[@]}"}; do
  name=${a%%=*} src=${a#*=}
  case $name in ''|*[!A-Za-z0-9_-]*|"$a") die "--alt NAME=DIR, NAME of letters, digits, - and _" ;; esac
  d=$top/alt/$name
  mkdir -p "$d/lib"
  for l in layer/libcldm-layer.so layer/libcldm-ptx.so; do
    [ -f "$src/$l" ] || die "--alt $a: no $l"
    strip --strip-debug -o "$d/lib/$(basename "$l")" "$src/$l"
  done
  sources=$(sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' "$src/CMakeCache.txt")
  git -C "$sources" describe --always --dirty > "$d/REVISION" 2>/dev/null || echo unknown > "$d/REVISION"
  git -C "$sources" log -1 --format=%s >> "$d/REVISION" 2>/dev/null || true
  for v in CLDM_DEVICE_EXTRA_CFLAGS CLDM_DEVICE_NVPTX_EXTRA_CFLAGS; do
    flags=$(sed -n "s/^$v:STRING=//p" "$src/CMakeCache.txt")
    [ -z "$flags" ] || echo "$v=$flags" >> "$d/REVISION"
  done
done
git -C "$root" describe --always --dirty > "$top/REVISION" 2>/dev/null || echo unknown > "$top/REVISION"
git -C "$root" log -1 --format=%s >> "$top/REVISION" 2>/dev/null || true
(cd "$top" && find . -type f ! -name MANIFEST -printf '%s\t%P\n' | sort -k2) > "$top/MANIFEST"

if [ -n "$dir" ]; then
  [ ! -e "$dir" ] || die "--dir $dir exists"
  mkdir -p "$(dirname "$dir")"
  mv "$top" "$dir"
  log "wrote $dir ($(du -sh "$dir" | cut -f1))"
  echo "$dir"
  exit 0
fi
log "compressing $(du -sh "$top" | cut -f1) (xz -9)"
tar -C "$stage" -cf - cldm-nvidia-pack | xz -9 -T0 > "$out.tmp"
size=$(stat -c %s "$out.tmp")
if [ "$size" -gt "$limit" ]; then
  rm -f "$out.tmp"
  die "archive is $size bytes, over the 64 MiB limit: --no-clc, or fewer --alt or --bin"
fi
mv "$out.tmp" "$out"
log "wrote $out: $size bytes ($((size / 1024 / 1024)) MiB) of at most $limit"
echo "$out"
