#!/bin/sh
# Fails when a C or C++ source of the project is not as clang-format-19
# (.clang-format at the top) would write it; `make format` fixes that.
# Usage: check_format.sh SOURCE_DIR CLANG_FORMAT
set -eu
cd "$1"
files=$(git ls-files 'cuvilc/*.cpp' 'cuvilc/*.h' 'runtime-baremetal/*.c' \
  'runtime-baremetal/*.h' 'tests/*.cpp' 'tests/*.h' 'tests/*.c' \
  'examples/*.c' 'examples/*.h')
if [ -z "$files" ]; then
  echo "check_format: no sources found under $1 (not a git checkout?)" >&2
  exit 1
fi
# --dry-run -Werror prints each difference and exits non-zero on the first file.
bad=0
for f in $files; do
  "$2" --dry-run -Werror "$f" >/dev/null 2>&1 || { echo "not formatted: $f"; bad=1; }
done
if [ $bad -ne 0 ]; then
  echo "check_format: run 'make format' (clang-format-19 -i) on the files above" >&2
fi
exit $bad
