#!/usr/bin/env python3
"""Fails when code outside cuvilc/ops/ compares an op's name or record.

Passes and the planner ask the op record (OpDef traits and hooks, see
docs/ops.md) what an op is; only an op's own file may look at its name.
Reported, in C++ sources under cuvilc/ outside cuvilc/ops/: `opType() ==`,
`opType() !=`, a string literal compared with opType() in either order,
and a node's record compared with a named record (`def() == &ConvOp`,
`D != &AddOp`, `&XOp == ...`), which is a name check by another spelling.
Creating a node of a named record (`replaceNode(N, ..., &ReshapeOp, ...)`)
is allowed.

Usage: check_op_names.py SOURCE_ROOT
"""
import pathlib
import re
import sys

COMPARISONS = [
    re.compile(r'opType\(\)\s*[!=]='),
    re.compile(r'"[^"\n]*"\s*[!=]=\s*[\w.>()\-]*opType\(\)'),
    re.compile(r'[!=]=\s*&\s*\w+Op\b'),
    re.compile(r'&\s*\w+Op\s*[!=]='),
]


def main() -> int:
    if len(sys.argv) != 2:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    root = pathlib.Path(sys.argv[1])
    compiler = root / 'cuvilc'
    ops = compiler / 'ops'
    found = []
    for path in sorted(compiler.rglob('*')):
        if path.suffix not in ('.cpp', '.h', '.def') or ops in path.parents:
            continue
        for number, line in enumerate(path.read_text().splitlines(), 1):
            code = line.split('//', 1)[0]
            if any(p.search(code) for p in COMPARISONS):
                found.append(f'{path.relative_to(root)}:{number}: '
                             f'{line.strip()}')
    for entry in found:
        print(entry)
    if found:
        print(f'{len(found)} comparison(s) of op names or records outside '
              'cuvilc/ops/: '
              'ask the op record (OpDef traits or hooks) instead',
              file=sys.stderr)
        return 1
    return 0


if __name__ == '__main__':
    sys.exit(main())
