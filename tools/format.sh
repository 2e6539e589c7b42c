#!/usr/bin/env bash
# tools/format.sh — the project's one code style (.clang-format) over every tracked C, C++ and
# OpenCL C file: `tools/format.sh` rewrites them, `tools/format.sh --check` lists the files
# that differ and fails (ctest runs the check where clang-format is installed).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
fmt=${CLANG_FORMAT:-clang-format}
mode=${1:-}
status=0
while IFS= read -r f; do
  case $f in *.clh) assume=${f%.clh}.cl ;; *) assume=$f ;; esac
  if [ "$mode" = --check ]; then
    if ! "$fmt" --assume-filename="$assume" < "$f" | cmp -s - "$f"; then
      echo "not formatted: $f"; status=1
    fi
  else
    "$fmt" --assume-filename="$assume" < "$f" > "$f.fmt.tmp"
    if cmp -s "$f.fmt.tmp" "$f"; then rm -f "$f.fmt.tmp"; else mv "$f.fmt.tmp" "$f"; fi
  fi
done < <(git ls-files '*.c' '*.h' '*.cpp' '*.cu' '*.cl' '*.clh')
exit $status
