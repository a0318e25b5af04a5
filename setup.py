"""setuptools' build (the metadata is in pyproject.toml), with the numba kernels compiled
ahead into a wheel: after the sources are copied to the build tree, ``python -m
yahtzee_sim.exact.compile_ahead`` runs on it, and numba's cache files land beside them, in the
wheel. A first command after ``pip install .`` then loads the machine code instead of
compiling it (numba uses it only with the same numba, Python and CPU; elsewhere it
compiles on first use, as without it). Set ``YAHTZEE_SIM_COMPILE_AHEAD=0`` to skip it; a
failure here only skips it."""

import os
import subprocess
import sys
import tempfile

from setuptools import setup
from setuptools.command.build_py import build_py


class BuildPyCompilingAhead(build_py):
    def run(self):
        super().run()
        if getattr(self, "editable_mode", False) or os.environ.get("YAHTZEE_SIM_COMPILE_AHEAD", "1") == "0":
            return
        tree = os.path.abspath(self.build_lib)
        with tempfile.TemporaryDirectory() as tables:
            # pip's isolated build environment reaches its packages (numba) through PYTHONPATH too
            path = os.pathsep.join(p for p in (tree, os.environ.get("PYTHONPATH", "")) if p)
            env = dict(os.environ, PYTHONPATH=path, PYTHONDONTWRITEBYTECODE="1", YAHTZEE_SIM_CACHE=tables)
            env.pop("NUMBA_CACHE_DIR", None)          # numba's cache beside the sources, in the wheel
            try:
                done = subprocess.run([sys.executable, "-m", "yahtzee_sim.exact.compile_ahead"], cwd=tree, env=env,
                                      timeout=900)
                if done.returncode != 0:
                    print("yahtzee-sim: the kernels were not compiled ahead: they compile on first use")
            except (OSError, subprocess.SubprocessError) as exc:
                print(f"yahtzee-sim: the kernels were not compiled ahead ({exc}): they compile on first use")


setup(cmdclass={"build_py": BuildPyCompilingAhead})
