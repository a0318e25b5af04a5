"""Forked helper processes for the exact engine: one pool, one set of rules for all of them.

The exact engine's solvers (the value tables, the target tables, the decision tables,
the loss accounting) split a level of states between this process and a few forked
copies of it. Forking shares the tables already in memory (the children read them
without a copy and write their parts into anonymous shared memory), which a pool
that pickles its work cannot do. What every such split needs is here, once:

- how many processes (:func:`default_jobs`, :func:`fork_workers`: one when the work
  is small, the system cannot fork, or this process is a daemon, which may not have
  children);
- children that die with this process, even when it is killed by ``kill -9``
  (:func:`watch_parent`), and ignore Ctrl-C (this process handles it and stops them);
- a failure in a child raised here in one line: a ``ValueError`` as itself (bad
  input), anything else as a ``RuntimeError`` naming the work; a child that died
  is a ``RuntimeError`` too, never a hang;
- a bounded shutdown (:meth:`ForkPool.close`, as the runner's ``close_pool``): work
  done, the children are asked to stop and given :data:`JOIN_SECONDS`; an error or
  Ctrl-C, they are terminated at once, then killed if they ignore it.

:class:`ForkPool` keeps its children between tasks (the solver sends one per level);
:func:`run_parts` forks for one task split into parts, this process taking part 0;
:func:`compile_beside` compiles numba kernels in a forked process while this one
works on (the first run on a machine, where numba's disk cache is empty);
:class:`Beside` runs a command's independent steps one after another in a forked
process while this one does the rest, and hands back each step's result when asked.

>>> run_parts(lambda part: part * part, 3, what="squares")
[0, 1, 4]
>>> run_parts(lambda part: 1 // (part - 1), 2, what="a division")      # part 1 fails in its child
Traceback (most recent call last):
...
RuntimeError: a division worker failed: ZeroDivisionError: integer division or modulo by zero
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from typing import Any, Callable

__all__ = ["ForkPool", "run_parts", "shared_array", "fork_workers", "default_jobs", "default_workers", "can_fork", "watch_parent",
           "ready_kernels", "compile_beside", "Compiling", "kernels_cached", "Beside", "PARENT_POLL_SECONDS",
           "JOIN_SECONDS", "COMPILE_LOCK_SECONDS", "Takes", "STUCK_SECONDS"]

PARENT_POLL_SECONDS = 0.5
"""How often a child checks that the process that forked it is alive."""

JOIN_SECONDS = 10.0
"""How long a finished child is given to exit, and a terminated one to die, before SIGKILL."""


def can_fork() -> bool:
    """Can this process fork helpers (a system with ``fork``, and not a daemon process)?

    >>> isinstance(can_fork(), bool)
    True
    """
    import multiprocessing

    return hasattr(os, "fork") and not multiprocessing.current_process().daemon


def default_jobs() -> int:
    """Processes the exact engine uses by default (its ``jobs=None``): the CPUs available, at most 2.

    >>> default_jobs() in (1, 2)
    True
    """
    try:
        n = len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        n = os.cpu_count() or 1
    return max(1, min(2, n))


default_workers = default_jobs
"""Deprecated: the earlier name of :func:`default_jobs` (``jobs`` is the word everywhere);
kept importable for the modules and scripts that still use it."""


def fork_workers(workers: int, items: int = 0, min_items: int = 0) -> int:
    """The processes to share ``items`` between: ``workers``, or 1 when there are fewer
    than ``min_items`` (forking costs more than it saves) or this process cannot fork.

    >>> fork_workers(2, items=10, min_items=1000)
    1
    >>> fork_workers(2, items=5000, min_items=1000) == (2 if can_fork() else 1)
    True
    """
    if workers <= 1 or items < min_items or not can_fork():
        return 1
    return int(workers)


def watch_parent(parent_pid: int) -> None:
    """Make this child exit when ``parent_pid`` dies, even by ``kill -9``.

    A child left behind by a killed parent would compute on (and hold its memory)
    for as long as its work takes. On Linux the kernel sends SIGKILL at once
    (``PR_SET_PDEATHSIG``); a daemon thread also polls the parent id, which covers
    other systems and a parent that died before the request.

    >>> watch_parent(os.getppid())   # this process's parent is alive: nothing happens
    """
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL, 0, 0, 0)   # 1 = PR_SET_PDEATHSIG
    except (OSError, AttributeError):  # pragma: no cover - not Linux
        pass
    if os.getppid() != parent_pid:  # pragma: no cover - the parent is already gone
        os._exit(1)

    def poll():  # pragma: no cover - runs in the child
        while os.getppid() == parent_pid:
            time.sleep(PARENT_POLL_SECONDS)
        os._exit(1)

    threading.Thread(target=poll, name="watch-parent", daemon=True).start()


def _serve(conn, inherited, parent_pid: int, serve: Callable[[Any], Any]) -> None:  # pragma: no cover - child
    """A child's loop: answer each task with ``("ok", result)`` or the error, until ``None``."""
    watch_parent(parent_pid)
    try:
        signal.signal(signal.SIGINT, signal.SIG_IGN)    # Ctrl-C is the parent's to handle
    except ValueError:
        pass
    for c in inherited:             # the parent's ends of the other pipes: else EOF never comes
        c.close()
    while True:
        try:
            task = conn.recv()
        except (EOFError, OSError):
            os._exit(1)
        if task is None:
            break
        reply: tuple
        try:
            reply = ("ok", serve(task))
        except BaseException as exc:  # reported, raised in the parent
            reply = ("error", isinstance(exc, ValueError), f"{type(exc).__name__}: {exc}", str(exc))
        conn.send(reply)
    conn.close()


class ForkPool:
    """``n`` forked children that run ``serve(task)`` for each task sent to them.

    ``serve`` is inherited by the fork, not pickled: it may be a closure over large
    arrays (shared memory for what the children write). Tasks and results travel
    through pipes (small: indices in, sums out). ``what`` names the work in errors.
    As a context manager it closes itself: bounded either way, at once on an error.

    >>> with ForkPool(2, lambda task: task + 1, what="adding") as pool:
    ...     pool.submit(0, 10); pool.submit(1, 20)
    ...     pool.gather()
    [11, 21]
    """

    def __init__(self, n: int, serve: Callable[[Any], Any], *, what: str):
        import multiprocessing

        self.what = what
        self._kids: list = []
        self._busy: list[int] = []
        ctx = multiprocessing.get_context("fork")
        parent = os.getpid()
        try:
            for _ in range(n):
                parent_end, child_end = ctx.Pipe()
                inherited = [c for _, c in self._kids] + [parent_end]
                p = ctx.Process(target=_serve, args=(child_end, inherited, parent, serve), daemon=True)
                p.start()
                child_end.close()
                self._kids.append((p, parent_end))
        except BaseException:
            self.close(finished=False)
            raise

    def __len__(self) -> int:
        return len(self._kids)

    def submit(self, i: int, task) -> None:
        """Send ``task`` (not None) to child ``i``; :meth:`gather` collects the answer."""
        self._kids[i][1].send(task)
        self._busy.append(i)

    def gather(self) -> list:
        """The results of the tasks submitted since the last gather, in their order.

        Every child is heard before anything is raised (the pool stays usable); then
        the first failure is raised: a child's ``ValueError`` as itself, any other
        error, or a child that died, as a ``RuntimeError`` naming the work.
        """
        busy, self._busy = self._busy, []
        out: list = []
        failure: Exception | None = None
        for i in busy:
            p, conn = self._kids[i]
            try:
                reply = conn.recv()
            except (EOFError, OSError):
                p.join(1.0)
                reply = ("died", p.exitcode)
            if reply[0] == "ok":
                out.append(reply[1])
                continue
            out.append(None)
            if failure is None:
                if reply[0] == "died":
                    failure = RuntimeError(f"{self.what}: a worker process died (exit code {reply[1]})")
                elif reply[1]:
                    failure = ValueError(reply[3])
                else:
                    failure = RuntimeError(f"{self.what} worker failed: {reply[2]}")
        if failure is not None:
            raise failure
        return out

    def close(self, finished: bool = True, timeout: float = JOIN_SECONDS) -> None:
        """Stop the children, every wait bounded: ``finished``, they are asked to stop and
        given ``timeout`` seconds; otherwise (an error, Ctrl-C) they are terminated at once.
        A child that outlives either is killed (SIGKILL cannot be ignored)."""
        kids, self._kids = self._kids, []
        for p, conn in kids:
            if finished:
                try:
                    conn.send(None)
                except OSError:
                    pass
            elif p.is_alive():
                p.terminate()
        deadline = time.monotonic() + timeout
        for p, conn in kids:
            p.join(max(0.1, deadline - time.monotonic()))
            if p.is_alive():
                p.terminate()
                p.join(timeout)
            if p.is_alive():
                p.kill()
                p.join(timeout)
            conn.close()

    def __enter__(self) -> ForkPool:
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        self.close(finished=exc_type is None)


def shared_array(shape, dtype="float64"):
    """A zeroed array in anonymous shared memory: what one process writes there, the
    processes it forks (before or after) read, and what they write, it reads.

    >>> a = shared_array((2, 3), "int64")
    >>> a.shape, a.dtype.name, int(a.sum())
    ((2, 3), 'int64', 0)
    """
    import math
    import mmap

    import numpy as np

    dtype = np.dtype(dtype)
    shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)
    n = math.prod(int(k) for k in shape)
    buf = mmap.mmap(-1, max(n * dtype.itemsize, 8))
    return np.frombuffer(buf, dtype=dtype, count=n).reshape(shape)


def run_parts(work: Callable[[int], Any], n_parts: int, *, what: str) -> list:
    """``[work(0), ..., work(n_parts - 1)]``: part 0 in this process, the others at the same
    time in forked children (``n_parts`` 1: no fork). Failures as :meth:`ForkPool.gather`.

    >>> run_parts(lambda part: os.getpid(), 1, what="pids") == [os.getpid()]
    True
    """
    if n_parts <= 1:
        return [work(0)]
    with ForkPool(n_parts - 1, work, what=what) as pool:
        for part in range(1, n_parts):
            pool.submit(part - 1, part)
        first = work(0)
        return [first] + pool.gather()


# -- compiling beside -------------------------------------------------------------------
COMPILE_LOCK_SECONDS = 300
"""A compilation lock file older than this is taken for a dead compiler's and ignored."""


def _index_path(kernel) -> str | None:
    """The file numba's disk cache keeps a kernel's index in (None: another numba layout)."""
    try:
        return kernel._cache._cache_file._index_path
    except AttributeError:  # pragma: no cover - another numba layout
        return None


def kernels_cached(*kernels) -> bool:
    """Has numba's disk cache machine code of every one of these ``cache=True`` kernels
    for this machine (an earlier process compiled them, or the install did)? An index
    numba would not use here is not enough: one written by another numba version, for
    another version of the source, or holding only other CPUs' code (a wheel built
    elsewhere). True for an object numba does not cache the usual way (nothing to
    compile beside for it).

    >>> kernels_cached()
    True
    """
    for k in kernels:
        path = _index_path(k)
        if path is None or path in _CACHED_HERE:
            continue
        if not os.path.exists(path) or not _index_serves_this_machine(k):
            return False
        _CACHED_HERE.add(path)
    return True


_CACHED_HERE: set = set()
"""The index files :func:`kernels_cached` found serving this machine (they stay so)."""


def _index_serves_this_machine(kernel) -> bool:
    """Has the kernel's cache index an entry numba would load here (its own version, the
    source as it is, this CPU)? True where numba's layout is another (the file is all we know)."""
    try:
        overloads = kernel._cache._cache_file._load_index()      # {} for another version or source
        machine = kernel.targetctx.codegen().magic_tuple()
    except Exception:  # pragma: no cover - another numba layout
        return True
    return any(isinstance(key, tuple) and len(key) > 1 and key[1] == machine for key in overloads)


def _take_lock(path: str) -> bool:
    """Create the lock file ``path`` (this process holds it), replacing one older than
    :data:`COMPILE_LOCK_SECONDS`; False if another process holds it or it cannot be written."""
    for _ in range(2):
        try:
            os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
            return True
        except FileExistsError:
            try:
                if time.time() - os.path.getmtime(path) < COMPILE_LOCK_SECONDS:
                    return False
                os.unlink(path)                 # a dead compiler's: taken over
            except OSError:
                return False
        except OSError:                         # a cache folder this process cannot write
            return False
    return False  # pragma: no cover - replaced and taken again in between


class Compiling:
    """A compilation started by :func:`compile_beside`: ``pid`` the forked compiler, or
    None when nothing was started (compiled already, no fork here, or another process
    holds the lock). A thread of this process reaps the child as soon as it ends, so it
    never lingers as a zombie, whether or not anyone waits.

    >>> nothing = Compiling()
    >>> nothing.running(), nothing.wait(), nothing(), nothing.stop()
    (False, False, False, None)
    """

    def __init__(self, pid: int | None = None, lock: str | None = None):
        self.pid = pid
        self.exitcode: int | None = None
        self._done = threading.Event()
        if pid is None:
            self._done.set()
            return
        threading.Thread(target=self._reap, args=(lock,), name="compile-beside-reaper", daemon=True).start()

    def _reap(self, lock: str | None) -> None:
        try:
            _, status = os.waitpid(self.pid, 0)
            self.exitcode = os.waitstatus_to_exitcode(status)
        except ChildProcessError:  # pragma: no cover - reaped elsewhere: its outcome is unknown
            self.exitcode = None
        if lock is not None and (self.exitcode is None or self.exitcode < 0):
            try:                              # killed before it could remove its lock
                os.unlink(lock)
            except OSError:
                pass
        self._done.set()

    def running(self) -> bool:
        """Is the forked compiler still at work (never blocks)?"""
        return not self._done.is_set()

    def wait(self, timeout: float | None = None) -> bool:
        """Wait for the compiler (at most ``timeout`` seconds); True if it compiled (the
        code is in numba's cache: the first call here loads it), False if nothing was
        compiled beside or it failed (the first call here compiles, as without it)."""
        self._done.wait(timeout)
        return self.exitcode == 0

    def stop(self) -> None:
        """End the compiler at once (its caller failed before needing it: nothing is left
        running behind an error); numba writes its cache files whole, so a compilation
        cut short leaves none."""
        if self.pid is not None and self.running():
            try:
                os.kill(self.pid, signal.SIGKILL)
            except ProcessLookupError:  # pragma: no cover - ended in between
                pass
            self._done.wait(JOIN_SECONDS)

    __call__ = wait


def compile_beside(compile: Callable[[], Any], *, kernels=(), lock: bool = False, nice: int = 0) -> Compiling:
    """Run ``compile()`` in a forked process, so this one goes on with its own work
    (a solve, a table build, the first games in NumPy) while numba compiles; the
    compiled code lands in numba's disk cache (``cache=True`` kernels), where this
    process then loads it (:meth:`Compiling.wait` before the first call).

    Nothing is started (a :class:`Compiling` with ``pid`` None) when every one of
    ``kernels`` is in numba's cache already (:func:`kernels_cached`), the system cannot
    fork, or ``lock`` is asked and another process holds it: the lock
    (a file beside the first kernel's cache index) makes one compiler per machine, for
    runs and workers that start together. The child removes it when done; a lock left by
    a killed compiler is ignored after :data:`COMPILE_LOCK_SECONDS`. A failure in the
    child only means nothing was compiled beside: the first call compiles in place.
    ``nice`` lowers the compiler's priority (an ``os.nice`` increment): for code the
    runs after this one need more than this one does, it takes only the CPU left over.

    The child does not die with this process: if this one ends first, the compilation
    still lands in the cache for the next run (finite work, a few seconds). For that
    reason a daemon process (a pool's worker) may start one too: the child is not one
    of its workers, and is not left computing anything once compiled.

    >>> done = compile_beside(lambda: None)
    >>> done.wait() == (done.pid is not None)
    True
    """
    if kernels and kernels_cached(*kernels):
        return Compiling()
    if not hasattr(os, "fork"):  # pragma: no cover - not POSIX
        return Compiling()
    lock_path = None
    if lock:
        index = next((p for p in map(_index_path, kernels) if p is not None), None)
        if index is None:
            return Compiling()
        lock_path = index + ".compiling"
        if not _take_lock(lock_path):
            return Compiling()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the forked compiler
        code = 1
        try:
            _detach_output()
            if nice:
                os.nice(nice)
            compile()
            code = 0
        except BaseException:
            pass
        finally:
            try:
                if lock_path is not None:
                    os.unlink(lock_path)
            finally:
                os._exit(code)
    return Compiling(pid, lock_path)


def _detach_output() -> None:
    """Point this (forked) process's standard streams at the null device. A compiler
    that outlives its command must not hold the command's pipes: a caller reading
    them (``$(yahtzee-sim ...)``, ``| head``, ``subprocess.run(capture_output=True)``)
    would wait for the compilation as well. Its output is never wanted: a failure only
    means the first call compiles in place."""
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    os.close(null)


STUCK_SECONDS = 120.0
"""How long :meth:`Beside.result` waits while no process of this command uses any CPU
before it takes the child for stuck (a deadlock: a slow child, or one waiting for a
compilation that is running, uses CPU somewhere in the command)."""

STUCK_POLL_SECONDS = 1.0
"""How often :meth:`Beside.result` looks at the CPU used while it waits."""


class _Progress:
    """Has any descendant of this process used CPU lately (Linux's ``/proc``; elsewhere
    never stalled)? :meth:`stalled` is True once the CPU time of every process below this
    one has stayed the same for :data:`STUCK_SECONDS`."""

    def __init__(self):
        self._cpu = _descendants_cpu()
        self._since = time.monotonic()

    def stalled(self) -> bool:
        cpu = _descendants_cpu()
        now = time.monotonic()
        if cpu is None or cpu != self._cpu:
            self._cpu, self._since = cpu, now
            return False
        return now - self._since >= STUCK_SECONDS


def _descendants_cpu() -> int | None:
    """Clock ticks of CPU (user and system) used so far by every living process below this
    one, or None where ``/proc`` cannot tell."""
    me = os.getpid()
    parent_of: dict = {}
    ticks: dict = {}
    try:
        names = os.listdir("/proc")
    except OSError:
        return None
    for entry in names:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as f:
                fields = f.read().rsplit(b")", 1)[1].split()
        except (OSError, IndexError):      # ended meanwhile, or not readable
            continue
        pid = int(entry)
        parent_of[pid] = int(fields[1])
        ticks[pid] = int(fields[11]) + int(fields[12])
    if me not in parent_of:
        return None
    total = 0
    for pid, t in ticks.items():
        up = parent_of.get(pid)
        while up is not None and up != me and up > 1:
            up = parent_of.get(up)
        if up == me:
            total += t
    return total


# -- steps beside -----------------------------------------------------------------------
def ready_kernels() -> None:
    """Import numba and load its NumPy support, once a process (about 0.6 CPU s, which
    the first compiled kernel a process loads would otherwise spend). Called before
    forking processes that all run kernels, the children inherit it instead of each
    paying it again. Without numba: nothing.

    numba would import ``scipy.linalg.cython_blas`` with its support (0.15-0.3 s) only
    to choose how jitted code computes ``np.dot`` of two 1-D float arrays (BLAS or a
    plain loop), which our kernels never do. Unless scipy.linalg is already loaded, that
    import is made to fail while the support loads: in this process numba's 1-D
    ``np.dot`` then uses the plain loop; every other BLAS or LAPACK use imports scipy as
    usual.

    >>> ready_kernels()
    """
    name = "scipy.linalg.cython_blas"
    try:
        from numba.core.registry import cpu_target
    except ImportError:                     # pragma: no cover - no numba, or another layout:
        return                              # numba loads its support itself, as usual
    hidden = name not in sys.modules
    if hidden:
        sys.modules[name] = None            # "import name" raises ImportError
    try:
        cpu_target.target_context.refresh()
    except Exception:                       # pragma: no cover - a numba whose loading differs
        pass                                # is left to load it itself on first use
    finally:
        if hidden and sys.modules.get(name, 0) is None:
            del sys.modules[name]


class Beside:
    """``steps`` (``(name, step)`` pairs) run one after another in a forked process while
    this one works on; :meth:`result` hands back a step's return value (waiting for it).

    For a command with independent parts (the benchmark: optimal play's solve and the
    loss accounting beside the strategies' distributions), the second core does the
    steps: their tables land in the disk caches as usual (a later step here loads them)
    and their return values travel back pickled. The child is an ordinary fork, not a
    pool's daemon, so its steps split their own work over processes as they would here
    (the same sums, in the same order). It dies with this process (:func:`watch_parent`)
    and ignores Ctrl-C; :meth:`stop` ends it at once. ``nice`` lowers its priority (an
    ``os.nice`` increment): the steps then take the CPU this process leaves, and its
    own work, the more urgent, is not slowed by them. ``kernels``: both processes will
    run compiled kernels, so numba is set up here first (:func:`ready_kernels`), once.

    A step's ``ValueError`` is raised by :meth:`result` as itself (bad input, a game too
    large: the same answer as here); anything else, a child that died, or no child at
    all (no fork on this system, a daemon process) is a ``RuntimeError``, on which the
    caller does the step itself.

    >>> b = Beside([("square", lambda: 7 * 7), ("bad", lambda: int("x"))], what="a test")
    >>> b.result("square")
    49
    >>> b.result("bad")
    Traceback (most recent call last):
    ...
    ValueError: invalid literal for int() with base 10: 'x'
    >>> b.result("never")               # not a step: said at once, not waited for
    Traceback (most recent call last):
    ...
    RuntimeError: a test: never is not one of the steps beside
    >>> b.stop()
    """

    def __init__(self, steps: list, *, what: str, nice: int = 0, kernels: bool = False):
        import multiprocessing

        self.what = what
        self.steps = tuple(name for name, _ in steps)
        self._got: dict = {}
        self._conn: Any = None
        self._child = Compiling()
        if not steps or not can_fork():
            return
        if kernels:
            ready_kernels()
        receive, send = multiprocessing.Pipe(duplex=False)
        parent = os.getpid()
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child: runs the steps, sends each outcome
            try:
                receive.close()
                watch_parent(parent)
                if nice:
                    os.nice(nice)
                try:
                    signal.signal(signal.SIGINT, signal.SIG_IGN)    # Ctrl-C is the parent's to handle
                except ValueError:
                    pass
                for name, step in steps:
                    try:
                        reply = (name, "ok", step())
                    except BaseException as exc:
                        reply = (name, "error", isinstance(exc, ValueError), f"{type(exc).__name__}: {exc}",
                                 str(exc))
                    try:
                        send.send(reply)
                    except Exception as exc:  # a result that does not pickle: the caller does it itself
                        send.send((name, "error", False, f"its result could not be sent back: {exc}", ""))
            finally:
                os._exit(0)
        send.close()
        self._conn = receive
        self._child = Compiling(pid)          # reaped by a thread as soon as it ends

    def result(self, name: str) -> Any:
        """What step ``name`` returned, waiting for it (see the class docstring for failures).

        A wait in which no process of this command uses any CPU for :data:`STUCK_SECONDS`
        (the child and its own processes, a compilation it may be waiting for) means the
        child is stuck, not slow: it is stopped, and the ``RuntimeError`` has the caller
        do the step itself, rather than wait for ever."""
        if name not in self.steps:            # not to be waited for: it never comes
            raise RuntimeError(f"{self.what}: {name} is not one of the steps beside")
        watch = None                          # made at the first wait that finds nothing
        while name not in self._got and self._conn is not None:
            try:
                if not self._conn.poll(STUCK_POLL_SECONDS):
                    watch = watch or _Progress()
                    if watch.stalled():
                        self.stop()
                        raise RuntimeError(f"{self.what}: {name}: the process beside was stuck (no CPU used "
                                           f"for {STUCK_SECONDS:g} s); stopped")
                    continue
                reply = self._conn.recv()
            except (EOFError, OSError):
                self._close()
                break
            self._got[reply[0]] = reply[1:]
        got = self._got.get(name)
        if got is None:
            raise RuntimeError(f"{self.what}: {name} was not done beside (no process, or it ended)")
        if got[0] == "ok":
            return got[1]
        if got[1]:
            raise ValueError(got[3])
        raise RuntimeError(f"{self.what}: {name} failed beside: {got[2]}")

    def _close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def stop(self) -> None:
        """End the child at once (its steps are no longer wanted: an error here, or done)."""
        self._child.stop()
        self._close()


TAKE_WAIT_SECONDS = 120.0
"""Longest wait for :class:`Takes`'s lock (held for microseconds: a wait this long means
its holder was killed holding it)."""


class Takes:
    """Items this process and a forked one (:class:`Beside`) share out, each done once:
    :meth:`take` gives an item to the first process that asks for it (one flag a item in
    shared memory, under a lock; made before the fork). Where nothing can fork, every
    take succeeds.

    For work both can do, in either order: the child takes the items from the first,
    this process (once its own work is done) from the last, and they meet.

    >>> t = Takes(3)
    >>> t.take(2), t.take(2), t.take(0)
    (True, False, True)
    """

    def __init__(self, n: int):
        import mmap

        self._flags = mmap.mmap(-1, max(n, 1))
        self._lock: Any = None
        if can_fork():
            import multiprocessing

            self._lock = multiprocessing.get_context("fork").Lock()

    def take(self, i: int) -> bool:
        """Item ``i`` is this process's to do (True), or another process took it (False)."""
        if self._lock is not None and not self._lock.acquire(timeout=TAKE_WAIT_SECONDS):
            raise RuntimeError("a process died while taking an item")
        try:
            if self._flags[i]:
                return False
            self._flags[i] = 1
            return True
        finally:
            if self._lock is not None:
                self._lock.release()
