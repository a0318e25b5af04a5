"""Experiments as files, reports as output (tables, figures, plain-language reading)."""

from .document import Report, write_report
from .experiment import ExperimentSpec, load_spec, parse_spec
from .runners import RUNNERS, run_experiment
# each module registers its experiment kind with the runners
from . import strategies, head_to_head, odds, variants  # noqa: F401
from . import distributions  # noqa: F401  (registers the "distributions" kind)
from . import family  # noqa: F401  (registers the "family" kind)

__all__ = ["Report", "write_report", "ExperimentSpec", "load_spec", "parse_spec", "RUNNERS", "run_experiment"]
