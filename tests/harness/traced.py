"""Run a workload under ``TORCH_TRACE`` and record torch's own cache lookups (for ``fxcache explain``).

Run in a fresh process, or in a child forked from one that imported torch and
compiled nothing (the tests' zygote: :func:`trace_this_process` then starts the trace as
``TORCH_TRACE`` at import would; the plans of :data:`PLAN_ENV`, whose variables torch
reads at import, only fresh)::

    python -m tests.harness.traced CACHE_DIR TRACE_DIR PLAN [--suppress-hit-guards]
                          [--rank R --world-size N --init-method tcp://127.0.0.1:PORT]

``PLAN`` names a list of steps in :data:`PLANS`; each step calls compiled
functions of ``tests.harness.cases`` (or of this module) with one thing chosen to make
the cache do something: a hit, a Dynamo recompile on a branch, an Inductor
config change, a dtype change, a first compile, a guard miss on a range from
``mark_dynamic``, a bypass, an AOTAutograd hit whose FX entry was removed
(``fx_gone``), a training step with backward, a module whose ``forward`` a
``functools.wraps`` decorator wraps (``decorated``), a hit whose key the cache alone
cannot tie to the value of a bool the code reads (``flags``), two whose keys it cannot tie
to the keywords that reached a ``**kwargs`` (``kwargs``); or nothing at all
(``eager``: Dynamo with the eager backend, no Inductor cache), or the ``hit`` step's
call under an Inductor config set by an environment variable (``env``, :data:`PLAN_ENV`). Meant for a copy of
the tests' real cache (``demo.build_cache`` of ``tests.harness.cases``), which
already holds the graphs the hits need.

``--suppress-hit-guards`` patches torch in this process so that a cache hit
installs none of its guards: ``ShapeEnv.evaluate_guards_expression`` called
with SymInts (the post-load re-evaluation of ``FxGraphCache._lookup_graph``
and ``AOTAutogradResult._check_guards``) evaluates at their hints instead, so
it passes without adding a guard. ``--rank``: ``torch.distributed`` (gloo) is
initialized before anything compiles, so torch names the trace file
``dedicated_log_torch_trace_rank_<R>_*.log`` and tags each record with the rank.

It prints one JSON object as the last line of stdout::

    {"plan": "replay", "rank": null, "trace_dir": "/abs",
     "lookups": [{..tests.harness.oracle's lookup record.., "step": "hit"}, ...],
     "writes": [{..., "step": "hit"}], "errors": {"step": "message"}}

From other code (tests), use :func:`traced_subprocess`.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import sys
from collections.abc import Callable
from typing import Any

from demo.build_cache import REPO_ROOT


def start_trace(trace_dir: str | os.PathLike[str]) -> None:
    """Write this process's structured trace to ``trace_dir`` from now on, as ``TORCH_TRACE``
    set before torch's import would: for a process forked after the import (a zygote's or
    a fork server's child), whose trace handler was made without it."""
    os.environ["TORCH_TRACE"] = os.path.abspath(trace_dir)
    import torch._logging._internal as logs

    logs.LOG_TRACE_HANDLER = None
    logs._init_logs()


def trace_this_process(trace_dir: str | os.PathLike[str]) -> None:
    """Write this process's structured trace to ``trace_dir``: ``TORCH_TRACE`` set for torch's
    import to read, or, where torch is imported already (a child forked from the tests'
    zygote, which imported it and compiled nothing), the trace started now as that import
    would have (:func:`start_trace`; ``TORCH_TRACE`` is read nowhere else)."""
    if "torch" in sys.modules:
        start_trace(trace_dir)
    else:
        os.environ["TORCH_TRACE"] = os.path.abspath(trace_dir)


def fresh_graph(x):
    # A graph no demo case compiles: its first compile has no near key.
    return (x * 3).relu() - x.exp()


def bypassed(x):
    # Compiled with a custom post-grad pass: both caches bypass ("Unsupported post grad custom pass").
    return x.sin() * 2 + 1


def returns_as_is(fn):
    # A decorator as libraries write one (transformers' can_return_tuple): torch.compile of a
    # module whose forward it wraps compiles `wrapper`, and the model's forward is inlined.
    @functools.wraps(fn)
    def wrapper(self, *args, **kwargs):
        return fn(self, *args, **kwargs)

    return wrapper


def _decorated(torch: Any) -> None:
    class DecoratedNet(torch.nn.Module):
        @returns_as_is
        def forward(self, x):
            return torch.tanh(x) * 3 - x

    torch.compile(DecoratedNet())(x=torch.randn(6, 5))


def _steps(torch: Any) -> dict[str, Callable[[], None]]:
    """Step name -> what it does (torch imported, recorder installed)."""
    from tests.harness.cases import CASES, compile_case, run_call

    compiled: dict[str, Any] = {}

    def case(name: str, shapes: list[Any], make: Callable[[list[Any]], Any] | None = None) -> None:
        c = CASES[name]
        if name not in compiled:
            compiled[name] = compile_case(c)
        if make is None:
            run_call(c, compiled[name], shapes)
        else:
            args, kwargs = make(shapes)
            out = compiled[name](*args, **kwargs)
            if c.train:
                out.backward()

    def mark_128(shapes: list[Any]) -> Any:
        from tests.harness.cases import default_make_inputs

        args, kwargs = default_make_inputs(shapes)
        torch._dynamo.mark_dynamic(args[0], 0, min=2, max=128)
        return args, kwargs

    def float64(shapes: list[Any]) -> Any:
        from tests.harness.cases import default_make_inputs

        args, kwargs = default_make_inputs(shapes)
        return (args[0].double(), *args[1:]), kwargs

    def config_change() -> None:
        torch._dynamo.reset()  # the same function again, compiled under another config
        compiled.pop("branch_on_size", None)
        with torch._inductor.config.patch(size_asserts=False):
            case("branch_on_size", [[4, 3]])
        torch._dynamo.reset()
        compiled.pop("branch_on_size", None)

    def fx_gone() -> None:
        # As if a gc had removed the FX entry an AOTAutograd entry loads: delete the FX
        # entry of same_graph_two_regions' small region, then call it there.
        from pathlib import Path

        from fxcache_core.cache.keys import KeyKind
        from fxcache_core.cache.scan import scan_cache
        from fxcache_core.catalog.reader import Catalog
        from fxcache_core.decode.entries import DecodedEntry

        cat = Catalog(scan_cache(Path(os.environ["TORCHINDUCTOR_CACHE_DIR"])))
        for k in cat.scan.keys:
            for e in k.entries if k.kind is KeyKind.AOT_AUTOGRAD else ():
                d = cat.load(e)
                if (isinstance(d, DecodedEntry) and d.origin is not None and d.forward is not None
                        and d.origin.traced_from("same_graph_two_regions") and "<= 7" in (d.guards_expr or "")):
                    fx = cat.fx_entry_for(d.forward.key, d.forward.guards_expr)
                    if fx is not None:
                        fx.path.unlink()
        case("same_graph_two_regions", [[4, 3]])

    def bypass() -> None:
        with torch._inductor.config.patch(post_grad_custom_post_pass=lambda g: None):
            torch.compile(bypassed)(torch.randn(4, 3))

    return {
        "hit": lambda: case("branch_on_size", [[4, 3]]),
        "recompile": lambda: case("branch_on_size", [[12, 3]]),
        "config": config_change,
        "dtype": lambda: case("branch_on_size", [[5, 3]], float64),
        "first": lambda: torch.compile(fresh_graph, dynamic=True)(torch.randn(6, 5)),
        "guard_miss": lambda: case("mark_dynamic_range", [[100, 3]], mark_128),
        "bypass": bypass,
        "fx_gone": fx_gone,
        "train": lambda: case("train_mlp", [[5, 4], [5, 1]]),
        "decorated": lambda: _decorated(torch),
        "eager": lambda: torch.compile(fresh_graph, backend="eager")(torch.randn(6, 5)),
        "env_var": lambda: case("branch_on_size", [[4, 3]]),
        "flags": lambda: case("clip_default", [[6, 5]]),
        "kwargs": lambda: (case("kw_built_with", [[6, 5], {"flag": True}]), case("kw_built_without", [[6, 5]]),
                           case("kw_tensor", [[6, 5], {"bias": [5]}])),
    }


PLANS: dict[str, tuple[str, ...]] = {
    "replay": ("hit", "recompile", "config", "dtype", "first", "guard_miss", "bypass", "fx_gone", "train",
               "decorated", "flags", "kwargs"),
    "suppressed": ("train", "hit"),
    "ranks": ("hit", "train"),
    "eager": ("eager",),
    "env": ("env_var",),
    "rebuild": ("hit",),  # run under another torch path or ISA: a hit that builds its kernels again
}
"""Plan name -> its steps, in order."""

PLAN_ENV: dict[str, dict[str, str]] = {"env": {"TORCHINDUCTOR_MAX_AUTOTUNE": "1"}}
"""Plan name -> environment variables set before torch is imported (as a user sets an
Inductor config key: the ``hit`` step's graph under it is a new key)."""


def suppress_hit_guards() -> None:
    """Make every guard re-evaluation with SymInts (what installs a hit's guards)
    evaluate at the hints instead: it passes and adds no guard."""
    import torch
    from torch.fx.experimental.symbolic_shapes import ShapeEnv

    orig = ShapeEnv.evaluate_guards_expression

    def evaluate_guards_expression(self: Any, code: str, args: Any) -> bool:
        if any(isinstance(a, torch.SymInt) for a in args):
            args = [a.node.hint if isinstance(a, torch.SymInt) else a for a in args]
        return orig(self, code, args)

    ShapeEnv.evaluate_guards_expression = evaluate_guards_expression  # type: ignore[method-assign]


def run_plan(cache_dir: str, trace_dir: str, plan: str, *, suppress: bool = False,
             rank: int | None = None, world_size: int = 1, init_method: str | None = None) -> dict[str, Any]:
    """In this process: run ``plan`` under TORCH_TRACE=``trace_dir``. A fresh process, or a
    child forked from one that imported torch and compiled nothing (the tests' zygote:
    the trace is then started as the import would have, :func:`trace_this_process`); a plan of
    :data:`PLAN_ENV` only in a fresh process (its variables are read at torch's import).

    Raises ``RuntimeError`` for a plan of :data:`PLAN_ENV` where torch is imported already."""
    if "torch" in sys.modules and PLAN_ENV.get(plan):
        raise RuntimeError(f"plan {plan!r} sets variables torch reads at import: run it in a fresh process")
    trace_this_process(trace_dir)
    os.environ.update(PLAN_ENV.get(plan, {}))
    from demo.build_cache import configure_torch, prepare_env

    cache_dir = prepare_env(cache_dir)
    import torch

    if rank is not None:
        import torch.distributed as dist

        dist.init_process_group("gloo", init_method=init_method, rank=rank, world_size=world_size)
    configure_torch()
    from demo.recorder import install_recorder

    rec = install_recorder()
    if suppress:
        suppress_hit_guards()
    steps = _steps(torch)
    lookups: list[dict[str, Any]] = []
    writes: list[dict[str, Any]] = []
    errors: dict[str, str] = {}
    for name in PLANS[plan]:
        rec.clear()
        try:
            steps[name]()
        except Exception as e:  # noqa: BLE001 - reported, not hidden
            errors[name] = f"{type(e).__name__}: {str(e).strip().splitlines()[0][:300]}"
        lookups += [{**lk, "step": name} for lk in rec.lookups]
        writes += [{**w, "step": name} for w in rec.writes]
    if rank is not None:
        import torch.distributed as dist

        dist.barrier()
        dist.destroy_process_group()
    return {"plan": plan, "rank": rank, "cache_dir": cache_dir, "trace_dir": os.path.abspath(trace_dir),
            "lookups": lookups, "writes": writes, "errors": errors}


def traced_argv(cache_dir: str | os.PathLike[str], trace_dir: str | os.PathLike[str], plan: str, *,
                suppress: bool = False, rank: int | None = None, world_size: int = 1,
                init_method: str | None = None) -> list[str]:
    """The ``python`` arguments of one traced run (see the module docstring)."""
    argv = ["-m", "tests.harness.traced", os.path.abspath(os.fspath(cache_dir)), os.path.abspath(os.fspath(trace_dir)), plan]
    if suppress:
        argv.append("--suppress-hit-guards")
    if rank is not None:
        argv += ["--rank", str(rank), "--world-size", str(world_size), "--init-method", str(init_method)]
    return argv


def traced_subprocess(cache_dir: str | os.PathLike[str], trace_dir: str | os.PathLike[str], plan: str, *,
                      suppress: bool = False, python: str = sys.executable, timeout: float = 600) -> dict[str, Any]:
    """Run one plan in a ``python -m tests.harness.traced`` process, forked from the build
    options' zygote where there is one (:func:`demo.build_cache.run_json_subprocess`), else
    fresh; a plan of :data:`PLAN_ENV` always fresh. Return its JSON."""
    from dataclasses import replace

    from demo.build_cache import build_options, run_json_subprocess

    options = build_options()
    if PLAN_ENV.get(plan):
        options = replace(options, fork_from=None)
    return run_json_subprocess(traced_argv(cache_dir, trace_dir, plan, suppress=suppress),
                               python=python, timeout=timeout, options=options)


def traced_ranks(cache_dir: str | os.PathLike[str], trace_dir: str | os.PathLike[str], plan: str,
                 world_size: int = 2, python: str = sys.executable, timeout: float = 600) -> list[dict[str, Any]]:
    """Run ``plan`` on ``world_size`` ranks at once (gloo on localhost), one process each
    (children of the build options' zygote where there is one, else fresh); return each
    rank's JSON, rank 0 first."""
    import socket
    import subprocess
    from concurrent.futures import ThreadPoolExecutor

    from demo.build_cache import _child_env, build_options, run_json_subprocess

    with socket.socket() as s:  # a free port for the rendezvous
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    init = f"tcp://127.0.0.1:{port}"
    options = build_options()
    if options.fork_from is not None and python == sys.executable and not PLAN_ENV.get(plan):
        argvs = [traced_argv(cache_dir, trace_dir, plan, rank=r, world_size=world_size, init_method=init)
                 for r in range(world_size)]
        with ThreadPoolExecutor(world_size) as pool:  # every rank at once: they meet at the rendezvous
            futures = [pool.submit(run_json_subprocess, a, python=python, timeout=timeout, options=options)
                       for a in argvs]
            return [f.result() for f in futures]
    procs = [subprocess.Popen([python, *traced_argv(cache_dir, trace_dir, plan, rank=r, world_size=world_size,
                                                    init_method=init)],
                              cwd=REPO_ROOT, env=_child_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True) for r in range(world_size)]
    out = []
    for p in procs:
        stdout, stderr = p.communicate(timeout=timeout)
        lines = [ln for ln in stdout.splitlines() if ln.strip()]
        if p.returncode != 0 or not lines:
            for q in procs:
                q.kill()
            raise RuntimeError(f"rank run failed (exit {p.returncode})\n{stdout[-2000:]}\n{stderr[-6000:]}")
        out.append(json.loads(lines[-1]))
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m tests.harness.traced", description=__doc__.split("\n")[0])
    p.add_argument("cache_dir")
    p.add_argument("trace_dir")
    p.add_argument("plan", choices=sorted(PLANS))
    p.add_argument("--suppress-hit-guards", action="store_true")
    p.add_argument("--rank", type=int, default=None)
    p.add_argument("--world-size", type=int, default=1)
    p.add_argument("--init-method", default=None)
    ns = p.parse_args(argv)
    result = run_plan(ns.cache_dir, ns.trace_dir, ns.plan, suppress=ns.suppress_hit_guards,
                      rank=ns.rank, world_size=ns.world_size, init_method=ns.init_method)
    sys.stdout.write(json.dumps(result, sort_keys=True) + "\n")
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
