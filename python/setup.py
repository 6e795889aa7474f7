"""Records, in the installed package, where the cuvilc of the checkout it is
installed from lives (cuvil/_build_config.py), so that `import cuvil` and
the `cuvilc` launcher work from any directory. $CUVIL_BUILD_DIR names
another build tree; $CUVILC at run time overrides both."""

import os
import pathlib

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = pathlib.Path(__file__).resolve().parent


class BuildWithConfig(build_py):
    def run(self):
        super().run()
        build = pathlib.Path(os.environ.get("CUVIL_BUILD_DIR", HERE.parent / "build"))
        cuvilc = (build / "cuvilc" / "cuvilc").resolve()
        if not cuvilc.is_file():
            raise SystemExit(f"cuvil: {cuvilc} does not exist: build cuvil first "
                             "(`make build`) or set CUVIL_BUILD_DIR")
        target = pathlib.Path(self.build_lib) / "cuvil" / "_build_config.py"
        target.write_text(f'"""Written by setup.py at install."""\nCUVILC = {str(cuvilc)!r}\n')


setup(cmdclass={"build_py": BuildWithConfig})
