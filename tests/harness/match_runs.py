"""The torch tests' ``fxcache match`` runs on the real cache, run ahead on the build threads.

test_real_cache.py, test_arguments.py and test_oracle_suite.py run ``fxcache match --json``
on the session's real cache for each call of the corpus they compare with torch's
recorded answers: a couple of hundred runs of about a second each. Run by the tests, they
would run one after another in the test process, after the last builds, while the build
threads sat idle. So a test function says which runs it makes (:func:`ahead`, from its
parameters); at the end of collection conftest queues those of every collected test
(:func:`queue`) as jobs of the build threads (:meth:`tests.harness.background.Background.later`),
behind every build that is ready, in the order the tests will ask for them, each in the
environment the builds start from (``build_options().base_env``), not in ``os.environ``
of the moment.

A test runs its command through :func:`match_call` as it would through ``run_fxcache``:
it gets the run made ahead where that ran on the same cache dir with the same arguments,
in the environment and working dir its own run would have had; it waits for it where a
build thread is running it; and it runs the command itself where no thread has started
it yet (taking the job off the queue), or where anything differs (a test that changed
``os.environ``). The test asserts on the run's exit code and output as before: only when
the command ran changes, never what it was given.
"""

from __future__ import annotations

import json
import os
import subprocess
import threading
import time
from collections.abc import Callable, Iterable
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

CACHE = "real_cache"
"""The background build whose cache the planned runs read (its ``root``)."""


@dataclass(frozen=True)
class Call:
    """``fxcache --cache-dir ROOT match --json [--fn FN] ARGS... EXTRA...`` for a call of the
    ``tests.harness.cases`` case ``case``, ARGS being :func:`tests.helpers.match_args_for` of
    it; without a case (:meth:`argv`), ``fxcache --cache-dir ROOT EXTRA...``."""

    case: str | None
    shapes: Any = field(hash=False, compare=False)
    fn: str | None = None
    extra: tuple[str, ...] = ()
    shapes_key: str = field(init=False, default="")

    def __post_init__(self) -> None:
        object.__setattr__(self, "shapes_key", json.dumps(self.shapes, sort_keys=True))

    @classmethod
    def argv(cls, *args: str) -> Call:
        """``fxcache --cache-dir ROOT ARGS...`` as given."""
        return cls(None, None, extra=tuple(args))

    def args(self) -> list[str]:
        """The arguments after ``--cache-dir ROOT`` (imports torch: the case's signature)."""
        if self.case is None:
            return list(self.extra)
        from tests.helpers import match_args_for

        return [
            "match",
            "--json",
            *(["--fn", self.fn] if self.fn else []),
            *match_args_for(self.case, self.shapes),
            *self.extra,
        ]


@dataclass
class _Ahead:
    future: Future[Any]
    env: dict[str, str] | None = None
    """The environment the run had (set when a build thread starts it)."""
    cwd: str = ""
    taken: bool = False
    """Whether a test asked for it."""
    times: dict[str, float] = field(default_factory=dict)
    """``time.monotonic()`` when it was queued, a thread started and ended it, a test asked."""
    outcome: str = ""
    """How the test's call was served: ahead, waited, or own (why: not-started, root, env, cwd)."""


_PLANNED: dict[Call, _Ahead] = {}
_LOCK = threading.Lock()
STATS = {"ahead": 0, "waited": 0, "own": 0, "seconds": 0.0}
"""How the tests' calls were served: a run made ahead and done, one a thread was
running (waited for), or run by the test itself; and the seconds the tests spent in
:func:`match_call` (conftest prints them)."""


def untaken() -> int:
    """How many queued runs no test asked for (a plan that names a run its test does not
    make costs the build threads that run)."""
    with _LOCK:
        return sum(not slot.taken for slot in _PLANNED.values())


def ahead(
    plan: Callable[..., Iterable[Call]],
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Decorate a test function: ``plan(**its parameters)`` names the :class:`Call` runs the
    test makes through :func:`match_call` (a parameter ``plan`` does not take: ``**_``)."""

    def mark(test: Callable[..., Any]) -> Callable[..., Any]:
        test.match_ahead = plan  # type: ignore[attr-defined]
        return test

    return mark


# The plans of the tests of a demo case's call (parameters ``case`` and ``shapes``):
# assert_match_agrees_with_answer's run (no --fn), assert_verdict_as_torch's and
# tests.helpers.match_call's (--fn CASE), or both.
AGREES = ahead(lambda case, shapes, **_: [Call(case, shapes)])
VERDICT = ahead(lambda case, shapes, **_: [Call(case, shapes, case)])
BOTH = ahead(lambda case, shapes, **_: [Call(case, shapes), Call(case, shapes, case)])


def both_for(agreeing: list) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """The verdict's run, and the lookups' too for the calls in ``agreeing``."""
    return ahead(
        lambda case, shapes, **_: [
            *([Call(case, shapes)] if (case, shapes) in agreeing else []),
            Call(case, shapes, case),
        ]
    )


def planned(items: Iterable[Any]) -> list[Call]:
    """The runs the collected test ``items`` plan, in their order, each once."""
    out: dict[Call, None] = {}
    for item in items:
        plan = getattr(getattr(item, "function", None), "match_ahead", None)
        if plan is None or item.get_closest_marker("skip"):
            continue
        callspec = getattr(item, "callspec", None)
        for call in plan(**(callspec.params if callspec else {})):
            out.setdefault(call, None)
    return list(out)


def _env_now() -> dict[str, str]:
    from tests.cli_run import child_env

    return {k: v for k, v in child_env().items() if not k.startswith("PYTEST_")}


def queue(calls: Iterable[Call]) -> int:
    """Queue ``calls`` on the build threads, after the real cache's build; how many were
    queued. None where every run starts a fresh process (``FXCACHE_TEST_SUBPROCESS``)."""
    if os.environ.get("FXCACHE_TEST_SUBPROCESS"):
        return 0
    from tests.harness.background import BACKGROUND

    n = 0
    for call in calls:
        with _LOCK:
            if call in _PLANNED:
                continue
            slot = _PLANNED[call] = _Ahead(Future())
            slot.times["queued"] = time.monotonic()
        slot.future = BACKGROUND.later(_runner(call, slot), needs=(CACHE,))
        n += 1
    return n


def _runner(call: Call, slot: _Ahead) -> Callable[[], tuple[str, subprocess.CompletedProcess[str]]]:
    def run() -> tuple[str, subprocess.CompletedProcess[str]]:
        slot.times["started"] = time.monotonic()
        try:
            return _run(call, slot)
        finally:
            slot.times["ended"] = time.monotonic()

    return run


def _run(call: Call, slot: _Ahead) -> tuple[str, subprocess.CompletedProcess[str]]:
    from demo.build_cache import build_options
    from tests.cli_run import child_env, fxcache_forked_as
    from tests.harness.background import BACKGROUND

    root = str(BACKGROUND.get(CACHE).root)
    base = build_options().base_env
    env = child_env(base=base)
    slot.env = {k: v for k, v in env.items() if not k.startswith("PYTEST_")}
    slot.cwd = os.getcwd()
    args = ["--cache-dir", root, *call.args()]
    slot.times["forked"] = time.monotonic()
    r = fxcache_forked_as(args, env, slot.cwd)
    return root, subprocess.CompletedProcess(["fxcache", *args], r.returncode, r.stdout, r.stderr)


def match_call(root: Path | str, call: Call) -> subprocess.CompletedProcess[str]:
    """``fxcache --cache-dir ROOT`` + ``call.args()``, as ``run_fxcache`` runs it: the run made
    ahead where it is this one (see the module docstring), else run now."""
    t0 = time.monotonic()
    try:
        return _served(root, call)
    finally:
        STATS["seconds"] += time.monotonic() - t0


def _served(root: Path | str, call: Call) -> subprocess.CompletedProcess[str]:
    from tests.helpers import run_fxcache

    with _LOCK:
        slot = _PLANNED.get(call)
        if slot is not None:
            slot.taken = True
            slot.times["asked"] = time.monotonic()
    why = "unplanned"
    if slot is not None and not slot.future.cancel():
        done = slot.future.done()
        made_root, run = slot.future.result()
        why = next(
            (
                w
                for w, same in (
                    ("root", made_root == str(root)),
                    ("env", slot.env == _env_now()),
                    ("cwd", slot.cwd == os.getcwd()),
                )
                if not same
            ),
            "",
        )
        if not why:
            slot.outcome = "ahead" if done else "waited"
            STATS[slot.outcome] += 1
            return run
    elif slot is not None:
        why = "not-started"
    if slot is not None:
        slot.outcome = f"own:{why}"
    STATS["own"] += 1
    return run_fxcache("--cache-dir", str(root), *call.args())


def log(path: str | os.PathLike[str], t0: float) -> None:
    """Write each planned run (its case, when queued/started/ended/asked, seconds after
    ``t0``, and how its test was served) to ``path`` as JSON lines."""
    with _LOCK:
        rows = [
            {
                "case": c.case,
                "fn": c.fn,
                "extra": list(c.extra),
                "outcome": s.outcome or "never-asked",
                **{k: round(v - t0, 2) for k, v in s.times.items()},
            }
            for c, s in _PLANNED.items()
        ]
    with open(path, "w") as f:
        f.writelines(json.dumps(r) + "\n" for r in rows)
