"""One place for the checks of what users pass in: each public entry point validates its
arguments with these, so the same mistake gets the same one-line ``ValueError``
wherever it is made (the command line turns it into one line and exit code 2).

>>> whole_number(1e5, "the number of games")
100000
>>> whole_number(0, "batch")
Traceback (most recent call last):
...
ValueError: batch must be a positive integer, got 0
>>> whole_number(2.5, "jobs")
Traceback (most recent call last):
...
ValueError: jobs must be a positive integer (a float such as 1e5 must be whole), got 2.5
>>> whole_number(14, "level", low=0, high=13)
Traceback (most recent call last):
...
ValueError: level must be an integer in 0..13, got 14
"""

from __future__ import annotations

import functools
import math
import numbers
import warnings
from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["whole_number", "expected_kind", "renamed_keywords", "renamed_attribute"]

F = TypeVar("F", bound=Callable[..., Any])


def expected_kind(low: int | None, high: int | None) -> str:
    """What a whole number between ``low`` and ``high`` is called in a message.

    >>> expected_kind(1, None), expected_kind(0, None), expected_kind(3, None), expected_kind(0, 5)
    ('a positive integer', 'a non-negative integer', 'an integer >= 3', 'an integer in 0..5')
    """
    if high is not None:
        return f"an integer in {low}..{high}"
    if low == 1:
        return "a positive integer"
    if low == 0:
        return "a non-negative integer"
    return "an integer" if low is None else f"an integer >= {low}"


def whole_number(value, name: str, *, low: int | None = 1, high: int | None = None) -> int:
    """``value`` as an ``int`` when it is a whole number in ``low..high`` (a float with no
    fraction, such as ``1e5``, counts: the command line reads ``--games 1e5`` the same
    way), else a one-line ``ValueError`` naming ``name`` and what it must be (a float with
    a fraction is told why). Booleans, strings, NaN and infinities are refused.

    >>> whole_number(3, "jobs"), whole_number(0, "upper total", low=0)
    (3, 0)
    >>> whole_number(True, "jobs")
    Traceback (most recent call last):
    ...
    ValueError: jobs must be a positive integer, got True
    """
    ok = not isinstance(value, bool) and isinstance(value, numbers.Real)
    if ok and not isinstance(value, numbers.Integral):
        ok = math.isfinite(value) and float(value).is_integer()
    if ok:
        number = int(value)
        ok = (low is None or number >= low) and (high is None or number <= high)
    if not ok:
        fraction = (isinstance(value, numbers.Real) and not isinstance(value, (bool, numbers.Integral))
                    and math.isfinite(value) and not float(value).is_integer())
        hint = " (a float such as 1e5 must be whole)" if fraction else ""
        raise ValueError(f"{name} must be {expected_kind(low, high)}{hint}, got {value!r}")
    return number


def renamed_keywords(**renames: str) -> Callable[[F], F]:
    """Decorator: a keyword argument renamed (``old="new"``) keeps working under its old
    name, with a ``DeprecationWarning`` saying the new one, so users' scripts run on; the
    two names together are a one-line ``ValueError``.

    >>> @renamed_keywords(workers="jobs")
    ... def run(*, jobs=None):
    ...     return jobs
    >>> import warnings
    >>> with warnings.catch_warnings(record=True) as seen:
    ...     warnings.simplefilter("always")
    ...     run(workers=2), str(seen[0].message)
    (2, 'run(workers=...) is now run(jobs=...); the old name will go')
    >>> run(workers=2, jobs=2)
    Traceback (most recent call last):
    ...
    ValueError: give jobs (workers is its old name), not both
    """
    def wrap(func: F) -> F:
        @functools.wraps(func)
        def renamed(*args, **kwargs):
            for old, new in renames.items():
                if old in kwargs:
                    if new in kwargs:
                        raise ValueError(f"give {new} ({old} is its old name), not both")
                    warnings.warn(f"{func.__name__}({old}=...) is now {func.__name__}({new}=...); "
                                  "the old name will go", DeprecationWarning, stacklevel=2)
                    kwargs[new] = kwargs.pop(old)
            return func(*args, **kwargs)

        return renamed  # type: ignore[return-value]

    return wrap


def renamed_attribute(old: str, new: str) -> property:
    """A read-only attribute renamed (``old`` -> ``new``): reading the old name still
    gives the new one's value, with a ``DeprecationWarning`` saying the new name, so
    users' scripts run on.

    >>> class Result:
    ...     mean = 3.5
    ...     expected_score = renamed_attribute("expected_score", "mean")
    >>> import warnings
    >>> with warnings.catch_warnings(record=True) as seen:
    ...     warnings.simplefilter("always")
    ...     Result().expected_score, str(seen[0].message)
    (3.5, 'Result.expected_score is now Result.mean; the old name will go')
    """
    def read(self):
        who = type(self).__name__
        warnings.warn(f"{who}.{old} is now {who}.{new}; the old name will go", DeprecationWarning, stacklevel=2)
        return getattr(self, new)

    return property(read, doc=f"Deprecated: the old name of ``{new}`` (reading it warns).")
