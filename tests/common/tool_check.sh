# tests/common/tool_check.sh — the checks that the command-line tool tests (tests/spirv/
# tool_test.sh, tests/ptx/tool_ptx_test.sh) source: each prints one line, counts failures in
# $fails, and keeps output in $tmp (set by the caller). POSIX sh.
fails=0

# check NAME EXPECTED_EXIT COMMAND...: runs COMMAND, output (stdout+stderr) in $tmp/out
check() {
  name=$1 want=$2
  shift 2
  "$@" >"$tmp/out" 2>&1
  rc=$?
  if [ "$rc" -ne "$want" ]; then
    echo "FAIL $name: exit $rc, expected $want"
    sed 's/^/    /' "$tmp/out"
    fails=$((fails + 1))
  else
    echo "ok   $name"
  fi
}

# expect_file NAME FILE TEXT: FILE contains TEXT
expect_file() {
  if ! grep -qF -- "$3" "$2"; then
    echo "FAIL $1: $2 lacks: $3"
    sed 's/^/    /' "$2" | head -20
    fails=$((fails + 1))
  fi
}

# check_summary: the last line, and the exit status of the test
check_summary() {
  [ "$fails" -eq 0 ] || { echo "$fails check(s) failed"; exit 1; }
  echo "all checks passed"
}
