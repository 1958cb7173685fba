"""What torch itself does with a cache: the ground truth for fxcache's tests.

    python -m tests.harness.oracle CACHE_DIR CASE SHAPES_JSON

runs in a fresh process: sets ``TORCHINDUCTOR_CACHE_DIR`` (and the cache
switches of ``demo.build_cache``), wraps ``FxGraphCache.find_guarded_entry`` and
``AOTAutogradCache.find_guarded_entry`` (the originals still run, unchanged),
calls the compiled case once (plus ``.backward()`` for training cases) and
prints one JSON object as the last line of stdout::

    {"case": "branch_on_size", "shapes": [[4, 3]], "cache_dir": "/abs",
     "torch_version": "2.13.0+cpu", "pid": 4242,   # the process that made the call
     "error": null | {"type": "ConstraintViolationError", "message": "..."},
     "counters": {"fxgraph_cache_hit": 1, "fxgraph_cache_miss": 0,
                  "fxgraph_cache_bypass": 0, "autograd_cache_hit": 1,
                  "autograd_cache_miss": 0, "autograd_cache_guard_miss": 0,
                  "autograd_cache_bypass": 0, "autograd_cache_saved": 0},
     "lookups": [                              # in the order torch made them
       {"kind": "aotautograd" | "fxgraph",
        "key": "<cache key = directory name>",
        "hit": "<entry file name>" | null,     # sha256_hash(pickled bytes) == file name
        "hints": [4, 3],                       # ints passed to find_guarded_entry
        "status": "hit" | "guard_miss" | "full_miss",
        "mode": "guards" | "exact" | "skip",   # how guards were judged (see below)
        "candidates": ["<entry>", ...],        # non-dot entry files, sorted, before lookup
        "phase": "forward" | "backward",       # during the call / during loss.backward()
        "graph": "forward" | "backward",       # fxgraph only: which graph of the pair
        "guards_expr": "<hit entry's guards_expr>",           # only on a hit
        "fx_refs": {"compiled_fw": {"key": ..., "guards_expr": ...},
                    "compiled_bw": {...}}},    # aotautograd hit only
       ...],
     "writes": [{"kind": ..., "key": ..., "entry": "<new file name>", "phase": ...}]}

``torch_lookups(cache_dir, case, shapes)`` runs it in a subprocess and returns
the parsed dict. Importing torch and Inductor takes most of such a process's
time (9 of 13 s for a small case on 2 cores), so a test session starts one
:class:`ForkServer` (``python -m tests.harness.oracle --serve``): it imports them once,
compiles nothing, and forks a child per query. The child starts as a fresh
process does after those imports (no Dynamo, Inductor or automatic-dynamic
state: nothing was traced or compiled before the fork, which
``tests/torch/test_fork_server.py`` checks against fresh processes).

A miss WRITES new entries into the cache: run the oracle on a copy
(``shutil.copytree``, or ``torch_lookups(..., on_copy=True)``) to compare
against the cache as it was.

The recorder wraps the same methods, with the same signatures, in torch 2.14.1
and 2.15.0 (``GuardedCache.find_guarded_entry``, ``iterate_over_candidates``'s
order and filter, ``FxGraphCache.load_with_key(..., is_backward, ...)``,
``_write_to_local_cache``), so it records those versions unchanged
(tools/build_torch_versions.py).

Findings (torch 2.13.0+cpu, evidence: the oracle's own output on the demo cache,
checked in tests/torch/test_fork_server.py)
-------------------------------------------------------------------------------
* Order per call, fresh process: dynamo traces, then ONE ``aotautograd`` lookup;
  on an AOTAutograd miss, inductor compiles and makes an ``fxgraph`` lookup for
  the forward graph and (training) one for the backward graph -- the backward is
  compiled eagerly, during the forward call, not at ``.backward()`` -- then writes
  fxgraph entries (fw, bw) and finally the aotautograd entry. An AOTAutograd
  entry is written even when the FX lookups hit.
* On an AOTAutograd hit the FX entries are still fetched through
  ``FxGraphCache.find_guarded_entry`` (fw, then bw), but with
  ``evaluate_guards=check_exact_guard_match``: an FX entry matches only if its
  ``guards_expr`` string is identical to the ``fx_graph_guard_expr`` stored in
  the AOT entry (``mode: "exact"``); shape guards are not evaluated. As always an
  entry with an empty/None ``guards_expr`` matches unconditionally, and the first
  match in sorted file-name order wins. Guards are evaluated (``mode:
  "guards"``, ``ShapeEnv.evaluate_guards_expression(expr, hints)``) for the AOT
  lookup and, only on an AOT miss, for the FX lookups.
* If the AOT entry is found but a referenced FX entry is missing, torch raises
  ``FXGraphCacheMiss`` internally: ``find_guarded_entry`` reported a hit for
  ``aotautograd`` but the counters say ``autograd_cache_miss``; torch then
  recompiles (a second, ``mode: "guards"`` FX lookup) and writes a NEW
  aotautograd entry next to the old one under the same key.
* ``hints`` are the backed SymInt graph inputs in placeholder order, which is
  the order dynamo allocated the symbols: each dynamic size at its first
  appearance in the arguments (duck sizing: ``x[6,5] + bias[5]`` -> ``[6, 5]``,
  one symbol for both 5s), dynamic ints as their own entry (``int_arg(x[5], 2)``
  -> ``[5, 2]``); static/specialized sizes (0/1, ``nn.Linear`` in-features) are
  absent. ``guards_expr`` names them ``L['t0']``, ``L['t1']``, ... = hints[0],
  hints[1], ...; e.g. ``"2 <= L['t0'] and L['t0'] <= 8 and 2 <= L['t1']"``.
  The same hint list is used for the AOT lookup and both FX lookups (on an AOT
  hit the backward FX lookup gets the forward arguments' symints).
* ``dynamic=None`` in a fresh process: the first call compiles STATIC (hints
  ``[]``, ``guards_expr`` None, a key per concrete shape). A cache built with
  calls [4,3], [6,3], [10,3] holds a static key for [4,3] and a dynamic key for
  the recompile; a fresh process calling [10,3] misses (new static key) even
  though the dynamic entry would accept 10, while [4,3] hits the static entry.
  Local automatic-dynamic PGO does not kick in: it needs
  ``torch.compiler.config.job_id``, and no ``dynamo/`` dir is written.
* An int argument under ``dynamic=None`` is treated like a tensor dim: the first
  call bakes its value into the graph (a key per value, no SymInt), a later call
  with another value recompiles with it a SymInt. ``int_arg_auto`` built with
  n=2 then n=3: a fresh process calling n=2 hits the static key; n=3 or n=9
  looks up a key the cache does not have (``full_miss``), although the SymInt
  key would accept them.
* ``dynamic=True`` writes range guards ``2 <= L['tN']`` (0/1 specialization);
  a size-1 dim gives a different graph and key (the symbol disappears from the
  hints). ``mark_dynamic(x, 0, min=2, max=64)`` gives ``... and L['t0'] <= 64``;
  calling outside that range fails in dynamo (``ConstraintViolationError``)
  before any cache lookup. ``view(-1, 4)`` gives
  ``(L['t0'] % 4) == 0 and L['t0'] == (4*(L['t0'] // 4)) and 8 <= L['t0']``.
  Inductor adds guards of its own too (``train_mlp``: ``L['t0'] <= 24``; a batch
  of 30 is a guard miss on the forward key and needs a different BACKWARD key).
* A branch on a size traced into the same graph gives one key with several
  entries differing only in ``guards_expr`` (``same_graph_two_regions``: fxgraph
  and aotautograd keys each with ``... L['t0'] <= 7 ...`` and ``16 <= L['t0']``);
  a size in the unbuilt middle region is a ``guard_miss`` on both keys and adds
  a third entry. A branch whose sides trace different graphs
  (``branch_on_size``) gives a different key: the unbuilt side is a
  ``full_miss`` (``candidates: []``).
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import sys
import threading
from collections.abc import Callable, Iterator
from typing import Any

from demo.recorder import counters, install_recorder


def run_oracle(cache_dir: str | os.PathLike[str], case_name: str, shapes: list[Any],
               warm_up: list[list[Any]] | None = None, job_id: str | None = None) -> dict:
    """In this (fresh) process: compile ``case_name`` and call it once on ``shapes``.

    An exception raised by the call (e.g. a ``mark_dynamic`` range violation) is
    reported under ``"error"`` rather than raised: what torch does is the answer.

    ``warm_up``: calls made first, in this process, with the same compiled function,
    and not recorded (the recorded call is then a later call: after a recompile under
    automatic dynamic, when a size changed). ``job_id``: ``torch.compiler.config.job_id``
    (``TORCH_COMPILE_JOB_ID``), set before anything is compiled: Dynamo then reads its
    saved profile from ``<cache dir>/dynamo/`` and writes it back after each compile
    (torch/_dynamo/pgo.py).
    """
    from demo.build_cache import configure_torch, prepare_env

    # A query's cache is a copy of a built one, as torch left it: nothing copied in.
    cache_dir = prepare_env(cache_dir, isa_checks=False)
    import torch

    configure_torch(isa_checks=False)
    from tests.harness.cases import CASES, compile_case, run_call

    if case_name not in CASES:
        raise KeyError(f"unknown case {case_name!r}; known: {', '.join(CASES)}")
    case = CASES[case_name]
    rec = install_recorder()
    torch._dynamo.reset()
    if job_id is not None:
        torch.compiler.config.job_id = job_id
    compiled = compile_case(case)
    for earlier in warm_up or ():
        run_call(case, compiled, earlier)
    torch._dynamo.utils.counters.clear()
    rec.clear()
    error = None
    try:
        run_call(case, compiled, shapes, on_phase=rec.set_phase)
    except Exception as e:  # noqa: BLE001 - reported, not hidden
        error = {"type": type(e).__name__, "message": str(e).strip().splitlines()[0][:500]}
    return {
        "cache_dir": cache_dir,
        "case": case_name,
        "shapes": shapes,
        "lookups": list(rec.lookups),
        "writes": list(rec.writes),
        "counters": counters(),
        "error": error,
        "torch_version": torch.__version__,
        "pid": os.getpid(),
        "warm_up": warm_up or [],
        "job_id": job_id,
    }


def torch_lookups(
    cache_dir: str | os.PathLike[str],
    case: str,
    shapes: list[Any],
    python: str = sys.executable,
    timeout: float = 300,
    *,
    on_copy: bool = False,
    fresh: bool = False,
    server: ForkServer | None = None,
) -> dict:
    """Run ``python -m tests.harness.oracle`` in a fresh process and return its JSON (or, given
    ``server`` or after :func:`use_server`, and unless ``fresh``, ask that :class:`ForkServer`:
    a child forked for the query). The fresh process starts as
    :func:`demo.build_cache.run_json_subprocess` starts one: in a test session, a child of the
    zygote (``tests/harness/zygote.py``) where the environment is the zygote's.

    The oracle runs a real ``torch.compile``: on a miss torch WRITES new entries
    into ``cache_dir``. Run it on a copy (``shutil.copytree``) when you want to
    compare against the cache as it was -- or pass ``on_copy=True`` to have this
    function copy ``cache_dir`` to a temporary directory first (the result's
    ``cache_dir`` then names that copy, which is deleted afterwards).
    """
    from demo.build_cache import run_json_subprocess

    if on_copy:
        import shutil
        import tempfile

        with tempfile.TemporaryDirectory(prefix="fxcache-oracle-") as tmp:
            copy = os.path.join(tmp, "cache")
            shutil.copytree(cache_dir, copy, symlinks=True)
            return torch_lookups(copy, case, shapes, python, timeout, fresh=fresh, server=server)
    server = server or _server
    if server is not None and python == sys.executable and not fresh:
        return server.lookups(cache_dir, case, shapes, timeout)
    argv = ["-m", "tests.harness.oracle", os.path.abspath(os.fspath(cache_dir)), case, json.dumps(shapes)]
    return run_json_subprocess(argv, python=python, timeout=timeout)


# What a query imports lazily, besides torch: imported by the server before it forks.
_PRELOAD = ("torch._dynamo", "torch._inductor.compile_fx", "torch._inductor.codecache",
            "torch._functorch._aot_autograd.autograd_cache", "tests.harness.cases")


def _warm_toolchain_facts() -> None:
    """Compute once, in this server, what torch memoizes per process about the machine:
    which vector ISAs the CPU and g++ support (``cpu_vec_isa.valid_vec_isa_list``, a g++
    build and a python run per ISA, about 1.5 s). Every child then starts with them, as a
    fresh process has them after its first compile; they depend on the machine only,
    never on a cache's content. The check programs torch builds go to a dir of their own,
    removed here, never into a cache a query looks at."""
    import shutil
    import tempfile

    from torch._inductor import cpu_vec_isa

    before = os.environ.get("TORCHINDUCTOR_CACHE_DIR")
    warm = tempfile.mkdtemp(prefix="fxcache-oracle-isa-")
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = warm
    try:
        cpu_vec_isa.valid_vec_isa_list()
        cpu_vec_isa.pick_vec_isa()
    finally:
        if before is None:
            os.environ.pop("TORCHINDUCTOR_CACHE_DIR", None)
        else:
            os.environ["TORCHINDUCTOR_CACHE_DIR"] = before
        shutil.rmtree(warm, ignore_errors=True)


def serve_forked(requests: Any, replies: Any, answer: Callable[[dict], dict],
                 preload: tuple[str, ...] = _PRELOAD) -> None:
    """A fork server's loop (this module's ``--serve``, and the evaluation's
    ``tests.harness.evaluation.torch_side --serve``): import torch and ``preload`` once,
    compute the machine's ISA facts (:func:`_warm_toolchain_facts`), then answer each
    request line (a JSON object with a ``cache_dir``) with ``answer(request)``'s JSON, one
    line, computed in a child forked for it; a failed child answers ``{"failed": "..."}``.

    Nothing is traced or compiled here, so each child's Dynamo and Inductor state
    is a fresh process's (but for the machine's ISA facts torch memoizes).
    ``TORCHINDUCTOR_CACHE_DIR`` is read when torch uses it
    (``torch/_inductor/runtime/cache_dir_utils.py``), so the child sets the request's.
    """
    import importlib
    import tempfile
    import traceback

    from demo.build_cache import configure_torch, prepare_env

    placeholder = tempfile.mkdtemp(prefix="fxcache-fork-server-")
    prepare_env(placeholder, isa_checks=False)  # the server checks the ISAs itself, below
    import torch  # noqa: F401

    configure_torch(isa_checks=False)
    for name in preload:
        importlib.import_module(name)
    from tests.harness.guard_profile import skip_guard_latency_profile

    skip_guard_latency_profile()
    os.rmdir(placeholder)  # importing must write nothing into a cache dir: if it did, this raises
    _warm_toolchain_facts()
    for line in requests:
        if not line.strip():
            continue
        req = json.loads(line)
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child: one request, then _exit (no atexit, no flush of the parent's files)
            try:
                os.close(r)
                try:
                    os.environ["TORCHINDUCTOR_CACHE_DIR"] = os.path.abspath(req["cache_dir"])
                    out = json.dumps(answer(req), sort_keys=True)
                except BaseException:  # noqa: BLE001 - sent to the caller, who raises it
                    out = json.dumps({"failed": traceback.format_exc()[-8000:]})
                with os.fdopen(w, "w") as f:
                    f.write(out)
            finally:
                os._exit(0)  # never back into this loop, whatever happened
        os.close(w)
        with os.fdopen(r) as f:
            out = f.read()
        _, status = os.waitpid(pid, 0)
        if not out:
            code = os.waitstatus_to_exitcode(status)
            out = json.dumps({"failed": f"the request's process ended with exit code {code} and no answer"})
        replies.write(out + "\n")
        replies.flush()


def serve_stdio(answer: Callable[[dict], dict], preload: tuple[str, ...] = _PRELOAD) -> None:
    """:func:`serve_forked` on stdin, replying on stdout; whatever torch or a request
    prints goes to stderr, never into the replies."""
    replies = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    serve_forked(sys.stdin, replies, answer, preload)


def _answer(req: dict) -> dict:
    """One query of the oracle's server: :func:`run_oracle` of the request."""
    return run_oracle(req["cache_dir"], req["case"], req["shapes"], req.get("warm_up"), req.get("job_id"))


def _relevant(env: dict[str, str]) -> dict[str, str]:
    """What of an environment a query's torch can see: pytest's per-test variables and
    fxcache's own settings (the index, worker counts) are not read by torch."""
    return {k: v for k, v in env.items() if not k.startswith(("PYTEST_", "FXCACHE_"))}


class ForkServer:
    """A ``python -m tests.harness.oracle --serve`` process: :meth:`lookups` is
    :func:`torch_lookups` (a fresh process's lookups) without importing torch again.
    Started by the first query, and again by a query after the environment a fresh
    process would get has changed (:meth:`stale`).

    Raises ``RuntimeError`` when the server or a query fails, ``TimeoutError`` when a
    query takes over ``timeout`` seconds (the server is then stopped). Not thread-safe.
    """

    def __init__(self, python: str = sys.executable) -> None:
        from demo.build_cache import _child_env

        self._python = python
        self._env = _child_env()  # what the server was (or will be) started with
        self._proc: Any = None  # started by the first query
        self._log: Any = None

    def stale(self) -> bool:
        """Whether a fresh process started now would get another environment than the
        server's (a test changed ``TMPDIR``, say): the next query restarts the server.
        pytest's own variables (``PYTEST_CURRENT_TEST`` changes with every test) do not count."""
        from demo.build_cache import _child_env

        return _relevant(_child_env()) != _relevant(self._env)

    def start(self) -> None:
        """Start the server now, without waiting: it imports torch while the caller goes
        on, and the first query waits for it. (A query starts it otherwise.)"""
        self._start()

    def _start(self) -> Any:
        import subprocess
        import tempfile

        from demo.build_cache import REPO_ROOT, _child_env

        if self._proc is not None and self.stale():
            self.close()
        if self._proc is None:
            self._env = _child_env()
            self._log = tempfile.TemporaryFile()
            # A session of its own: close() can stop the server and a query's child together.
            self._proc = subprocess.Popen(
                [self._python, "-m", "tests.harness.oracle", "--serve"], cwd=REPO_ROOT, env=self._env,
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._log, text=True,
                start_new_session=True)
        return self._proc

    def lookups(self, cache_dir: str | os.PathLike[str], case: str, shapes: list[Any],
                timeout: float = 300, warm_up: list[list[Any]] | None = None,
                job_id: str | None = None) -> dict:
        """What :func:`run_oracle` returns for one call (after ``warm_up``, under ``job_id``),
        made in a forked child.

        A server that failed is stopped, and the next query starts another.
        """
        import selectors

        proc = self._start()
        req = {"cache_dir": os.path.abspath(os.fspath(cache_dir)), "case": case, "shapes": shapes,
               "warm_up": warm_up, "job_id": job_id}
        assert proc.stdin is not None and proc.stdout is not None
        try:
            proc.stdin.write(json.dumps(req) + "\n")
            proc.stdin.flush()
        except OSError:
            line = ""  # the server has exited: said below
        else:
            with selectors.DefaultSelector() as sel:
                sel.register(proc.stdout, selectors.EVENT_READ)
                if not sel.select(timeout):
                    self.close(kill=True)
                    raise TimeoutError(f"oracle query {case} {shapes} took over {timeout} s")
            line = proc.stdout.readline()
        if not line:
            log = self._stderr()
            self.close(kill=True)
            raise RuntimeError(f"the oracle server has exited:\n{log}")
        out = json.loads(line)
        if "failed" in out:
            raise RuntimeError(f"oracle query {case} {shapes} failed:\n{out['failed']}")
        return out

    def _stderr(self) -> str:
        self._log.seek(0)
        return self._log.read().decode(errors="replace")[-8000:]

    def close(self, kill: bool = False) -> None:
        """Stop the server: at once with ``kill`` (with the child of a query in flight,
        as the server has a session of its own), else once its query is answered."""
        import signal

        proc, self._proc = self._proc, None
        if proc is None:
            return
        if kill and proc.poll() is None:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        for f in (proc.stdin, proc.stdout):
            try:
                f.close()
            except OSError:
                pass
        try:
            proc.wait(timeout=30)
        except Exception:  # noqa: BLE001 - it is stopped either way
            proc.kill()
            proc.wait()
        self._log.close()


_server: ForkServer | None = None


def call_id(case: str, shapes: list[Any], options: dict | None = None) -> str:
    """One call's name: ``case-[[4,3]]``, with its options (``warm_up``, ``job_id``) if any."""
    tail = f"-{json.dumps(options, sort_keys=True).replace(' ', '')}" if options else ""
    return f"{case}-{json.dumps(shapes).replace(' ', '')}{tail}"


_ANSWERS_LOCK = threading.Lock()
_answers_server: ForkServer | None = None


@contextlib.contextmanager
def builds_server() -> Iterator[ForkServer]:
    """The one :class:`ForkServer` the background builds share (started by its first query,
    stopped at exit), held by the caller alone while the ``with`` block runs: builds on
    other threads wait for it. Its children answer as a fresh process's first call
    (test_fork_server.py)."""
    global _answers_server
    with _ANSWERS_LOCK:
        if _answers_server is None:
            _answers_server = ForkServer()
            # at exit no build asks it anything more: stopped at once (waiting for it to
            # see its stdin closed cost the session 30 s)
            atexit.register(_answers_server.close, True)
        yield _answers_server


def answers(cache_dir: str | os.PathLike[str], calls: list[tuple[str, list[Any]] | tuple[str, list[Any], dict]],
            timeout: float = 300) -> dict[str, dict]:
    """Torch's lookups for many calls of ``tests.harness.cases`` cases, each made on a fresh copy of
    ``cache_dir`` (which stays as it was) by a child of one :class:`ForkServer`, so each
    call is a fresh process's first call on the cache as given (or, with a third element,
    options for :func:`run_oracle`: ``warm_up`` calls first, a ``job_id``). Every caller
    (the background builds of several test files) shares that one server
    (:func:`builds_server`), one at a time, restarted only when the environment a fresh
    process would get has changed. Returns :func:`call_id` -> what :func:`torch_lookups` returns."""
    import shutil
    import tempfile

    out: dict[str, dict] = {}
    with builds_server() as server:
        for case, shapes, *more in calls:
            options = more[0] if more else {}
            with tempfile.TemporaryDirectory(prefix="fxcache-oracle-") as tmp:
                copy = os.path.join(tmp, "cache")
                shutil.copytree(cache_dir, copy, symlinks=True)
                out[call_id(case, shapes, options)] = server.lookups(copy, case, shapes, timeout, **options)
    return out


def use_server(server: ForkServer | None) -> ForkServer | None:
    """Make :func:`torch_lookups` (with the default ``python``) ask ``server``; None: a
    new process per query again. Returns the server used before."""
    global _server
    previous, _server = _server, server
    return previous


def main(argv: list[str] | None = None) -> int:
    import argparse

    if argv is None:
        argv = sys.argv[1:]
    if argv == ["--serve"]:
        serve_stdio(_answer)
        return 0
    p = argparse.ArgumentParser(prog="python -m tests.harness.oracle",
                                epilog="python -m tests.harness.oracle --serve: answer one JSON query a line")
    p.add_argument("cache_dir")
    p.add_argument("case")
    p.add_argument("shapes_json", help='e.g. "[[4, 3]]" or "[[5], 2]"')
    p.add_argument("--warm-up", default="[]", help='calls made first, not recorded: e.g. "[[[4, 6]]]"')
    p.add_argument("--job-id", default=None, help="torch.compiler.config.job_id (saved profiles)")
    ns = p.parse_args(argv)
    result = run_oracle(ns.cache_dir, ns.case, json.loads(ns.shapes_json), json.loads(ns.warm_up), ns.job_id)
    sys.stdout.write(json.dumps(result, sort_keys=True) + "\n")
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
