"""The progress bar of long runs: on a terminal's stderr only, after two seconds.

>>> progress_bar(1000, 0, "games", enabled=False) is None
True
"""

from __future__ import annotations

import sys

__all__ = ["progress_bar"]


def progress_bar(total: int, initial: int, unit: str, enabled: bool):
    """A tqdm bar counting ``unit`` up to ``total``, or None (disabled, or stderr is not a terminal)."""
    if not enabled or not sys.stderr.isatty():
        return None
    try:
        from tqdm import tqdm
    except ImportError:  # pragma: no cover - tqdm is a dependency
        return None
    return tqdm(total=total, initial=initial, unit=unit, unit_scale=True, delay=2.0, file=sys.stderr,
                leave=False, smoothing=0.1)
