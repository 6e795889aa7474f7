"""The code blocks of docs/python.md, run in order in one namespace, as a
reader would paste them, in a directory holding kws.onnx (the DS-CNN keyword
spotting model of the benchmarks)."""

import os
import re
import subprocess
import sys

from conftest import REPO

BLOCK = re.compile(r"^```python\n(.*?)^```", re.S | re.M)


def test_python_doc_blocks_run_as_written(tmp_path, monkeypatch):
    blocks = BLOCK.findall((REPO / "docs" / "python.md").read_text())
    assert len(blocks) >= 4, "docs/python.md lost its examples"
    subprocess.run([sys.executable, REPO / "bench" / "models.py", tmp_path, "--only",
                    "ds_cnn"], check=True, capture_output=True)
    os.replace(tmp_path / "ds_cnn" / "model.onnx", tmp_path / "kws.onnx")
    monkeypatch.chdir(tmp_path)
    namespace = {"__name__": "__docs__"}
    for number, code in enumerate(blocks, 1):
        try:
            exec(compile(code, f"docs/python.md block {number}", "exec"), namespace)
        except ImportError as e:
            if e.name != "torch":
                raise
            print(f"block {number} skipped: torch is not installed")
