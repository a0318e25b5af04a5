"""A secret key of the user's own, to sign the files the project trusts when it reads them back.

A SHA-256 stored beside a file's content catches accidents (a truncated write, a
flipped bit), but anyone who edits the file can recompute it: a checkpoint edited
with its checksum fixed resumed into another answer, and a solver cache with every
value raised by 1 was trusted. Checkpoints and solver caches therefore also carry an
HMAC-SHA256 made with a key that lives in the user's cache folder (``signing-key``:
32 random bytes, readable by the user only, made on first use). A file changed by
anything but this project, under this user's key, fails its signature: a cache is
then recomputed, a checkpoint refused.

The key is made atomically: written to a temporary file and linked into place only
if no other process got there first, so every process agrees on one key.

>>> import tempfile, pathlib
>>> folder = pathlib.Path(tempfile.mkdtemp())
>>> key = signing_key(folder)
>>> len(key), signing_key(folder) == key, oct((folder / KEY_NAME).stat().st_mode & 0o777)
(32, True, '0o600')
>>> tag = sign(key, b"done=2048")
>>> verify(key, b"done=2048", tag), verify(key, b"done=3072", tag), verify(None, b"done=2048", tag)
(True, False, False)
"""

from __future__ import annotations

import hashlib
import hmac
import os
import stat
from pathlib import Path

__all__ = ["KEY_BYTES", "KEY_NAME", "sign", "signing_key", "verify"]

KEY_NAME = "signing-key"
KEY_BYTES = 32


def _read_key(path: Path) -> bytes | None:
    """The key at ``path``, or None when there is none or it is not one (wrong size, not a file)."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        data = os.read(fd, KEY_BYTES + 1)
    except OSError:
        return None
    finally:
        os.close(fd)
    return data if len(data) == KEY_BYTES else None


def signing_key(folder: str | os.PathLike, *, create: bool = True) -> bytes | None:
    """The user's key kept in ``folder`` (the cache folder); made there on first use.

    With ``create`` False a missing key gives None (nothing can have been signed with
    it). A key file that is not one (a wrong size) is replaced by a new key: whatever
    it signed can no longer be told from a forgery anyway. Raises ``OSError`` when the
    key cannot be made (an unwritable folder).

    >>> import tempfile, pathlib
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> signing_key(folder, create=False) is None, len(signing_key(folder))
    (True, 32)
    """
    folder = Path(folder)
    path = folder / KEY_NAME
    key = _read_key(path)
    if key is not None or not create:
        return key
    from .files import finish_temp, temp_file

    folder.mkdir(parents=True, exist_ok=True)
    try:
        fd, tmp = temp_file(path)
    except ValueError as exc:  # WriteError: say it as the OSError it was
        raise OSError(getattr(exc, "errno", None), str(exc)) from None
    try:
        os.write(fd, os.urandom(KEY_BYTES))
        os.fsync(fd)
    finally:
        os.close(fd)
    try:
        os.chmod(tmp, 0o600)
        try:
            os.link(tmp, path)  # only if there is none yet: a racing process's key wins
        except FileExistsError:
            if _read_key(path) is None:  # what is there is not a key: ours replaces it
                finish_temp(tmp, path)
                os.chmod(path, 0o600)
        except OSError:  # a file system without hard links
            if _read_key(path) is None:
                finish_temp(tmp, path)
                os.chmod(path, 0o600)
    finally:
        tmp.unlink(missing_ok=True)
    key = _read_key(path)
    if key is None:
        raise OSError(f"cannot make the signing key {str(path)!r}")
    return key


def sign(key: bytes, data: bytes) -> str:
    """The HMAC-SHA256 of ``data`` under ``key``, in hex (RFC 4231 test case 2 below).

    >>> sign(b"Jefe", b"what do ya want for nothing?")
    '5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843'
    """
    return hmac.new(key, data, hashlib.sha256).hexdigest()


def verify(key: bytes | None, data: bytes, tag) -> bool:
    """Does ``tag`` sign ``data`` under ``key`` (compared in constant time)? False without a key.

    >>> verify(b"Jefe", b"what do ya want for nothing?", sign(b"Jefe", b"what do ya want for nothing?"))
    True
    """
    if key is None or not isinstance(tag, str):
        return False
    return hmac.compare_digest(sign(key, data), tag)
