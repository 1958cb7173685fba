"""Every decode under a CPU budget, in worker processes.

A pickle can cost far more CPU to read than its size says, inside C code where
no Python bound, signal handler or memory limit acts: 734 bytes that build
``t_i = (t_{i-1}, t_{i-1})`` through the memo, 60 levels deep, and use ``t_60``
as a dict key make ``SETITEM`` hash 2**60 tuples; a set of 100,000 ints that all
hash alike makes its insertions compare 5e9 times. torch's own ``pickle.loads``
never comes back from the first. Nothing inside a process interrupts C code but
a signal that ends the process, so fxcache decodes in worker processes and lets
the kernel end a worker that overruns its budget:

- a worker is forked the first time a command decodes anything (a command that
  decodes nothing starts none) and reused for every later decode of the command;
  more are forked for a batch that asks for more ``jobs``;
- before each item it arms ``ITIMER_PROF`` at the item's budget
  (:func:`cpu_budget_for`): the ``SIGPROF`` it sends when the process has used
  that much CPU, left at its default action, ends the process wherever it is.
  A soft ``RLIMIT_CPU`` a second past that is the backstop (``SIGXCPU``, at its
  default too);
- the worker sends each item's result as soon as it has it, so when a worker
  dies the parent knows which item it died on: that item is :class:`Unfinished`
  (``over-cpu-budget``), and the items after it go to a fresh worker.

What a worker runs is a *task*: a module-level function of one JSON value that
returns a JSON value, registered by name with :func:`task` (the entry decode of
:mod:`fxcache_core.catalog.pool`, profiles in :mod:`fxcache_core.decode.pgo`).
Requests and results cross the pipes as JSON, never pickle (a task may add a text
sent after its value as it is, :class:`WithText`). Inside a worker the
per-decode memory budget (:mod:`fxcache_core.decode.memlimit`) applies as it
would anywhere.

Costs a fork (a few ms) on a command's first decode, and about 50 us of pipe
round trip per item (items are sent in chunks). Where the platform cannot fork
(no ``os.fork``), tasks run in this process without a CPU bound, and
:data:`CPU_BUDGET_ENFORCED` says so. Mirrors nothing in torch.
"""

from __future__ import annotations

import json
import json.scanner
import math
import os
import select
import signal
import threading
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from fxcache_core.reasons import Reason

try:
    import resource
except ImportError:  # not POSIX
    resource = None  # type: ignore[assignment]

__all__ = ["CPU_BUDGET_ENFORCED", "DEFAULT_CPU_S", "ENV_CPU_S", "UNFINISHED_CODES", "Unfinished",
           "WithText", "close_idle", "cpu_budget_for", "run_all", "run_one", "task"]

DEFAULT_CPU_S = 2.0
"""CPU seconds decoding one item may take whatever its size: a real entry takes
0.1-0.4 ms, a profile less."""
CPU_S_PER_BYTE = 1 / (16 << 20)
"""... plus this many per byte (one second per 16 MiB): reading a real entry runs at
well over 100 MB/s, the pure-Python fallback of the unpickler at 3-30 MB/s on at
most 4 MiB (:data:`~fxcache_core.decode.unpickler.PY_FALLBACK_MAX_BYTES`)."""
ENV_CPU_S = "FXCACHE_DECODE_CPU_S"
"""The environment variable that sets the per-item base (seconds, a positive number;
anything else is ignored)."""

CPU_BUDGET_ENFORCED: bool = hasattr(os, "fork") and hasattr(signal, "setitimer")
"""Whether decoding runs in worker processes under the CPU budget here."""

Task = Callable[[Any], Any]
_TASKS: dict[str, Task] = {}


def task(name: str) -> Callable[[Task], Task]:
    """Register a function as the task ``name`` that workers run: called with one
    JSON value (what :func:`run_one` or :func:`run_all` was given), it returns one
    JSON value (lists, dicts, strings, numbers, None), or a :class:`WithText`. It must be a module-level
    function of a module imported before the first decode (a worker knows the tasks
    registered when it was forked; a worker that lacks one is replaced)."""
    def register(fn: Task) -> Task:
        _TASKS[name] = fn
        return fn
    return register


UNFINISHED_CODES = frozenset({"over-cpu-budget", "decoder-died", "no-decoder"})
"""The reason codes of an :class:`Unfinished` item."""


@dataclass(frozen=True, slots=True)
class Unfinished:
    """An item whose task did not finish, and why: it overran its CPU budget
    (``over-cpu-budget``), the process running it died otherwise (``decoder-died``),
    or no process could be started to run it (``no-decoder``). Evidence neither way
    about the item.

    Attributes:
        reason: one line, with its code.
    """

    reason: Reason


class WithText(NamedTuple):
    """What a task returns to send a text beside its JSON value as it is, not quoted
    inside the JSON (a row that is JSON text already: neither side escapes it again);
    the parent's ``take`` gets it back as a ``WithText``.

    Attributes:
        value: the JSON value.
        text: the text.
    """

    value: Any
    text: str


def cpu_budget_for(n_bytes: int) -> float:
    """CPU seconds decoding an item of ``n_bytes`` may take: the base
    (``$FXCACHE_DECODE_CPU_S``, else :data:`DEFAULT_CPU_S`) plus
    :data:`CPU_S_PER_BYTE` per byte."""
    return _base_cpu_s() + max(0, n_bytes) * CPU_S_PER_BYTE


def _base_cpu_s() -> float:
    raw = os.environ.get(ENV_CPU_S, "")
    try:
        base = float(raw) if raw.strip() else DEFAULT_CPU_S
    except ValueError:
        base = DEFAULT_CPU_S
    if not (math.isfinite(base) and base > 0):
        base = DEFAULT_CPU_S
    return base


# --- messages: a 4-byte length, then JSON (and, for a WithText, a NUL and its text) ---


_COMPACT = json.JSONEncoder(separators=(",", ":"), check_circular=False)


def _encode(obj: Any) -> bytes:
    return _COMPACT.encode(obj).encode()


def _result(out: list) -> bytes:
    """A result message's body: ``[ok, value]`` as JSON; for a :class:`WithText` value,
    ``[ok, value.value]``, a NUL (which JSON text never holds) and the text."""
    got = out[1]
    if type(got) is WithText:
        return _encode([out[0], got.value]) + b"\0" + got.text.encode()
    return _encode(out)


_SCAN = json.scanner.make_scanner(json.JSONDecoder())
"""The JSON decoder's scanner alone: one value at an offset of a str, and where it ends."""


def _parse_result(body: bytearray | bytes) -> tuple[Any, Any]:
    """``(ok, value)`` of a body :func:`_result` wrote (the value a :class:`WithText`
    when it has a text). Raises ValueError (and UnicodeDecodeError) on anything else.

    The body is decoded once and its JSON read by the scanner alone (a result
    message is written compact, with nothing around its value): the parent reads
    one a decoded entry."""
    text = body.decode()
    try:
        (ok, value), end = _SCAN(text, 0)
    except StopIteration:
        raise ValueError("not a result message") from None
    if end == len(text):
        return ok, value
    if text[end] != "\0":
        raise ValueError("not a result message")
    return ok, WithText(value, text[end + 1:])


def _write(fd: int, body: bytes) -> None:
    """One message: ``body``'s length in 4 bytes, then ``body``."""
    data = memoryview(len(body).to_bytes(4, "big") + body)
    while data:
        data = data[os.write(fd, data):]


def _read_exactly(fd: int, n: int) -> bytes | None:
    """``n`` bytes from ``fd`` (nothing read past them), None at its end."""
    parts, left = [], n
    while left:
        try:
            chunk = os.read(fd, min(left, 1 << 20))
        except InterruptedError:  # pragma: no cover - PEP 475 retries
            continue
        if not chunk:
            return None
        parts.append(chunk)
        left -= len(chunk)
    return b"".join(parts)


def _receive(fd: int) -> Any:
    """The next message on ``fd``; raises EOFError at its end (the writer is gone)."""
    head = _read_exactly(fd, 4)
    body = _read_exactly(fd, int.from_bytes(head, "big")) if head is not None else None
    if body is None:
        raise EOFError
    return json.loads(body)


# --- the worker side --------------------------------------------------------------


def _serve(req: int, res: int) -> None:
    """A worker's loop: per request ``[task, [[cpu_s, arg], ...]]``, run the task on
    each item under its CPU budget and send ``[True, value]`` (or ``[False, error]``
    for a task that raised: a bug, reported by the parent) for each; return at the
    end of the request pipe."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C reaches the group; the parent stops us
    for sig in (signal.SIGPROF, signal.SIGXCPU, signal.SIGTERM):
        signal.signal(sig, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGPROF, signal.SIGXCPU, signal.SIGTERM})
    hard = None
    if resource is not None:
        try:
            resource.setrlimit(resource.RLIMIT_CORE, (0, resource.getrlimit(resource.RLIMIT_CORE)[1]))
            hard = resource.getrlimit(resource.RLIMIT_CPU)[1]
        except (OSError, ValueError):
            hard = None
    while True:
        try:
            name, items = _receive(req)
        except EOFError:
            return
        fn = _TASKS[name]
        for cpu_s, arg in items:
            _arm(cpu_s, hard)
            try:
                out: list = [True, fn(arg)]
            except Exception as e:  # noqa: BLE001 - a bug of the task, reported by the parent
                out = [False, f"{type(e).__name__}: {e}"[:500]]
            body = _result(out)
            signal.setitimer(signal.ITIMER_PROF, 0)
            _write(res, body)


def _arm(cpu_s: float, hard: int | None) -> None:
    """Let this process use ``cpu_s`` more seconds of CPU, then end it: ``ITIMER_PROF``
    (``SIGPROF``), and a soft ``RLIMIT_CPU`` (whole seconds) one second past it."""
    signal.setitimer(signal.ITIMER_PROF, max(cpu_s, 0.001))
    if hard is None:
        return
    t = os.times()
    soft = math.ceil(t.user + t.system + cpu_s) + 1
    if hard != resource.RLIM_INFINITY:
        soft = min(soft, hard)
    if soft == _armed_soft[0]:
        return  # the limit in force already (whole seconds: most items of a request)
    try:
        resource.setrlimit(resource.RLIMIT_CPU, (soft, hard))
    except (OSError, ValueError):
        _armed_soft[0] = None
        return
    _armed_soft[0] = soft


_armed_soft: list[int | None] = [None]
"""The soft ``RLIMIT_CPU`` this worker set last (None: not known), so that an item whose
backstop is that same second does not set it again. Only :func:`_arm` sets the limit."""


# --- the parent side --------------------------------------------------------------


class _Worker:
    """A forked worker: its pid, the parent's ends of its two pipes, the tasks it knows,
    and what was read from its result pipe past the last whole message (``buf``)."""

    __slots__ = ("buf", "pid", "req", "res", "tasks")

    def __init__(self, pid: int, req: int, res: int, tasks: frozenset[str]) -> None:
        self.pid, self.req, self.res, self.tasks = pid, req, res, tasks
        self.buf = bytearray()

    def close(self) -> tuple[int, float] | None:
        """Kill it (it holds nothing; one that died already keeps its own status),
        close its pipes and reap it. Returns its wait status and the CPU seconds it
        used (None when it is not this process's child to reap)."""
        try:
            os.kill(self.pid, signal.SIGKILL)
        except OSError:
            pass
        for fd in (self.req, self.res):
            try:
                os.close(fd)
            except OSError:
                pass
        try:
            _, status, usage = os.wait4(self.pid, 0)
        except ChildProcessError:  # SIGCHLD ignored: reaped by the kernel
            return None
        return status, usage.ru_utime + usage.ru_stime


class _Pool:
    """This process's idle workers (a forked child makes its own: the ones it
    inherited belong to its parent)."""

    MAX_IDLE = 8

    def __init__(self) -> None:
        self.pid = os.getpid()
        self.idle: list[_Worker] = []
        self.all: list[_Worker] = []  # idle or lent out: a new worker closes their fds
        self.lock = threading.Lock()

    def take(self, name: str) -> _Worker:
        """An idle worker that knows task ``name``, else a new one. Raises OSError
        when no process can be forked."""
        with self.lock:
            while self.idle:
                w = self.idle.pop()
                if name in w.tasks:
                    return w
                self._drop(w)
            return self._fork()

    def give_back(self, w: _Worker) -> None:
        with self.lock:
            if len(self.idle) < self.MAX_IDLE and os.getpid() == self.pid and not w.buf:
                self.idle.append(w)
            else:
                self._drop(w)

    def drop(self, w: _Worker) -> tuple[int, float] | None:
        with self.lock:
            return self._drop(w)

    def _drop(self, w: _Worker) -> tuple[int, float] | None:
        if w in self.all:
            self.all.remove(w)
        return w.close()

    def _fork(self) -> _Worker:
        import gc

        req_r, req_w = os.pipe()
        res_r, res_w = os.pipe()
        tasks = frozenset(_TASKS)
        gc.freeze()  # the child never collects what it inherited: no copy-on-write of the heap
        try:
            pid = os.fork()
        except OSError:
            for fd in (req_r, req_w, res_r, res_w):
                os.close(fd)
            raise
        finally:
            if os.getpid() == self.pid:
                gc.unfreeze()
        if pid == 0:  # the worker; never returns into the caller's code
            code = 0
            try:
                os.close(req_w)
                os.close(res_r)
                for other in self.all:  # other workers' pipes: they must see their own ends
                    for fd in (other.req, other.res):
                        os.close(fd)
                null = os.open(os.devnull, os.O_RDWR)
                os.dup2(null, 0)
                os.dup2(null, 1)
                _serve(req_r, res_w)
            except BaseException:  # noqa: BLE001 - the parent sees the death and says so
                code = 70
            finally:
                os._exit(code)
        os.close(req_r)
        os.close(res_w)
        w = _Worker(pid, req_w, res_r, tasks)
        self.all.append(w)
        return w

    def close(self) -> None:
        """End every idle worker (at exit: they would end at the end of their pipes anyway)."""
        with self.lock:
            if os.getpid() != self.pid:
                return
            for w in self.idle:
                self._drop(w)
            self.idle.clear()


_pool: _Pool | None = None
_pool_lock = threading.Lock()


def _the_pool() -> _Pool:
    global _pool
    with _pool_lock:
        if _pool is None or _pool.pid != os.getpid():
            if _pool is not None:  # inherited by fork: the parent's workers, not ours to end
                for w in _pool.all:
                    for fd in (w.req, w.res):
                        try:
                            os.close(fd)
                        except OSError:
                            pass
            else:
                import atexit

                atexit.register(lambda: _pool is not None and _pool.close())
            _pool = _Pool()
        return _pool


def close_idle() -> None:
    """End this process's idle workers: the next decode forks a fresh one (from the
    process as it is then). A long-lived caller that wants no idle processes calls
    it; so does a test that changed a module a worker runs."""
    if _pool is not None:
        _pool.close()


def _why_died(ended: tuple[int, float] | None, cpu_s: float) -> Reason:
    """Why a worker died on an item, from its wait status and the CPU it used
    (``ended``; None when it could not be reaped)."""
    status, used = ended if ended is not None else (None, None)
    sig = os.WTERMSIG(status) if status is not None and os.WIFSIGNALED(status) else None
    if status is None or sig in (signal.SIGPROF, signal.SIGXCPU) or (used is not None and used >= cpu_s):
        return Reason(f"over fxcache's CPU budget for decoding ({cpu_s:.3g} s); torch's own "
                      "unpickling of it may never finish", "over-cpu-budget")
    what = signal.Signals(sig).name if sig is not None else f"exit status {os.waitstatus_to_exitcode(status)}"
    return Reason(f"the process decoding it died ({what})", "decoder-died")


def run_one(name: str, arg: Any, n_bytes: int) -> Any:
    """Task ``name`` on ``arg`` (an item of ``n_bytes``, for its budget) in a worker:
    the task's value, or :class:`Unfinished`.

    Raises:
        RuntimeError: the task raised (a bug: tasks report bad input in their value).
    """
    out: list[Any] = [None]
    run_all(name, [arg], [n_bytes], 1, lambda _i, v: out.__setitem__(0, v))
    return out[0]


def run_all(name: str, args: Sequence[Any], sizes: Sequence[int], jobs: int,
            take: Callable[[int, Any], None]) -> None:
    """Task ``name`` on every item of ``args`` (``sizes[i]`` bytes, for its budget) in
    ``jobs`` workers; ``take(i, value)`` in this process as each result comes (not in
    order), ``value`` the task's or :class:`Unfinished`. ``take`` may itself decode
    (another worker runs that).

    Raises:
        RuntimeError: the task raised (a bug: tasks report bad input in their value).
        KeyError: no task ``name`` is registered.
    """
    if name not in _TASKS:
        raise KeyError(name)
    if not args:
        return
    base = _base_cpu_s()
    budgets = [base + max(0, n) * CPU_S_PER_BYTE for n in sizes]
    if not CPU_BUDGET_ENFORCED:
        for i, a in enumerate(args):
            take(i, _TASKS[name](a))
        return
    n = len(args)
    jobs = max(1, min(jobs, n))
    size = max(1, min(256, -(-n // (jobs * 4))))
    queue: deque[list[int]] = deque(list(range(i, min(i + size, n))) for i in range(0, n, size))
    _Batch(_the_pool(), name, args, budgets, take).run(queue, jobs)


_READ_BYTES = 1 << 16
"""What the parent reads from a result pipe at once (a pipe's whole buffer, on Linux):
every whole message read is taken from one read (a worker that got ahead has written
several)."""


class _Batch:
    """One :func:`run_all`: chunks of item indices sent to workers, one chunk in flight
    per worker (the worker reads a whole request before it writes: no pipe deadlock).
    The result pipes are polled by one poller for the batch, and each read takes as many
    bytes as are there, so one wake-up takes every result a worker has written."""

    def __init__(self, pool: _Pool, name: str, args: Sequence[Any], budgets: list[float],
                 take: Callable[[int, Any], None]) -> None:
        self.pool, self.name, self.args, self.budgets, self.take = pool, name, args, budgets, take
        self.busy: dict[int, tuple[_Worker, deque[int]]] = {}  # res fd -> (worker, items not answered)
        self.poller = select.poll()

    def run(self, queue: deque[list[int]], jobs: int) -> None:
        try:
            while queue or self.busy:
                while queue and len(self.busy) < jobs:
                    if not self._start(queue.popleft(), queue):
                        break
                if not self.busy:
                    break
                for fd, _ in self.poller.poll():
                    if fd in self.busy:
                        self._answer(fd, queue)
        except BaseException:
            for w, _ in self.busy.values():
                self.pool.drop(w)
            self.busy.clear()
            raise

    def _start(self, chunk: list[int], queue: deque[list[int]]) -> bool:
        """Send ``chunk`` to a worker; False when none can be had (then every item
        left is :class:`Unfinished` ``no-decoder``)."""
        while True:
            try:
                w = self.pool.take(self.name)
            except OSError as e:
                why = Reason(f"no process could be started to decode it under fxcache's CPU budget: "
                             f"{e.strerror or e}", "no-decoder")
                for i in [*chunk, *(j for c in queue for j in c)]:
                    self.take(i, Unfinished(why))
                queue.clear()
                return False
            try:
                _write(w.req, _encode([self.name, [[self.budgets[i], self.args[i]] for i in chunk]]))
            except OSError:  # it died idle: another
                self.pool.drop(w)
                continue
            self.busy[w.res] = (w, deque(chunk))
            self.poller.register(w.res, select.POLLIN)
            return True

    def _done(self, fd: int) -> _Worker:
        """Stop polling ``fd``: its worker answered its chunk, or died."""
        w, _ = self.busy.pop(fd)
        self.poller.unregister(fd)
        return w

    def _answer(self, fd: int, queue: deque[list[int]]) -> None:
        """Read what worker ``fd`` wrote and take every whole result in it; at the end of
        its pipe, or on a message that is not JSON, the item it was on is Unfinished."""
        w, left = self.busy[fd]
        buf = w.buf
        try:
            data = os.read(fd, _READ_BYTES)
        except InterruptedError:  # pragma: no cover - PEP 475 retries
            return
        except OSError:
            data = b""
        if not data:
            self._died(fd, w, left, queue)
            return
        buf += data
        at = 0
        while len(buf) - at >= 4:
            end = at + 4 + int.from_bytes(buf[at:at + 4], "big")
            if len(buf) < end:
                break
            try:
                ok, value = _parse_result(buf[at + 4:end])
            except ValueError:
                self._died(fd, w, left, queue)
                return
            at = end
            i = left.popleft()
            if not ok:
                raise RuntimeError(f"decode task {self.name!r} failed: {value}")
            self.take(i, value)
            if not left:
                del buf[:at]
                self.pool.give_back(self._done(fd))
                return
        del buf[:at]

    def _died(self, fd: int, w: _Worker, left: deque[int], queue: deque[list[int]]) -> None:
        """Worker ``w`` ended (or wrote garbage) on the first item of ``left``: that item is
        :class:`Unfinished`, the ones after it go back to the queue."""
        self._done(fd)
        w.buf.clear()
        ended = self.pool.drop(w)
        i = left.popleft()
        self.take(i, Unfinished(_why_died(ended, self.budgets[i])))
        if left:
            queue.appendleft(list(left))
