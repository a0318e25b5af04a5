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

Every cached table goes through :func:`table_path` (its versioned file name) and
:class:`CachedTable` (load it, checked, or say why not; store a computed one, or
note why it could not be stored): one copy of that logic for every kind of table.

A table may be stored compressed (``compress=True``: the risk strategies' decision
tables, 20 to 33 times smaller). Read ``mapped``, a large compressed member is expanded
once into a file in shared memory (:data:`RAM_DIR`, named after the cache file's
identity and the expanding process) and mapped from there: the processes of a run
(and any other run meanwhile) map that one copy instead of each expanding its own.
The expanding process removes it when it exits; one a killed process left is
removed by the next expansion.

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

__all__ = ["cache_dir", "save", "load", "read", "file_identity", "CACHE_ENV", "table_path", "CachedTable",
           "is_compressed", "RAM_DIR"]

from ..files import CACHE_ENV, cache_dir  # noqa: E402  (the folder of every cache and of the signing key)

cache_dir_of = cache_dir   # the same function, under a name the ``cache_dir`` arguments below do not shadow


def file_name(stem: str) -> str:
    """A safe file name for a cache key.

    >>> file_name("yacht+no-bonus/float32")
    'yacht+no-bonus_float32.npz'
    """
    return re.sub(r"[^A-Za-z0-9+._-]", "_", stem) + ".npz"


def table_path(rules_key: str, fingerprint: str, what: str, version: int, cache_dir=None, *,
               suffix: str = "") -> Path:
    """The file of a cached table: ``{rules}-{fingerprint}-{what}-v{version}{suffix}.npz``
    in the cache folder (the names :mod:`yahtzee_sim.exact.cache_files` reads back).

    >>> table_path("yacht+fill-in-order", "7dacbb01f9cd31cb", "float32", 3, "/c").as_posix()
    '/c/yacht+fill-in-order-7dacbb01f9cd31cb-float32-v3.npz'
    >>> table_path("yahtzee", "81be844051928ddf", "target-float32", 2, "/c", suffix="-max300").name
    'yahtzee-81be844051928ddf-target-float32-v2-max300.npz'
    """
    return cache_dir_of(cache_dir) / file_name(f"{rules_key}-{fingerprint}-{what}-v{version}{suffix}")


class CachedTable:
    """One cached table: :meth:`load` it (checked) or say why not, :meth:`store` a computed
    one or note why it could not be stored. What every exact table's cache does.

    After :meth:`load`, ``status`` is ``"hit"``, ``"miss"`` (no file) or ``"damaged"``
    (a file refused: ``note`` says why, and that it was ``redo``). :meth:`store` never
    raises for a folder it cannot write (read-only, full disk): the answer is still
    right, so ``note`` says so in one line (``what`` names the table) and nothing is
    cached. ``file_id`` is the stored or loaded file's :func:`file_identity`.

    >>> import tempfile
    >>> entry = CachedTable(Path(tempfile.mkdtemp()) / "t.npz", {"k": 1})
    >>> entry.load() is None, entry.status
    (True, 'miss')
    >>> entry.store({"a": np.arange(3)}), entry.note
    (True, '')
    >>> again = CachedTable(entry.path, {"k": 1})
    >>> again.load(lambda got: (int(got["a"].sum()), "")), again.status
    (3, 'hit')
    >>> again.load(lambda got: (None, "holds the wrong sum")), again.status, again.note.endswith("sum: recomputed")
    (None, 'damaged', True)
    >>> again.store({"a": np.arange(3)}), again.note.endswith("recomputed and replaced")
    (True, True)
    """

    def __init__(self, path: str | os.PathLike, meta: dict, *, what: str = "table",
                 redo: str = "recomputed", note: str = ""):
        self.path = Path(path)
        self.meta = meta
        self.what = what
        self.redo = redo
        self.status = "miss"
        self.note = note
        self.file_id: tuple | None = None

    def identity(self) -> tuple | None:
        """The file's :func:`file_identity`, or None when there is no file."""
        return file_identity(self.path) if self.path.is_file() else None

    def load(self, check=None, *, mapped: bool = False, trusted: tuple | None = None):
        """What ``check(arrays)`` makes of an intact file, or None (and ``status``, ``note``).

        ``check`` returns ``(result, "")`` or ``(None, why the arrays are not plausible)``;
        without it the arrays themselves are the result. ``mapped``, ``trusted``: as :func:`read`.
        """
        ident = self.identity()
        stored, why = read(self.path, self.meta, mapped=mapped, trusted=trusted)
        if stored is not None:
            got, why = check(stored) if check is not None else (stored, "")
            if got is not None:
                self.status, self.file_id = "hit", ident
                return got
        self.status = "damaged" if self.path.exists() else "miss"
        if self.status == "damaged":
            self.note = f"cache file {self.path} {why}: {self.redo}"
        return None

    def store(self, arrays: dict[str, np.ndarray], *, compress: bool = False) -> bool:
        """Save ``arrays`` (signed, atomically; ``compress``: deflated); False, with a note,
        when the folder refuses."""
        try:
            save(self.path, self.meta, arrays, compress=compress)
        except OSError as exc:  # read-only or full disk: the answer is still right
            reason = exc.strerror or type(exc).__name__
            where = exc.filename or self.path.parent
            self.note = "; ".join(x for x in (self.note, f"the {self.what} could not be stored in {where}: "
                                                         f"{reason} (it is not cached)") if x)
            return False
        self.file_id = file_identity(self.path)
        if self.status == "damaged":
            self.note += " and replaced"
        return True


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


def save(path: str | os.PathLike, meta: dict, arrays: dict[str, np.ndarray], *, compress: bool = False) -> Path:
    """Write ``arrays`` and ``meta`` (JSON-able) atomically with a checksum; returns the path.

    ``compress``: the members deflated (``np.savez_compressed``; read back the same,
    expanded; see the module docstring), else stored as they are, to be memory-mapped.
    """
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
            (np.savez_compressed if compress else np.savez)(fh, **payload)
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
    process mapping the file shares its pages), not arrays read into memory; those of
    a compressed file are mapped from its one expansion in shared memory (:data:`RAM_DIR`).
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
            if info.file_size < MAP_AT_LEAST:
                out[key[2:]] = z[key]
                continue
            if info.compress_type != zipfile.ZIP_STORED:
                got = _expanded(path, key, zf)
                out[key[2:]] = z[key] if got is None else got      # no shared memory: read here
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


def is_compressed(path: str | os.PathLike) -> bool:
    """Is any member of the ``.npz`` at ``path`` compressed?

    >>> import tempfile
    >>> d = Path(tempfile.mkdtemp())
    >>> is_compressed(save(d / "a.npz", {}, {"a": np.zeros(9)})), is_compressed(save(d / "b.npz", {}, {"a": np.zeros(9)}, compress=True))
    (False, True)
    """
    import zipfile

    with zipfile.ZipFile(path) as zf:
        return any(i.compress_type != zipfile.ZIP_STORED for i in zf.infolist())


def _ram_dir() -> Path | None:
    """The shared-memory folder compressed tables are expanded into, or None (none here)."""
    d = Path("/dev/shm")
    return d if d.is_dir() and os.access(d, os.W_OK | os.X_OK) else None


RAM_DIR = _ram_dir()
"""Where compressed tables are expanded to be mapped by every process (a file system in
memory); None where there is none (each process then reads its own copy)."""

EXPAND_PREFIX = "yahtzee-sim-expanded-"
"""The names of the expansions: this prefix, the cache file's tag, the expanding pid, the member."""

_EXPANDED: list[Path] = []           # the expansions this process made: removed at its exit
_EXPANDED_BY: list[int] = []         # the pid that registered the removal (a fork is not it)


def _expansion_tag(path: Path) -> str:
    """The cache file as it is now: its real path and identity (a file replaced has another tag)."""
    return hashlib.sha256(repr((os.path.realpath(path), file_identity(path))).encode()).hexdigest()[:20]


def _expanded(path: Path, key: str, zf) -> np.ndarray | None:
    """The compressed member ``key`` of ``path`` as a read-only map of its expansion in
    :data:`RAM_DIR`: a live process's (a parent that expanded it for its workers), or
    one made here; None if there is no shared memory or it is full (the caller reads it).

    Only the members' bytes are trusted to the expansion: the caller's checksum reads them
    back unless it holds the file's identity as verified, as for a mapped file.
    """
    from ..files import pid_alive

    ram = RAM_DIR
    if ram is None:
        return None
    tag = _expansion_tag(path)
    pattern = re.compile(re.escape(EXPAND_PREFIX) + r"([0-9a-f]{20})-([0-9]+)-(.+)\.npy(\.part)?$")
    mine = None
    uid = os.getuid() if hasattr(os, "getuid") else None
    for p in ram.glob(EXPAND_PREFIX + "*"):
        m = pattern.match(p.name)
        try:
            if m is None or (uid is not None and p.stat().st_uid != uid):
                continue                                     # not ours: another user's is never read
            if not pid_alive(int(m[2])):
                p.unlink()                                   # left by a process that was killed
            elif m[1] == tag and m[3] == key and m[4] is None and mine is None:
                mine = p
        except OSError:                                      # removed meanwhile
            continue
    if mine is not None:
        try:
            return np.load(mine, mmap_mode="r", allow_pickle=False)
        except (OSError, ValueError):                        # removed meanwhile: expand again
            pass
    final = ram / f"{EXPAND_PREFIX}{tag}-{os.getpid()}-{key}.npy"
    part = final.with_name(final.name + ".part")
    try:
        with zf.open(key + ".npy") as src:
            version = np.lib.format.read_magic(src)
            read_header = (np.lib.format.read_array_header_1_0 if version == (1, 0)
                           else np.lib.format.read_array_header_2_0)
            shape, fortran, dtype = read_header(src)
            if dtype.hasobject or fortran:
                raise ValueError("unexpected member layout")
            _remove_at_exit(part)
            out = np.lib.format.open_memmap(part, mode="w+", dtype=dtype, shape=shape)
            # reserve the pages first: writing through a map into a full tmpfs (Docker's
            # /dev/shm is 64 MB by default) kills the process with SIGBUS instead of raising
            if hasattr(os, "posix_fallocate"):
                with open(part, "r+b") as reserve:
                    os.posix_fallocate(reserve.fileno(), 0, os.path.getsize(part))
            flat = out.reshape(-1).view(np.uint8)
            done, step = 0, 1 << 24
            while done < flat.size:
                n = src.readinto(memoryview(flat[done:done + step]))
                if not n:
                    raise ValueError("truncated member")
                done += n
            if src.read(1):                                   # reading to the end checks the CRC
                raise ValueError("member longer than its header says")
            out.flush()
            del out, flat
        os.replace(part, final)
    except OSError:                                            # shared memory full: read it here
        part.unlink(missing_ok=True)
        return None
    except BaseException:
        part.unlink(missing_ok=True)
        raise
    _remove_at_exit(final)
    return np.load(final, mmap_mode="r", allow_pickle=False)


def _remove_at_exit(p: Path) -> None:
    """Remove ``p`` when this process exits (its maps stay valid in the processes that hold
    them): at the exit of the main process and of multiprocessing's children alike, which
    leave without running ``atexit``."""
    if not _EXPANDED_BY or _EXPANDED_BY[0] != os.getpid():
        from multiprocessing.util import Finalize

        _EXPANDED.clear()                                     # a forked child removes only its own
        _EXPANDED_BY[:] = [os.getpid()]
        Finalize(None, _remove_expansions, exitpriority=0)
    _EXPANDED.append(p)


def _remove_expansions() -> None:
    if _EXPANDED_BY and _EXPANDED_BY[0] == os.getpid():
        for p in _EXPANDED:
            try:
                p.unlink()
            except OSError:
                pass
