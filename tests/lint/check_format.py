#!/usr/bin/env python3
"""Fails when a C or C++ source is not formatted as .clang-format says.

The sources are the tracked files (git ls-files) matching PATTERNS: the
compiler, the runtime, the tests and the examples. Generated files and
third-party code are not tracked there. With --fix, formats them in place
instead (`make format`).

Usage: check_format.py [--fix] [--clang-format PATH] SOURCE_ROOT
"""
import argparse
import pathlib
import re
import subprocess
import sys

PATTERNS = ['cuvilc/*.cpp', 'cuvilc/*.h', 'runtime-baremetal/*.c',
            'runtime-baremetal/*.h', 'tests/*.cpp', 'tests/*.h', 'tests/*.c',
            'examples/*.c', 'examples/*.h']
# What clang-format --dry-run says of a file it would change.
VIOLATION = re.compile(r'^(.+?):\d+:\d+: (?:error|warning): code should be clang-formatted',
                       re.MULTILINE)


def sources(root: pathlib.Path) -> list[str]:
    out = subprocess.run(['git', '-C', str(root), 'ls-files', '--', *PATTERNS],
                         check=True, capture_output=True, text=True).stdout
    return [line for line in out.splitlines() if line]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    parser.add_argument('--fix', action='store_true')
    parser.add_argument('--clang-format', default='clang-format-19')
    parser.add_argument('root', type=pathlib.Path)
    args = parser.parse_args()
    files = sources(args.root)
    if not files:
        print(f'{args.root}: no tracked sources (not a git checkout?)',
              file=sys.stderr)
        return 2
    if args.fix:
        return subprocess.run([args.clang_format, '-i', *files],
                              cwd=args.root).returncode
    # One clang-format for every file (starting one per file took a minute):
    # --dry-run -Werror reports each file that would change, as
    # "PATH:LINE:COL: error: code should be clang-formatted", and fails.
    proc = subprocess.run([args.clang_format, '--dry-run', '-Werror', '--ferror-limit=1',
                           *files], capture_output=True, text=True, cwd=args.root)
    bad = sorted({m[1] for m in VIOLATION.finditer(proc.stderr)})
    if proc.returncode != 0 and not bad:
        # Failed for another reason (an unreadable file, a bad .clang-format).
        print(proc.stderr, file=sys.stderr, end='')
        print(f'{args.clang_format} failed (exit {proc.returncode})', file=sys.stderr)
        return 2
    for path in bad:
        print(f'{path}: not formatted')
    if bad:
        print(f'{len(bad)} of {len(files)} files differ from .clang-format: '
              'run `make format`', file=sys.stderr)
        return 1
    print(f'{len(files)} files formatted')
    return 0


if __name__ == '__main__':
    sys.exit(main())
