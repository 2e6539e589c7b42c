#!/usr/bin/env bash
# bench/run.sh — the benchmark suite in one command (bench/README.md): builds if needed
# (tools/build.sh), runs cldm-bench-suite on an OpenCL device through the layer, then, on an
# NVIDIA device where cldm-bench-cuda exists and a GPU answers, the CUDA program with the same
# cases and heap sizes, and writes summary.md and PNG plots (bench/report.py) into
# BUILD/bench-results/<date>-<device>/ (the build directory, outside the sources' tracked
# files), or into --out DIR.
#
#   bench/run.sh [--quick | --scale quick|medium|full] [--device PATTERN] [--out DIR]
#                [--cuda PATH | --no-cuda] [--cuda-cases LIST] [--cuda-max-size SIZE]
#                [--cuda-timeout SECONDS] [--opencl-timeout SECONDS]
#                [--case-timeout SECONDS] [--budget SECONDS] [--prebuilt DIR]
#                [--layer LIB] [--note TEXT] [--no-plots] [--list-files] [-- SUITE OPTIONS...]
#
#   --prebuilt DIR  take the programs, kernels and layer from DIR, a build directory or a copy
#                   of the files `--list-files` names (same relative paths); nothing is built,
#                   no cmake, ninja or clang needed
#   --layer LIB     the layer to enable (default: DIR/layer/libcldm-layer.so; on NVIDIA's PTX
#                   route libcldm-ptx.so must lie next to it)
#   --cuda-cases    the cases the CUDA program runs (default: those cldm-bench-suite ran)
#   --cuda-max-size the CUDA program's cases 1 and 3 only up to SIZE bytes (K/M): CUDA's malloc
#                   takes minutes per launch of larger blocks at 2^20 threads
#   --cuda-timeout  stop the CUDA program after SECONDS (CUDA's malloc takes minutes for some
#                   cases); the rows it wrote stay and summary.md says so
#   --opencl-timeout  the same for cldm-bench-suite (a case that does not finish loses only
#                   itself and the cases after it; CUDA and the report still run)
#   --case-timeout  run every case of both programs in a process of its own, stopped after
#                   SECONDS: a case that does not finish loses only itself (bench/merge.py
#                   joins the parts; instead of --opencl-timeout and --cuda-timeout)
#   --budget        cases 1-3 of both programs: a soft limit per case (shapes reached after it
#                   are skipped, repetitions after the first stop), so that a slow case reports
#                   what it measured
#   --list-files    print the files a prebuilt run needs (paths relative to the repository),
#                   then exit
# Exit status: 0 done, 1 a correctness check failed, 2 an error, 3 a case stopped by
# --case-timeout (the report is written all the same).
# Options after -- go to cldm-bench-suite (e.g. -- --cases 1,4 --reps 3). The driver is taken
# from OCL_ICD_VENDORS / OCL_ICD_FILENAMES when set, else from tools/env.sh's pocl (the dev set-up).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${CLDM_BUILD_DIR:-$root/build}
scale=full device="" out="" cuda="" no_cuda=0 cuda_timeout="" opencl_timeout="" prebuilt="" layer=""
case_timeout="" budget="" cuda_cases="" cuda_max_size=""
note="" no_plots=0 list=0
extra=()
invocation=("$@")
die() { echo "bench/run.sh: $*" >&2; exit 2; }
while [ $# -gt 0 ]; do
  case $1 in
    --quick) scale=quick ;;
    --scale) scale=${2:?}; shift ;;
    --device) device=${2:?}; shift ;;
    --out) out=${2:?}; shift ;;
    --cuda) cuda=${2:?}; shift ;;
    --no-cuda) no_cuda=1 ;;
    --cuda-cases) cuda_cases=${2:?}; shift ;;
    --cuda-max-size) cuda_max_size=${2:?}; shift ;;
    --cuda-timeout) cuda_timeout=${2:?}; shift ;;
    --opencl-timeout) opencl_timeout=${2:?}; shift ;;
    --case-timeout) case_timeout=${2:?}; shift ;;
    --budget) budget=${2:?}; shift ;;
    --prebuilt) prebuilt=${2:?}; shift ;;
    --layer) layer=${2:?}; shift ;;
    --note) note=${2:?}; shift ;;
    --no-plots) no_plots=1 ;;
    --list-files) list=1 ;;
    --) shift; extra=("$@"); break ;;
    -h|--help) sed -n '2,38p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown option $1 (--help)" ;;
  esac
  shift
done
case $scale in quick|medium|full) ;; *) die "--scale quick|medium|full" ;; esac
[ -n "$case_timeout" ] && { [ -n "$cuda_timeout" ] || [ -n "$opencl_timeout" ]; } &&
  die "--case-timeout replaces --cuda-timeout and --opencl-timeout"
# per-case mode: the cases asked for after -- (--cases LIST), taken out of the suite's options
case_list=1,2,3,4,5,6,7,8
if [ -n "$case_timeout" ]; then
  rest=()
  for ((i = 0; i < ${#extra[@]}; i++)); do
    if [ "${extra[i]}" = --cases ] && [ $((i + 1)) -lt ${#extra[@]} ]; then
      case_list=${extra[i + 1]}; i=$((i + 1))
    else
      rest+=("${extra[i]}")
    fi
  done
  extra=(${rest[@]+"${rest[@]}"})
fi
[ -n "$budget" ] && extra+=(--budget "$budget")
[ -n "$prebuilt" ] && build=$(cd "$prebuilt" && pwd)

# The files a run needs, relative to the build directory (the layer unless --layer names one;
# the PTX backend and the CUDA program where they were built).
build_files=(bench/suite/cldm-bench-suite bench/suite/kernels/alloc.spv
  bench/suite/kernels/base.spv bench/suite/kernels/overhead.spv
  bench/suite/kernels/overhead.cl bench/suite/kernels/alloc.lowered.spv)
layer_file=layer/libcldm-layer.so
optional_files=(layer/libcldm-ptx.so bench/cuda/cldm-bench-cuda)
source_files=(bench/run.sh bench/report.py bench/report_doc.py bench/merge.py)

if [ $list = 1 ]; then
  rel=${build#"$root"/}
  for f in "${source_files[@]}"; do echo "$f"; done
  for f in "${build_files[@]}" "$layer_file"; do echo "$rel/$f"; done
  for f in "${optional_files[@]}"; do [ -e "$build/$f" ] && echo "$rel/$f"; done
  exit 0
fi

if [ -z "$prebuilt" ]; then
  CLDM_BUILD_DIR=$build "$root/tools/build.sh" >&2
fi
[ -n "$layer" ] || layer=$build/$layer_file
for f in "${build_files[@]}"; do
  [ -e "$build/$f" ] || die "missing $build/$f${prebuilt:+ (--prebuilt $prebuilt)}"
done
[ -e "$layer" ] || die "missing the layer $layer"
suite=$build/bench/suite/cldm-bench-suite

# OpenCL: our layer; the driver the caller chose, else the dev set-up's pocl.
if [ -z "${OCL_ICD_VENDORS:-}" ] && [ -z "${OCL_ICD_FILENAMES:-}" ] && [ -e "$root/tools/env.sh" ]; then
  # shellcheck source=tools/env.sh
  . "$root/tools/env.sh"
  [ -d "$CLDM_VENDORS_DIR" ] && export OCL_ICD_VENDORS=$CLDM_VENDORS_DIR
fi
OPENCL_LAYERS=$(cd "$(dirname "$layer")" && pwd)/$(basename "$layer")
export OPENCL_LAYERS

dev_args=()
[ -n "$device" ] && dev_args=(--device "$device")
tag=$("$suite" --tag "${dev_args[@]}") || die "no device (cldm-bench-suite --list-devices lists them)"
if [ -z "$out" ]; then
  out=$build/bench-results/$(date +%Y-%m-%d)-$tag
  [ -e "$out" ] && out=$out-$(date +%H%M%S)
fi
mkdir -p "$out"
out=$(cd "$out" && pwd)
case $out in "$PWD"/*) out=${out#"$PWD"/} ;; esac  # relative where possible: no absolute paths in run.log
log=$out/run.log
: > "$log"
# what report.py names as the run's command and revision
{ printf 'bench/run.sh'; printf ' %q' ${invocation[@]+"${invocation[@]}"}; echo; } > "$out/command.txt"
git -C "$root" describe --always --dirty > "$out/revision.txt" 2>/dev/null || rm -f "$out/revision.txt"
echo "[bench] results: $out" | tee -a "$log" >&2

status=0
# per_case IMPL LIST COMMAND...: COMMAND once per case of LIST (--cases C --out a part folder
# of its own), each stopped after case_timeout seconds, then the parts merged into $out
per_case() {
  local impl=$1 list=$2 c rc stopped="" parts=()
  shift 2
  for c in ${list//,/ }; do
    parts+=("$out/parts/$impl-$c")
    mkdir -p "$out/parts/$impl-$c"
    rc=0
    timeout "$case_timeout" "$@" --cases "$c" --out "$out/parts/$impl-$c" \
      2> >(tee -a "$log" >&2) || rc=$?
    wait
    if [ $rc = 124 ]; then
      echo "[bench] $impl case $c: stopped after $case_timeout s (--case-timeout)" | tee -a "$log" >&2
      stopped=${stopped:+$stopped,}$c
      status=$((status ? status : 3))
    elif [ $rc != 0 ]; then
      status=$((status ? status : rc))
    fi
  done
  python3 "$root/bench/merge.py" "$impl" "$out" "${parts[@]}" --stopped "$stopped" \
    2> >(tee -a "$log" >&2) || status=$((status ? status : $?))
  wait
  [ -z "$stopped" ] ||
    note="${note:+$note }$impl case(s) $stopped did not finish in $case_timeout s each (--case-timeout): rows exist only for what they finished."
}
if [ -n "$case_timeout" ]; then
  per_case opencl "$case_list" "$suite" --scale "$scale" "${dev_args[@]}" --kernels "$build/bench/suite/kernels" \
    ${extra[@]+"${extra[@]}"}
else
  run_suite=("$suite")
  [ -n "$opencl_timeout" ] && run_suite=(timeout "$opencl_timeout" "$suite")
  "${run_suite[@]}" --scale "$scale" "${dev_args[@]}" --kernels "$build/bench/suite/kernels" \
    --out "$out" ${extra[@]+"${extra[@]}"} 2> >(tee -a "$log" >&2) || status=$?
  wait
fi
if [ -n "$opencl_timeout" ] && [ $status = 124 ]; then # the rows written so far stay
  echo "[bench] cldm-bench-suite: stopped after $opencl_timeout s (--opencl-timeout); the case" \
       "it was in and those after it are left out" | tee -a "$log" >&2
  note="${note:+$note }cldm-bench-suite was stopped after $opencl_timeout s (--opencl-timeout): OpenCL rows exist only for the cases it finished."
fi
[ -s "$out/opencl.meta.json" ] || die "cldm-bench-suite wrote no results (exit status $status)"

# CUDA, on the same GPU, with the heap sizes the OpenCL run used.
# a value of opencl.meta.json (one "key": value per line, as cldm-bench-suite writes it)
meta() { sed -n -e "s/^  \"$1\": \"\(.*\)\",\{0,1\}$/\1/p" -e "s/^  \"$1\": \([^\",]*\),\{0,1\}$/\1/p" "$out/opencl.meta.json"; }
[ -z "$cuda" ] && [ $no_cuda = 0 ] && [ -x "$build/bench/cuda/cldm-bench-cuda" ] && \
  case $(meta platform) in *NVIDIA*) cuda=$build/bench/cuda/cldm-bench-cuda ;; esac
# the CUDA program's cases: those asked for, without case 9 (several devices), which it has not
cuda_list=${cuda_cases:-$(meta cases)}
[ -n "$case_timeout" ] && cuda_list=${cuda_cases:-$case_list}
cuda_list=$(echo "$cuda_list" | tr "," "\n" | { grep -vx 9 || true; } | paste -sd, -)
if [ -n "$cuda" ] && [ $no_cuda = 0 ] && [ -z "$cuda_list" ]; then
  echo "[bench] $cuda: not run, it has none of the cases asked for (case 9 is OpenCL's alone)" |
    tee -a "$log" >&2
elif [ -n "$cuda" ] && [ $no_cuda = 0 ]; then
  if "$cuda" --probe 2>/dev/null; then
    cuda_args=(--scale "$scale" --heap "$(meta heap)" --fill-heap "$(meta fill_heap)"
               --reps "$(meta reps)")
    [ -n "$budget" ] && cuda_args+=(--budget "$budget")
    [ -n "$cuda_max_size" ] && cuda_args+=(--max-size "$cuda_max_size")
    cuda_status=0
    if [ -n "$case_timeout" ]; then
      per_case cuda "$cuda_list" "$cuda" "${cuda_args[@]}"
    else
      cuda_args+=(--out "$out" --cases "$cuda_list")
      run_cuda=("$cuda")
      [ -n "$cuda_timeout" ] && run_cuda=(timeout "$cuda_timeout" "$cuda")
      "${run_cuda[@]}" "${cuda_args[@]}" 2> >(tee -a "$log" >&2) || cuda_status=$?
      wait
    fi
    if [ $cuda_status = 124 ]; then # the rows written so far stay (cuda.csv is written per row)
      echo "[bench] $cuda: stopped after $cuda_timeout s (--cuda-timeout); its later cases are" \
           "left out" | tee -a "$log" >&2
      note="${note:+$note }CUDA's program was stopped after $cuda_timeout s (--cuda-timeout): CUDA rows exist only for the cases it finished."
    elif [ $cuda_status != 0 ]; then
      status=$((status ? status : cuda_status))
    fi
  else
    echo "[bench] $cuda: no CUDA device answers; CUDA columns left out" | tee -a "$log" >&2
  fi
fi

# Report: a Python with matplotlib if there is one (Debian's python3-matplotlib lives in
# /usr/bin/python3, which another python3 first on PATH may not see).
py=""
for p in python3 /usr/bin/python3; do
  if command -v "$p" >/dev/null && "$p" -c 'import matplotlib' 2>/dev/null; then py=$p; break; fi
done
report_args=("$out")
[ -n "$note" ] && report_args+=(--note "$note")
if [ -z "$py" ]; then
  py=python3
  [ $no_plots = 1 ] || echo "[bench] matplotlib not found (Debian: python3-matplotlib): no plots" | tee -a "$log" >&2
  report_args+=(--no-plots)
elif [ $no_plots = 1 ]; then
  report_args+=(--no-plots)
fi
"$py" "$root/bench/report.py" "${report_args[@]}" 2> >(tee -a "$log" >&2) || status=$((status ? status : $?))
wait
[ -s "$out/summary.md" ] && echo "[bench] summary: $out/summary.md" | tee -a "$log" >&2
exit $status
