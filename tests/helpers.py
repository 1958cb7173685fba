"""Plain helpers for the tests (no fixtures, no torch import): ``from tests.helpers import ...``."""

from __future__ import annotations

import contextlib
import inspect
import json
import os
import signal
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

from tests.cli_run import REPO_ROOT, child_env, fxcache_forked, fxcache_forked_with_torch

TESTS_DIR = Path(__file__).resolve().parent
DATA_DIR = TESTS_DIR / "data"

# Real guard strings torch 2.13 wrote (tests/data/guards-corpus.md says what each
# field is); FXCACHE_GUARDS_CORPUS=PATH points the tests at another corpus.
GUARDS_CORPUS = Path(os.environ.get("FXCACHE_GUARDS_CORPUS") or DATA_DIR / "guards-corpus.json")

# Runs a module as __main__ with `import torch` (and torch.*) made impossible, so
# a test can prove that a code path never needs torch. The finder sits first on
# sys.meta_path and raises ModuleNotFoundError, so `except ImportError` works.
_BLOCK_TORCH_RUNNER = r"""
import runpy, sys

class _BlockTorch:
    def find_spec(self, name, path=None, target=None):
        if name == "torch" or name.startswith("torch."):
            raise ModuleNotFoundError(
                f"import of {name!r} blocked: this run must not need torch", name=name
            )
        return None

sys.meta_path.insert(0, _BlockTorch())
_module = sys.argv[1]
sys.argv = [_module, *sys.argv[2:]]
runpy.run_module(_module, run_name="__main__", alter_sys=True)
"""


def run_module(
    module: str,
    *args: str,
    env: Mapping[str, str] | None = None,
    block_torch: bool = False,
    timeout: float = 300,
    input: str | None = None,
) -> subprocess.CompletedProcess[str]:
    """Run ``python -m MODULE ARGS...`` from the repo root, capturing text output.

    ``env`` entries are added to (override) the current environment. With
    ``block_torch=True`` any import of ``torch`` in the child raises
    ``ModuleNotFoundError``. Never raises on a non-zero exit: check ``.returncode``.
    """
    if block_torch:
        argv = [sys.executable, "-c", _BLOCK_TORCH_RUNNER, module, *map(str, args)]
    else:
        argv = [sys.executable, "-m", module, *map(str, args)]
    return subprocess.run(
        argv,
        cwd=REPO_ROOT,
        env=child_env(env),
        capture_output=True,
        text=True,
        timeout=timeout,
        input=input,
    )


def run_fxcache(
    *args: str,
    env: Mapping[str, str] | None = None,
    block_torch: bool = False,
    timeout: float = 300,
    input: str | None = None,
    process: bool = False,
    imports_torch: bool = False,
) -> subprocess.CompletedProcess[str]:
    """Run ``fxcache ARGS...`` and capture what it prints and its exit code.

    ``env`` entries are added to this process's environment for the run. By default
    the run is a process forked from the session's CLI server
    (:func:`tests.cli_run.fxcache_forked`): what the command parses, decides and prints
    is that of a fresh process, without a fresh interpreter's start-up; ``block_torch``
    makes any ``import torch`` in it raise ``ModuleNotFoundError`` (proving a path never
    needs torch: the server that forks it never imported torch). In a fresh
    ``python -m fxcache_cli`` (see :func:`run_module`) with ``process=True``, ``input``
    (stdin), or ``FXCACHE_TEST_SUBPROCESS=1`` in the environment (every test's run as
    users start the command; ``block_torch`` then blocks torch there).
    ``imports_torch``: the command asks the installed torch (``key --current``, ``gc
    --stale``, ``unpack --dry-run``): forked from a server that has imported torch too
    (:func:`tests.cli_run.fxcache_forked_with_torch`), or a fresh process where the
    environment torch reads at import is not that server's.
    Never raises on a non-zero exit: check ``.returncode``.
    """
    if process or input is not None or os.environ.get("FXCACHE_TEST_SUBPROCESS"):
        return run_module(
            "fxcache_cli", *args, env=env, block_torch=block_torch, timeout=timeout, input=input
        )
    if imports_torch and not block_torch:
        r = fxcache_forked_with_torch(*args, env=env, timeout=timeout)
        if r is None:
            return run_module("fxcache_cli", *args, env=env, timeout=timeout)
    else:
        r = fxcache_forked(*args, env=env, timeout=timeout, block_torch=block_torch)
    return subprocess.CompletedProcess(["fxcache", *map(str, args)], r.returncode, r.stdout, r.stderr)


def cli_json(proc: subprocess.CompletedProcess[str]):
    """The JSON a command printed; it exited 0, or, for ``match``, with the exit code its
    verdict gives (0 hit, 1 miss, 3 undecided)."""
    out = json.loads(proc.stdout) if proc.stdout.strip() else None
    want = out["verdicts"]["exit_code"] if isinstance(out, dict) and "verdicts" in out else 0
    assert proc.returncode == want, (proc.returncode, proc.stderr)
    return out


_REPORT_ADDS = ("keys", "keys_listed", "gc_reclaimable", "maps", "not_drawn")
"""What a function of ``fxcache report``'s JSON holds beyond ``ls --by function``'s group."""


def assert_report_is_what_the_commands_print(cache: Path, report: dict, trace: Path | None = None,
                                             every_row: bool = True) -> None:
    """``fxcache report --json`` of ``cache`` (and ``trace``) against what ``df``, ``gc
    --dry-run``, ``ls --by function``, ``ls --entries`` (the keys the page lists; ``ls``
    the others), ``coverage`` (each map's rows, or with ``every_row`` False the middle row of
    each function's first map) and ``explain --no-record`` print of the same cache, run
    after it. ``df``'s ``index`` (fxcache's index grows as commands run) is left out."""
    d = ("--cache-dir", str(cache))
    df = cli_json(run_fxcache(*d, "df", "--json"))
    assert {k: v for k, v in report["df"].items() if k != "index"} == {k: v for k, v in df.items() if k != "index"}
    assert report["gc"] == cli_json(run_fxcache(*d, "gc", "--dry-run", "--json"))
    groups = {g["function"]: g for g in cli_json(run_fxcache(*d, "ls", "--by", "function", "--json"))}
    assert sorted(map(str, groups)) == sorted(str(f["function"]) for f in report["functions"])
    sizes = [f["size"] for f in report["functions"]]
    assert sizes == sorted(sizes, reverse=True)  # largest first
    with_regions = {r["key"]: r for r in cli_json(run_fxcache(*d, "ls", "--entries", "--json"))}
    plain = {r["key"]: r for r in cli_json(run_fxcache(*d, "ls", "--json"))}
    for f in report["functions"]:
        g = groups[f["function"]]
        assert {k: v for k, v in f.items() if k not in _REPORT_ADDS} == {k: v for k, v in g.items() if k != "keys"}
        assert sorted(k["key"] for k in f["keys"]) == sorted(k["key"] for k in g["keys"])
        for n, k in enumerate(f["keys"]):
            assert k == (with_regions if n < f["keys_listed"] else plain)[k["key"]]
        for n, m in enumerate(f["maps"]):
            if not (every_row or m["calls"] or (n == 0 and f is report["functions"][0])):
                continue
            for row in m["rows"] if every_row else m["rows"][len(m["rows"]) // 2:][:1]:
                x, y = m["x"], m["y"]
                args = ["coverage", m["key"], "--range", f"{x['placeholder']}={x['start']}:{x['end']}", "--json"]
                if y is not None:
                    args += ["--sym", f"{y['placeholder']}={row['y']}"]
                if report["dynamic"] is not None:
                    args += ["--dynamic", report["dynamic"]]
                assert row["coverage"] == cli_json(run_fxcache(*d, *args))
    if trace is not None:
        explain = cli_json(run_fxcache(*d, "explain", "--json", "--no-record", str(trace)))
        run = report["run"]
        assert {k: v for k, v in run.items() if k not in ("lookups", "lookups_total", "compiles")} == {
            k: v for k, v in explain.items() if k != "lookups"}
        assert run["lookups"] == explain["lookups"][:len(run["lookups"])]
        assert run["lookups_total"] == len(explain["lookups"])
        assert run["trace"]["compiles"] == len(run["compiles"])


def without_keys(got: object, keys: frozenset[str]) -> object:
    """A command's JSON with every dict key in ``keys`` dropped, at any depth: what depends
    on where and when files were written, so that two layouts of one cache compare equal."""
    if isinstance(got, dict):
        return {k: without_keys(v, keys) for k, v in got.items() if k not in keys}
    if isinstance(got, list):
        return [without_keys(v, keys) for v in got]
    return got


def plan_gc_on(root: Path, **policy):
    """``plan_gc`` on the cache at ``root`` with ``GcPolicy(**policy)``."""
    from fxcache_core.cache.scan import scan_cache
    from fxcache_core.catalog.reader import Catalog
    from fxcache_core.prune.plan import plan_gc
    from fxcache_core.prune.policy import GcPolicy

    return plan_gc(Catalog(scan_cache(root)), GcPolicy(**policy))


def age(paths, seconds: float, now: float | None = None) -> None:
    """Set the atime and mtime of ``paths`` (a path or several; a directory: every file
    under it) to ``seconds`` before ``now`` (default: the current time)."""
    import time

    t = (time.time() if now is None else now) - seconds
    for p in [paths] if isinstance(paths, (str, os.PathLike)) else paths:
        p = Path(p)
        for f in ([p] if p.is_file() else [q for q in p.rglob("*") if q.is_file()]):
            os.utime(f, (t, t))


def assert_match_agrees_with_answer(cache_root: Path, case: str, shapes: list, answer: dict,
                                    own_keys: set[str]) -> None:
    """``fxcache match`` on ``cache_root`` (it only reads) agrees with torch's ``answer``
    for the call made already (``tests.harness.oracle.answers``, on a copy of the same
    ``cache_root``): the checks of :func:`assert_match_agrees_with_lookups`."""
    import json

    from fxcache_core.cache.scan import scan_cache
    from tests.harness.match_runs import Call, match_call

    proc = match_call(cache_root, Call(case, shapes))
    report = json.loads(proc.stdout)
    assert proc.returncode == report["verdicts"]["exit_code"], proc.stderr
    assert answer["error"] is None, answer["error"]
    present = {k.key for k in scan_cache(cache_root).keys}
    assert_match_agrees_with_lookups(report["results"], answer["lookups"], present, own_keys)


def assert_match_agrees_with_lookups(results: list[dict], lookups: list[dict], present: set[str],
                                     own_keys: set[str]) -> int:
    """Compare ``fxcache match --json``'s ``results`` with torch's ``lookups`` for one call
    (``tests.harness.oracle`` records, made live or recorded earlier with another torch version).

    ``present``: the keys the cache had; ``own_keys``: the keys the called function
    wrote. For every torch lookup in ``guards`` mode on a key the cache has, match bound
    that key and predicts the same hit (entry name or None) and says so in its status;
    for every ``exact``-mode FX lookup (after an AOTAutograd hit), the hit's ``loads``
    name the same entry; and every AOTAutograd hit match predicts for ``own_keys`` is
    torch's hit. Returns how many of torch's lookups were compared.
    """
    ours = {r["key"]: r for r in results}
    compared = 0
    for lk in lookups:
        if lk["key"] not in present:
            continue  # a key the cache did not have: nothing to predict
        if lk["mode"] == "guards":
            assert lk["key"] in ours, f"torch looked up {lk['kind']} {lk['key']}; match did not bind it"
            assert ours[lk["key"]]["hit"] == lk["hit"], (lk, ours[lk["key"]])
            # ... and says so: a hit is a "hit", a miss a "miss" (not undecided / no-fit); but
            # where the call brings a size of the graph to 1 (lookup/boundaries.py) or fails a
            # bound of every entry of the key it looks up first (lookup/retrace.py), torch traces
            # again, and the cache does not show whether that is this key's graph, another or an
            # error: a miss of that key is undecided by design, and so may be the hit of a key
            # torch reaches only after that trace (the forward FX key behind an AOTAutograd miss).
            # After a recompile, a key with symbols is looked up only if exactly its symbols
            # changed before the call, which the call does not say: its lookup is undecided, and
            # its ``hit`` is what it would be (compared above). A frame resumed after a jump on
            # the data is one of two of its name, one per side, and the call's data choose
            # (lookup/resume_sides.py): its lookup is undecided, its ``hit`` that of its side.
            retraced = bool({"size-boundary", "bound-failed", "size-branch", "dynamic-after-recompile-unknown",
                             "resume-side-unknown"}
                            & set(ours[lk["key"]]["uncertain_codes"]))
            status = ours[lk["key"]]["status"]
            if lk["hit"]:
                assert status == "hit" or (retraced and status == "undecided"), (lk, ours[lk["key"]])
            else:
                assert status == ("undecided" if retraced else "miss"), (lk, ours[lk["key"]])
            compared += 1
        elif lk["mode"] == "exact":
            # FX graph loaded by an AOTAutograd hit: the entry must be the one match said it loads.
            loads = {ld["key"]: ld["entry"] for r in ours.values() for ld in r["loads"]}
            assert loads.get(lk["key"]) == lk["hit"], (lk, loads)
            compared += 1
    # Every AOTAutograd hit match predicts for this function's keys is torch's hit.
    # (Other functions with a parameter of the same name bind too; torch never looks them up.)
    torch_aot = {lk["key"]: lk["hit"] for lk in lookups if lk["kind"] == "aotautograd"}
    for key, r in ours.items():
        if key in own_keys and r["kind"] == "aotautograd" and r["status"] == "hit":
            assert torch_aot.get(key) == r["hit"], (key, r["hit"], torch_aot)
    assert compared or not any(lk["key"] in present for lk in lookups)
    return compared


def torch_status(lookups: list[dict], present: set[str]) -> str:
    """What torch did for one call, as ``fxcache match`` words a function's verdict: its
    first lookup by guards (AOTAutograd, or FX where torch bypassed the AOTAutograd cache)
    on a key the cache did not have is ``new-graph``; a hit whose FX entries loaded too
    is ``hit``; anything else ``miss``."""
    first = next(lk for lk in lookups if lk["mode"] == "guards")
    if first["key"] not in present:
        return "new-graph"
    exact = [lk["hit"] for lk in lookups if lk["mode"] == "exact"]
    return "hit" if first["hit"] and all(exact) else "miss"


def assert_verdict_as_torch(cache_root: Path, case: str, shapes: list, answer: dict, fn: str) -> dict:
    """``fxcache match --fn FN`` for a call of a demo case says what torch did
    (:func:`torch_status` of torch's ``answer``): hit, miss or new graph, decided.
    Returns the function's verdict (JSON)."""
    import json

    from fxcache_core.cache.scan import scan_cache
    from tests.harness.match_runs import Call, match_call

    proc = match_call(cache_root, Call(case, shapes, fn))
    report = json.loads(proc.stdout)
    assert answer["error"] is None, answer["error"]
    want = torch_status(answer["lookups"], {k.key for k in scan_cache(cache_root).keys})
    verdicts = report["verdicts"]["functions"]
    assert verdicts and all(v["status"] == want for v in verdicts), (case, shapes, want, verdicts)
    return verdicts[0]


# --- describing a call of a demo case to `fxcache match` --------------------------


def _names(case: str) -> list[str]:
    from tests.harness.cases import CASES

    return list(inspect.signature(CASES[case].fn).parameters)


def _is_shape(desc) -> bool:
    return isinstance(desc, list) and all(isinstance(d, int) for d in desc)


def _marked(case: str, shapes: list, attr: str = "_dynamo_dynamic_indices") -> dict[str, list[int]]:
    """The dims the case's own ``make_inputs`` marks dynamic (``attr``: the tensor's set of
    marked dims; ``_dynamo_static_indices``: static), per parameter name."""
    from tests.harness.cases import CASES

    c = CASES[case]
    args, kwargs = c.make_inputs(shapes)
    bound = inspect.signature(c.fn).bind(*args, **kwargs).arguments
    return {name: sorted(getattr(v, attr)) for name, v in bound.items() if getattr(v, attr, None)}


# Locals of frames other than the function's own that a call's graphs are keyed on,
# as `--shapes` items from the call's shapes. calls_helper's graph break leaves the
# helper's resume frame, keyed on its local t = x * 0.5 - 1: x's shape, and its dims
# come out of a graph compiled with dynamic=True, so Dynamo marks them dynamic
# (_dynamo_propagated_dynamic_indices): never duck-sized.
_OTHER_FRAMES = {
    "calls_helper": lambda shapes: [f"t={json.dumps(shapes[0]).replace(' ', '')}:mark_dynamic=[0,1]"],
    "step_loss": lambda shapes: ["loss=[]"],  # the resume frame's local, as the docs say to name it
    # y = x.sin() before the graph break: the resume frame's local, x's shape
    "gated": lambda shapes: [f"y={json.dumps(shapes[0]).replace(' ', '')}"],
    "gated_early": lambda shapes: [f"y={json.dumps(shapes[0]).replace(' ', '')}"],
}


def match_args_for(case: str, shapes: list) -> list[str]:
    """The arguments of ``fxcache match`` for a call of a ``tests.harness.cases`` case (imports torch).

    ``--dynamic`` as the case is compiled; ``--shapes`` per parameter (``x=[4,3]``,
    ``n=7``, ``xs[0]=[3,4]`` for a list), with ``:mark_dynamic=[...]`` where the
    case's inputs are marked and ``:requires_grad=...`` where the trailing dict says
    (``"w.requires_grad": False``); ``--inputs NAME=VALUE`` for the rest of a trailing dict of keyword
    Python values (``{"clip": True}``: tests/harness/cases_args.py); and the locals
    of other frames (``_OTHER_FRAMES``).
    """
    from tests.harness.cases import CASES

    dynamic = CASES[case].compile_kwargs.get("dynamic")
    out = ["--dynamic", {True: "true", None: "none", False: "false"}[dynamic]]
    # Duck sizing as the case runs (torch's default: on): the session's cache holds
    # keys compiled with it off, evidence that makes a duck-sizing conflict undecided
    # when the call does not say.
    if CASES[case].fx_config.get("use_duck_shape") is False:
        out.append("--no-duck-shape")
    elif dynamic is True:
        out.append("--duck-shape")
    marked = _marked(case, shapes)
    static = _marked(case, shapes, "_dynamo_static_indices")
    keywords = shapes[-1] if shapes and isinstance(shapes[-1], dict) else {}
    shapes = shapes[:-1] if keywords else shapes
    grads = {k.removesuffix(".requires_grad"): v for k, v in keywords.items() if k.endswith(".requires_grad")}
    keywords = {k: v for k, v in keywords.items() if not k.endswith(".requires_grad")}
    transposed = {_names(case)[i] for i in keywords.get("@transposed", ())}
    for name, desc in zip(_names(case), shapes, strict=False):
        if isinstance(desc, list) and desc and all(_is_shape(d) for d in desc):
            for i, d in enumerate(desc):
                out += ["--shapes", f"{name}[{i}]={json.dumps(d).replace(' ', '')}"]
        else:
            mark = f":mark_dynamic={json.dumps(marked[name])}" if name in marked else ""
            mark += f":mark_static={json.dumps(static[name])}" if name in static else ""
            mark += f":requires_grad={grads[name]}" if name in grads else ""
            mark += f":stride=[1,{desc[0]}]" if name in transposed else ""  # keyword_inputs' "@transposed"
            out += ["--shapes", f"{name}={json.dumps(desc)}{mark}".replace(" ", "")]
    for name, value in keywords.items():  # Python values: --inputs NAME=VALUE as Python writes it
        if name.startswith("@"):
            continue  # a setting of the call (keyword_inputs'), no argument
        if isinstance(value, dict) and set(value) == {"dtype"}:
            out += ["--inputs", f"{name}=torch.{value['dtype']}"]
            continue
        if isinstance(value, dict) and set(value) == {"tuple"}:
            value = tuple(value["tuple"])
        out += ["--inputs", f"{name}={value!r}"]
    for item in _OTHER_FRAMES.get(case, lambda _: [])(shapes):
        out += ["--shapes", item]
    return out


# --- a Redis server for the --remote tests ---------------------------------------


def call_label(case: str, shapes: list, *options: dict) -> str:
    """A test id for a call of a ``tests.harness.cases`` case (``-after-recompile`` where
    the call has options: a warm-up call before it)."""
    return f"{case}-{json.dumps(shapes).replace(' ', '')}" + ("-after-recompile" if options else "")


def match_call(root: Path, case: str, shapes: list, *extra: str) -> tuple[int, dict]:
    """``fxcache match --json --fn CASE`` for a call of a case (:func:`match_args_for`),
    ``extra`` after it: the exit code and the JSON, whose ``exit_code`` must be the run's
    (the run made ahead where the test planned it: ``tests.harness.match_runs``)."""
    from tests.harness.match_runs import Call
    from tests.harness.match_runs import match_call as served

    proc = served(root, Call(case, shapes, case, tuple(extra)))
    body = json.loads(proc.stdout)
    assert proc.returncode == body["verdicts"]["exit_code"], proc.stderr
    return proc.returncode, body


def assert_undecided_where_torch_decided(root: Path, case: str, shapes: list, answer: dict) -> str:
    """``fxcache match --fn CASE`` for a call of a case exits 3 with its one function
    UNDECIDED, and torch's recorded ``answer`` for the call is a decided one (a hit or a
    new graph): a rule that stays undecided must do so where torch did decide. Returns
    torch's status (:func:`torch_status`), for a test that knows which it must be."""
    from fxcache_core.cache.scan import scan_cache

    rc, body = match_call(root, case, shapes)
    (fv,) = body["verdicts"]["functions"]
    assert rc == 3 and fv["status"] == "undecided", fv
    assert answer["error"] is None, answer["error"]
    status = torch_status(answer["lookups"], {k.key for k in scan_cache(root).keys})
    assert status in ("hit", "new-graph"), status
    return status


def aot_hit(answer: dict) -> tuple[str, str]:
    """The AOTAutograd key and entry a recorded torch answer hit (it hit exactly one)."""
    (lk,) = [lk for lk in answer["lookups"] if lk["kind"] == "aotautograd" and lk["hit"]]
    return lk["key"], lk["hit"]


def free_port() -> int:
    """A TCP port on 127.0.0.1 nothing listens on now."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_redis(tmp: Path, *extra: str) -> tuple[subprocess.Popen, int]:
    """A throwaway ``redis-server`` (no persistence, data under ``tmp``, ``extra``
    arguments), listening: (the process, its port). The caller kills it. Skips the
    test where redis-server is not installed, and fails it under CI (.ci/run installs it)."""
    import shutil
    import socket
    import time

    import pytest

    exe = shutil.which("redis-server")
    if exe is None:
        if os.environ.get("CI"):
            pytest.fail("redis-server is not installed (.ci/run installs it)")
        pytest.skip("redis-server is not installed (apt-get install redis-server)")
    port = free_port()
    proc = subprocess.Popen([exe, "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                             "--appendonly", "no", "--dir", str(tmp), *extra],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(100):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.1).close()
            return proc, port
        except OSError:
            time.sleep(0.05)
    proc.kill()
    pytest.fail("redis-server did not start")


class Hung(BaseException):
    """Raised in a call blocked too long (not an OSError: code under test catches those)."""


@contextlib.contextmanager
def alarm(seconds: float):
    """Fail (:class:`Hung`) instead of hanging: a SIGALRM sent to this (the main) thread
    interrupts a blocked open(). Sent to the thread, not the process: with other
    threads running (the session's background builds), a process signal may land
    in one of them and leave the main thread blocked."""
    import threading

    def ring(*_):
        raise Hung(f"still blocked after {seconds} s")

    main = threading.main_thread().ident
    old = signal.signal(signal.SIGALRM, ring)
    timer = threading.Timer(seconds, signal.pthread_kill, (main, signal.SIGALRM))
    timer.start()
    try:
        yield
    finally:
        timer.cancel()
        signal.signal(signal.SIGALRM, old)
