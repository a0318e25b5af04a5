"""Writing files safely: atomic replace, the user's umask, one-line errors, no litter.

Every file the project writes goes first to a hidden temporary file beside the target,
named ``.<target name>.yahtzee-sim-tmp-<pid>-<random>``, which is renamed over the target
only when complete: a reader never sees a partial file, and a failed write (a full disk,
a killed process) leaves the previous file untouched. A killed writer cannot remove its
temporary file, so the next write to the same target removes the leftovers of writers
that are gone (:func:`clean_stale_temps`). Only a name that carries this project's
prefix, the target's name, a writer's pid and the random part and suffix the project
gives it is ever removed, and only once that writer is gone: a user's file named like
``.tmp-mynotes1`` is never touched, however old.

``mkstemp`` creates files readable by their owner only; the finished file gets the
mode a plain ``open()`` would give it (``0o666`` less the umask), or keeps the mode of
the file it replaces.

>>> import tempfile, pathlib
>>> folder = pathlib.Path(tempfile.mkdtemp())
>>> with atomic_write(folder / "out.txt", "w") as fh:
...     _ = fh.write("hello")
>>> (folder / "out.txt").read_text(), sorted(p.name for p in folder.iterdir())
('hello', ['out.txt'])
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import stat
from pathlib import Path

__all__ = ["WriteError", "atomic_write", "temp_file", "finish_temp", "clean_stale_temps", "file_mode",
           "describe_os_error", "current_umask", "pid_alive", "STALE_AFTER", "TEMP_MARK"]

STALE_AFTER = 24 * 3600.0
"""Kept for callers of earlier versions: nothing is removed for its age alone any more (a file
of a live pid may be a user's; only a dead writer's, named as ours, is removed)."""

TEMP_MARK = ".yahtzee-sim-tmp-"
"""What every temporary file name carries after the target's name: proof, with the pid, that it is ours."""


class WriteError(ValueError):
    """A file could not be written (disk full, permission, ...): one line, exit code 2 on the CLI.

    A ``ValueError`` so that the command line reports it like bad input, in one line;
    ``errno`` is the operating system's error number.
    """

    def __init__(self, message: str, errno_: int | None = None, reason: str = ""):
        super().__init__(message)
        self.errno = errno_
        self.reason = reason or message


def describe_os_error(exc: OSError) -> str:
    """``OSError(ENOSPC)`` -> ``'no space left on device'`` (the OS wording, lower case)."""
    text = exc.strerror or (os.strerror(exc.errno) if exc.errno else str(exc)) or type(exc).__name__
    return text[:1].lower() + text[1:]


def current_umask() -> int:
    """The process's umask, read without changing it.

    >>> 0 <= current_umask() <= 0o777
    True
    """
    try:  # Linux: read it without changing it (os.umask would, for a moment, in every thread)
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def file_mode(target: str | os.PathLike) -> int:
    """The mode a finished ``target`` gets: that of the file it replaces, else 0o666 less the umask.

    >>> oct(file_mode("/nonexistent/x") & 0o600)
    '0o600'
    """
    try:
        return stat.S_IMODE(os.stat(target).st_mode)
    except OSError:
        return 0o666 & ~current_umask()


def _prefix(target: Path) -> str:
    return f".{target.name}{TEMP_MARK}"


def _temp_name(target: Path) -> re.Pattern:
    """The exact names :func:`temp_file` gives: prefix, pid, mkstemp's 8 characters, the suffix."""
    return re.compile(re.escape(_prefix(target)) + r"([0-9]+)-[a-z0-9_]{8}" + re.escape(target.suffix))


def pid_alive(pid: int) -> bool:
    """Is a process with this pid running (ours, or anyone's we may not signal)?

    >>> pid_alive(os.getpid())
    True
    """
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # e.g. EPERM: it exists, owned by someone else
        return True
    return True


def clean_stale_temps(target: str | os.PathLike) -> list[Path]:
    """Remove leftover temporary files of ``target`` whose writer is gone; returns them.

    Only regular files named exactly as :func:`temp_file` names them
    (``.<name>.yahtzee-sim-tmp-<pid>-<8 characters><suffix>``) are touched, and only
    once process ``<pid>`` no longer runs. A pattern a user's own name can fall into
    by accident (``.tmp-`` plus eight characters, as earlier versions removed) is never
    touched; neither is a file of a writer still running, however old (its pid may
    have been reused: leaving a stray file is harmless, removing a user's file is not).

    >>> import tempfile, pathlib
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (folder / ".tmp-mynotes1").write_text("mine")
    >>> clean_stale_temps(folder / "games.csv"), (folder / ".tmp-mynotes1").exists()
    ([], True)
    """
    target = Path(target)
    folder = target.parent if str(target.parent) else Path(".")
    ours = _temp_name(target)
    removed = []
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return removed
    for entry in entries:
        match = ours.fullmatch(entry.name)
        pid = int(match.group(1)) if match is not None and len(match.group(1)) <= 9 else 0
        if pid <= 0 or pid_alive(pid):  # no pid we could have had (0 is the process group): not ours
            continue
        try:
            if not stat.S_ISREG(entry.stat(follow_symlinks=False).st_mode):
                continue
            os.unlink(entry.path)
            removed.append(Path(entry.path))
        except OSError:
            continue
    return removed


def temp_file(target: str | os.PathLike, *, clean: bool = True) -> tuple[int, Path]:
    """A new hidden temporary file beside ``target`` (open descriptor, path).

    With ``clean``, leftovers of earlier writers that are gone are removed first.
    """
    target = Path(target)
    folder = target.parent if str(target.parent) else Path(".")
    if clean:
        clean_stale_temps(target)
    import tempfile  # here, not at the top: start-up stays fast

    try:
        fd, tmp = tempfile.mkstemp(prefix=f"{_prefix(target)}{os.getpid()}-", suffix=target.suffix, dir=folder)
    except OSError as exc:
        reason = describe_os_error(exc)
        raise WriteError(f"cannot write {str(target)!r}: {reason}", exc.errno, reason) from None
    return fd, Path(tmp)


def finish_temp(tmp: Path, target: str | os.PathLike) -> None:
    """Give ``tmp`` its final mode and rename it over ``target`` (atomic on one file system)."""
    try:
        os.chmod(tmp, file_mode(target))
        os.replace(tmp, target)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        reason = describe_os_error(exc)
        raise WriteError(f"cannot write {str(target)!r}: {reason}", exc.errno, reason) from None


@contextlib.contextmanager
def atomic_write(target: str | os.PathLike, mode: str = "w", *, what: str | None = None, clean: bool = True):
    """Open a temporary file for ``target``; on success rename it over ``target``.

    Any failure removes the temporary file and leaves ``target`` as it was; an
    ``OSError`` (e.g. a full disk) becomes a one-line :class:`WriteError` naming
    ``what`` (default: the target's path).
    """
    target = Path(target)
    label = what or repr(str(target))
    fd, tmp = temp_file(target, clean=clean)
    try:
        with os.fdopen(fd, mode) as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        reason = describe_os_error(exc)
        hint = "; free some space and run again" if exc.errno in (errno.ENOSPC, errno.EDQUOT) else ""
        raise WriteError(f"cannot write {label}: {reason}{hint}", exc.errno, reason) from None
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    finish_temp(tmp, target)


CACHE_ENV = "YAHTZEE_SIM_CACHE"


def cache_dir(path: str | os.PathLike | None = None) -> Path:
    """The user's cache folder (not created here): the solver's tables and the key that
    signs checkpoints and caches live there. ``$YAHTZEE_SIM_CACHE``, else
    ``$XDG_CACHE_HOME/yahtzee-sim``, else ``~/.cache/yahtzee-sim``.

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
