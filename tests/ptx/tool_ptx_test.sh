#!/bin/sh
# tool_ptx_test.sh TOOL EXAMPLES_SPV KERNELS LIBCLDM_PTX NM OUT_DIR [PTXAS] — `cldm-spirv ptx`
# (tools/cldm-spirv): output, target choice, lowering on the way, exit codes (0 ok, 1 refused,
# 2 usage, 3 I/O, 5 backend unavailable) and messages; and that libcldm-ptx.so exports its one
# symbol only. Prints one line per check; fails if any check failed.
set -u
tool=$1 ex=$2 kernels=$3 lib=$4 nm=$5 out=$6 ptxas=${7:-}
tmp=$(mktemp -d "$out/tool-XXXXXX")
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/../common/tool_check.sh"

# an allocating module is lowered (cl12 variant) and translated in one go
check demo 0 "$tool" ptx "$ex/lists.spv" -o "$tmp/lists.ptx"
expect_file demo "$tmp/lists.ptx" ".target sm_86, texmode_independent"
expect_file demo "$tmp/lists.ptx" ".entry build_lists("
expect_file demo "$tmp/lists.ptx" ".entry consume_lists("
expect_file demo "$tmp/lists.ptx" "%envreg3"
if grep -q "membar.cta" "$tmp/lists.ptx"; then
  echo "FAIL demo: membar.cta in the PTX"; fails=$((fails + 1))
fi
check demo-stdout 0 "$tool" ptx --sm 90 "$ex/lists.spv"
expect_file demo-stdout "$tmp/out" ".entry build_lists("
if ! cmp -s "$tmp/out" "$tmp/lists.ptx"; then
  echo "FAIL demo-stdout: --sm 90 differs from the default (both sm_86 PTX)"; fails=$((fails + 1))
fi
check sm75 0 "$tool" ptx --sm sm_75 "$ex/lists.spv" -o "$tmp/l75.ptx"
expect_file sm75 "$tmp/l75.ptx" ".target sm_75, texmode_independent"
check sm80-dotted 0 "$tool" ptx --sm 8.0 "$ex/producer.spv" -o "$tmp/p80.ptx"
expect_file sm80-dotted "$tmp/p80.ptx" ".target sm_80, texmode_independent"
check opt-disable 0 "$tool" ptx --options "-cl-opt-disable" "$ex/lists.spv" -o "$tmp/l0.ptx"
if cmp -s "$tmp/l0.ptx" "$tmp/lists.ptx"; then
  echo "FAIL opt-disable: same PTX as optimised"; fails=$((fails + 1))
fi
if [ -n "$ptxas" ]; then
  check ptxas-sm86 0 "$ptxas" -arch=sm_86 -o /dev/null "$tmp/lists.ptx"
  check ptxas-sm86-O0 0 "$ptxas" -arch=sm_86 -o /dev/null "$tmp/l0.ptx"
  check ptxas-sm75 0 "$ptxas" -arch=sm_75 -o /dev/null "$tmp/l75.ptx"
fi

# refusals and usage
check ordered-variant 1 "$tool" ptx --features cl20 "$ex/lists.spv" -o "$tmp/x.ptx"
expect_file ordered-variant "$tmp/out" "CLDM_PTX_E_UNSUPPORTED"
expect_file ordered-variant "$tmp/out" "memory semantics"
check image 1 "$tool" ptx "$kernels/image.spv" -o "$tmp/x.ptx"
expect_file image "$tmp/out" "images and samplers are not supported by the PTX path"
check bad-sm 2 "$tool" ptx --sm x86 "$ex/lists.spv"
expect_file bad-sm "$tmp/out" "--sm takes a compute capability"
check missing-input 3 "$tool" ptx "$tmp/none.spv"
printf 'garbage!' > "$tmp/garbage.spv"
check garbage 1 "$tool" ptx "$tmp/garbage.spv"
check no-libclc 5 env CLDM_LIBCLC_DIR=/nonexistent "$tool" ptx "$ex/producer.spv" -o "$tmp/x.ptx"
expect_file no-libclc "$tmp/out" "nvptx64--nvidiacl.bc not found"

# the library exports one symbol
"$nm" -D --defined-only "$lib" | awk '{print $NF}' > "$tmp/syms"
if [ "$(cat "$tmp/syms")" != "cldm_ptx_get_api" ]; then
  echo "FAIL exports: $(tr '\n' ' ' < "$tmp/syms")"; fails=$((fails + 1))
else
  echo "ok   exports"
fi

check_summary
