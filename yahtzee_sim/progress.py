"""Progress of long work: one small callback interface for the library, one display.

A library function that can take more than a couple of seconds accepts
``progress=`` and reports through it; by default it is silent. A progress is any
callable ``progress(phase, done, total)``:

* ``phase`` names what is being done (``"solving yacht"``, ``"claims"``);
* ``done`` of ``total`` units are finished (``total`` ``None`` when unknown).

A new phase starts whenever the name changes. The command line passes a
:class:`TerminalProgress` (a bar with ETA on stderr, only on a terminal and never
with ``--json``); off a terminal (output to a file, a pipe, a notebook) it passes
:class:`PhaseLines`: once the work has run for :data:`PHASE_LINES_AFTER` seconds, one
plain line per phase on stderr, and one a minute during a long phase; :func:`announce`
says what long work will build and how long it takes before it starts. A test or
notebook may pass any function:

>>> seen = []
>>> report = as_progress(lambda phase, done, total: seen.append((phase, done, total)))
>>> for i in range(3):
...     report("counting", i + 1, 3)
>>> seen[-1]
('counting', 3, 3)
>>> as_progress(None)("anything", 1, 2)  # silent
"""

from __future__ import annotations

import contextlib
import math
import sys
import threading
import time
from typing import Protocol

__all__ = ["ProgressCallback", "as_progress", "silent", "TerminalProgress", "PhaseLines", "phases", "heartbeat",
           "off_terminal", "announce", "duration_text"]

DELAY = 2.0
"""Seconds of work before a bar appears: quick commands stay quiet."""

PHASE_LINES_AFTER = 10.0
"""Seconds of work before phase lines appear off a terminal: only long work reports.
``YAHTZEE_SIM_PHASE_LINES_AFTER`` overrides it (``inf``: never)."""
PHASE_LINES_ENV = "YAHTZEE_SIM_PHASE_LINES_AFTER"


class ProgressCallback(Protocol):
    def __call__(self, phase: str, done: int, total: int | None) -> None: ...


class _Silent:
    """The default progress: shows nothing (also usable as a context manager)."""

    def __call__(self, phase: str, done: int, total: int | None) -> None:
        pass

    def close(self) -> None:
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        pass

    def __repr__(self) -> str:
        return "silent"


silent = _Silent()


def as_progress(progress) -> ProgressCallback:
    """Normalize a ``progress=`` argument: ``None``/``False`` -> :func:`silent`, ``True``
    -> a :class:`TerminalProgress` on a terminal's stderr (off a terminal a
    :class:`PhaseLines`: lines for work over ten seconds only), a callable -> itself."""
    if progress is None or progress is False:
        return silent
    if progress is True:
        return TerminalProgress() if sys.stderr.isatty() else off_terminal()
    if not callable(progress):
        raise ValueError(f"progress must be None, True/False or a callable (phase, done, total), got {progress!r}")
    return progress


def announce(progress, text: str) -> None:
    """Say, before long work starts, what will be built and how long it takes.

    A display with an ``announce`` method prints ``text`` as a line of its own
    (:class:`TerminalProgress` above its bar, :class:`PhaseLines` at once); any
    other callback is told it as a phase with nothing done yet; :data:`silent` says nothing.

    >>> seen = []
    >>> announce(lambda *a: seen.append(a), "solving x: about 5 minutes")
    >>> seen
    [('solving x: about 5 minutes', 0, None)]
    """
    report = as_progress(progress)
    if report is silent:
        return
    say = getattr(report, "announce", None)
    if say is not None:
        say(text)
    else:
        report(text, 0, None)


def duration_text(seconds: float) -> str:
    """A duration for a reader, rounded to what an estimate can say.

    >>> duration_text(42), duration_text(600), duration_text(7200)
    ('about 42 seconds', 'about 10 minutes', 'about 2.0 hours')
    """
    if seconds >= 5400:
        return f"about {seconds / 3600:,.1f} hours"
    if seconds >= 90:
        return f"about {seconds / 60:,.0f} minutes"
    return f"about {seconds:,.0f} seconds"


def phases(progress, names: list[str]):
    """Report a sequence of named steps as one bar: yields each name after reporting it.

    >>> seen = []
    >>> for name in phases(lambda *a: seen.append(a), ["load", "solve"]):
    ...     pass
    >>> seen
    [('load', 0, 2), ('solve', 1, 2), ('solve', 2, 2)]
    """
    report = as_progress(progress)
    for i, name in enumerate(names):
        report(name, i, len(names))
        yield name
    if names:
        report(names[-1], len(names), len(names))


@contextlib.contextmanager
def heartbeat(progress, phase: str, every: float = 0.5):
    """Around work that cannot report (a call into code without a ``progress=``),
    tell ``progress`` every ``every`` seconds that ``phase`` is still running, so a
    terminal shows the phase and the time spent.

    It yields a progress callback for the parts of that work that can report (e.g.
    the simulations of a report, given it through ``run_options``): their steps show
    as ``"<phase>: <step>"`` with a bar and ETA, and the heartbeat keeps quiet while
    such a step runs.

    >>> seen = []
    >>> with heartbeat(lambda *a: seen.append(a), "waiting", every=0.01) as step:
    ...     time.sleep(0.05)
    ...     step("games", 1, 2)
    >>> seen[0], ("waiting: games", 1, 2) in seen
    (('waiting', 0, None), True)
    """
    report = as_progress(progress)
    if report is silent:
        yield silent
        return
    stop = threading.Event()
    lock = threading.Lock()        # one writer at a time on the terminal
    quiet_until = [0.0]            # the heartbeat waits while a step is under way

    def step(name: str, done: int, total: int | None) -> None:
        with lock:
            quiet_until[0] = math.inf if total is None or done < total else time.monotonic()
            report(f"{phase}: {name}", done, total)

    def beat():
        while not stop.is_set():
            with lock:
                if time.monotonic() >= quiet_until[0]:
                    report(phase, 0, None)
            stop.wait(every)

    thread = threading.Thread(target=beat, daemon=True)
    thread.start()
    try:
        yield step
    finally:
        stop.set()
        thread.join()


class TerminalProgress:
    """A tqdm bar per phase on ``stream`` (default stderr) with the phase name and ETA.

    Call it like any progress; ``close()`` (or the end of a ``with`` block) removes
    the bar. Nothing is drawn in the first :data:`DELAY` seconds of a phase.
    """

    def __init__(self, stream=None, delay: float | None = None, **tqdm_options):
        self.stream = stream
        self.delay = DELAY if delay is None else delay
        self.tqdm_options = tqdm_options
        self._bar = None
        self._phase = None

    def __call__(self, phase: str, done: int, total: int | None) -> None:
        if phase != self._phase or self._bar is None or self._bar.total != total:
            self.close()
            from tqdm import tqdm

            self._phase = phase
            self._started = time.monotonic()
            options = dict(desc=phase, file=self.stream or sys.stderr, delay=self.delay, leave=False,
                           dynamic_ncols=True, unit_scale=bool(total and total >= 10_000), smoothing=0.1)
            if total is None:  # no bar to draw: what is known, and the time spent
                options["bar_format"] = "{desc}: {n_fmt} done, {elapsed} elapsed" if done else \
                    "{desc}: {elapsed} elapsed"
            self._bar = tqdm(total=total, **{**options, **self.tqdm_options})
        if done > self._bar.n:
            self._bar.update(done - self._bar.n)
        elif time.monotonic() - self._started >= self.delay:
            self._bar.refresh()  # no news (a heartbeat): show the time spent

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
        self._bar = None
        self._phase = None

    def announce(self, text: str) -> None:
        from tqdm import tqdm

        tqdm.write(text, file=self.stream or sys.stderr)

    def __enter__(self) -> "TerminalProgress":
        return self

    def __exit__(self, *exc) -> None:
        self.close()



def _clock(seconds: float) -> str:
    seconds = int(seconds)
    return f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}" if seconds >= 3600 else \
        f"{seconds // 60}:{seconds % 60:02d}"


class PhaseLines:
    """Progress off a terminal: plain lines on ``stream`` (default stderr), no bars.

    Nothing in the first ``after`` seconds (quick work stays quiet); then a line when a
    phase starts (or is still running when the wait ends), a line every ``every`` seconds
    during a long phase with how much is done, and a last line on ``close()``. A file is
    not a screen: lines come at most every ``gap`` seconds, and a return to the phase
    that encloses the last one (``run`` after ``run: playing games``) prints nothing.

    >>> import io
    >>> out = io.StringIO()
    >>> lines = PhaseLines(out, after=0, every=3600)
    >>> lines("solving yacht", 0, 12); lines("solving yacht", 6, 12); lines("writing", 1, None); lines.close()
    >>> [line.split(" ", 2)[2] for line in out.getvalue().splitlines()]
    ['solving yacht (0 of 12)', 'writing', 'done']
    >>> out = io.StringIO()
    >>> lines = PhaseLines(out, after=0, every=3600)
    >>> lines("report", 0, None); lines("report: games", 1, 2); lines("report", 0, None); lines.close()
    >>> [line.split(" ", 2)[2] for line in out.getvalue().splitlines()]
    ['report', 'report: games (1 of 2)', 'done']
    >>> quiet = io.StringIO()
    >>> PhaseLines(quiet, after=60)("solving yacht", 0, 12); quiet.getvalue()
    ''
    """

    def __init__(self, stream=None, after: float | None = None, every: float = 60.0, gap: float = 0.0):
        self.stream = stream
        self.after = PHASE_LINES_AFTER if after is None else float(after)
        self.every = every
        self.gap = gap
        self._start = time.monotonic()
        self._printed = None
        self._last = 0.0

    def _line(self, text: str) -> None:
        print(f"yahtzee-sim: {_clock(time.monotonic() - self._start)} {text}", file=self.stream or sys.stderr,
              flush=True)
        self._last = time.monotonic()

    def __call__(self, phase: str, done: int, total: int | None) -> None:
        now = time.monotonic()
        if now - self._start < self.after or (self._printed is not None and now - self._last < self.gap):
            return
        if self._printed is not None and self._printed.startswith(phase + ": ") and now - self._last < self.every:
            return                      # back in the enclosing phase: nothing new to say
        if phase != self._printed or now - self._last >= self.every:
            self._line(phase + (f" ({done:,} of {total:,})" if total else ""))
            self._printed = phase

    def close(self) -> None:
        if self._printed is not None:
            self._line("done")
            self._printed = None

    def announce(self, text: str) -> None:
        """What long work will build and how long it takes: a line of its own at once
        (see :func:`announce`)."""
        print(text, file=self.stream or sys.stderr, flush=True)

    def __enter__(self) -> "PhaseLines":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def off_terminal() -> "PhaseLines":
    """The progress of work whose stderr is not a terminal: :class:`PhaseLines` after
    :data:`PHASE_LINES_AFTER` seconds (``YAHTZEE_SIM_PHASE_LINES_AFTER`` to change it;
    ``inf`` keeps it to the announcements of long work).

    >>> import os
    >>> os.environ.get(PHASE_LINES_ENV) is None or isinstance(off_terminal(), (PhaseLines, _Silent))
    True
    """
    import os

    text = os.environ.get(PHASE_LINES_ENV)
    try:
        after = PHASE_LINES_AFTER if text is None else float(text)
    except ValueError:
        raise ValueError(f"{PHASE_LINES_ENV} must be a number of seconds (or inf), got {text!r}") from None
    return PhaseLines(after=after, gap=5.0)     # inf: no phase lines, announcements still said
