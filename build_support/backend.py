"""The project's build backend: setuptools', with numba and numpy in a wheel's build
environment, where ``setup.py`` compiles the numba kernels ahead into the wheel
(``yahtzee_sim/exact/compile_ahead.py``). An editable install needs neither: its source tree
compiles on first use, or ahead with ``make`` (the Makefile runs the same module)."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

from setuptools import build_meta as _setuptools
from setuptools.build_meta import *  # noqa: F403 - every hook as setuptools has it, but the one below

_PROJECT = tomllib.loads((Path(__file__).resolve().parents[1] / "pyproject.toml").read_text())["project"]
COMPILE_REQUIRES = [dep for dep in _PROJECT["dependencies"] if re.match(r"(numba|numpy)\b", dep)]
"""The runtime's own requirements of numba and numpy (the same specifiers): the machine
code compiled with them is used only by the same numba version."""


def get_requires_for_build_wheel(config_settings=None):
    return _setuptools.get_requires_for_build_wheel(config_settings) + COMPILE_REQUIRES
