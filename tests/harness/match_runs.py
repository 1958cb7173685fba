"""The torch tests' ``fxcache match`` runs on the real cache, run ahead on the build threads.

test_real_cache.py, the test_*arguments.py files and test_oracle_suite.py (and others) run
``fxcache match --json`` on the session's real cache for each call of the corpus they
compare with torch's recorded answers: a couple of hundred runs of about a second each.
Run by the tests, they would run one after another in the test process. So a test
function says which runs it makes (:func:`ahead`, from its parameters); at the end of
collection conftest queues those of every collected test (:func:`queue`) as jobs of the
build threads (:meth:`tests.harness.background.Background.later`), behind every build
that is ready, in the order the tests will ask for them. The arguments of a case's call
(:func:`tests.helpers.match_args_for`, which builds the case's inputs with torch) are
worked out for all of them at once by the build :data:`ARGS`, in a process forked from
the zygote, so no thread imports torch for them. A job runs in the environment a test's
own run would have when the job starts (:func:`_live_env`).

A test runs its command through :func:`match_call` as it would through ``run_fxcache``:
it gets the run made ahead where that ran on the same cache dir with the same arguments,
in the environment and working dir its own run would have had; it waits for the run
while a thread runs it or is free for jobs (the next job is then the one it asks for);
and it runs the command itself where every thread is on a build (taking the job off the
queue), or where anything differs (a test that changed ``os.environ``). The test asserts
on the run's exit code and output as before: only when the command ran changes, never
what it was given. A run that every test planning it ended without asking for is
dropped before a thread starts it (:func:`ended`), so a plan a test does not follow costs
no build time.
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

    def args(self, worked_out: dict[str, list[str]] | None = None) -> list[str]:
        """The arguments after ``--cache-dir ROOT``: the case's from ``worked_out`` (the build
        :data:`ARGS`), else worked out here (that imports torch: the case's inputs)."""
        if self.case is None:
            return list(self.extra)
        given = (worked_out or {}).get(_args_key(self.case, self.shapes))
        if given is None:
            from tests.helpers import match_args_for

            given = match_args_for(self.case, self.shapes)
        return ["match", "--json", *(["--fn", self.fn] if self.fn else []), *given, *self.extra]


def _args_key(case: str, shapes: Any) -> str:
    return json.dumps([case, shapes])


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
_WANTED: dict[Call, set[str]] = {}
"""The tests (node ids) that plan each run and have not ended."""
_BY_TEST: dict[str, list[Call]] = {}
STATS = {"ahead": 0, "waited": 0, "own": 0, "seconds": 0.0, "dropped": 0}
"""How the tests' calls were served: a run made ahead and done, one a thread ran while
the test waited, or run by the test itself; the seconds the tests spent in
:func:`match_call` (conftest prints them); and the runs dropped before a thread started
them because every test that planned them ended without asking (:func:`ended`)."""

ARGS = "match_args"
"""The background build that works out the ``fxcache match`` arguments of every planned
call of a case, in a process forked from the zygote (torch imported there), so that
neither a build thread nor the test process imports torch for them."""
_TO_WORK_OUT: list[tuple[str, Any]] = []


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


def plans(items: Iterable[Any]) -> dict[Call, set[str]]:
    """The runs the collected test ``items`` plan, in their order, each once: the node ids
    of the tests that plan it."""
    out: dict[Call, set[str]] = {}
    for item in items:
        plan = getattr(getattr(item, "function", None), "match_ahead", None)
        if plan is None or item.get_closest_marker("skip"):
            continue
        callspec = getattr(item, "callspec", None)
        for call in plan(**(callspec.params if callspec else {})):
            out.setdefault(call, set()).add(item.nodeid)
    return out


def planned(items: Iterable[Any]) -> list[Call]:
    """The runs the collected test ``items`` plan, in their order, each once."""
    return list(plans(items))


def _env_now() -> dict[str, str]:
    return {k: v for k, v in _live_env().items() if not k.startswith("PYTEST_")}


def queue(calls: Iterable[Call] | dict[Call, set[str]]) -> int:
    """Queue ``calls`` on the build threads, after the real cache's build and :data:`ARGS`;
    how many were queued. None where every run starts a fresh process
    (``FXCACHE_TEST_SUBPROCESS``). Given the tests that plan each (:func:`plans`), a run is
    dropped once they all ended without asking for it (:func:`ended`)."""
    if os.environ.get("FXCACHE_TEST_SUBPROCESS"):
        return 0
    from tests.harness.background import BACKGROUND, builder

    wanted = calls if isinstance(calls, dict) else {}
    fresh = []
    with _LOCK:
        for call in calls:
            if call not in _PLANNED:
                _PLANNED[call] = _Ahead(Future())
                fresh.append(call)
            for test in wanted.get(call, ()):
                _WANTED.setdefault(call, set()).add(test)
                _BY_TEST.setdefault(test, []).append(call)
    todo = {_args_key(c.case, c.shapes): (c.case, c.shapes) for c in fresh if c.case is not None}
    if todo and ARGS not in BACKGROUND.names():
        _TO_WORK_OUT[:] = todo.values()
        builder(ARGS, order=-1)(_work_out_args)
    for call in fresh:
        slot = _PLANNED[call]
        slot.times["queued"] = time.monotonic()
        slot.future = BACKGROUND.later(
            _runner(call, slot), needs=(CACHE, *((ARGS,) if todo else ()))
        )
    return len(fresh)


def ended(test: str) -> None:
    """The test ``test`` (a node id) ended: drop each run it planned that no test asked for
    and no test still to come plans, where no thread has started it (never run then)."""
    with _LOCK:
        for call in _BY_TEST.pop(test, ()):
            left = _WANTED.get(call, set())
            left.discard(test)
            slot = _PLANNED[call]
            if not left and not slot.taken and slot.future.cancel():
                STATS["dropped"] += 1


def _work_out_args() -> dict[str, list[str]]:
    """The build :data:`ARGS`: ``match_args_for`` of every planned call of a case, by
    :func:`_args_key`, in a process forked from the zygote (``python -m`` this module)."""
    import sys

    from demo.build_cache import run_json_subprocess
    from tests.harness.background import build_dir

    path = build_dir(ARGS) / "calls.json"
    path.write_text(json.dumps(_TO_WORK_OUT))
    got = run_json_subprocess(["-m", __name__, str(path)], python=sys.executable, timeout=300)
    return {
        _args_key(c, s): a for (c, s), a in zip(_TO_WORK_OUT, got, strict=True) if a is not None
    }


def _worked_out() -> dict[str, list[str]] | None:
    from tests.harness.background import BACKGROUND

    return BACKGROUND.built(ARGS)


def _runner(call: Call, slot: _Ahead) -> Callable[[], tuple[str, subprocess.CompletedProcess[str]]]:
    def run() -> tuple[str, subprocess.CompletedProcess[str]]:
        slot.times["started"] = time.monotonic()
        try:
            return _run(call, slot)
        finally:
            slot.times["ended"] = time.monotonic()

    return run


def _run(call: Call, slot: _Ahead) -> tuple[str, subprocess.CompletedProcess[str]]:
    from tests.cli_run import fxcache_forked_as
    from tests.harness.background import BACKGROUND

    root = str(BACKGROUND.get(CACHE).root)
    env = _live_env()
    slot.env = {k: v for k, v in env.items() if not k.startswith("PYTEST_")}
    slot.cwd = os.getcwd()
    args = ["--cache-dir", root, *call.args(_worked_out())]
    slot.times["forked"] = time.monotonic()
    r = fxcache_forked_as(args, env, slot.cwd)
    return root, subprocess.CompletedProcess(["fxcache", *args], r.returncode, r.stdout, r.stderr)


def _live_env() -> dict[str, str]:
    """The environment a test's own run would have now (``child_env()``): this process's as
    it is when the job starts, not when it was queued. torch, once imported here, sets
    ``TORCHINDUCTOR_CACHE_DIR`` in ``os.environ`` (``cache_dir()``), and every later run of
    the tests has it: a run made in the environment of the queue's time would differ."""
    from tests.cli_run import child_env

    while True:
        try:
            return child_env()
        except RuntimeError:  # os.environ changed while copied (a test setting a variable)
            continue


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
    done = slot is not None and slot.future.done()  # made before the test asked
    if slot is not None and _made(slot.future):
        made_root, run = slot.future.result()
        now = _env_now()
        differs = sorted(
            k for k in {**(slot.env or {}), **now} if (slot.env or {}).get(k) != now.get(k)
        )
        why = (
            "root"
            if made_root != str(root)
            else f"env:{','.join(differs)}"
            if differs
            else "cwd"
            if slot.cwd != os.getcwd()
            else ""
        )
        if not why:
            slot.outcome = "ahead" if done else "waited"
            STATS[slot.outcome] += 1
            return run
    elif slot is not None:
        why = "taken-back"
    if slot is not None:
        slot.outcome = f"own:{why}"
    STATS["own"] += 1
    return run_fxcache("--cache-dir", str(root), *call.args(_worked_out()))


def _made(fut: Future[Any]) -> bool:
    """Whether a thread makes the run of ``fut``: it has started it, or will soon (a thread
    is free for jobs, and the jobs are queued in the order the tests ask for them); false
    once the test took it back (every thread is on a build: the test runs it itself)."""
    from concurrent.futures import wait

    from tests.harness.background import BACKGROUND

    while not (fut.running() or fut.done()):
        if not BACKGROUND.serves_jobs() and fut.cancel():
            return False
        wait([fut], timeout=0.05)
    return not fut.cancelled()


def main(argv: list[str] | None = None) -> None:
    """``python -m tests.harness.match_runs CALLS.json``: print the ``fxcache match``
    arguments of each ``[case, shapes]`` in the file, as one JSON list (null where one
    fails: that call's job works them out itself)."""
    import sys

    from tests.helpers import match_args_for

    out: list[list[str] | None] = []
    for case, shapes in json.loads(Path((argv or sys.argv[1:])[0]).read_text()):
        try:
            out.append(match_args_for(case, shapes))
        except Exception:  # noqa: BLE001 - that call's job works them out (and raises) itself
            out.append(None)
    print(json.dumps(out))


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


if __name__ == "__main__":
    main()
