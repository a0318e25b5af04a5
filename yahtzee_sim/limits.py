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
           "require_count"]

MEMORY_ENV = "YAHTZEE_SIM_MEMORY"

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
