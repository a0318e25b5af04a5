"""On-disk cache of solved value tables: safe to load, never trusted blindly.

Files live in the user cache directory: the ``cache_dir`` argument if given,
else ``$YAHTZEE_SIM_CACHE``, else ``$XDG_CACHE_HOME/yahtzee-sim``, else
``~/.cache/yahtzee-sim``. A file is keyed by the rule set (name, options and a
fingerprint of its scoring), the float type and the solver version. It is an
``.npz`` written atomically (temporary file, then rename) with a SHA-256 of its
contents; loading uses ``allow_pickle=False`` and any mismatch, truncation or
checksum error makes :func:`load` return ``None`` so the caller recomputes.

>>> import tempfile
>>> d = tempfile.mkdtemp()
>>> p = save(Path(d) / "x.npz", {"k": "v"}, {"a": np.arange(3.0)})
>>> load(p, {"k": "v"})["a"].tolist()
[0.0, 1.0, 2.0]
>>> load(p, {"k": "other"}) is None
True
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from pathlib import Path

import numpy as np

__all__ = ["cache_dir", "save", "load", "read", "CACHE_ENV"]

CACHE_ENV = "YAHTZEE_SIM_CACHE"


def cache_dir(path: str | os.PathLike | None = None) -> Path:
    """The cache directory (not created here).

    >>> str(cache_dir("/tmp/somewhere"))
    '/tmp/somewhere'
    """
    if path is not None:
        return Path(path)
    env = os.environ.get(CACHE_ENV)
    if env:
        return Path(env)
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg) if xdg else Path.home() / ".cache"
    return base / "yahtzee-sim"


def file_name(stem: str) -> str:
    """A safe file name for a cache key.

    >>> file_name("yacht+no-bonus/float32")
    'yacht+no-bonus_float32.npz'
    """
    return re.sub(r"[^A-Za-z0-9+._-]", "_", stem) + ".npz"


def _contiguous(a) -> np.ndarray:
    a = np.asarray(a)
    return a if a.flags.c_contiguous else np.ascontiguousarray(a)   # keeps 0-d arrays 0-d


def _digest(meta_json: str, arrays: dict[str, np.ndarray]) -> str:
    h = hashlib.sha256(meta_json.encode())
    for name in sorted(arrays):
        a = _contiguous(arrays[name])
        h.update(name.encode())
        h.update(str(a.dtype).encode())
        h.update(repr(a.shape).encode())
        h.update(a.reshape(-1).view(np.uint8))     # the bytes of tobytes(), without a copy
    return h.hexdigest()


def save(path: str | os.PathLike, meta: dict, arrays: dict[str, np.ndarray]) -> Path:
    """Write ``arrays`` and ``meta`` (JSON-able) atomically with a checksum; returns the path."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    meta_json = json.dumps(meta, sort_keys=True)
    payload = {f"a_{k}": _contiguous(v) for k, v in arrays.items()}
    payload["meta"] = np.array(meta_json)
    payload["sha256"] = np.array(_digest(meta_json, arrays))
    from ..files import WriteError, finish_temp, temp_file

    try:  # named after this process, so a later run removes what a killed writer left
        fd, tmp = temp_file(path)
    except WriteError as exc:
        raise OSError(exc.errno, exc.reason) from None
    try:
        with os.fdopen(fd, "wb") as fh:
            np.savez(fh, **payload)
            fh.flush()
            os.fsync(fh.fileno())
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    try:
        finish_temp(tmp, path)
    except WriteError as exc:
        raise OSError(exc.errno, exc.reason) from None
    return path


def load(path: str | os.PathLike, meta: dict) -> dict[str, np.ndarray] | None:
    """The arrays stored at ``path`` if the file is intact and its meta equals ``meta``.

    Returns ``None`` for a missing, damaged, tampered or mismatched file.
    """
    return read(path, meta)[0]


def read(path: str | os.PathLike, meta: dict) -> tuple[dict[str, np.ndarray] | None, str]:
    """As :func:`load`, with the reason a file was refused (``""`` when it was read).

    >>> import tempfile
    >>> read(Path(tempfile.mkdtemp()) / "none.npz", {})
    (None, 'is missing')
    """
    path = Path(path)
    if not path.is_file():
        return None, "is missing"
    try:
        with np.load(path, allow_pickle=False) as z:
            stored_meta = str(z["meta"][()])
            stored_sum = str(z["sha256"][()])
            arrays = {k[2:]: z[k] for k in z.files if k.startswith("a_")}
    except Exception as exc:  # any damage (bad zip, truncation, wrong members) means "recompute"
        return None, f"is unreadable ({type(exc).__name__})"
    try:
        if json.loads(stored_meta) != json.loads(json.dumps(meta, sort_keys=True)):
            return None, "was made for other rules, float type or solver version"
    except ValueError:
        return None, "has unreadable metadata"
    if _digest(stored_meta, arrays) != stored_sum:
        return None, "fails its checksum"
    return arrays, ""
