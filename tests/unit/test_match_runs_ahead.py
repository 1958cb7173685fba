"""The harness's jobs on the build threads, and the match runs made ahead on them.

``Background.later`` runs a job after the builds it needs, and a job no thread has started
can be taken back; ``tests.harness.match_runs.match_call`` hands a test the run made ahead
only where it ran as the test's own would (the same cache dir, environment and working
dir), and runs the command itself otherwise. No torch: the builds and runs are stubs.
"""

from __future__ import annotations

import os
import subprocess
import threading
from concurrent.futures import Future

import pytest

from tests.harness import background, match_runs
from tests.harness.background import Background
from tests.harness.match_runs import Call


def test_a_job_runs_after_the_build_it_needs_and_one_taken_back_never_runs(monkeypatch):
    release = threading.Event()
    order: list[str] = []

    def build():
        release.wait(10)
        order.append("build")
        return "value"

    monkeypatch.setitem(background._BUILDERS, "stub_build", (build, (), 0))
    bg = Background(jobs=1)
    try:
        after = bg.later(
            lambda: order.append("job") or bg.built("stub_build"), needs=("stub_build",)
        )
        taken_back = bg.later(lambda: order.append("taken back"))
        assert bg.built("stub_build") is None  # still building: never waits
        assert taken_back.cancel()  # the one thread is busy with the build
        release.set()
        assert after.result(10) == "value"
    finally:
        release.set()
        bg.close()
    assert order == ["build", "job"]
    assert bg.job_seconds >= 0 and set(bg.spans) == {"stub_build"}


def test_planned_runs_are_each_once_in_the_tests_order_and_skipped_tests_plan_none():
    made: list = []

    class Item:
        def __init__(self, fn, params=None, skip=False):
            self.nodeid = f"t{len(made)}"
            made.append(self)
            self.function = fn
            self.callspec = type("Spec", (), {"params": params})() if params is not None else None
            self._skip = skip

        def get_closest_marker(self, name):
            return self._skip if name == "skip" else None

    both = match_runs.ahead(
        lambda case, shapes, **_: [Call(case, shapes), Call(case, shapes, case)]
    )(lambda: None)
    one = match_runs.ahead(lambda: [Call.argv("match", "--json")])(lambda: None)
    items = [
        Item(both, {"case": "a", "shapes": [[2]], "code": 1}),
        Item(one),
        Item(both, {"case": "a", "shapes": [[2]]}),
        Item(both, {"case": "b", "shapes": [[3]]}, skip=True),
        Item(lambda: None),
    ]
    assert match_runs.planned(items) == [
        Call("a", [[2]]),
        Call("a", [[2]], "a"),
        Call.argv("match", "--json"),
    ]
    assert list(match_runs.plans(items).values()) == [{"t0", "t2"}, {"t0", "t2"}, {"t1"}]
    assert Call("a", [[2]]) != Call("a", [[3]]) and Call("a", [[2]]) != Call("a", [[2]], "a")


@pytest.mark.parametrize("differs", ["nothing", "root", "env", "cwd"])
def test_match_call_takes_the_run_made_ahead_only_where_it_ran_as_the_tests_would(
    monkeypatch, tmp_path, differs
):
    import tests.helpers

    call = Call.argv("match", "--json")
    ahead = subprocess.CompletedProcess(["fxcache"], 0, "made ahead", "")
    fut: Future = Future()
    fut.set_running_or_notify_cancel()
    fut.set_result((str(tmp_path / "other") if differs == "root" else str(tmp_path), ahead))
    env = match_runs._env_now()
    if differs == "env":
        env["TMPDIR"] = "/elsewhere"
    slot = match_runs._Ahead(fut, env, "/" if differs == "cwd" else os.getcwd())
    monkeypatch.setattr(match_runs, "_PLANNED", {call: slot})
    monkeypatch.setattr(match_runs, "STATS", dict.fromkeys(match_runs.STATS, 0))
    own = subprocess.CompletedProcess(["fxcache"], 0, "run by the test", "")
    ran: list[tuple] = []
    monkeypatch.setattr(tests.helpers, "run_fxcache", lambda *a: ran.append(a) or own)
    got = match_runs.match_call(tmp_path, call)
    assert slot.taken
    if differs == "nothing":
        assert got is ahead and ran == [] and match_runs.STATS["ahead"] == 1
    else:
        assert got is own and ran == [("--cache-dir", str(tmp_path), "match", "--json")]
        assert match_runs.STATS["own"] == 1


def test_match_call_runs_the_command_itself_where_every_thread_is_on_a_build(monkeypatch, tmp_path):
    import tests.helpers

    monkeypatch.setattr(background.BACKGROUND, "serves_jobs", lambda: False)
    call = Call.argv("match", "--json", "--fn", "f")
    fut: Future = Future()  # queued, not started
    monkeypatch.setattr(match_runs, "_PLANNED", {call: match_runs._Ahead(fut)})
    monkeypatch.setattr(match_runs, "STATS", dict.fromkeys(match_runs.STATS, 0))
    own = subprocess.CompletedProcess(["fxcache"], 3, "run by the test", "")
    monkeypatch.setattr(tests.helpers, "run_fxcache", lambda *a: own)
    assert match_runs.match_call(tmp_path, call) is own
    assert fut.cancelled()  # taken back: no build thread runs it now


def test_match_call_waits_for_a_thread_free_for_jobs_to_make_the_run(monkeypatch, tmp_path):
    import tests.helpers

    call = Call.argv("match", "--json")
    fut: Future = Future()
    made = subprocess.CompletedProcess(["fxcache"], 0, "made by a thread", "")
    slot = match_runs._Ahead(fut, match_runs._env_now(), os.getcwd())
    monkeypatch.setattr(match_runs, "_PLANNED", {call: slot})
    monkeypatch.setattr(match_runs, "STATS", dict.fromkeys(match_runs.STATS, 0))
    monkeypatch.setattr(background.BACKGROUND, "serves_jobs", lambda: True)
    monkeypatch.setattr(tests.helpers, "run_fxcache", lambda *a: pytest.fail("run by the test"))

    def thread():
        fut.set_running_or_notify_cancel()
        fut.set_result((str(tmp_path), made))

    timer = threading.Timer(0.2, thread)
    timer.start()
    try:
        assert match_runs.match_call(tmp_path, call) is made
    finally:
        timer.join()
    assert match_runs.STATS["waited"] == 1 and slot.outcome == "waited"


def test_a_run_is_dropped_once_every_test_that_planned_it_ended_without_asking(monkeypatch):
    bg = Background(jobs=1)
    monkeypatch.setattr(background, "BACKGROUND", bg)
    for name in ("_PLANNED", "_WANTED", "_BY_TEST"):
        monkeypatch.setattr(match_runs, name, {})
    monkeypatch.setattr(match_runs, "STATS", dict.fromkeys(match_runs.STATS, 0))
    release = threading.Event()
    monkeypatch.setitem(background._BUILDERS, match_runs.CACHE, (lambda: release.wait(10), (), 0))
    shared, alone = Call.argv("match", "--json"), Call.argv("match", "--json", "--fn", "f")
    try:
        assert match_runs.queue({shared: {"a", "b"}, alone: {"a"}}) == 2
        match_runs.ended("a")  # the cache is still building: neither started
        assert match_runs._PLANNED[alone].future.cancelled()
        assert not match_runs._PLANNED[shared].future.cancelled()  # b is still to come
        assert match_runs.STATS["dropped"] == 1
    finally:
        release.set()
        bg.close()


def test_jobs_ready_together_run_in_the_order_they_were_queued():
    release = threading.Event()
    order: list[int] = []
    bg = Background(jobs=1)
    try:
        blocker = bg.later(lambda: release.wait(10))
        first = bg.later(lambda: order.append(1), needs=())
        second = bg.later(lambda: order.append(2))
        release.set()
        blocker.result(10), first.result(10), second.result(10)
    finally:
        release.set()
        bg.close()
    assert order == [1, 2]


def test_a_builds_cpu_is_what_its_threads_charge_and_a_jobs_counts_nowhere(monkeypatch):
    import contextvars

    def build():
        background.charge_cpu(1.5)
        helper = threading.Thread(
            target=contextvars.copy_context().run, args=(background.charge_cpu, 2.0)
        )
        helper.start()
        helper.join()
        return "value"

    monkeypatch.setitem(background._BUILDERS, "stub_build", (build, (), 0))
    bg = Background(jobs=1)
    try:
        bg.start("stub_build")
        assert bg.get("stub_build") == "value"
        bg.later(lambda: background.charge_cpu(7.0)).result(10)
    finally:
        bg.close()
    background.charge_cpu(9.0)  # the test process's own thread: no build
    assert bg.cpu == {"stub_build": 3.5}
