"""Per-game rows streamed to a CSV or Parquet file chunk by chunk, so memory stays flat.

The driver hands a :class:`RowSink` the rows of each chunk in game order. The table is
written to a hidden file beside the target and renamed over it when the run is
complete, so a reader never sees a partial table:

* without a checkpoint, a temporary ``.<name>.yahtzee-sim-tmp-<pid>-*`` file
  (:mod:`yahtzee_sim.files`), removed on failure;
* with a checkpoint, ``.<name>.partial``, kept when the run stops: the checkpoint
  records its length and SHA-256, and the resumed run checks both, cuts off any
  half-written chunk and appends the rest (CSV only: a Parquet file cannot be
  appended to once its writer is gone).

The file is the same, byte for byte, as writing ``SimulationResult.to_frame()`` at once.

>>> import tempfile, pathlib
>>> from yahtzee_sim import simulate
>>> out = pathlib.Path(tempfile.mkdtemp()) / "games.csv"
>>> res = simulate("yacht", "random", 3000, seed=1, batch=1024, out=out)
>>> res.games is None, out.read_text() == simulate("yacht", "random", 3000, seed=1).to_frame().to_csv()
(True, True)
"""

from __future__ import annotations

import errno
import os
from pathlib import Path

from ..files import WriteError, describe_os_error, finish_temp, temp_file
from ..results import games_frame
from ..rules import RuleSet

__all__ = ["OUT_SUFFIXES", "check_out", "RowSink", "open_sink"]

OUT_SUFFIXES = (".csv", ".parquet")


def check_out(path, *, resumable: bool = False, suffixes: tuple[str, ...] = OUT_SUFFIXES) -> Path:
    """Validate an output path before any work: known suffix, existing writable folder.

    >>> check_out("games.txt")
    Traceback (most recent call last):
    ...
    ValueError: out must end in one of .csv, .parquet, got 'games.txt'
    """
    endings = " or ".join(suffixes)
    if isinstance(path, bool) or not isinstance(path, (str, os.PathLike)):
        raise ValueError(f"out must be a file path ending in {endings}, got {path!r}")
    text = os.fspath(path)
    if not str(text).strip():
        raise ValueError(f"out is empty: give a file name ending in {endings}")
    out = Path(text)
    if out.suffix.lower() not in suffixes:
        raise ValueError(f"out must end in one of {', '.join(suffixes)}, got {str(text)!r}")
    folder = out.parent if str(out.parent) else Path(".")
    if not folder.is_dir():
        raise ValueError(f"cannot write {str(text)!r}: folder {str(folder)!r} does not exist")
    if out.is_dir():
        raise ValueError(f"cannot write {str(text)!r}: it is a folder; give a file name ending in {endings}")
    if not os.access(folder, os.W_OK) or (out.exists() and not os.access(out, os.W_OK)):
        raise ValueError(f"cannot write {str(text)!r}: permission denied")
    try:  # os.access says yes to root even on read-only or virtual file systems: try it
        fd, probe = temp_file(out, clean=False)
    except WriteError as exc:
        raise ValueError(f"cannot write {str(text)!r}: {exc.reason}") from None
    os.close(fd)
    probe.unlink()
    if out.suffix.lower() == ".parquet":
        if resumable:
            raise ValueError("a Parquet table cannot be resumed from a checkpoint: use a .csv file with "
                             "a checkpoint, or run without one")
        try:
            import pyarrow  # noqa: F401
        except ImportError:
            raise ValueError("parquet output needs pyarrow: pip install pyarrow (or use .csv)") from None
    return out


class RowSink:
    """Writes the rows of consecutive chunks to ``out``; see the module docstring.

    ``state()`` describes what is on disk (for a checkpoint); ``resume(state)`` picks a
    partial table up again; ``finish()`` renames the complete table into place;
    ``abort()`` removes a temporary table.
    """

    def __init__(self, out: Path, rules: RuleSet, resumable: bool):
        self.out, self.rules, self.resumable = out, rules, resumable
        self.parquet = out.suffix.lower() == ".parquet"
        self.games = 0  # rows written
        self.bytes = 0
        self.chunks = 0
        import hashlib

        self._hash = hashlib.sha256()
        self._fh = None
        self._writer = None  # pyarrow ParquetWriter
        self._schema = None
        if resumable:
            self.path = out.with_name(f".{out.name}.partial")
        else:
            fd, self.path = temp_file(out)
            os.close(fd)

    # -- writing --------------------------------------------------------------------
    def _error(self, exc: OSError) -> WriteError:
        reason = describe_os_error(exc)
        if self.resumable:
            kept = "the checkpoint and the partial table keep the chunks written before"
        else:
            self.abort()
            kept = "nothing was written"
        hint = "free some space and run again" if exc.errno in (errno.ENOSPC, errno.EDQUOT) else "run again"
        return WriteError(f"cannot write {str(self.out)!r}: {reason}; {kept}: {hint}", exc.errno, reason)

    def write(self, games: dict) -> None:
        """Append one chunk's rows (the games that follow the rows written so far)."""
        frame = games_frame(self.rules, games, first_game=self.games)
        try:
            if self.parquet:
                self._write_parquet(frame)
            else:
                if self._fh is None:
                    self._fh = open(self.path, "wb" if self.bytes == 0 else "r+b")
                    self._fh.seek(self.bytes)
                data = frame.to_csv(header=self.bytes == 0).encode()
                self._fh.write(data)
                self._fh.flush()
                self._hash.update(data)
                self.bytes += len(data)
        except OSError as exc:
            raise self._error(exc) from None
        self.games += len(frame)
        self.chunks += 1

    def _write_parquet(self, frame) -> None:
        import pyarrow as pa
        import pyarrow.parquet as pq

        table = pa.Table.from_pandas(frame, schema=self._schema, preserve_index=True)
        if self._writer is None:
            self._schema = table.schema
            self._writer = pq.ParquetWriter(self.path, self._schema)
        self._writer.write_table(table)

    def sync(self) -> None:
        """Make the rows written so far durable (before a checkpoint records them)."""
        if self._fh is not None:
            try:
                os.fsync(self._fh.fileno())
            except OSError as exc:
                raise self._error(exc) from None

    def state(self) -> dict:
        return {"chunks": self.chunks, "games": self.games, "bytes": self.bytes, "sha256": self._hash.hexdigest()}

    # -- resuming -------------------------------------------------------------------
    def resume(self, state: dict, n_chunks: int) -> None:
        """Continue the partial table described by ``state`` (``ValueError`` if it is not that table)."""
        ok = (isinstance(state, dict) and all(isinstance(state.get(k), int) and not isinstance(state.get(k), bool)
                                              and state[k] >= 0 for k in ("chunks", "games", "bytes"))
              and isinstance(state.get("sha256"), str))
        if not ok:
            raise ValueError("the checkpoint's record of the per-game table is damaged")
        import hashlib

        # The partial table, or the finished one: a run killed after renaming its table into
        # place left it there (a checkpoint of an earlier version was saved after that
        # rename, so it may record fewer chunks than the finished table holds: the table's
        # first recorded bytes, checked below, are then picked up and the rest played again).
        where = next((p for p in (self.path, self.out) if p.is_file()), None)
        if where is None:
            raise ValueError(f"the partial per-game table {str(self.path)!r} of this checkpoint is gone: "
                             "delete the checkpoint to start afresh")
        digest = hashlib.sha256()
        with open(where, "rb") as fh:
            left = state["bytes"]
            while left:
                block = fh.read(min(left, 1 << 22))
                if not block:
                    break
                digest.update(block)
                left -= len(block)
        if left or digest.hexdigest() != state["sha256"]:
            raise ValueError(f"the per-game table {str(where)!r} does not match its checkpoint (edited or "
                             "damaged): delete both to start afresh")
        self.games, self.bytes, self.chunks = state["games"], state["bytes"], state["chunks"]
        self._hash = digest
        if where == self.out:
            if state["chunks"] == n_chunks:
                self.path = self.out  # complete and in place
                return
            try:  # ours (its bytes are the checkpoint's): the partial table again, to be completed
                os.replace(self.out, self.path)
            except OSError as exc:
                raise self._error(exc) from None
        try:
            with open(self.path, "r+b") as fh:
                fh.truncate(self.bytes)  # a chunk half-written when the run stopped
        except OSError as exc:
            raise self._error(exc) from None

    # -- ending ---------------------------------------------------------------------
    def close(self) -> None:
        if self._fh is not None:
            self._fh.close()
            self._fh = None
        if self._writer is not None:
            self._writer.close()
            self._writer = None

    def finish(self) -> None:
        """Rename the complete table over ``out`` with the mode a plain open() would give it."""
        try:
            self.sync()
            self.close()
        except OSError as exc:
            raise self._error(exc) from None
        if self.path == self.out:
            return
        finish_temp(self.path, self.out)
        self.path = self.out

    def abort(self) -> None:
        """Stop writing; a temporary table is removed, a resumable one kept."""
        try:
            self.close()
        except OSError:
            pass
        if not self.resumable and self.path != self.out:
            self.path.unlink(missing_ok=True)


def open_sink(out, rules: RuleSet, *, resumable: bool) -> RowSink:
    """A :class:`RowSink` for ``out`` (checked first with :func:`check_out`)."""
    return RowSink(check_out(out, resumable=resumable), rules, resumable)
