#!/bin/sh
# tool_test.sh TOOL DATA_DIR SPIRV_VAL — tests of the cldm-spirv command-line tool
# (tools/cldm-spirv): each command, its output, exit codes (0 ok, 1 rejected, 2 usage, 3 I/O,
# 4 allocator) and messages. Prints one line per check; fails if any check failed.
set -u
tool=$1 data=$2 val=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/../common/tool_check.sh"
# expect NAME TEXT: the last check's output contains TEXT
expect() { expect_file "$1" "$tmp/out" "$2"; }

check no-command 2 "$tool"
expect no-command "no command given"
check unknown-command 2 "$tool" frobnicate "$data/alloc64.spv"
expect unknown-command "unknown command 'frobnicate'"
check unknown-option 2 "$tool" lower --bogus "$data/alloc64.spv"
expect unknown-option "unknown option --bogus"
check no-input 2 "$tool" info
expect no-input "no input file"
check help 0 "$tool" --help
expect help "usage: cldm-spirv COMMAND"
check missing-input 3 "$tool" info "$tmp/nope.spv"
expect missing-input "cannot open $tmp/nope.spv"

check info 0 "$tool" info "$data/helper_two_kernels.O0.spir64.spv"
expect info "allocates: yes (forms: Import-linkage)"
expect info "kernels: 4"
expect info "k_helper_a: 2 arguments, allocates, heap is hidden argument 2"
expect info "k_plain: 2 arguments, does not allocate"
check info-cxx 0 "$tool" info "$data/new_delete.cxx.spir64.spv"
expect info-cxx "allocates: yes (forms: C++ operator new/delete)"
expect info-cxx "k_new: 1 argument, allocates, heap is hidden argument 1, may stop at a throwing operator new"
expect info-cxx "k_nothrow: 2 arguments, allocates, heap is hidden argument 2"
expect info-cxx "k_plain: 1 argument, does not allocate"
check lower-cxx 0 "$tool" lower -o "$tmp/cxx.spv" "$data/new_delete.cxx.spir64.spv"
check lower-cxx-info 0 "$tool" info "$tmp/cxx.spv"
expect lower-cxx-info "allocates: no"
expect lower-cxx-info "k_new: 2 arguments, does not allocate"
check info-32 0 "$tool" info "$data/alloc32.ext.spv"
expect info-32 "addressing: Physical32"
expect info-32 "forms: OpExtInst SPV_EXT_device_malloc"

check lower 0 "$tool" lower --allocator "$data/bump_alloc.spir64.spv" -o "$tmp/low.spv" \
  "$data/kernel_alloc.O0.spir64.spv"
check lower-validates 0 "$val" --target-env opencl2.2 "$tmp/low.spv"
check lower-info 0 "$tool" info "$tmp/low.spv"
expect lower-info "allocates: no"
expect lower-info "k_malloc: 3 arguments, does not allocate"
check lower-stdout 0 sh -c "'$tool' lower --allocator '$data/bump_alloc.spir64.spv' -o - \
  '$data/kernel_alloc.O0.spir64.spv' > '$tmp/low2.spv'"
check lower-stdout-same 0 cmp "$tmp/low.spv" "$tmp/low2.spv"
check lower-both-widths 0 "$tool" lower --allocator "$data/bump_alloc.spir.spv" \
  --allocator "$data/bump_alloc.spir64.spv" -o "$tmp/low32.spv" "$data/alloc32.ext.spv"
check lower-32-validates 0 "$val" --target-env opencl2.2 "$tmp/low32.spv"

# a module that does not allocate is written unchanged
check unchanged 0 "$tool" lower --allocator "$data/bump_alloc.spir64.spv" -o "$tmp/same.spv" \
  "$tmp/low.spv"
expect unchanged "does not allocate; written unchanged"
check unchanged-bytes 0 cmp "$tmp/low.spv" "$tmp/same.spv"

check raise 0 "$tool" raise -o "$tmp/ext.spv" "$data/alloc64.spv"
check dis 0 "$tool" dis --malloc-only "$tmp/ext.spv"
expect dis "OpExtInstImport \"SPV_EXT_device_malloc\""
expect dis " calloc "
check dis-full 0 "$tool" dis -o "$tmp/ext.txt" "$tmp/ext.spv"
check dis-file 0 grep -q "OpMemoryModel Physical64 OpenCL" "$tmp/ext.txt"

# rejected modules: exit 1, message with the word offset
printf 'not a SPIR-V module.' > "$tmp/bad.spv"
check malformed 1 "$tool" lower --allocator "$data/bump_alloc.spir64.spv" -o "$tmp/x.spv" \
  "$tmp/bad.spv"
expect malformed "cldm-spirv: $tmp/bad.spv: E_MALFORMED: word 0: bad magic number 0x20746f6e"
head -c 30 "$data/alloc64.spv" > "$tmp/trunc.spv"
check truncated 1 "$tool" info "$tmp/trunc.spv"
expect truncated "E_MALFORMED: word 7: module size 30 bytes is not a multiple of 4 (truncated?)"
check rejected-raise 1 "$tool" raise -o "$tmp/x.spv" "$tmp/bad.spv"

# allocator problems: exit 4
check bad-allocator 4 "$tool" lower --allocator "$tmp/bad.spv" -o "$tmp/x.spv" \
  "$data/alloc64.spv"
expect bad-allocator "allocator $tmp/bad.spv: word 0: bad magic number"
check wrong-allocator 4 "$tool" lower --allocator "$data/alloc64.spv" -o "$tmp/x.spv" \
  "$data/alloc64.spv"
expect wrong-allocator "E_ALLOCATOR: word 48: allocator module: imports \"malloc\"; it must be self-contained"

# I/O
check unwritable 3 "$tool" raise -o "$tmp/no/such/dir/x.spv" "$data/alloc64.spv"
expect unwritable "cannot create $tmp/no/such/dir/x.spv"

# the built-in allocator (device/), which the tool is always linked with
check builtin-help 0 "$tool" --help
expect builtin-help "built-in allocator"
check builtin 0 "$tool" lower -o "$tmp/b.spv" "$data/helper_two_kernels.O0.spir64.spv"
check builtin-validates 0 "$val" --target-env spv1.5 "$tmp/b.spv"
check builtin-cl12 0 "$tool" lower --features none -o "$tmp/b12.spv" "$data/alloc32.spv"
check builtin-cl12-validates 0 "$val" --target-env spv1.5 "$tmp/b12.spv"
check bad-feature 2 "$tool" lower --features warp -o "$tmp/x.spv" "$data/alloc64.spv"
expect bad-feature "unknown feature 'warp'"

check_summary
