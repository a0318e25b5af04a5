"""Compile the numba kernels ahead, at install time, so a first run on a machine loads them.

The exact engine's loops and the table play are numba kernels (``cache=True``): the
first process to call one compiles it (seconds of CPU each; about 25 for the set a first
``check`` or ``benchmark`` needs) and leaves the machine code in numba's cache, beside
the source (``__pycache__``), for every later process. Run once after an install, this
module compiles that set on both cores, for the argument types the commands pass (each
family's own ``precompile``/``signatures``), so the first command finds them all:

* a wheel built from this source (``pip install .``, an sdist) runs it on the build
  tree (``setup.py``): the machine code travels in the wheel and is used where numba,
  Python and the CPU are the ones it was built with (numba keys its cache by all
  three and by the source's content; anywhere else it compiles on first use, as before);
* an editable install (the README's ``make``) runs it on the source tree.

Every step is optional: a kernel it does not reach, or one that fails here, is compiled
on first use as before, and its failures never fail an install.

    python -m yahtzee_sim.exact.compile_ahead          # prints what it compiled, and the seconds

>>> [name for name, _ in GROUPS[0]][:2]
['solver, float32', 'solver, float64']
"""

from __future__ import annotations

import sys
import time

__all__ = ["GROUPS", "compile_steps", "main"]


def _solver(dtype_name: str):
    def step() -> None:
        import numpy as np

        from . import _solver_kernels as kx

        kx.precompile(np.dtype(dtype_name), workers=1)
    return step


def _decisions() -> None:
    import numpy as np

    from ..rules import get_rules
    from .decisions import precompile
    from .space import state_space, turn_model, turn_values

    precompile()
    # the build's keep values (the float32 widget's compiled loops, the solve's values read-only)
    rules = get_rules("yahtzee")
    values = np.zeros(state_space(rules).size)
    values.flags.writeable = False
    states = np.zeros(2, dtype=np.int64)
    turn_values(turn_model(rules, np.float32), values, None, states, states, states, plan="keeps", compiled=True)


def _target() -> None:
    import numpy as np

    from . import _target_kernels as kx

    kx.precompile(np.dtype(np.float32))


def _pass() -> None:
    from . import _eval_kernels as kx

    kx.compile_pass()


def _lattice() -> None:
    """The keep lattice of greedy and the other strategies that plan a turn's keeps
    (:func:`yahtzee_sim.exact.widget.best_keeps` on enough positions to take its loop),
    and the loops of their plans' boxes and bytes."""
    import numpy as np

    from ..dice import dice_tables
    from . import _eval_kernels as kx
    from .widget import COMPILED_COLUMNS, best_keeps

    dice = dice_tables()
    for dtype in (np.float64, np.float32):          # greedy's values, heuristic's
        best_keeps(dice, np.zeros((COMPILED_COLUMNS, dice.n_rolls), dtype=dtype))
        # the best box of each final roll, and the plans stored as bytes (as lookahead passes them)
        kx.raise_final_values(np.zeros((1, 1), np.float32), np.zeros((1, 1), np.uint8), np.zeros((1, 1), dtype),
                              np.zeros(1, np.bool_), np.zeros(1, np.uint8))
    kx.keep_ranks(np.zeros((1, 1), np.uint8), np.zeros((1, 1), np.int16), np.zeros((1, 1), np.uint8))


def _evaluations() -> None:
    """The exact evaluations of strategies played without a decision table (their
    policy values and score distributions, ``random``'s averaged moves): on the smallest
    game, which takes the same loops as the others."""
    from .distribution import distribution
    from .policy import policy_value

    for play in ("keep-largest", "random"):
        policy_value("yacht-classic", play)
        distribution("yacht-classic", play)


def _losses() -> None:
    from . import _loss_kernels as kx

    kx.turn_losses.compile(kx.signature())
    kx.uniform_turn_losses.compile(kx.uniform_signature())


def _table_play() -> None:
    from ..rules import get_rules
    from ..tableplay import precompile

    precompile(get_rules("yahtzee"))


GROUPS: tuple = (
    (("solver, float32", _solver("float32")), ("solver, float64", _solver("float64")),
     ("decision table build", _decisions), ("target table", _target), ("strategy evaluations", _evaluations)),
    (("score and event passes", _pass), ("keep lattice", _lattice), ("loss accounting", _losses),
     ("table play", _table_play)),
)
"""The kernels compiled ahead, in two groups of about the same CPU time (one per core)."""


def compile_steps(steps, report=None) -> list:
    """Run each ``(name, step)`` of ``steps`` (a step compiles, or loads from numba's cache,
    some kernels); returns ``(name, seconds, error or None)`` per step. A step that fails is
    reported, not raised: its kernels compile on first use instead.

    >>> [(name, error) for name, _, error in compile_steps([("nothing", lambda: None)])]
    [('nothing', None)]
    """
    done = []
    for name, step in steps:
        t = time.perf_counter()
        try:
            step()
            error = None
        except Exception as exc:
            error = f"{type(exc).__name__}: {exc}"
        seconds = time.perf_counter() - t
        done.append((name, seconds, error))
        if report is not None:
            report(f"compiled ahead: {name}, {seconds:.1f} s" + (f" (failed: {error})" if error else ""))
    return done


def main() -> int:
    """Compile every group, the groups side by side in forked processes where the machine
    can fork; prints one line a step and the total to stderr. Returns 0 (a failure only
    means that step's kernels compile on first use)."""
    from ..forkpool import can_fork, run_parts

    t = time.perf_counter()

    def say(line: str) -> None:
        print(line, file=sys.stderr, flush=True)

    if can_fork() and len(GROUPS) > 1:
        run_parts(lambda g: compile_steps(GROUPS[g], say), len(GROUPS), what="compiling ahead")
    else:
        for group in GROUPS:
            compile_steps(group, say)
    say(f"compiled ahead: done in {time.perf_counter() - t:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
