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
behind it). Builders run in the order started, ``jobs`` at a time.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

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


def _in_env(env: dict[str, str], fn: Callable[[], Any]) -> Any:
    """Run ``fn`` with its torch processes started from ``env`` (the environment when the
    build was started), whatever a test running meanwhile does to ``os.environ``."""
    from demo.build_cache import BASE_ENV

    token = BASE_ENV.set(env)
    try:
        return fn()
    finally:
        BASE_ENV.reset(token)


def _settle(outer: Future[Any], inner: Future[Any]) -> None:
    """Give ``outer`` the outcome of ``inner``."""
    if inner.cancelled():
        outer.cancel()
    elif inner.exception() is not None:
        outer.set_exception(inner.exception())
    else:
        outer.set_result(inner.result())


class Background:
    """The values being built; see the module docstring."""

    def __init__(self, jobs: int | None = None) -> None:
        self._pool = ThreadPoolExecutor(jobs or default_jobs(), thread_name_prefix="fxcache-build")
        self._futures: dict[str, Future[Any]] = {}
        self._lock = threading.Lock()
        self.spans: dict[str, tuple[float, float]] = {}
        """name -> (start, end) of each finished build, ``time.monotonic()`` seconds."""

    def names(self) -> list[str]:
        """Every registered value, in the order their builds start."""
        return sorted(_BUILDERS, key=lambda n: _BUILDERS[n][2])

    def start(self, name: str) -> None:
        """Start building ``name`` (and first what it needs) unless already started. A
        build that needs others is queued only once they are done, so it never holds a
        worker thread while it waits."""
        fn, needs, _ = _BUILDERS[name]
        for dep in needs:
            self.start(dep)
        with self._lock:
            if name in self._futures:
                return
            outer: Future[Any] = Future()
            self._futures[name] = outer
            deps = [self._futures[d] for d in needs]
        env = dict(os.environ)
        pending = [len(deps)]

        def launch(_: Any = None) -> None:
            with self._lock:
                pending[0] -= 1
                if pending[0] > 0:
                    return
            inner = self._pool.submit(self._timed, name, env, fn)
            inner.add_done_callback(lambda f: _settle(outer, f))

        if not deps:
            pending[0] = 1
            launch()
        for d in deps:
            d.add_done_callback(launch)

    def _timed(self, name: str, env: dict[str, str], fn: Callable[[], Any]) -> Any:
        t0 = time.monotonic()
        try:
            return _in_env(env, fn)
        finally:
            self.spans[name] = (t0, time.monotonic())

    def get(self, name: str) -> Any:
        """The value ``name``: wait for its build (started now if it was not); a build
        that raised raises here, in every test that asks for it."""
        self.start(name)
        return self._futures[name].result()

    def close(self) -> None:
        """Drop builds not started yet; wait for those running (their subprocesses)."""
        self._pool.shutdown(wait=True, cancel_futures=True)


BACKGROUND = Background()
