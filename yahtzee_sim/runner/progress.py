"""The progress of long runs, through the one callback of :mod:`yahtzee_sim.progress`.

``progress=True`` draws a bar on a terminal's stderr (after two seconds, never
elsewhere); a callable ``progress(phase, done, total)`` is told the games or
turns played so far; ``False``/``None`` is silent.

>>> progress_bar(1000, 0, "games", enabled=False) is None
True
>>> seen = []
>>> bar = progress_bar(1000, 0, "games", lambda *a: seen.append(a))
>>> bar.update(400); bar.close(); seen[-1]
('playing games', 400, 1000)
"""

from __future__ import annotations

import sys

from ..progress import TerminalProgress, as_progress, silent

__all__ = ["progress_bar"]


class _Counter:
    """Counts units done and tells the progress callback (the driver's ``update``/``close``)."""

    def __init__(self, report, phase: str, total: int, initial: int, owned: bool):
        self.report, self.phase, self.total, self.done, self.owned = report, phase, total, initial, owned
        report(phase, initial, total)

    def update(self, n: int) -> None:
        self.done += n
        self.report(self.phase, self.done, self.total)

    def close(self) -> None:
        if self.owned:
            self.report.close()


def progress_bar(total: int, initial: int, unit: str, enabled):
    """A counter of ``unit`` up to ``total`` reporting to ``enabled`` (True: a bar on a
    terminal's stderr; a callable: that callback), or None when there is nothing to show."""
    if enabled is True:
        if not sys.stderr.isatty():
            return None
        return _Counter(TerminalProgress(unit=unit), f"playing {unit}", total, initial, owned=True)
    report = as_progress(enabled)
    if report is silent:
        return None
    return _Counter(report, f"playing {unit}", total, initial, owned=False)
