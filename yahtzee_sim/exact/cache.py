"""On-disk cache of solved value tables: safe to load, never trusted blindly.

Files live in the user cache directory: the ``cache_dir`` argument if given,
else ``$YAHTZEE_SIM_CACHE``, else ``$XDG_CACHE_HOME/yahtzee-sim``, else
``~/.cache/yahtzee-sim``. A file is keyed by the rule set (name, options and a
fingerprint of its scoring), the float type and the solver version. It is an
``.npz`` written atomically (temporary file, then rename) with a SHA-256 of its
contents and an HMAC of that SHA-256 under the user's key (``signing-key`` in the
same folder, :mod:`yahtzee_sim.signing`): anyone can recompute a checksum after an
edit, only this user's yahtzee-sim can sign. Loading uses ``allow_pickle=False`` and
any mismatch, truncation, checksum or signature error makes :func:`load` return
``None`` so the caller recomputes.

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

__all__ = ["cache_dir", "save", "load", "read", "file_identity", "CACHE_ENV"]

from ..files import CACHE_ENV, cache_dir  # noqa: E402  (the folder of every cache and of the signing key)


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
    digest = _digest(meta_json, arrays)
    payload["sha256"] = np.array(digest)
    from ..files import WriteError, finish_temp, temp_file
    from ..signing import sign, signing_key

    payload["hmac"] = np.array(sign(signing_key(path.parent), digest.encode()))  # OSError: cannot store

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


def read(path: str | os.PathLike, meta: dict, *, mapped: bool = False,
         trusted: tuple | None = None) -> tuple[dict[str, np.ndarray] | None, str]:
    """As :func:`load`, with the reason a file was refused (``""`` when it was read).

    ``mapped``: the large arrays are read-only memory maps of the file (no copy; every
    process mapping the file shares its pages), not arrays read into memory.
    ``trusted``: a :func:`file_identity` this process or its parent took of the file
    right after it passed its checksum; if the file still has it, the checksum is not
    computed again (a file replaced since has another identity).

    >>> import tempfile
    >>> read(Path(tempfile.mkdtemp()) / "none.npz", {})
    (None, 'is missing')
    >>> p = save(Path(tempfile.mkdtemp()) / "x.npz", {"k": 1}, {"a": np.arange(300_000)})
    >>> arrays, why = read(p, {"k": 1}, mapped=True)
    >>> type(arrays["a"]).__name__, int(arrays["a"][-1]), why
    ('memmap', 299999, '')
    """
    path = Path(path)
    if not path.is_file():
        return None, "is missing"
    try:
        with np.load(path, allow_pickle=False) as z:
            stored_meta = str(z["meta"][()])
            stored_sum = str(z["sha256"][()])
            stored_tag = str(z["hmac"][()]) if "hmac" in z.files else None
            if mapped:
                arrays = _mapped_arrays(path, [k for k in z.files if k.startswith("a_")], z)
            else:
                arrays = {k[2:]: z[k] for k in z.files if k.startswith("a_")}
    except Exception as exc:  # any damage (bad zip, truncation, wrong members) means "recompute"
        return None, f"is unreadable ({type(exc).__name__})"
    try:
        if json.loads(stored_meta) != json.loads(json.dumps(meta, sort_keys=True)):
            return None, "was made for other rules, float type or solver version"
    except ValueError:
        return None, "has unreadable metadata"
    if trusted is not None and trusted == file_identity(path):
        return arrays, ""
    if _digest(stored_meta, arrays) != stored_sum:
        return None, "fails its checksum"
    from ..signing import signing_key, verify

    if not verify(signing_key(path.parent, create=False), stored_sum.encode(), stored_tag):
        return None, "is not signed with this user's key (changed by something else, or made elsewhere)"
    return arrays, ""


def file_identity(path: str | os.PathLike) -> tuple:
    """``(device, inode, size, mtime_ns)`` of a file: changes when it is replaced or written.

    >>> import tempfile
    >>> p = save(Path(tempfile.mkdtemp()) / "x.npz", {}, {"a": np.zeros(3)})
    >>> file_identity(p) == file_identity(p)
    True
    """
    st = os.stat(path)
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


MAP_AT_LEAST = 1 << 20
"""Members of at least this many bytes are memory-mapped by ``read(mapped=True)``."""


def _mapped_arrays(path: Path, members: list[str], z) -> dict[str, np.ndarray]:
    """Members of an uncompressed ``.npz`` as memory maps (small ones read as usual)."""
    import struct
    import zipfile

    out = {}
    with zipfile.ZipFile(path) as zf, open(path, "rb") as fh:
        for key in members:
            info = zf.getinfo(key + ".npy")
            if info.compress_type != zipfile.ZIP_STORED or info.file_size < MAP_AT_LEAST:
                out[key[2:]] = z[key]
                continue
            fh.seek(info.header_offset)
            local = fh.read(30)
            if local[:4] != b"PK\x03\x04":
                raise ValueError("bad local header")
            name_len, extra_len = struct.unpack("<HH", local[26:30])
            start = info.header_offset + 30 + name_len + extra_len
            fh.seek(start)
            version = np.lib.format.read_magic(fh)
            read_header = (np.lib.format.read_array_header_1_0 if version == (1, 0)
                           else np.lib.format.read_array_header_2_0)
            shape, fortran, dtype = read_header(fh)
            offset = fh.tell()
            if dtype.hasobject or offset - start + int(np.prod(shape)) * dtype.itemsize != info.file_size:
                raise ValueError("unexpected member layout")
            out[key[2:]] = np.memmap(path, dtype=dtype, mode="r", offset=offset, shape=shape,
                                     order="F" if fortran else "C")
    return out
