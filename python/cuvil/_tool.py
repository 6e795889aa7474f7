"""Finding and running the programs the package drives: cuvilc, and ld.lld
for host models (the object is linked into a shared library: no C compiler).

cuvilc is looked up, in order: $CUVILC; the build tree recorded when the
package was installed with pip (_build_config.py); the build tree of the
source checkout this package sits in (<repo>/build, or $CUVIL_BUILD_DIR);
then PATH. The PATH entry may be the `cuvilc` launcher pip installs, which
itself runs the binary found here: launchers are skipped."""

import os
import pathlib
import shutil
import subprocess

from ._errors import CuvilError, ToolNotFoundError

_PACKAGE_DIR = pathlib.Path(__file__).resolve().parent
_SOURCE_BUILD = _PACKAGE_DIR.parent.parent / "build"


def _is_binary(path):
    """An executable ELF file (not a script, not the pip launcher)."""
    try:
        with open(path, "rb") as f:
            return f.read(4) == b"\x7fELF" and os.access(path, os.X_OK)
    except OSError:
        return False


def _candidates():
    try:
        from . import _build_config  # written by `pip install` (setup.py)
        yield pathlib.Path(_build_config.CUVILC), "the build tree recorded at install"
    except ImportError:
        pass
    build = pathlib.Path(os.environ.get("CUVIL_BUILD_DIR", _SOURCE_BUILD))
    yield build / "cuvilc" / "cuvilc", "the source checkout's build tree"
    for d in os.environ.get("PATH", "").split(os.pathsep):
        if d:
            yield pathlib.Path(d) / "cuvilc", "PATH"


def cuvilc():
    """The cuvilc binary: a path, or ToolNotFoundError saying where it looked."""
    env = os.environ.get("CUVILC")
    if env:
        # An explicit choice that is wrong is an error, not a reason to run
        # some other cuvilc.
        if not _is_binary(env):
            raise ToolNotFoundError(f"$CUVILC is {env}, which is not an executable "
                                    "cuvilc binary")
        return env
    tried = []
    for path, where in _candidates():
        if _is_binary(path):
            return str(path)
        if where != "PATH":
            tried.append(f"{path} ({where})")
    raise ToolNotFoundError("cuvilc not found: build it (`make build` in the cuvil checkout), "
                            "set $CUVILC to its path, or put it on PATH; tried "
                            + ", ".join(tried) + " and PATH")


def linker():
    """ld.lld (Debian package lld-19)."""
    for name in ("ld.lld-19", "ld.lld"):
        found = shutil.which(name)
        if found:
            return found
    raise ToolNotFoundError("ld.lld not found (Debian package lld-19): host models are "
                            "linked into a shared library with it")


def run(args, what, cwd=None):
    """Runs a tool; CuvilError with its own message when it fails."""
    try:
        proc = subprocess.run([str(a) for a in args], cwd=cwd, capture_output=True,
                              text=True, check=False)
    except OSError as e:
        raise ToolNotFoundError(f"{what}: cannot run {args[0]}: {e}") from e
    if proc.returncode != 0:
        message = (proc.stderr.strip() or proc.stdout.strip()
                   or f"exit status {proc.returncode}")
        raise CuvilError(f"{what} failed: {message}")
    return proc
