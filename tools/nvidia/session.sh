#!/bin/sh
# tools/nvidia/session.sh — one session on an NVIDIA machine, in one command, from a pack that
# tools/nvidia/pack.sh made (the pack holds a copy, session.sh): each part in a time limit of its
# own, the whole within a deadline, every result under one output folder
# (tools/nvidia/README.md):
#   1. tests   the pack's end-to-end and allocator tests under both loaders, and the demo
#              (run-tests.sh);
#   2. suite   the benchmark suite through the layer with CUDA's program in the same run
#              (bench/run.sh --prebuilt), warm and cold, and the docs/performance.md section
#              made from it (bench/report.py --doc);
#   3. multi   where the machine has two GPUs or more: the suite's case 9, one context of
#              several GPUs, case 1's malloc and free on each GPU alone and on all at once
#              (bench/README.md); skipped, saying so, with fewer GPUs;
#   4. peers   with --peers DIR: DIR/run.sh OUTDIR, other allocators' benchmarks on the same GPU
#              (an external harness: nothing of it is in the repository); its CSV files go
#              into the suite's folder, where the report finds them;
#   5. ab      where the pack has --alt builds: suite cases through the pack's layer and each
#              build's, one after another on the same GPU (an A/B; their case lines in ab.md);
#   6. extra   with --extra CMD: CMD run by sh with the pack's environment (its loader first,
#              NVIDIA's ICD, libclc; OPENCL_LAYERS set to the pack's layer), $1 the pack's
#              folder and $2 a folder for its output.
#
#   session.sh [--pack PACK] [--out DIR] [--deadline SECONDS] [--icd LIB]
#              [--tests SECONDS] [--test-timeout SECONDS] [--tests-only PATTERN]
#              [--suite SECONDS] [--scale SCALE] [--cases LIST] [--cuda-cases LIST]
#              [--cuda-max-size SIZE] [--budget SECONDS] [--case-timeout SECONDS]
#              [--multi SECONDS] [--multi-devices N] [--peers DIR] [--peers-seconds SECONDS]
#              [--ab SECONDS] [--ab-cases LIST]
#              [--extra CMD] [--extra-seconds SECONDS]
#
#   --pack          the pack: its .tar.xz (unpacked into a scratch folder) or an unpacked
#                   folder (default: the folder holding this script, when it is a pack's)
#   --out           the output folder (default: $OUT where set, else ./nvidia-session)
#   --deadline      seconds for the whole session (default 570): no part runs past it, each
#                   gets at most what is left of it minus the time to write the results
#   --icd           the OpenCL driver library (default libnvidia-opencl.so.1; another ICD, such
#                   as pocl's, tries the session elsewhere)
#   --tests         seconds for the tests (default 150; 0 skips them); --test-timeout per test
#                   (default 60); --tests-only the tests whose name contains PATTERN
#   --suite         seconds for the suite (default 240; 0 skips it); --scale (default full);
#                   --cases (default 1,2,5); --cuda-cases, the CUDA program's (default 1,2);
#                   --cuda-max-size (default 256: CUDA's malloc takes minutes per launch of
#                   larger blocks at 2^20 threads); --budget, each case's soft time limit
#                   (default 20); --case-timeout, each case's hard one (default 120)
#   --multi         seconds for case 9 on several GPUs (default 120; 0 skips it), at --scale;
#                   --multi-devices, how many GPUs (default 2): skipped with fewer
#   --peers         DIR with an executable run.sh; --peers-seconds (default 180)
#   --ab            seconds for the A/B of the pack's --alt builds (default 120; 0 skips it);
#                   --ab-cases, the suite's cases it runs (default 1)
#   --extra         a command; --extra-seconds (default 120)
#
# OUT receives few files (the device tool brings back eight at most): session.md (what ran,
# how long, how it ended; the GPU and the pack's revision), tests.md (the tests' summary),
# suite.md (the suite's summary.md), performance.md (the section for docs/performance.md),
# multi.md and multi-performance.md (the same two of case 9, where it ran) and results.tgz,
# everything: tests/, suite/ (bench/run.sh's folder, peers/ and performance/ with the plots
# inside), multi/, peers/, ab/ and ab.md, extra/, each part's log and session.md.
# Exit status: 0 if every part that ran passed, 1 otherwise.
set -u
self=$0
here=$(cd "$(dirname "$0")" && pwd)
pack="" out=${OUT:-$PWD/nvidia-session} deadline=570 icd=""
tests=150 test_timeout=60 tests_only=""
suite=240 scale=full cases=1,2,5 cuda_cases=1,2 cuda_max_size=256 budget=20 case_timeout=120
multi=120 multi_devices=2 peers="" peers_seconds=180 ab=120 ab_cases=1 extra="" extra_seconds=120
invocation="tools/nvidia/session.sh"
while [ $# -gt 0 ]; do
  opt=$1
  case $opt in -h | --help) sed -n '2,58p' "$self" | sed 's/^# \{0,1\}//'; exit 0 ;; esac
  [ $# -ge 2 ] || { echo "session.sh: $opt needs a value (--help)" >&2; exit 2; }
  val=$2
  shift 2
  case $opt in
    --pack) pack=$val ;;
    --out) out=$val ;;
    --deadline) deadline=$val ;;
    --icd) icd=$val ;;
    --tests) tests=$val ;;
    --test-timeout) test_timeout=$val ;;
    --tests-only) tests_only=$val ;;
    --suite) suite=$val ;;
    --scale) scale=$val ;;
    --cases) cases=$val ;;
    --cuda-cases) cuda_cases=$val ;;
    --cuda-max-size) cuda_max_size=$val ;;
    --budget) budget=$val ;;
    --case-timeout) case_timeout=$val ;;
    --multi) multi=$val ;;
    --multi-devices) multi_devices=$val ;;
    --peers) peers=$(cd "$val" && pwd) || exit 2 ;;
    --peers-seconds) peers_seconds=$val ;;
    --ab) ab=$val ;;
    --ab-cases) ab_cases=$val ;;
    --extra) extra=$val ;;
    --extra-seconds) extra_seconds=$val ;;
    *) echo "session.sh: unknown option $opt (--help)" >&2; exit 2 ;;
  esac
  # the command line as docs/performance.md shows it: without this machine's paths
  case $opt in --pack | --out | --peers | --icd) ;; *) invocation="$invocation $opt '$val'" ;; esac
done
start=$(date +%s)
log() { echo "[session] $*" >&2; }

# The pack: unpacked into a scratch folder (removed at exit) unless it is a folder.
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if [ -z "$pack" ]; then
  [ -f "$here/tests.list" ] || { echo "session.sh: --pack PACK (tools/nvidia/pack.sh)" >&2; exit 2; }
  p=$here
elif [ -d "$pack" ]; then
  p=$(cd "$pack" && pwd)
else
  tar -xJf "$pack" -C "$work" || { echo "session.sh: cannot unpack $pack" >&2; exit 2; }
  p=$work/cldm-nvidia-pack
fi
[ -f "$p/tests.list" ] && [ -f "$p/env.sh" ] || { echo "session.sh: $p is no pack" >&2; exit 2; }
mkdir -p "$out"
out=$(cd "$out" && pwd)
res=$work/results
mkdir -p "$res"
. "$p/env.sh"

status=0
report=$res/session.md
{
  echo "# NVIDIA session"
  echo
  echo "Started $(date -u '+%Y-%m-%d %H:%M UTC') on $(hostname): \`$invocation\`."
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null |
    sed 's/^/GPU: /'
  echo "Pack: $(head -1 "$p/REVISION") ($(sed -n 2p "$p/REVISION"))"
  for a in "$p"/alt/*/; do
    [ -f "$a/REVISION" ] && echo "Alt $(basename "$a"): $(tr '\n' ' ' < "$a/REVISION")"
  done
  echo
  echo "| part | seconds allowed | seconds | result |"
  echo "|---|---|---|---|"
} > "$report"

# allowed SECONDS: what a part may take, SECONDS or less if the deadline comes first (a
# reserve of 20 s stays for writing the results); 0 if nothing is left.
allowed() {
  left=$((deadline - ($(date +%s) - start) - 20))
  [ "$left" -gt 0 ] || left=0
  [ "$1" -lt "$left" ] && echo "$1" || echo "$left"
}

# part NAME SECONDS COMMAND...: runs COMMAND with its output in NAME.log, stopped after SECONDS
# (timeout's TERM, KILL 10 s later); records the result in session.md.
part() {
  name=$1 secs=$2
  shift 2
  if [ "$secs" -le 0 ]; then
    echo "| $name | 0 | | not run: no time left before the deadline |" >> "$report"
    status=1
    return
  fi
  log "$name: up to $secs s"
  t0=$(date +%s)
  rc=0
  timeout -k 10 "$secs" "$@" > "$res/$name.log" 2>&1 || rc=$?
  t=$(($(date +%s) - t0))
  case $rc in
    0) result=passed ;;
    124 | 137) result="stopped after $secs s"; status=1 ;;
    *) result="failed (exit $rc)"; status=1 ;;
  esac
  echo "| $name | $secs | $t | $result |" >> "$report"
  log "$name: $result ($t s)"
}

# 1. the tests
if [ "$tests" != 0 ]; then
  secs=$(allowed "$tests")
  part tests "$secs" sh "$p/run-tests.sh" -o "$res/tests" -t "$test_timeout" \
    -T "$((secs > 30 ? secs - 30 : 1))" ${tests_only:+-k "$tests_only"} ${icd:+--icd "$icd"}
  cp "$res/tests/summary.md" "$out/tests.md" 2>/dev/null
fi

# The pack's environment for the suite, the A/B and the extra command: ocl-icd first, the
# driver alone, libclc, a PTX cache (env.sh).
cldm_pack_env "$p" "$work/env" ocl-icd "$icd"
bench=$p/bench-tree/bench/run.sh
cuda_opts=""
[ -x "$p/bench-tree/build/bench/cuda/cldm-bench-cuda" ] || cuda_opts=--no-cuda

# 2. the suite, with CUDA's program in the same run
if [ "$suite" != 0 ]; then
  part suite "$(allowed "$suite")" "$bench" --prebuilt "$p/bench-tree/build" \
    --layer "$p/lib/libcldm-layer.so" --scale "$scale" --out "$res/suite" \
    --case-timeout "$case_timeout" --budget "$budget" --cuda-cases "$cuda_cases" \
    --cuda-max-size "$cuda_max_size" $cuda_opts -- --cases "$cases"
  # stopped before bench/run.sh merged its cases' parts: what they finished is merged here
  for impl in opencl cuda; do
    if [ ! -s "$res/suite/$impl.csv" ] && ls -d "$res/suite/parts/$impl"-* > /dev/null 2>&1; then
      python3 "$p/bench-tree/bench/merge.py" "$impl" "$res/suite" "$res/suite/parts/$impl"-* \
        >> "$res/suite.log" 2>&1
    fi
  done
  if [ -s "$res/suite/opencl.csv" ] && [ ! -s "$res/suite/summary.md" ]; then
    python3 "$p/bench-tree/bench/report.py" "$res/suite" --no-plots --note "The session stopped \
the suite after its time: rows exist only for the cases that finished." >> "$res/suite.log" 2>&1
  fi
  if [ -d "$res/suite" ]; then
    head -1 "$p/REVISION" > "$res/suite/revision.txt"
    { echo "tools/build.sh && tools/nvidia/pack.sh   # here, then on the GPU machine:"
      echo "$invocation --pack build/cldm-nvidia-pack.tar.xz --out DIR"; } > "$res/suite/command.txt"
    cp "$res/suite/summary.md" "$out/suite.md" 2>/dev/null
  fi
fi

# 3. case 9 on several GPUs: skipped where fewer of the driver's devices report the extension
# through the layer (the suite's own list of them)
if [ "$multi" != 0 ]; then
  found=$(OPENCL_LAYERS="$p/lib/libcldm-layer.so" \
    "$p/bench-tree/build/bench/suite/cldm-bench-suite" --list-devices 2> /dev/null |
    awk -F' [|] ' '$4 == "cl_ext_device_malloc" { n[$1]++ }
      END { m = 0; for (k in n) if (n[k] > m) m = n[k]; print m }')
  found=${found:-0}
  if [ "$found" -lt "$multi_devices" ]; then
    echo "| multi | | | skipped: $found device(s) of one platform report cl_ext_device_malloc," \
      "$multi_devices needed |" >> "$report"
    log "multi: skipped, $found device(s) with cl_ext_device_malloc, $multi_devices needed"
  else
    secs=$(allowed "$multi")
    # the case's own limits inside the part's: its budget a quarter (the warm-up, the cold and
    # the first timed pass run whole), and 10 s left for the report of a stopped run
    part multi "$secs" "$bench" --prebuilt "$p/bench-tree/build" \
      --layer "$p/lib/libcldm-layer.so" --scale "$scale" --out "$res/multi" --no-cuda \
      --no-plots --case-timeout "$((secs > 20 ? secs - 10 : secs))" \
      --budget "$((secs / 4 > 0 ? secs / 4 : 1))" -- --cases 9 --devices "$multi_devices"
    if [ -s "$res/multi/opencl.csv" ]; then
      head -1 "$p/REVISION" > "$res/multi/revision.txt"
      { echo "tools/build.sh && tools/nvidia/pack.sh   # here, then on the GPU machine:"
        echo "$invocation --pack build/cldm-nvidia-pack.tar.xz --out DIR"
      } > "$res/multi/command.txt"
      [ -s "$res/multi/summary.md" ] || python3 "$p/bench-tree/bench/report.py" "$res/multi" \
        --no-plots >> "$res/multi.log" 2>&1
      python3 "$p/bench-tree/bench/report.py" --doc "$out/multi-performance.md" "$res/multi" \
        >> "$res/multi.log" 2>&1 ||
        echo "(bench/report.py --doc of multi failed: multi.log)" >> "$report"
      cp "$res/multi/summary.md" "$out/multi.md" 2>/dev/null
    fi
  fi
fi

# 4. the peers' benchmarks
if [ -n "$peers" ]; then
  if [ -x "$peers/run.sh" ]; then
    mkdir -p "$res/peers"
    part peers "$(allowed "$peers_seconds")" env -u LD_LIBRARY_PATH -u OCL_ICD_VENDORS \
      "$peers/run.sh" "$res/peers"
    if [ -d "$res/suite" ] && ls "$res/peers"/*.csv > /dev/null 2>&1; then
      mkdir -p "$res/suite/peers"
      cp "$res/peers"/*.csv "$res/suite/peers/"
    fi
  else
    echo "| peers | | | failed: $peers/run.sh is not executable |" >> "$report"
    status=1
  fi
fi

# The docs/performance.md section of the suite's folder (plots where a Python has matplotlib).
if [ -s "$res/suite/opencl.csv" ]; then
  py=python3
  for c in python3 /usr/bin/python3; do
    if "$c" -c 'import matplotlib' 2> /dev/null; then py=$c; break; fi
  done
  "$py" "$p/bench-tree/bench/report.py" --doc "$out/performance.md" \
    --plots "$res/suite/performance" "$res/suite" > "$res/report.log" 2>&1 ||
    echo "(bench/report.py --doc failed: report.log)" >> "$report"
fi

# 5. the A/B of the pack's --alt builds: the same cases through each layer, the pack's first;
# each build's case lines in ab.md
if [ "$ab" != 0 ] && ls "$p"/alt/*/lib/libcldm-layer.so > /dev/null 2>&1; then
  ab_end=$(($(date +%s) + $(allowed "$ab")))
  for l in "$p/lib/libcldm-layer.so" "$p"/alt/*/lib/libcldm-layer.so; do
    case $l in "$p/lib/"*) n=pack ;; *) n=$(basename "$(dirname "$(dirname "$l")")") ;; esac
    part "ab-$n" "$((ab_end - $(date +%s)))" "$bench" --prebuilt "$p/bench-tree/build" \
      --layer "$l" --no-cuda --no-plots --scale "$scale" --out "$res/ab/$n" \
      --case-timeout "$case_timeout" --budget "$budget" -- --cases "$ab_cases"
    { echo "## $n"; echo; echo '```'
      grep -aE '^\[bench\] (throughput|mixed) +S=|first NULL|CHECK FAILED' "$res/ab-$n.log"
      echo '```'; echo; } >> "$res/ab.md"
  done
fi

# 6. the extra command
if [ -n "$extra" ]; then
  mkdir -p "$res/extra"
  part extra "$(allowed "$extra_seconds")" env OPENCL_LAYERS="$p/lib/libcldm-layer.so" \
    sh -c "$extra" extra "$p" "$res/extra"
fi

echo >> "$report"
echo "Ended $(date -u '+%H:%M UTC'), $(($(date +%s) - start)) s in all." >> "$report"
sed -i "s#$p/#<pack>/#g" "$report" "$res"/*.log 2>/dev/null
cp "$report" "$out/session.md"
tar -C "$res" -czf "$out/results.tgz" .
log "$out: session.md, results.tgz ($(wc -c < "$out/results.tgz") bytes)"
exit $status
