"""Build a real Inductor compile cache from a corpus of cases (``demo.cases``'s :class:`Case`).

Run it in a fresh process, because ``TORCHINDUCTOR_CACHE_DIR`` and the cache
switches must be set before torch is imported::

    python -m demo.build_cache CACHE_DIR [--cases a,b] [--corpus MODULE,...]

The corpus is one or more modules, each with a ``CASES`` dict (name -> ``Case``),
built in order: by default the demo's (:data:`DEMO_CORPUS`: ``demo.cases``' eight
functions, then ``demo.models``' small transformers model); the tests build theirs
(``tests.harness.cases``).

It prints one JSON object (the summary) as the last line of stdout::

    {"cache_dir": "/abs/path", "torch_version": "2.13.0+cpu", "seconds": 21.3,
     "cases": {"<name>": {"compile_kwargs": {...}, "train": false,
                          "calls": [<shape description>, ...],
                          "seconds": 1.9,
                          "lookups": [[<lookup>, ...], ...],   # one list per call
                          "writes":  [[<write>, ...], ...],    # one list per call
                          "counters": {"fxgraph_cache_hit": 0, ...}}}}

``lookups`` / ``writes`` are ``demo.recorder``'s records (what torch looked up and
which entry files it wrote during that call; the format is described in
``tests/harness/oracle.py``).

From other code (tests), use :func:`build_cache_subprocess`; how its process
starts is a :class:`BuildOptions`, given to the call or set for a block of calls
(:func:`use_build_options`). Importing this module does not import torch.
"""

from __future__ import annotations

import argparse
import contextlib
import contextvars
import importlib
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

REPO_ROOT = Path(__file__).resolve().parent.parent

# Environment that makes the local caches definitely on and every remote cache
# off. Names checked against torch 2.13: torch/_inductor/config.py
# (fx_graph_cache <- TORCHINDUCTOR_FX_GRAPH_CACHE, fx_graph_remote_cache,
# autotune_remote_cache, bundled_autotune_remote_cache) and
# torch/_functorch/config.py (enable_autograd_cache <- TORCHINDUCTOR_AUTOGRAD_CACHE,
# enable_remote_autograd_cache <- TORCHINDUCTOR_AUTOGRAD_REMOTE_CACHE).
CACHE_ENV = {
    "TORCHINDUCTOR_FX_GRAPH_CACHE": "1",
    "TORCHINDUCTOR_AUTOGRAD_CACHE": "1",
    "TORCHINDUCTOR_FX_GRAPH_REMOTE_CACHE": "0",
    "TORCHINDUCTOR_AUTOGRAD_REMOTE_CACHE": "0",
    "TORCHINDUCTOR_AUTOTUNE_REMOTE_CACHE": "0",
    "TORCHINDUCTOR_BUNDLED_AUTOTUNE_REMOTE_CACHE": "0",
    # One in-process compile thread: on a 2-core box the worker pool costs more
    # than it saves for graphs this small.
    "TORCHINDUCTOR_COMPILE_THREADS": "1",
}
_UNSET_ENV = ("TORCHINDUCTOR_FORCE_DISABLE_CACHES", "TORCH_COMPILE_DEBUG")


def prepare_env(cache_dir: str | os.PathLike[str], isa_checks: bool = True) -> str:
    """Set the cache env vars in ``os.environ``. Call before importing torch.
    ``isa_checks``: copy in torch's ISA check programs (:data:`ISA_SEED_ENV`)."""
    if "torch" in sys.modules:
        current = os.environ.get("TORCHINDUCTOR_CACHE_DIR")
        if current and os.path.abspath(current) != os.path.abspath(cache_dir):
            raise RuntimeError("torch already imported with another TORCHINDUCTOR_CACHE_DIR")
    cache_dir = os.path.abspath(os.fspath(cache_dir))
    os.makedirs(cache_dir, exist_ok=True)
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = cache_dir
    os.environ.update(CACHE_ENV)
    for name in _UNSET_ENV:
        os.environ.pop(name, None)
    _quiet_warnings()
    if isa_checks:
        _seed_isa_checks(cache_dir)
    return cache_dir


ISA_SEED_ENV = "FXCACHE_ISA_SEED"
"""A dir holding the programs torch builds to check which vector ISAs g++ and the CPU
support (``VecISA.check_build`` in torch/_inductor/cpu_vec_isa.py, a g++ build each,
about 9 s in all here): set by the test session, so that each fresh cache dir gets
them copied in instead of built again. Torch finds them where it would have put them
(``<cache dir>/<hash[1:3]>/``, named by a hash of the program and its flags), checks
they load, and skips the build; the cache holds exactly what it would have (the lock
files the checks take included)."""


def _seed_isa_checks(cache_dir: str) -> None:
    """Copy the ISA check programs of :data:`ISA_SEED_ENV` into a new cache dir."""
    import shutil

    seed = os.environ.get(ISA_SEED_ENV)
    if not seed or not os.path.isdir(seed):
        return
    for name in os.listdir(seed):
        if name == "locks":  # the lock files torch's checks take, as a fresh process leaves them
            os.makedirs(os.path.join(cache_dir, name), exist_ok=True)
            for lock in os.listdir(os.path.join(seed, name)):
                open(os.path.join(cache_dir, name, lock), "a").close()
        elif not os.path.exists(os.path.join(cache_dir, name)):
            shutil.copytree(os.path.join(seed, name), os.path.join(cache_dir, name), symlinks=True)


def _save_isa_checks(cache_dir: str) -> None:
    """Run torch's ISA checks now and, if :data:`ISA_SEED_ENV` names a dir not made
    yet, keep the programs they built there (made whole in a temp dir, then renamed)."""
    import shutil
    import tempfile

    from torch._inductor import cpu_vec_isa

    seed = os.environ.get(ISA_SEED_ENV)
    before = set(os.listdir(cache_dir))
    cpu_vec_isa.valid_vec_isa_list()
    if not seed or os.path.exists(seed):
        return
    made = sorted(set(os.listdir(cache_dir)) - before - {"locks"})
    if not made:  # checked already in this process, or the dir was seeded
        return
    tmp = tempfile.mkdtemp(prefix=".isa-", dir=os.path.dirname(seed))
    for name in made:
        shutil.copytree(os.path.join(cache_dir, name), os.path.join(tmp, name), symlinks=True)
    # Each check program is built under FileLock(<cache dir>/locks/<its name>.lock).
    programs = {f.split(".")[0] for name in made for f in os.listdir(os.path.join(cache_dir, name))}
    os.makedirs(os.path.join(tmp, "locks"))
    for program in sorted(programs):
        if os.path.exists(os.path.join(cache_dir, "locks", f"{program}.lock")):
            open(os.path.join(tmp, "locks", f"{program}.lock"), "a").close()
    try:
        os.rename(tmp, seed)
    except OSError:  # another process made it first
        shutil.rmtree(tmp, ignore_errors=True)


def _quiet_warnings() -> None:
    import warnings

    warnings.filterwarnings("ignore", message=".*Failed to initialize NumPy.*")
    warnings.filterwarnings("ignore", message=".*numpy.*", category=UserWarning)


def configure_torch(isa_checks: bool = True) -> None:
    """Set the cache switches on torch's config objects too (after import); with
    ``isa_checks``, run torch's ISA checks now and keep their programs for the next
    fresh cache dir (:data:`ISA_SEED_ENV`)."""
    import torch
    import torch._functorch.config as functorch_config
    import torch._inductor.config as inductor_config

    torch.compiler.config.force_disable_caches = False
    inductor_config.fx_graph_cache = True
    inductor_config.fx_graph_remote_cache = False
    inductor_config.autotune_remote_cache = False
    inductor_config.bundled_autotune_remote_cache = False
    functorch_config.enable_autograd_cache = True
    functorch_config.enable_remote_autograd_cache = False
    # Regular (non-bundled) AOTAutograd entries: they point at fxgraph keys.
    functorch_config.bundled_autograd_cache = False
    import logging

    logging.getLogger("torch._inductor").setLevel(logging.ERROR)
    cache_dir = os.environ.get("TORCHINDUCTOR_CACHE_DIR")
    if isa_checks and cache_dir and os.path.isdir(cache_dir):
        _save_isa_checks(cache_dir)


DEMO_CORPUS = ("demo.cases", "demo.models")
"""The modules whose ``CASES`` ``make demo`` builds (``demo.tour`` builds each in a
process of its own, side by side; one process builds them in this order)."""


def load_corpus(corpus: tuple[str, ...] | list[str]) -> dict[str, Any]:
    """Case name -> ``Case``, from the ``CASES`` of each module of ``corpus`` in order
    (imports them: torch, and transformers for ``demo.models``). Raises ``ValueError``
    when two modules name the same case."""
    cases: dict[str, Any] = {}
    for module in corpus:
        for name, case in importlib.import_module(module).CASES.items():
            if name in cases:
                raise ValueError(f"case {name!r} of {module} is in an earlier corpus module too")
            cases[name] = case
    return cases


def build_cache(cache_dir: str | os.PathLike[str], case_names: list[str] | None = None,
                pgo_job_id: str | None = None,
                corpus: tuple[str, ...] | list[str] = DEMO_CORPUS) -> dict:
    """Compile and call the chosen cases of ``corpus`` (default: all) into ``cache_dir``.

    ``pgo_job_id``: compile under this ``TORCH_COMPILE_JOB_ID``, so that Dynamo
    also writes its PGO state (``dynamo/code_state_<job>.pkl``), which a fresh
    process with that job id reads before its first call (``match`` reads it too:
    fxcache_core/decode/pgo.py).

    Must run in a process where torch has not been imported yet (or was
    imported with the same ``TORCHINDUCTOR_CACHE_DIR``): prefer
    :func:`build_cache_subprocess` or ``python -m demo.build_cache``.
    """
    cache_dir = prepare_env(cache_dir)
    if pgo_job_id is not None:
        # A job id turns on Dynamo's local PGO state (dynamo/code_state_<job>.pkl,
        # torch/_dynamo/pgo.py), as a user's job writes it. Only this process gets
        # it: tests.harness.oracle's processes (_child_env drops TORCH_COMPILE*) never read it.
        os.environ["TORCH_COMPILE_JOB_ID"] = pgo_job_id
    t_start = time.perf_counter()

    import torch

    if pgo_job_id is not None:  # read at import: set it too where torch was imported before
        torch.compiler.config.job_id = pgo_job_id

    configure_torch()

    from demo.cases import compile_case, run_call
    from demo.recorder import counters, install_recorder

    cases = load_corpus(corpus)
    names = list(cases) if case_names is None else list(case_names)
    unknown = [n for n in names if n not in cases]
    if unknown:
        raise KeyError(f"unknown case(s): {', '.join(unknown)}; known: {', '.join(cases)}")

    recorder = install_recorder()
    summary: dict[str, Any] = {
        "cache_dir": cache_dir,
        "torch_version": torch.__version__,
        "cases": {},
    }
    for name in names:
        case = cases[name]
        torch._dynamo.reset()
        torch._dynamo.utils.counters.clear()
        t0 = time.perf_counter()
        compiled = compile_case(case)
        lookups, writes = [], []
        for shapes in case.build_calls:
            recorder.clear()
            run_call(case, compiled, shapes, on_phase=recorder.set_phase)
            lookups.append(list(recorder.lookups))
            writes.append(list(recorder.writes))
        summary["cases"][name] = {
            "compile_kwargs": case.compile_kwargs,
            "train": case.train,
            "calls": case.build_calls,
            "seconds": round(time.perf_counter() - t0, 3),
            "lookups": lookups,
            "writes": writes,
            "counters": counters(),
        }
    torch._dynamo.reset()
    summary["seconds"] = round(time.perf_counter() - t_start, 3)
    return summary


class Forker(Protocol):
    """Starts ``python argv...`` by forking a process that has imported torch already
    (the tests' zygote, ``tests/harness/zygote.py``)."""

    def run(self, argv: list[str], env: dict[str, str],
            timeout: float) -> subprocess.CompletedProcess[str] | None:
        """The finished process, as :func:`subprocess.run` returns it, or None where it may
        not be forked (then a fresh process runs it). Raises ``subprocess.TimeoutExpired``."""
        ...


@dataclass(frozen=True, slots=True)
class BuildOptions:
    """How the build processes (``python -m MODULE ...``, :func:`run_json_subprocess`) start.

    Attributes:
        fork_from: where set, the processes that may be forked (:class:`Forker`) are
            forked from it instead of started fresh.
        base_env: the environment the processes start from, when not ``os.environ``: a
            caller that runs builds on a thread of its own (the tests' background builds)
            gives the environment as it was when the build started, so that a test
            changing ``os.environ`` meanwhile (TMPDIR, say) never reaches them.
    """

    fork_from: Forker | None = None
    base_env: Mapping[str, str] | None = None


_OPTIONS: contextvars.ContextVar[BuildOptions | None] = contextvars.ContextVar(
    "fxcache_build_options", default=None)


def build_options() -> BuildOptions:
    """The options in force here: the innermost :func:`use_build_options` of this thread
    (or context), else ``BuildOptions()`` (fresh processes from ``os.environ``)."""
    return _OPTIONS.get() or BuildOptions()


@contextlib.contextmanager
def use_build_options(options: BuildOptions) -> Iterator[BuildOptions]:
    """Run the block's builds (those given no options of their own) with ``options``.
    A context variable: it holds for this thread (or asyncio task) only."""
    token = _OPTIONS.set(options)
    try:
        yield options
    finally:
        _OPTIONS.reset(token)


def _child_env(options: BuildOptions | None = None) -> dict[str, str]:
    base = (options or build_options()).base_env
    env = dict(os.environ if base is None else base)
    # The child sets its own cache env; drop anything that could redirect it.
    for name in list(env):
        if name.startswith(("TORCHINDUCTOR_", "TORCH_LOGS", "TORCH_COMPILE")):
            env.pop(name)
    env["PYTHONWARNINGS"] = "ignore::UserWarning"
    pp = env.get("PYTHONPATH")
    env["PYTHONPATH"] = str(REPO_ROOT) + (os.pathsep + pp if pp else "")
    return env


def run_json_subprocess(argv: list[str], *, python: str, timeout: float,
                        options: BuildOptions | None = None) -> Any:
    """Run ``python argv...`` in the repo root; parse the last stdout line as JSON.

    ``options``: how the process starts (default: :func:`build_options`); it is forked
    from ``options.fork_from`` where set and ``python`` is this one. Raises
    ``RuntimeError`` when it fails, ``subprocess.TimeoutExpired`` after ``timeout`` s."""
    options = options or build_options()
    env = _child_env(options)
    proc = None
    if options.fork_from is not None and python == sys.executable:
        proc = options.fork_from.run(argv, env, timeout)
    if proc is None:
        proc = subprocess.run(
            [python, *argv],
            cwd=REPO_ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
    lines = [ln for ln in proc.stdout.splitlines() if ln.strip()]
    if proc.returncode != 0 or not lines:
        raise RuntimeError(
            f"{' '.join(argv)} failed (exit {proc.returncode})\n"
            f"--- stdout ---\n{proc.stdout[-4000:]}\n--- stderr ---\n{proc.stderr[-8000:]}"
        )
    return json.loads(lines[-1])


def build_cache_subprocess(
    cache_dir: str | os.PathLike[str],
    cases: list[str] | None = None,
    python: str = sys.executable,
    timeout: float = 600,
    pgo_job_id: str | None = None,
    corpus: tuple[str, ...] | list[str] = DEMO_CORPUS,
    options: BuildOptions | None = None,
) -> dict:
    """Build the cache in a fresh ``python -m demo.build_cache`` process (started as
    ``options`` say, default :func:`build_options`) and return its summary (module doc)."""
    argv = ["-m", "demo.build_cache", os.path.abspath(os.fspath(cache_dir))]
    if cases is not None:
        argv += ["--cases", ",".join(cases)]
    if tuple(corpus) != DEMO_CORPUS:
        argv += ["--corpus", ",".join(corpus)]
    if pgo_job_id is not None:
        argv += ["--pgo-job-id", pgo_job_id]
    return run_json_subprocess(argv, python=python, timeout=timeout, options=options)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m demo.build_cache", description=__doc__.split("\n")[0]
    )
    p.add_argument("cache_dir")
    p.add_argument("--cases", default=None, help="comma-separated case names (default: all)")
    p.add_argument("--corpus", default=",".join(DEMO_CORPUS),
                   help="comma-separated modules whose CASES to build (default: %(default)s)")
    p.add_argument("--pgo-job-id", default=None,
                   help="compile under this TORCH_COMPILE_JOB_ID: Dynamo writes PGO state too")
    ns = p.parse_args(argv)
    names = [n for n in ns.cases.split(",") if n] if ns.cases else None
    corpus = tuple(m for m in ns.corpus.split(",") if m)
    summary = build_cache(ns.cache_dir, names, ns.pgo_job_id, corpus)
    sys.stdout.write(json.dumps(summary, sort_keys=True) + "\n")
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
