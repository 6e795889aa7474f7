"""The `cuvilc` command pip installs: runs the cuvilc binary the package
finds (see _tool.py), with the same arguments, exit status and output."""

import os
import sys

from . import _tool
from ._errors import ToolNotFoundError


def main():
    try:
        binary = _tool.cuvilc()
    except ToolNotFoundError as e:
        print(f"cuvilc: {e}", file=sys.stderr)
        return 127
    os.execv(binary, [binary, *sys.argv[1:]])
    return 0  # not reached: execv replaces the process


if __name__ == "__main__":
    sys.exit(main())
