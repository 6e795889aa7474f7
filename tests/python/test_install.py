"""`pip install ./python` into a virtual environment, offline: the package
imports from anywhere and finds the build tree's cuvilc, and pip puts a
working `cuvilc` launcher on the environment's PATH."""

import os
import pathlib
import shutil
import subprocess
import sys

from conftest import REPO


def test_pip_install_puts_cuvil_and_cuvilc_on_the_paths(tmp_path, case):
    cuvilc = pathlib.Path(os.environ["CUVILC"]).resolve()
    venv = tmp_path / "venv"
    # Debian's python3, whose site packages hold numpy and onnx.
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", venv], check=True)
    # A copy: the build must not write into the source tree.
    source = tmp_path / "src"
    shutil.copytree(REPO / "python", source, ignore=shutil.ignore_patterns(
        "__pycache__", "build", "*.egg-info", "_build_config.py"))
    env = {k: v for k, v in os.environ.items() if k not in ("CUVILC", "PYTHONPATH")}
    env["CUVIL_BUILD_DIR"] = str(cuvilc.parents[1])
    subprocess.run([venv / "bin" / "pip", "install", "-q", "--no-index",
                    "--no-build-isolation", source], check=True, env=env)
    del env["CUVIL_BUILD_DIR"]

    version = subprocess.run([venv / "bin" / "cuvilc", "--version"], env=env, check=True,
                             capture_output=True, text=True).stdout
    assert version.startswith("cuvilc ")
    script = ("import cuvil, numpy as np, sys\n"
              "fn = cuvil.compile(sys.argv[1])\n"
              "print(cuvil.__file__)\n"
              "print(fn(np.zeros((1, 784), np.float32)).shape)\n")
    out = subprocess.run([venv / "bin" / "python", "-c", script, case("mlp").onnx],
                         cwd=tmp_path, env=env, check=True, capture_output=True,
                         text=True).stdout.splitlines()
    assert out[0].startswith(str(venv)), "imported the source tree, not the installed copy"
    assert out[1] == "(1, 10)"


def test_launcher_without_cuvilc_says_so(tmp_path):
    env = dict(os.environ, CUVILC=str(tmp_path / "nothing"))
    proc = subprocess.run([sys.executable, "-m", "cuvil._cli", "--version"], env=env,
                          cwd=REPO / "python", capture_output=True, text=True)
    assert proc.returncode == 127
    assert "not an executable cuvilc binary" in proc.stderr
