"""One house style for every figure: Agg backend, readable labels, PNG + SVG.

>>> import tempfile, pathlib
>>> stem = pathlib.Path(tempfile.mkdtemp()) / "line"
>>> save_figure(lambda fig: fig.add_subplot().plot([0, 1], [0, 1]), stem)
>>> sorted(p.suffix for p in stem.parent.iterdir())
['.png', '.svg']
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

PALETTE = ["#1b6ca8", "#e07b39", "#3a9e5c", "#c23b4e", "#7d5ba6", "#8c6d46", "#d17fb5", "#6b6b6b"]

LINESTYLES = ["-", "--", "-.", ":", (0, (5, 1, 1, 1)), (0, (1, 1))]


def text_color(rgba) -> str:
    """Black or white, whichever reads better on a cell of colour ``rgba`` (WCAG luminance).

    >>> text_color((0.05, 0.1, 0.4, 1.0)), text_color((0.95, 0.95, 0.8, 1.0))
    ('white', 'black')
    """
    def channel(c):
        return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4

    r, g, b = (channel(float(c)) for c in rgba[:3])
    luminance = 0.2126 * r + 0.7152 * g + 0.0722 * b
    return "black" if luminance > 0.179 else "white"


RC = {
    "figure.dpi": 100,
    "savefig.dpi": 150,
    "font.size": 10,
    "axes.titlesize": 11,
    "axes.titleweight": "bold",
    "axes.labelsize": 10,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "legend.frameon": False,
    "axes.prop_cycle": matplotlib.cycler(color=PALETTE),
    "svg.hashsalt": "yahtzee-sim",  # reproducible SVG ids
}


def save_figure(draw: Callable, stem: Path, *, size: tuple[float, float] = (7.0, 4.2)) -> None:
    """Draw into a new figure with the house style and save ``stem.png`` (150 dpi) and ``stem.svg``."""
    stem = Path(stem)
    with plt.rc_context(RC):
        fig = plt.figure(figsize=size)
        try:
            draw(fig)
            fig.tight_layout()
            # "tight" also keeps legends placed outside the axes inside the image.
            fig.savefig(stem.with_suffix(".png"), bbox_inches="tight")
            fig.savefig(stem.with_suffix(".svg"), bbox_inches="tight", metadata={"Date": None})
        finally:
            plt.close(fig)
