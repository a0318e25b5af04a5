"""A report as data (sections of text, tables and figures) and its writer.

Runners build a :class:`Report`; :func:`write_report` turns it into
``reports/NAME/README.md`` plus one CSV per table and a PNG and an SVG per
figure. Plotting happens only here, at the edge.

>>> import pandas as pd, tempfile, pathlib
>>> rep = Report("demo", "A demo", question="Does it work?")
>>> _ = rep.add_text("Method", "We count.")
>>> _ = rep.add_table("counts", pd.DataFrame({"x": [1, 2]}), caption="Two rows.")
>>> out = write_report(rep, pathlib.Path(tempfile.mkdtemp()))
>>> sorted(p.name for p in out.iterdir())
['.yahtzee-sim-report', 'README.md', 'counts.csv']
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np
import pandas as pd

from .. import __version__


@dataclass
class Table:
    """``frame`` goes to the CSV as numbers; ``display`` (text cells, readable headers),
    when given, is what the README shows."""

    name: str
    frame: pd.DataFrame
    caption: str = ""
    float_format: str | None = None
    index: bool = True
    display: pd.DataFrame | None = None


@dataclass
class Figure:
    name: str
    draw: Callable  # draw(fig) -> None, fills a matplotlib Figure
    caption: str = ""
    size: tuple[float, float] = (7.0, 4.2)


@dataclass
class Section:
    heading: str
    text: str = ""
    tables: list[Table] = field(default_factory=list)
    figures: list[Figure] = field(default_factory=list)


@dataclass
class Report:
    """What a report says, independent of how it is written out."""

    name: str
    title: str
    question: str = ""
    sections: list[Section] = field(default_factory=list)
    reading: str = ""
    command: str = ""
    seed: int | None = None
    data: dict = field(default_factory=dict)

    def add_text(self, heading: str, text: str) -> Section:
        sec = Section(heading, text)
        self.sections.append(sec)
        return sec

    def add_table(self, name: str, frame: pd.DataFrame, *, caption: str = "", heading: str | None = None,
                  float_format: str | None = None, index: bool = True,
                  display: pd.DataFrame | None = None) -> Table:
        """Add a table to the last section (or a new one with ``heading``).

        The CSV gets ``frame``; the README gets ``display`` if given (shown without
        its index), else ``frame`` with numbers formatted by :func:`~yahtzee_sim.fmt.cell`.
        """
        if heading is not None or not self.sections:
            self.sections.append(Section(heading or name))
        table = Table(name, frame, caption, float_format, index, display)
        self.sections[-1].tables.append(table)
        return table

    def add_figure(self, name: str, draw: Callable, *, caption: str = "", heading: str | None = None,
                   size: tuple[float, float] = (7.0, 4.2)) -> Figure:
        if heading is not None or not self.sections:
            self.sections.append(Section(heading or name))
        fig = Figure(name, draw, caption, size)
        self.sections[-1].figures.append(fig)
        return fig


def markdown_table(frame: pd.DataFrame, float_format: str | None = None, index: bool = True) -> str:
    """A GitHub-flavoured markdown table (no extra dependency).

    Numbers never show as ``nan`` or in scientific notation; a multi-level index
    becomes one column per level.

    >>> print(markdown_table(pd.DataFrame({"a": [1.23456, 6e-05, float("nan")]}, index=["x", "y", "z"])))
    |   | a |
    |---|---|
    | x | 1.235 |
    | y | 0.00006 |
    | z | – |
    """
    from ..fmt import cell

    def fmt(v):
        if float_format and isinstance(v, (float, np.floating)) and np.isfinite(v) and not float(v).is_integer():
            return float_format.format(v)
        return cell(v)

    if index and isinstance(frame.index, pd.MultiIndex):
        frame, index = frame.reset_index(), False
    cols = ([frame.index.name or ""] if index else []) + [str(c) for c in frame.columns]
    lines = ["| " + " | ".join(cols) + " |", "|" + "|".join("---" for _ in cols) + "|"]
    for row in frame.itertuples(index=True, name=None):  # keeps each column's dtype
        idx, values = row[0], row[1:]
        cells = ([cell(idx)] if index else []) + [fmt(v) for v in values]
        lines.append("| " + " | ".join(c.replace("|", "\\|").replace("\n", " ") for c in cells) + " |")
    if index and not frame.index.name:
        lines[0] = "|   | " + " | ".join(str(c) for c in frame.columns) + " |"
    return "\n".join(lines)


def _check_names(report: Report) -> None:
    """Every name that becomes a path is a plain slug, and no two files share one."""
    from .output import check_report_name

    check_report_name(report.name)
    seen: set[tuple[str, str]] = set()  # a table and a figure may share a name: .csv against .png/.svg
    for sec in report.sections:
        for item, what in [(t, "table") for t in sec.tables] + [(f, "figure") for f in sec.figures]:
            check_report_name(item.name, f"{what} name")
            if (what, item.name) in seen:
                raise ValueError(f"report {report.name}: two {what}s are named {item.name!r}")
            seen.add((what, item.name))


def write_report(report: Report, out_dir: Path) -> Path:
    """Write the report to ``out_dir`` (replaced as a whole) and return it.

    ``out_dir`` is replaced only if it is missing, empty, or a report folder this
    project wrote (see :mod:`yahtzee_sim.report.output`); anything else is refused
    with a ``ValueError`` before a file is written.
    """
    from .output import check_replaceable, write_folder
    from .style import save_figure

    out_dir = Path(out_dir)
    _check_names(report)
    check_replaceable(out_dir)

    def fill(tmp: Path) -> None:
        md = [f"# {report.title}", ""]
        if report.question:
            md += [f"**Question.** {report.question}", ""]
        for sec in report.sections:
            md += [f"## {sec.heading}", ""]
            if sec.text:
                md += [sec.text.strip(), ""]
            for t in sec.tables:
                t.frame.to_csv(tmp / f"{t.name}.csv", index=t.index)
                shown = markdown_table(t.display, index=False) if t.display is not None else \
                    markdown_table(t.frame, t.float_format, t.index)
                md += [shown, ""]
                cap = f"{t.caption} " if t.caption else ""
                md += [f"*{cap}Data: [{t.name}.csv]({t.name}.csv).*", ""]
            for f in sec.figures:
                save_figure(f.draw, tmp / f.name, size=f.size)
                md += [f"![{f.caption or f.name}]({f.name}.png)", ""]
                if f.caption:
                    md += [f"*{f.caption} ([SVG]({f.name}.svg))*", ""]
        if report.reading:
            md += ["## What it means", "", report.reading.strip(), ""]
        # No date and no commit: the same inputs give byte-identical files (a rerun leaves git clean).
        md += ["---", "", f"*Reproduce: `{report.command}` (yahtzee-sim {__version__}, seed {report.seed}).*", ""]
        (tmp / "README.md").write_text("\n".join(md), encoding="utf-8")

    return write_folder(out_dir, fill, {"report": report.name, "title": report.title})
