#!/usr/bin/env bash
# tools/gpu-pack.sh — packs what an NVIDIA machine needs to run the project's PTX route into one
# tar.xz (at most 64 MiB): the layer, the PTX backend and the OpenCL C compiler (source
# programs), the LLVM 15 and clang 15 run-time libraries they need, libclc's NVPTX library, the tools, demos and benchmarks, their SPIR-V
# modules, and the PTX translated here. Built from an existing build directory
# (tools/build.sh first).
#
#   tools/gpu-pack.sh [-o OUT.tar.xz] [--build DIR] [--sm NN] [--bin FILE]... [--data FILE]...
#                     [--alt NAME=DIR]... [--no-clc]
#
#   -o        the archive (default: BUILD/cldm-gpu-pack.tar.xz)
#   --build   the build directory (default: $CLDM_BUILD_DIR or build/)
#   --sm      compute capability the pre-translated PTX is made for (default 90, the H200)
#   --bin     one more executable for bin/ (repeat); CLDM_PACK_BINS (space-separated paths
#             relative to the build directory) replaces the default list below
#   --data    one more file for share/extra/ (repeat)
#   --alt     NAME=DIR: the build directory of another allocator (a branch's worktree; repeat
#             for several): its cldm_bench_alloc and allocator modules go to alt/NAME/, and
#             run-bench.sh times them in the same run as this build's (same GPU, same bump
#             kernel: an A/B comparison; heap layouts may differ, so each keeps its own program)
#   --no-clc  without the OpenCL C compiler (libcldm-clc.so, and clang's libraries unless
#             something else needs them): 41 MiB instead of 52 with three --alt, for runs of
#             the benchmarks (their programs are SPIR-V) whose archive and the repository's
#             files must fit the device tool's 64 MiB together; the demo and the tests of
#             source programs need the compiler
#
# Layout of the archive (one top directory, cldm-gpu-pack/):
#   run-tests.sh    tools/gpu-run.sh: the end-to-end tests of tests.list (tools/gpu-tests.py)
#                   and the demo, under ocl-icd and the Khronos loader, with the layer
#   tests.list      those tests, as ctest lists them; data/ their SPIR-V
#   run-bench.sh    tools/gpu-bench.sh: cldm_bench_alloc and the benchmark suite (with CUDA)
#   env.sh          tools/gpu-env.sh: the functions the scripts above share
#   run-all.sh      tools/gpu-all.sh: both of the above in one session, in time limits, into
#                   one results.tgz
#   bench-tree/     the benchmark suite for `bench-tree/bench/run.sh --prebuilt bench-tree/build`
#                   (bench/README.md), the CUDA program included where nvcc built it
#   run.sh          run.sh [--layer] COMMAND [ARGS...]: runs COMMAND with the pack's libraries
#                   (LD_LIBRARY_PATH), libclc (CLDM_LIBCLC_DIR), NVIDIA's ICD
#                   (OCL_ICD_FILENAMES=libnvidia-opencl.so.1 unless set) and, with --layer,
#                   the layer (OPENCL_LAYERS)
#   bin/            executables (stripped of debug information)
#   lib/            libcldm-layer.so, libcldm-ptx.so, libcldm-clc.so (where built),
#                   libLLVM-15.so.1, libLLVMSPIRVLib.so.15;
#                   lib/khronos/ the Khronos OpenCL-ICD-Loader (tools/deps.sh's copy),
#                   lib/ocl-icd/ the system's ocl-icd (the machine's own loader is not used)
#   lib/fallback/   the other non-glibc libraries they need (ldd; libclang-cpp and
#                   libopencl-clang among them); run.sh uses only those the machine lacks
#                   (ldconfig -p), so newer system copies win
#   share/clc/      nvptx64--nvidiacl.bc (found by libcldm-ptx.so next to itself, ../share/clc)
#   share/spv/      SPIR-V modules: examples/, e2e/, bench/
#   share/ptx/      PTX made here by `cldm-spirv ptx --sm NN` from those modules
#   share/extra/    --data files
#   alt/NAME/       --alt: bin/cldm_bench_alloc, share/spv/bench/, lib/ (its layer and PTX
#                   backend, whose allocator the nv variant links), REVISION (git describe)
#   MANIFEST        file list with sizes
# glibc, libstdc++ and libgcc_s are the machine's own (Ubuntu 24.04's are newer than Debian
# 12's); so is the OpenCL ICD loader.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${CLDM_BUILD_DIR:-$root/build}
out="" sm=90 no_clc=0
extra_bins=() extra_data=() alts=()
while [ $# -gt 0 ]; do
  case $1 in
    -o) out=$2; shift 2 ;;
    --build) build=$(cd "$2" && pwd); shift 2 ;;
    --sm) sm=$2; shift 2 ;;
    --bin) extra_bins+=("$2"); shift 2 ;;
    --data) extra_data+=("$2"); shift 2 ;;
    --alt) alts+=("$2"); shift 2 ;;
    --no-clc) no_clc=1; shift ;;
    -h|--help) sed -n '2,46p' "$0"; exit 0 ;;
    *) echo "gpu-pack: unknown argument $1" >&2; exit 2 ;;
  esac
done
out=${out:-$build/cldm-gpu-pack.tar.xz}
limit=$((64 * 1024 * 1024))
log() { printf '[gpu-pack] %s\n' "$*" >&2; }
die() { log "$*"; exit 1; }

default_bins="tools/cldm-spirv/cldm-spirv bench/alloc/cldm_bench_alloc"
bins=()
for b in ${CLDM_PACK_BINS:-$default_bins}; do bins+=("$build/$b"); done
# the end-to-end tests (and the examples) that run-tests.sh runs, from ctest's own list
while read -r exe; do bins+=("$exe"); done < <(python3 "$root/tools/gpu-tests.py" --executables "$build")
bins+=("${extra_bins[@]+"${extra_bins[@]}"}")
core_libs=("$build/layer/libcldm-layer.so" "$build/layer/libcldm-ptx.so")
# the OpenCL C compiler: the demo and the examples build their kernels from source
[ "$no_clc" = 0 ] && [ -f "$build/layer/libcldm-clc.so" ] && core_libs+=("$build/layer/libcldm-clc.so")
for f in "${bins[@]}" "${core_libs[@]}"; do
  [ -f "$f" ] || die "$f not built (tools/build.sh, or drop it from CLDM_PACK_BINS)"
done
libclc=$(sed -n 's/^CLDM_PTX_LIBCLC_DIR:INTERNAL=//p' "$build/CMakeCache.txt")/nvptx64--nvidiacl.bc
[ -f "$libclc" ] || die "libclc's nvptx64--nvidiacl.bc not found ($libclc): install libclc-15"

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
top=$stage/cldm-gpu-pack
mkdir -p "$top"/{bin,lib/fallback,share/clc,share/spv/examples,share/spv/e2e,share/spv/bench,share/ptx,share/extra}

# Executables and our libraries, without debug information.
for f in "${bins[@]}"; do strip --strip-debug -o "$top/bin/$(basename "$f")" "$f"; done
for f in "${core_libs[@]}"; do strip --strip-debug -o "$top/lib/$(basename "$f")" "$f"; done

# Shared-library dependencies (ldd, resolved here): LLVM's two in lib/, the rest in
# lib/fallback/, except what every Linux system has and must keep its own.
system_re='^(linux-vdso|ld-linux|libc|libm|libdl|libpthread|librt|libresolv|libutil|libstdc\+\+|libgcc_s|libOpenCL)\.so'
declare -A seen=()
for f in "${bins[@]}" "${core_libs[@]}"; do
  while read -r so path; do
    [ -n "$path" ] && [ -f "$path" ] || continue
    [[ $so =~ $system_re ]] && continue
    [ -n "${seen[$so]:-}" ] && continue
    seen[$so]=1
    case $so in
      libcldm-*) continue ;;
      libLLVM-15.so*|libLLVMSPIRVLib.so*) cp -L "$path" "$top/lib/$so" ;;
      *) cp -L "$path" "$top/lib/fallback/$so" ;;
    esac
  done < <(ldd "$f" | awk '$2 == "=>" && $3 ~ /^\// {print $1, $3} $2 == "=>" && $3 == "not" {print $1, ""}')
  if ldd "$f" | grep -q "not found"; then die "$f: $(ldd "$f" | grep 'not found' | head -1)"; fi
done
[ -f "$top/lib/libLLVM-15.so.1" ] || die "libLLVM-15.so.1 not among libcldm-ptx.so's dependencies"

cp "$libclc" "$top/share/clc/"
# the tests' list and runner, their data (SPIR-V under the build directory's own paths), and
# the Khronos loader for the tests' second loader (ocl-icd is the machine's)
python3 "$root/tools/gpu-tests.py" "$build" > "$top/tests.list"
cp "$root/tools/gpu-run.sh" "$top/run-tests.sh"
cp "$root/tools/gpu-bench.sh" "$top/run-bench.sh"
cp "$root/tools/gpu-all.sh" "$top/run-all.sh"
cp "$root/tools/gpu-env.sh" "$top/env.sh"
chmod +x "$top/run-tests.sh" "$top/run-bench.sh" "$top/run-all.sh"
(cd "$build" && find tests/e2e/kernels examples/spv -name '*.spv' &&
  ls tests/device/alloc_test.cldm_alloc.cl12.spir64.spv \
    tests/device/alloc_test.cldm_alloc.nv.spir64.spv) | while read -r f; do
  mkdir -p "$top/data/$(dirname "$f")"
  cp "$build/$f" "$top/data/$f"
done
khronos=$(sed -n 's/^CLDM_KHRONOS_LIBDIR:PATH=//p' "$build/CMakeCache.txt")
[ -f "$khronos/libOpenCL.so.1" ] || die "the Khronos loader is not in '$khronos' (tools/deps.sh)"
mkdir -p "$top/lib/khronos" "$top/lib/ocl-icd"
cp -L "$khronos/libOpenCL.so.1" "$top/lib/khronos/"
ocl_icd=$(ldconfig -p | sed -n 's/^[[:space:]]*libOpenCL.so.1 (libc6,x86-64) => //p' | head -1)
[ -f "$ocl_icd" ] || die "ocl-icd's libOpenCL.so.1 not found (ocl-icd-libopencl1)"
cp -L "$ocl_icd" "$top/lib/ocl-icd/libOpenCL.so.1"
cp "$build"/examples/spv/*.spv "$top/share/spv/examples/"
cp "$build"/tests/e2e/kernels/*.spv "$top/share/spv/e2e/" 2>/dev/null || true
cp "$build"/bench/alloc/*.spv "$top/share/spv/bench/" 2>/dev/null || true
# the benchmark suite as `bench/run.sh --prebuilt` takes it (bench/README.md): its files under
# bench-tree/ with their paths relative to the repository (the build directory as "build")
bench_files=$("$root/bench/run.sh" --list-files 2>/dev/null | awk '{print $1}' | sort -u) ||
  die "bench/run.sh --list-files failed"
for f in $bench_files; do
  src=$root/$f
  case $f in build/*) src=$build/${f#build/} ;; esac
  [ -f "$src" ] || continue
  mkdir -p "$top/bench-tree/$(dirname "$f")"
  case $f in *.so|*/cldm-bench-*) strip --strip-debug -o "$top/bench-tree/$f" "$src" ;;
    *) cp -p "$src" "$top/bench-tree/$f" ;; esac
done
for f in "${extra_data[@]+"${extra_data[@]}"}"; do cp "$f" "$top/share/extra/"; done
for a in "${alts[@]+"${alts[@]}"}"; do # other allocators' benchmark, layer and PTX backend
  name=${a%%=*} dir=${a#*=}
  case $name in ''|*[!A-Za-z0-9_-]*|"$a") die "--alt NAME=DIR, NAME of letters, digits, - and _" ;; esac
  [ -f "$dir/bench/alloc/cldm_bench_alloc" ] || die "--alt $a: no bench/alloc/cldm_bench_alloc"
  d=$top/alt/$name
  mkdir -p "$d/bin" "$d/share/spv/bench" "$d/lib"
  strip --strip-debug -o "$d/bin/cldm_bench_alloc" "$dir/bench/alloc/cldm_bench_alloc"
  for l in layer/libcldm-layer.so layer/libcldm-ptx.so; do # its allocator: the PTX backend
    [ -f "$dir/$l" ] || die "--alt $a: no $l"             # links the nv variant's
    strip --strip-debug -o "$d/lib/$(basename "$l")" "$dir/$l"
  done
  cp "$dir"/bench/alloc/*.spv "$d/share/spv/bench/"
  src=$(sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' "$dir/CMakeCache.txt")
  git -C "$src" describe --always --dirty > "$d/REVISION" 2>/dev/null || echo unknown > "$d/REVISION"
  git -C "$src" log -1 --format=%s >> "$d/REVISION" 2>/dev/null || true
  for v in CLDM_DEVICE_EXTRA_CFLAGS CLDM_DEVICE_NVPTX_EXTRA_CFLAGS; do
    flags=$(sed -n "s/^$v:STRING=//p" "$dir/CMakeCache.txt")
    [ -z "$flags" ] || echo "$v=$flags" >> "$d/REVISION"
  done
done
git -C "$root" describe --always --dirty > "$top/REVISION" 2>/dev/null || echo unknown > "$top/REVISION"

# PTX made here, for running without the layer (clCreateProgramWithBinary).
tool=$build/tools/cldm-spirv/cldm-spirv
for f in "$top"/share/spv/examples/lists.spv "$top"/share/spv/examples/producer.spv \
         "$top"/share/spv/examples/consumer.spv "$top"/share/spv/bench/*cl12*.spv; do
  [ -f "$f" ] || continue
  name=$(basename "$f" .spv)
  CLDM_LIBCLC_DIR=$(dirname "$libclc") "$tool" ptx --sm "$sm" "$f" -o "$top/share/ptx/$name.ptx" ||
    die "cldm-spirv ptx $f failed"
done

cat > "$top/run.sh" <<'EOF'
#!/bin/sh
# run.sh [--layer] COMMAND [ARGS...] — runs COMMAND with this pack's libraries and libclc, on
# NVIDIA's OpenCL driver (OCL_ICD_FILENAMES=libnvidia-opencl.so.1 unless set); --layer also
# enables the cl_ext_device_malloc layer (OPENCL_LAYERS). Libraries of lib/fallback/ are used
# only where the machine lacks them (ldconfig -p).
set -eu
root=$(cd "$(dirname "$0")" && pwd)
. "$root/env.sh"
active=$root/lib/.fallback-active
mkdir -p "$active" 2>/dev/null || active=$(mktemp -d)
LD_LIBRARY_PATH=$root/lib:$(cldm_pack_fallbacks "$root" "$active")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
CLDM_LIBCLC_DIR=$root/share/clc
PATH=$root/bin:$PATH
OCL_ICD_FILENAMES=${OCL_ICD_FILENAMES:-libnvidia-opencl.so.1}
export LD_LIBRARY_PATH CLDM_LIBCLC_DIR PATH OCL_ICD_FILENAMES
if [ "${1:-}" = --layer ]; then
  shift
  OPENCL_LAYERS=$root/lib/libcldm-layer.so
  export OPENCL_LAYERS
fi
[ $# -gt 0 ] || { echo "usage: run.sh [--layer] COMMAND [ARGS...]" >&2; exit 2; }
exec "$@"
EOF
chmod +x "$top/run.sh"

(cd "$top" && find . -type f ! -name MANIFEST -printf '%s\t%P\n' | sort -k2) > "$top/MANIFEST"
log "compressing $(du -sh "$top" | cut -f1) (xz -9)"
tar -C "$stage" -cf - cldm-gpu-pack | xz -9 -T0 > "$out.tmp"
size=$(stat -c %s "$out.tmp")
if [ "$size" -gt "$limit" ]; then
  rm -f "$out.tmp"
  die "archive is $size bytes, over the 64 MiB limit: drop binaries or data"
fi
mv "$out.tmp" "$out"
log "wrote $out: $size bytes ($((size / 1024 / 1024)) MiB) of at most $limit"
echo "$out"
