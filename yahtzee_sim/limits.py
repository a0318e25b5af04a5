"""Resource limits: refuse, in one line and before any work, what cannot fit or finish.

Tables are estimated before they are built and compared with the memory this
machine has free (``MemAvailable`` on Linux); the environment variable
``YAHTZEE_SIM_MEMORY`` (``8G``, ``500M``, bytes) sets another budget, e.g. for a
shared machine. :data:`MAX_GAMES` bounds any number of games or turns asked for.

>>> parse_bytes("1.5G")
1610612736
>>> require_memory(10, "a tiny table", budget=100)
>>> require_memory(3 * 2**30, "a table", budget=2**30)
Traceback (most recent call last):
...
ValueError: a table needs about 3.0 GiB of memory, more than the 1.0 GiB available here
"""

from __future__ import annotations

import os

__all__ = ["MAX_GAMES", "MEMORY_ENV", "parse_bytes", "memory_budget", "require_memory", "size_text",
           "require_count", "small_pages", "HUGEPAGE_ENV"]

MEMORY_ENV = "YAHTZEE_SIM_MEMORY"

HUGEPAGE_ENV = "NUMPY_MADVISE_HUGEPAGE"
"""NumPy's own switch for asking the kernel for huge pages (see :func:`small_pages`)."""

MAX_GAMES = 10**12
"""The most games (or turns) any run takes: a trillion is days of work on any machine;
beyond it a run would not end (and counters near 2**63 would overflow)."""


def parse_bytes(text: str) -> int:
    """Bytes from ``8G``, ``500M``, ``64K`` or a plain number (binary units).

    >>> parse_bytes("500M"), parse_bytes("1024")
    (524288000, 1024)
    """
    t = str(text).strip().upper().removesuffix("B").removesuffix("I")
    scale = 1
    if t and t[-1] in "KMGT":
        scale = 1024 ** ("KMGT".index(t[-1]) + 1)
        t = t[:-1]
    try:
        value = float(t)
    except ValueError:
        raise ValueError(f"{MEMORY_ENV} must be a size such as 8G, 500M or a number of bytes, got {text!r}") from None
    if not value > 0 or value == float("inf"):
        raise ValueError(f"{MEMORY_ENV} must be a positive size, got {text!r}")
    return int(value * scale)


def memory_budget() -> int | None:
    """Bytes of memory a table may take: ``YAHTZEE_SIM_MEMORY``, else what the OS says is
    available (None where it cannot tell: no check then).

    >>> memory_budget() is None or memory_budget() > 0
    True
    """
    env = os.environ.get(MEMORY_ENV)
    if env:
        return parse_bytes(env)
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):  # pragma: no cover - not POSIX
        return None


def size_text(n: float) -> str:
    """Bytes for a reader: ``'3.0 GiB'``; astronomically large sizes as a power of ten.

    >>> size_text(3 * 2**30), size_text(2**2000)
    ('3.0 GiB', 'more than 10**602 bytes')
    """
    if n >= 2**80:
        return f"more than 10**{len(str(int(n))) - 1} bytes"
    for unit, scale in (("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n >= scale:
            return f"{n / scale:.1f} {unit}"
    return f"{int(n)} bytes"


def require_memory(need: float, what: str, instead: str = "", budget: int | None = None) -> None:
    """One-line ``ValueError`` when ``need`` bytes for ``what`` exceed the memory budget.

    ``instead``: what the user can do (appended after a semicolon).
    """
    if budget is None:
        budget = memory_budget()
    if budget is not None and need > budget:
        where = "available here" if os.environ.get(MEMORY_ENV) is None else f"allowed by {MEMORY_ENV}"
        tail = f"; {instead}" if instead else ""
        raise ValueError(f"{what} needs about {size_text(need)} of memory, more than the {size_text(budget)} "
                         f"{where}{tail}")


def require_count(n: int, what: str = "games", limit: int = MAX_GAMES) -> None:
    """One-line ``ValueError`` for a count of games or turns no run could finish.

    >>> require_count(10**18)
    Traceback (most recent call last):
    ...
    ValueError: 1,000,000,000,000,000,000 games is more than any run can finish (at most 1,000,000,000,000)
    """
    if n > limit:
        raise ValueError(f"{n:,} {what} is more than any run can finish (at most {limit:,})")


def small_pages() -> bool:
    """Keep NumPy from asking Linux for transparent huge pages for this process's large
    arrays (and its children's: :data:`HUGEPAGE_ENV` set to 0), unless the user set it.

    An exact pass or a table build writes hundreds of MB of fresh arrays once each; every
    fresh huge page costs the kernel a 2 MB zeroing and, where it must first assemble the
    page, a compaction, which the later reads do not win back (``benchmark heuristic`` on
    a fresh cache, 2-core virtual machine: 1.3-2.0 system CPU s instead of 3.1-3.8, the
    whole run 1 s quicker; ``benchmarks/RESULTS.md``). ``import yahtzee_sim`` calls it;
    where NumPy was imported first, its setting is changed in place. Returns whether this
    call turned them off.

    >>> isinstance(small_pages(), bool)
    True
    """
    import sys

    if os.environ.get(HUGEPAGE_ENV) is not None:
        return False                        # the user's own choice, or done already
    os.environ[HUGEPAGE_ENV] = "0"          # read by NumPy at import, here and in children
    for name in ("numpy._core.multiarray", "numpy.core.multiarray"):   # NumPy 2 / 1.26
        switch = getattr(sys.modules.get(name), "_set_madvise_hugepage", None)
        if switch is not None:              # imported already: its setting changed in place
            switch(False)
            break
    return True
