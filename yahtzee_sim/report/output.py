"""Where reports go, and the promise that writing one never deletes a user's data.

A report is a folder written as a whole: files go to a hidden temporary folder
beside it, a marker file ``.yahtzee-sim-report`` (a small JSON identity listing
every file with its SHA-256) is written last, and the folder is swapped into place
in one rename. An existing folder is replaced only if it carries that marker, holds
nothing but the files listed in it, and each of them is still as written (a file the
user edited is the user's now); anything else is refused with a one-line
``ValueError`` naming the folder and the files. Every check here runs before any
work starts.

>>> check_report_name("head-to-head")
'head-to-head'
>>> check_report_name("../victim")
Traceback (most recent call last):
...
ValueError: report name '../victim' is not a plain name: use letters, digits, '-' and '_' only (e.g. 'my-report')
>>> import tempfile, pathlib
>>> root = pathlib.Path(tempfile.mkdtemp())
>>> (root / "thesis").mkdir(); _ = (root / "thesis" / "thesis.tex").write_text("...")
>>> check_replaceable(root / "thesis")  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
ValueError: refusing to replace folder '.../thesis': it was not written by yahtzee-sim (no .yahtzee-sim-report marker); move it away or choose another output folder
"""

from __future__ import annotations

import errno
import json
import os
import re
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Callable

from ..files import WriteError, current_umask, pid_alive
from ..files import describe_os_error as _reason

MARKER = ".yahtzee-sim-report"
MADE_BY = "yahtzee-sim"
TMP_PREFIX = ".yahtzee-sim-tmp-"
OLD_PREFIX = ".yahtzee-sim-old-"
_SLUG = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,63}")
_MAX_MARKER_BYTES = 64 * 1024


def check_report_name(name, what: str = "report name") -> str:
    """A report, table or figure name is a plain slug: it can never leave its folder.

    >>> check_report_name("")
    Traceback (most recent call last):
    ...
    ValueError: report name '' is not a plain name: use letters, digits, '-' and '_' only (e.g. 'my-report')
    """
    if not isinstance(name, str):
        raise ValueError(f"{what} must be a string, got {name!r}")
    if not _SLUG.fullmatch(name):
        raise ValueError(f"{what} {name!r} is not a plain name: use letters, digits, '-' and '_' only "
                         "(e.g. 'my-report')" + (" of at most 64 characters" if len(name) > 64 else ""))
    return name


def _probe_writable(folder: Path, shown: str) -> None:
    """Create and remove a file: os.access says yes to root even on read-only or virtual file systems."""
    try:
        fd, probe = tempfile.mkstemp(prefix=".yahtzee-sim-probe-", dir=folder)
    except OSError as exc:
        raise ValueError(f"cannot write to output folder {shown!r}: {_reason(exc)}") from None
    os.close(fd)
    os.unlink(probe)


def check_output_root(root) -> Path:
    """Validate the folder that will hold report folders (created later if missing).

    >>> check_output_root("")
    Traceback (most recent call last):
    ...
    ValueError: output folder must not be empty (give a folder name, e.g. reports)
    >>> check_output_root("/proc/nope")
    Traceback (most recent call last):
    ...
    ValueError: cannot write to output folder '/proc/nope': no such file or directory
    """
    if not isinstance(root, (str, os.PathLike)):
        raise ValueError(f"output folder must be a path, got {root!r}")
    shown = os.fspath(root)
    if not str(shown).strip():
        raise ValueError("output folder must not be empty (give a folder name, e.g. reports)")
    path = Path(root)
    if path.exists() and not path.is_dir():
        raise ValueError(f"output folder {shown!r} is a file, not a folder")
    existing = path
    while not existing.exists():  # the nearest existing ancestor must be a writable folder
        if existing.is_symlink():
            raise ValueError(f"output folder {shown!r}: {str(existing)!r} is a broken symbolic link")
        existing = existing.parent
    if not existing.is_dir():
        raise ValueError(f"cannot write to output folder {shown!r}: {str(existing)!r} is a file, not a folder")
    if existing != path:  # e.g. /proc/nope: /proc exists, but nothing can be made in it
        try:
            probe = Path(tempfile.mkdtemp(prefix=".yahtzee-sim-probe-", dir=existing))
        except OSError as exc:
            raise ValueError(f"cannot write to output folder {shown!r}: {_reason(exc)}") from None
        probe.rmdir()
    else:
        _probe_writable(path, shown)
    return path


def read_marker(folder: Path) -> dict | None:
    """The marker of a report folder written by this project, or None.

    >>> read_marker(Path("/no/such/folder")) is None
    True
    """
    marker = Path(folder) / MARKER
    try:
        if marker.is_symlink() or not marker.is_file() or marker.stat().st_size > _MAX_MARKER_BYTES:
            return None
        data = json.loads(marker.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError, RecursionError):
        return None
    if not isinstance(data, dict) or data.get("made_by") != MADE_BY or not isinstance(data.get("files"), list):
        return None
    return data


def check_replaceable(folder) -> Path:
    """Refuse (``ValueError``) to replace anything but a report folder this project wrote.

    A missing folder or an empty one is fine. A marked folder is replaced only if
    it holds nothing beyond the files its marker lists, so a file a user added to
    a report (notes, a thesis) is never deleted with it.
    """
    folder = Path(folder)
    shown = str(folder)
    if folder.is_symlink():
        raise ValueError(f"refusing to replace {shown!r}: it is a symbolic link; remove it or choose another "
                         "output folder")
    if not folder.exists():
        return folder
    if not folder.is_dir():
        raise ValueError(f"refusing to replace {shown!r}: it is a file, not a report folder")
    try:
        entries = sorted(p.name for p in folder.iterdir())
    except OSError as exc:
        raise ValueError(f"cannot read folder {shown!r}: {_reason(exc)}") from None
    if not entries:
        return folder
    marker = read_marker(folder)
    if marker is None:
        raise ValueError(f"refusing to replace folder {shown!r}: it was not written by {MADE_BY} (no {MARKER} "
                         "marker); move it away or choose another output folder")
    extra = [name for name in entries if name != MARKER and name not in marker["files"]]
    extra += [name for name in entries if name in marker["files"] and not (folder / name).is_file()]
    if extra:
        raise ValueError(f"refusing to replace report folder {shown!r}: it holds files {MADE_BY} did not write "
                         f"({_listed(extra)}); move them away first")
    changed = changed_files(folder, marker, [name for name in entries if name != MARKER])
    if changed:
        raise ValueError(f"refusing to replace report folder {shown!r}: {_listed(changed)} changed since "
                         f"{MADE_BY} wrote {'it' if len(changed) == 1 else 'them'} (an edit would be lost); "
                         "move the changed files out of the folder, then run again")
    return folder


def _listed(names: list[str]) -> str:
    return ", ".join(names[:5]) + (f" and {len(names) - 5} more" if len(names) > 5 else "")


def file_sha256(path: Path) -> str:
    """The SHA-256 of a file's content, in hex.

    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "x"; _ = p.write_bytes(b"abc")
    >>> file_sha256(p)[:16]
    'ba7816bf8f01cfea'
    """
    import hashlib

    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def changed_files(folder: Path, marker: dict, names: list[str]) -> list[str]:
    """Which of ``names`` (files a marked report folder lists) are no longer as written.

    The marker records each file's SHA-256; a marker of an earlier version records
    none, and there a file modified after the marker (which is written last) counts as
    changed. An unreadable file counts as changed: nothing is replaced unseen.

    >>> import tempfile, pathlib
    >>> out = pathlib.Path(tempfile.mkdtemp()) / "demo"
    >>> _ = write_folder(out, lambda d: (d / "README.md").write_text("# demo"), {"report": "demo"})
    >>> _ = (out / "README.md").write_text("# demo, with my notes")
    >>> changed_files(out, read_marker(out), ["README.md"])
    ['README.md']
    """
    sums = marker.get("sha256")
    changed = []
    if not isinstance(sums, dict):
        try:
            written = (folder / MARKER).stat().st_mtime_ns
        except OSError:
            return list(names)
    for name in names:
        try:
            if isinstance(sums, dict):
                same = sums.get(name) == file_sha256(folder / name)
            else:
                same = (folder / name).stat().st_mtime_ns <= written
        except OSError:
            same = False
        if not same:
            changed.append(name)
    return changed


_STALE_NAMES = {
    TMP_PREFIX: re.compile(re.escape(TMP_PREFIX) + r"([0-9]{1,9})-(.+)\.[a-z0-9_]{8}"),  # mkdtemp's 8 characters
    OLD_PREFIX: re.compile(re.escape(OLD_PREFIX) + r"([0-9]{1,9})-(.+)\.x"),
}


def clean_stale(parent) -> list[Path]:
    """Remove the temporary folders of killed writes in ``parent`` (and put back an
    old report a killed swap left aside). Returns what was removed or restored.

    Only folders named exactly as this module names them, of processes that no longer
    run, are touched: proof that they are ours and abandoned. A folder of a writer
    still running is left alone however old (its pid may have been reused: a stray
    folder is harmless, removing someone's is not).
    """
    parent = Path(parent)
    touched = []
    try:
        entries = list(parent.iterdir())
    except OSError:
        return touched
    for entry in entries:
        for prefix, pattern in _STALE_NAMES.items():
            match = pattern.fullmatch(entry.name)
            if match is None:
                continue
            pid = int(match.group(1))
            if pid <= 0 or entry.is_symlink() or not entry.is_dir() or pid_alive(pid):
                break
            target = parent / match.group(2) if prefix == OLD_PREFIX else None
            try:
                if target is not None and not target.exists() and read_marker(entry) is not None:
                    entry.rename(target)  # killed between the two renames: the old report comes back
                else:
                    shutil.rmtree(entry)
                touched.append(entry)
            except OSError:
                pass
            break
    return touched


def _exchange(a: Path, b: Path) -> bool:
    """Swap two paths atomically (Linux renameat2 RENAME_EXCHANGE); False where unsupported."""
    if not sys.platform.startswith("linux"):
        return False
    import ctypes

    try:
        fn = ctypes.CDLL(None, use_errno=True).renameat2
    except (OSError, AttributeError):
        return False
    fn.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    at_fdcwd, rename_exchange = -100, 2
    if fn(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), rename_exchange) == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.EINVAL, errno.ENOSYS, errno.ENOTSUP, errno.EPERM):
        return False
    raise OSError(err, os.strerror(err), str(b))


def _fsync_tree(folder: Path) -> None:
    for path in folder.iterdir():
        with open(path, "rb") as f:
            os.fsync(f.fileno())
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_folder(folder, fill: Callable[[Path], None], identity: dict) -> Path:
    """Write a report folder as a whole: ``fill(tmp)`` writes the files, then the
    marker (``identity`` plus the file list) is added and the folder swapped in.

    Any failure (disk full, permissions, Ctrl-C) leaves the previous folder as it
    was and no temporary folder behind; OS errors become a one-line ``ValueError``.

    >>> import tempfile, pathlib
    >>> out = pathlib.Path(tempfile.mkdtemp()) / "demo"
    >>> _ = write_folder(out, lambda d: (d / "a.txt").write_text("a"), {"report": "demo"})
    >>> sorted(p.name for p in out.iterdir())
    ['.yahtzee-sim-report', 'a.txt']
    >>> _ = write_folder(out, lambda d: (d / "b.txt").write_text("b"), {"report": "demo"})
    >>> sorted(p.name for p in out.iterdir())
    ['.yahtzee-sim-report', 'b.txt']
    """
    folder = Path(folder)
    check_replaceable(folder)
    parent = folder.parent
    try:
        parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ValueError(f"cannot create folder {str(parent)!r}: {_reason(exc)}") from None
    clean_stale(parent)
    tag = f"{os.getpid()}-{folder.name}."
    try:
        tmp = Path(tempfile.mkdtemp(prefix=TMP_PREFIX + tag, dir=parent))
    except OSError as exc:
        raise WriteError(f"cannot write report to {str(folder)!r}: {_reason(exc)}", exc.errno) from None
    try:
        tmp.chmod(0o777 & ~current_umask())  # mkdtemp makes 0700; a report folder is as readable as any other
        fill(tmp)
        files = sorted(p.name for p in tmp.iterdir())
        marker = {"made_by": MADE_BY, **identity, "files": files,
                  "sha256": {name: file_sha256(tmp / name) for name in files}}
        (tmp / MARKER).write_text(json.dumps(marker, indent=1, sort_keys=True) + "\n", encoding="utf-8")
        _fsync_tree(tmp)
        check_replaceable(folder)  # again: it may have changed while the report was computed
        if folder.exists():
            if _exchange(tmp, folder):
                shutil.rmtree(tmp, ignore_errors=True)  # tmp now holds the old report
            else:
                old = parent / (OLD_PREFIX + tag + "x")
                folder.rename(old)
                tmp.rename(folder)
                shutil.rmtree(old, ignore_errors=True)
        else:
            tmp.rename(folder)
    except OSError as exc:
        shutil.rmtree(tmp, ignore_errors=True)
        raise WriteError(f"cannot write report to {str(folder)!r}: {_reason(exc)}; the previous report, if any, "
                         "is unchanged", exc.errno, _reason(exc)) from exc
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return folder
