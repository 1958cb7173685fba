"""Expensive session values (real caches, torch's answers) built on background threads.

A torch build or a batch of oracle queries runs in a subprocess and costs tens of
seconds to minutes of one core, while the test process waits for it. On a 2-core box
the tests that compile nothing (run first) and those builds can use both cores: at the
end of collection, conftest starts the build of every value a collected test asks for
(:meth:`Background.start`), and the session fixture of that value waits for it
(:meth:`Background.get`). The values are the same as building them in the fixture:
only *when* they are built changes.

A builder is a function of no arguments registered with :func:`builder`; ``needs``
names the values it reads (started before it, so a builder never waits on one queued
behind it). Builders run in the order started, ``jobs`` at a time, each under the
:class:`demo.build_cache.BuildOptions` the session gives :meth:`Background.configure`
(its torch processes forked from the zygote), with the environment as it was when
the build started.

A job (:meth:`Background.later`) runs on the same threads, as a build does, behind
every ready build of a lower order: the tests' ``fxcache match`` runs on the real cache
(``tests.harness.match_runs``), made ahead of the tests that read them.
"""

from __future__ import annotations

import contextvars
import itertools
import os
import queue
import tempfile
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import replace
from pathlib import Path
from typing import Any

from demo.build_cache import BuildOptions, use_build_options
from tests.harness.cleanup import remove_at_exit

_BUILDERS: dict[str, tuple[Callable[[], Any], tuple[str, ...], int]] = {}


def builder(name: str, needs: tuple[str, ...] = (), order: int = 0
            ) -> Callable[[Callable[[], Any]], Callable[[], Any]]:
    """Register ``fn`` as the builder of the value ``name`` (a fixture of the same name
    returns ``BACKGROUND.get(name)``); builds start by ``order``, lowest first."""

    def register(fn: Callable[[], Any]) -> Callable[[], Any]:
        _BUILDERS[name] = (fn, needs, order)
        return fn

    return register


def default_jobs() -> int:
    """Background builds at a time: ``FXCACHE_TEST_JOBS``, else as many as the machine
    has cores (the test process mostly waits on subprocesses too)."""
    if os.environ.get("FXCACHE_TEST_JOBS"):
        return max(1, int(os.environ["FXCACHE_TEST_JOBS"]))
    return max(1, os.cpu_count() or 2)


_BUILDING: contextvars.ContextVar[tuple[Background, str] | None] = contextvars.ContextVar(
    "fxcache_build", default=None
)
"""The build the current thread (or a thread started in a copy of its context) works for."""


def charge_cpu(seconds: float) -> None:
    """Add ``seconds`` of CPU to the build this thread works for (none, or a job: nothing).
    The zygote's children are reaped by the kernel, so no ``getrusage`` of this process
    ever counts them: :meth:`tests.harness.zygote.Zygote.run` charges what each reports."""
    current = _BUILDING.get()
    if current is not None:
        bg, name = current
        with bg._lock:
            bg.cpu[name] = bg.cpu.get(name, 0.0) + seconds


def _run_build(options: BuildOptions, env: dict[str, str], fn: Callable[[], Any]) -> Any:
    """Run ``fn`` with its torch processes started as ``options`` say, from ``env`` (the
    environment when the build was started), whatever a test running meanwhile does to
    ``os.environ``."""
    with use_build_options(replace(options, base_env=env)):
        return fn()


class Background:
    """The values being built; see the module docstring.

    ``jobs`` worker threads take the ready builds (those whose needs are done) lowest
    ``order`` first, so a long chain registered with a low order (the models) goes ahead
    of short builds queued before it."""

    def __init__(self, jobs: int | None = None) -> None:
        self._jobs = jobs or default_jobs()
        self._futures: dict[str, Future[Any]] = {}
        self._lock = threading.Lock()
        self._ready: queue.PriorityQueue[tuple[int, int, str, dict[str, str] | None]] = queue.PriorityQueue()
        self._seq = itertools.count()
        self._workers: list[threading.Thread] = []
        self._fns: dict[str, Callable[[], Any]] = {}
        self.spans: dict[str, tuple[float, float]] = {}
        """name -> (start, end) of each finished build, ``time.monotonic()`` seconds."""
        self.cpu: dict[str, float] = {}
        """name -> CPU seconds of the build's processes forked from the zygote, their own
        and their children's (g++), as :func:`charge_cpu` added them up."""
        self.job_seconds = 0.0
        """Seconds the build threads spent on the jobs of :meth:`later`."""
        self._building = 0
        """How many threads are running a build (not a job) now."""
        self.options = BuildOptions()
        """How every build's torch processes start (:meth:`configure`)."""

    def configure(self, options: BuildOptions) -> None:
        """Start every build from now on under ``options`` (``base_env`` is each build's own:
        the environment when it starts)."""
        self.options = options

    def names(self) -> list[str]:
        """Every registered value, in the order their builds start."""
        return sorted(_BUILDERS, key=lambda n: _BUILDERS[n][2])

    def start(self, name: str) -> None:
        """Start building ``name`` (and first what it needs) unless already started. A
        build that needs others is ready only once they are done, so it never holds a
        worker thread while it waits."""
        fn, needs, order = _BUILDERS[name]
        for dep in needs:
            self.start(dep)
        with self._lock:
            if name in self._futures:
                return
            self._futures[name] = Future()
        self._queue(name, fn, needs, order)

    def later(self, fn: Callable[[], Any], needs: tuple[str, ...] = (), order: int = 100) -> Future[Any]:
        """Run ``fn`` on a build thread once the builds ``needs`` are done, behind every
        ready build of a lower ``order``, under the build options and with the environment
        as it is now, as a build: a job whose result only its caller reads (no value, no
        span). Whoever wants the result before a thread took the job may take it back
        (``Future.cancel()``: true while no thread has started it) and do the work itself."""
        for dep in needs:
            self.start(dep)
        with self._lock:
            key = f"job-{next(self._seq)}"
            fut: Future[Any] = Future()
            self._futures[key] = fut
        self._queue(key, fn, needs, order)
        return fut

    def _queue(self, key: str, fn: Callable[[], Any], needs: tuple[str, ...], order: int) -> None:
        """Queue ``key``'s ``fn`` once ``needs`` are done; start the worker threads. Among the
        ready ones of an ``order``, the first queued runs first (its place is taken now, not
        when its needs are done)."""
        with self._lock:
            self._fns[key] = fn
            deps = [self._futures[d] for d in needs]
            seq = next(self._seq)
            while len(self._workers) < self._jobs:
                t = threading.Thread(target=self._work, name="fxcache-build", daemon=True)
                t.start()
                self._workers.append(t)
        env = dict(os.environ)
        pending = [len(deps)]

        def ready(_: Any = None) -> None:
            with self._lock:
                pending[0] -= 1
                if pending[0] > 0:
                    return
            self._ready.put((order, seq, key, env))

        if not deps:
            pending[0] = 1
            ready()
        for d in deps:
            d.add_done_callback(ready)

    def serves_jobs(self) -> bool:
        """Whether a thread is free for the jobs of :meth:`later` (idle, or on a job), not
        every one on a build: a job queued and ready starts soon."""
        with self._lock:
            return len(self._workers) > self._building

    def _work(self) -> None:
        while True:
            _, _, name, env = self._ready.get()
            if env is None:  # close()
                return
            fut = self._futures[name]
            if not fut.set_running_or_notify_cancel():
                continue
            build = name in _BUILDERS
            with self._lock:
                self._building += build
            t0 = time.monotonic()
            token = _BUILDING.set((self, name) if build else None)
            try:
                fut.set_result(_run_build(self.options, env, self._fns[name]))
            except BaseException as e:  # noqa: BLE001 - raised again in every test that asks
                fut.set_exception(e)
            finally:
                _BUILDING.reset(token)
                with self._lock:
                    self._building -= build
                if build:
                    self.spans[name] = (t0, time.monotonic())
                else:
                    self.job_seconds += time.monotonic() - t0

    def built(self, name: str) -> Any | None:
        """The value ``name`` where its build is done and did not raise, else None (never
        waits, starts nothing)."""
        fut = self._futures.get(name)
        if fut is None or not fut.done() or fut.cancelled() or fut.exception() is not None:
            return None
        return fut.result()

    def get(self, name: str) -> Any:
        """The value ``name``: wait for its build (started now if it was not); a build
        that raised raises here, in every test that asks for it."""
        self.start(name)
        return self._futures[name].result()

    def close(self) -> None:
        """Drop builds not started yet; wait for those running (their subprocesses)."""
        with self._lock:
            futures = list(self._futures.values())
            workers, self._workers = self._workers, []
        for fut in futures:  # outside the lock: a cancel calls back the jobs queued behind it
            fut.cancel()  # only those not running yet
        for _ in workers:
            self._ready.put((-(1 << 62), next(self._seq), "", None))
        for t in workers:
            t.join()


BACKGROUND = Background()


# Where the background builds put what they build: one temp dir per session, removed
# when the session ends.
BUILD_DIR = Path(tempfile.mkdtemp(prefix="fxcache-test-builds-"))
remove_at_exit(BUILD_DIR)


def build_dir(name: str) -> Path:
    """A new empty directory under :data:`BUILD_DIR` for the build of ``name``."""
    return Path(tempfile.mkdtemp(prefix=f"{name}-", dir=BUILD_DIR))


def prebuilt(name: str) -> Any:
    """The value the background build ``name`` made (waits for it); skips the test
    where torch is not installed."""
    import pytest

    pytest.importorskip("torch")
    return BACKGROUND.get(name)
