"""Progress of long work: one small callback interface for the library, one display.

A library function that can take more than a couple of seconds accepts
``progress=`` and reports through it; by default it is silent. A progress is any
callable ``progress(phase, done, total)``:

* ``phase`` names what is being done (``"solving yacht"``, ``"claims"``);
* ``done`` of ``total`` units are finished (``total`` ``None`` when unknown).

A new phase starts whenever the name changes. The command line passes a
:class:`TerminalProgress` (a bar with ETA on stderr) on a terminal, a
:class:`PlainProgress` (plain lines, for work over ten seconds) elsewhere, nothing
with ``--json``; :func:`announce` says what long work will build and how long it
takes before it starts. A test or notebook may pass any function:

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

__all__ = ["ProgressCallback", "as_progress", "silent", "TerminalProgress", "PlainProgress", "phases", "heartbeat",
           "announce", "duration_text"]

DELAY = 2.0
"""Seconds of work before a bar appears: quick commands stay quiet."""


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
    :class:`PlainProgress`: lines for work over ten seconds only), a callable -> itself."""
    if progress is None or progress is False:
        return silent
    if progress is True:
        return TerminalProgress() if sys.stderr.isatty() else PlainProgress()
    if not callable(progress):
        raise ValueError(f"progress must be None, True/False or a callable (phase, done, total), got {progress!r}")
    return progress


def announce(progress, text: str) -> None:
    """Say, before long work starts, what will be built and how long it takes.

    A display with an ``announce`` method prints ``text`` as a line of its own
    (:class:`TerminalProgress` above its bar, :class:`PlainProgress` at once); any
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


class PlainProgress:
    """Off a terminal (a log, a pipe): plain lines on ``stream`` (default stderr).

    Announcements (:func:`announce`) at once; a phase only once it has run ``after``
    seconds (quick work says nothing), then at most every ``every`` seconds and when
    it ends.

    >>> import io
    >>> out = io.StringIO()
    >>> p = PlainProgress(out, after=0.0, every=0.0)
    >>> p("solving", 5, 10); p.announce("about 1 minute")
    >>> out.getvalue().splitlines()
    ['solving: 5 of 10 (50%), 0 s', 'about 1 minute']
    """

    def __init__(self, stream=None, after: float = 10.0, every: float = 30.0):
        self.stream = stream
        self.after = after
        self.every = every
        self._phase = None
        self._started = self._last = 0.0

    def _print(self, text: str) -> None:
        print(text, file=self.stream or sys.stderr, flush=True)

    def __call__(self, phase: str, done: int, total: int | None) -> None:
        now = time.monotonic()
        if phase != self._phase:
            self._phase, self._started, self._last = phase, now, -math.inf
        finished = bool(total) and done >= total
        if now - self._started < self.after or (now - self._last < self.every and not finished):
            return
        self._last = now
        elapsed = f"{now - self._started:,.0f} s"
        if total:
            self._print(f"{phase}: {done:,} of {total:,} ({100 * done / total:.0f}%), {elapsed}")
        else:
            self._print(f"{phase}: {elapsed} elapsed")

    def announce(self, text: str) -> None:
        self._print(text)

    def close(self) -> None:
        self._phase = None

    def __enter__(self) -> "PlainProgress":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
