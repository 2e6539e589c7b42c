#!/bin/sh
# tools/gpu-probe-regcap.sh — on an NVIDIA machine, from a pack (tools/gpu-pack.sh): the suite's
# cases and cldm_bench_alloc through this pack's layer with register caps for the kernels that
# allocate (CLDM_PTX_MAXNREG, layer/ptx/src/ptx_codegen.c), each cap REPEATS times, the caps
# interleaved (0 5 9, 0 5 9, ...) so that a drift of the GPU over the run spreads over all of
# them; then one line per cap and size: the best malloc and free times of its repetitions.
#   sh tools/gpu-probe-regcap.sh PACKDIR OUTDIR [CAPS [REPEATS [CASES [BENCH_SIZES [ALTS]]]]]
# CAPS: comma-separated, 0 = no cap (default 0,80,96,112); REPEATS (default 2); CASES: the
# suite's --cases (default 1); BENCH_SIZES: cldm_bench_alloc's sizes on a 16 GiB heap, 2^20
# work-items (default 16,256,4096; empty: none); ALTS: comma-separated names of the pack's --alt
# allocators (or "all") whose layers (alt/NAME/lib) run the suite as well, interleaved with the
# pack's (default: the pack's layer only). Results: OUTDIR/suite-LAYER-CAP-REP (LAYER: pack or
# the alt's NAME).
# CLDM_REGCAP_SUITE_ARGS: more options for cldm-bench-suite (e.g. "--max-size 4096": case 1 up to
# 4 KiB only, a quicker A/B of the small sizes).
# Summary: best malloc and free per layer, cap and size of case 1-3's throughput lines, and for
# case 5 the fill rounds' malloc times (round 0, rounds 1-13, 14-26, 27 on; min-max, ms).
set -u
p=$(cd "$1" && pwd) out=$2 caps=${3:-0,80,96,112} reps=${4:-2} cases=${5:-1}
sizes=${6-16,256,4096} alts=${7:-}
layers="pack=$p/lib/libcldm-layer.so"
for a in "$p"/alt/*/; do
  n=$(basename "$a")
  case ",$alts," in ,all,|*,"$n",*) ;; *) continue ;; esac
  [ -f "$a/lib/libcldm-layer.so" ] && layers="$layers $n=$a/lib/libcldm-layer.so"
done
mkdir -p "$out"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
. "$p/env.sh" # tools/gpu-env.sh
cldm_pack_env "$p" "$work"
r=1
while [ "$r" -le "$reps" ]; do
  for cap in $(echo "$caps" | tr ',' ' '); do
    for l in $layers; do
      CLDM_PTX_MAXNREG=$cap "$p/bench-tree/bench/run.sh" --prebuilt "$p/bench-tree/build" \
        --layer "${l#*=}" --no-cuda --no-plots --scale full \
        --out "$out/suite-${l%%=*}-$cap-$r" --case-timeout 120 -- --cases "$cases" \
        ${CLDM_REGCAP_SUITE_ARGS:-} \
        > "$out/suite-${l%%=*}-$cap-$r.log" 2>&1
    done
    if [ -n "$sizes" ]; then
      (
        export CLDM_TEST_DATA_DIR="$p/share/spv/bench" CLDM_BENCH_MODULES=cldm_alloc.nv.spir64
        export CLDM_BENCH_SIZES="$sizes" CLDM_LIBCLC_DIR="$p/share/clc" CLDM_BENCH_HEAP=16G
        export OPENCL_LAYERS="$p/lib/libcldm-layer.so" CLDM_PTX_MAXNREG=$cap
        exec timeout 90 "$p/bin/cldm_bench_alloc" 1048576 3
      ) > "$out/bench-$cap-$r.txt" 2>&1
    fi
  done
  r=$((r + 1))
done
# best of the repetitions per cap and size: suite lines "S=... malloc X ms ... free Y"
for cap in $(echo "$caps" | tr ',' ' '); do
  for l in $layers; do
    n=${l%%=*}
    cat "$out"/suite-"$n"-"$cap"-*.log 2>/dev/null | grep -a "throughput    S=" |
      awk -v cap="$cap" -v n="$n" '{ for (i = 1; i <= NF; i++) { if ($i ~ /^S=/) s = $i; if ($i == "malloc") m = $(i + 1); if ($i == "free") f = $(i + 1) }
        if (!(s in bm) || m < bm[s]) bm[s] = m; if (!(s in bf) || f < bf[s]) bf[s] = f }
        END { for (s in bm) printf "suite %s cap=%s %s malloc %.3f free %.3f\n", n, cap, s, bm[s], bf[s] }' |
      sort -t= -k3 -n
    for d in "$out"/suite-"$n"-"$cap"-*/; do # case 5's fill rounds, from the results' CSV
      [ -f "$d/opencl.csv" ] || continue
      awk -F, -v tag="$(basename "$d")" '$3 == "fill" && $7 == "malloc_time" {
          r = $6 + 0; g = r == 0 ? 0 : r <= 13 ? 1 : r <= 26 ? 2 : 3
          if (!(g in lo) || $9 < lo[g]) lo[g] = $9; if (!(g in hi) || $9 > hi[g]) hi[g] = $9 }
        END { if (0 in lo) printf "fill %s round0 %.3f r1-13 %.3f-%.3f r14-26 %.3f-%.3f r27+ %.1f-%.1f\n",
          tag, lo[0], lo[1], hi[1], lo[2], hi[2], lo[3], hi[3] }' "$d/opencl.csv"
    done
  done
  cat "$out"/bench-"$cap"-*.txt 2>/dev/null | grep -a "spir64 " |
    awk -v cap="$cap" '{ s = $2; m = $4; if (!(s in bm) || m < bm[s]) bm[s] = m }
      END { for (s in bm) printf "bench cap=%s S=%s malloc %.3f\n", cap, s, bm[s] }' | sort -t= -k3 -n
done
