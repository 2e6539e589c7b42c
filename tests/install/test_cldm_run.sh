#!/usr/bin/env bash
# test_cldm_run.sh — the launcher's options without a driver (label unit): the variables it
# sets (--print-env and a real run of `env`), OPENCL_LAYERS merged with an existing value (ours
# first, not twice), option errors (exit status 2, nothing run).
#   test_cldm_run.sh CLDM_RUN LAYER
set -uo pipefail
run=$1 layer=$(readlink -f "$2")
failures=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

check() { # check <description> <expected> <actual>
  if [ "$2" = "$3" ]; then
    printf 'ok    %s\n' "$1"
  else
    printf 'FAIL  %s\n  want: %s\n  got:  %s\n' "$1" "$2" "$3"
    failures=$((failures + 1))
  fi
}
status() { # status <description> <expected status> <command...>
  local what=$1 want=$2
  shift 2
  "$@" > "$tmp/out" 2> "$tmp/err"
  check "$what (exit status)" "$want" "$?"
}

# the variables of --print-env that the options set (the loader's lines and LD_LIBRARY_PATH are
# test_cldm_run_loader.sh's)
print_env() { "$run" "$@" | grep -v -e '^# loader ' -e '^LD_LIBRARY_PATH='; }

unset OPENCL_LAYERS CLDM_HEAP_SIZE CLDM_LOG CLDM_DUMP_DIR CLDM_HEAP_MEMORY CLDM_NVIDIA CLDM_CHECK \
  CLDM_OOM CLDM_BAD_ALLOC

check "the layer alone" "OPENCL_LAYERS=$layer" "$(print_env --print-env)"
check "prepended to other layers" "OPENCL_LAYERS=$layer:/opt/a.so:/opt/b.so" \
  "$(OPENCL_LAYERS=/opt/a.so:/opt/b.so print_env --print-env)"
ln -s "$layer" "$tmp/link.so"
check "not added twice (same file under another name)" "OPENCL_LAYERS=$layer:/opt/a.so" \
  "$(OPENCL_LAYERS="/opt/a.so:$tmp/link.so" print_env --print-env)"
check "empty entries dropped" "OPENCL_LAYERS=$layer:/opt/a.so" \
  "$(OPENCL_LAYERS="::/opt/a.so:" print_env --print-env)"
check "every knob" "OPENCL_LAYERS=$layer
CLDM_HEAP_SIZE=64M
CLDM_LOG=debug
CLDM_DUMP_DIR=$tmp/dumps
CLDM_HEAP_MEMORY=buffer
CLDM_NVIDIA=off
CLDM_CHECK=1
CLDM_OOM=abort
CLDM_BAD_ALLOC=report" \
  "$(print_env --heap-size 64M --log=debug --dump-dir "$tmp/dumps" --heap-memory buffer --no-nvidia \
    --check --oom abort --bad-alloc report --print-env)"
check "--oom=report" "CLDM_OOM=report" "$(print_env --oom=report --print-env | grep OOM)"
check "--bad-alloc=abort" "CLDM_BAD_ALLOC=abort" "$(print_env --bad-alloc=abort --print-env | grep BAD)"
[ -d "$tmp/dumps" ]
check "--dump-dir creates the directory" 0 $?
(cd "$tmp" && "$run" --dump-dir rel --print-env) > "$tmp/rel.out"
check "--dump-dir made absolute" "CLDM_DUMP_DIR=$tmp/rel" "$(grep DUMP "$tmp/rel.out")"
check "--layer" "OPENCL_LAYERS=$tmp/link.so" "$(print_env --layer "$tmp/link.so" --print-env | sed "s#$layer#$tmp/link.so#")"

# a real run: the program gets the variables and its own arguments, options after it untouched
# shellcheck disable=SC2016 # expanded by the program's shell
env_out=$(OPENCL_LAYERS=/opt/a.so "$run" --heap-size 2G -- sh -c 'echo "$OPENCL_LAYERS|$CLDM_HEAP_SIZE|$0|$1"' --heap-size x)
check "the program runs with the variables and its arguments" "$layer:/opt/a.so|2G|--heap-size|x" "$env_out"
check "without --, the first non-option is the program" "ok" "$("$run" sh -c 'echo ok')"
status "the program's exit status" 3 "$run" sh -c 'exit 3'
status "a missing program" 127 "$run" "$tmp/no-such-program"

# errors: status 2, a message, nothing run
for bad in "--heap-size 100K" "--heap-size 12X" "--heap-size 0M" "--heap-size" "--log loud" \
  "--heap-memory disk" "--frobnicate" "--layer $tmp/none.so" "--oom ignore" "--oom" \
  "--bad-alloc ignore" "--bad-alloc"; do
  # shellcheck disable=SC2086 # the options are words
  status "refused: $bad" 2 "$run" $bad -- touch "$tmp/ran"
  [ -s "$tmp/err" ]
  check "refused: $bad (message)" 0 $?
done
[ ! -e "$tmp/ran" ]
check "nothing run after an error" 0 $?
status "no program" 2 "$run" --heap-size 8M
for good in 1M 1048576 4096K 2G 16MiB 16mb; do
  status "accepted: --heap-size $good" 0 "$run" --heap-size "$good" --print-env
done
status "--help" 0 "$run" --help
grep -q -- "--heap-size" "$tmp/out"
check "--help lists the options" 0 $?
check "--version" "cldm-run (cl_ext_device_malloc)" "$("$run" --version | sed 's/ [0-9][0-9.]*$//')"

[ "$failures" -eq 0 ] || { echo "$failures check(s) failed"; exit 1; }
echo "all checks passed"
