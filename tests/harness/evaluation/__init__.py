"""An evaluation of ``fxcache match`` against torch, on families and calls the suite does not use.

    python -m tests.harness.evaluation [--family NAME ...] [--json OUT] [--markdown OUT]
                                       [--workdir DIR] [--rebuild] [--fresh] [--build-traces]
    make eval

Not part of ``make test``: a full run takes about 30 minutes on a shared 2-core machine
(``--fresh`` several times that).
For each family (:mod:`~tests.harness.evaluation.families`: a compiled callable, its build
sequences and its queries):

1. Build its cache in ``<workdir>/<family>/cache`` as a user's run would:
   ``TORCHINDUCTOR_CACHE_DIR``, ``torch.compile`` on CPU, one process per build sequence,
   each under ``TORCH_TRACE`` (``<workdir>/<family>/build-trace-N``). With
   ``--build-traces`` fxcache is given those traces before it is asked (``fxcache explain
   TRACE``: Dynamo's guards, the only record of the keywords a ``**kwargs`` function was
   compiled with); without, it has the cache alone.
2. Ask torch each query on a copy of that cache, in a fresh process (below), its first
   call (or, with warm-up calls, a later one), recording every FX and AOTAutograd
   lookup (``demo.recorder``, the wrapper of ``find_guarded_entry`` that
   ``tests.harness.oracle`` records with).
3. Ask ``fxcache match --json`` in a fresh process, with the call described as the docs
   tell a user (``--fn``, ``--dynamic``, ``--shapes`` / ``--inputs``;
   :mod:`~tests.harness.evaluation.calls`).
4. Compare (:mod:`~tests.harness.evaluation.compare`): each call's verdict line, and each
   key torch looked up, as right, wrong, undecided or not describable (match rejected
   the description with exit 2).

It prints a markdown report (a table per family; every line not right, with the call,
torch's answer, fxcache's and its reason) and writes JSON with ``--json``. The exit
status is 1 when any decided verdict or key line is wrong, else 0.

Fresh processes: torch's answers come from ``tests.harness.evaluation.torch_side``. By
default one server process imports torch, Inductor, transformers and the families'
modules, compiles and traces nothing, and forks a child per build and per query; the
child sets its cache dir, compiles and calls, and exits, so each answer is a first call
of a process that never compiled before (Dynamo, Inductor and automatic dynamic state
as a fresh process's), as for ``tests.harness.oracle.ForkServer``, which
tests/torch/test_fork_server.py checks against fresh processes. ``--fresh`` starts a new
``python -m`` process per build and query instead (slower), to check.

``--workdir DIR`` keeps the caches and torch's answers (``<family>/torch-answers.json``);
a later run with the same DIR asks only fxcache again (seconds), unless ``--rebuild`` or
the family's build changed. That is the loop for someone changing ``fxcache match``.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    from tests.harness.evaluation.families import FAMILIES

    p = argparse.ArgumentParser(prog="python -m tests.harness.evaluation",
                                description="fxcache match against torch on unseen families")
    p.add_argument("--family", action="append", default=None, metavar="NAME",
                   help=f"a family to run (repeat; default all): {', '.join(FAMILIES)}")
    p.add_argument("--json", default=None, metavar="OUT", help="write the results as JSON")
    p.add_argument("--markdown", default=None, metavar="OUT", help="write the report here (else stdout)")
    p.add_argument("--workdir", default=None, metavar="DIR",
                   help="keep the caches and torch's answers here, and reuse them (default: a temp dir)")
    p.add_argument("--rebuild", action="store_true", help="build and ask torch again even where kept")
    p.add_argument("--fresh", action="store_true", help="a new python process per build and query")
    p.add_argument("--build-traces", action="store_true",
                   help="give match the TORCH_TRACE of each family's build first (fxcache explain TRACE), as a user "
                        "with the trace of the run that built the cache would")
    p.add_argument("--new-kinds-option", default="--inputs", metavar="OPTION",
                   help="match's option for bools, strs, None, tuples and marked ranges (default: %(default)s; "
                        "the others go to --shapes)")
    p.add_argument("--source-dir", action="append", default=[], metavar="OLD=NEW",
                   help="fxcache's --source-dir for every explain and match (repeat)")
    p.add_argument("--sources", choices=("readable", "hidden", "moved"), default="readable",
                   help="where fxcache finds the families' own source files: where the build ran them "
                        "(readable), nowhere (hidden: a cache from another machine), or only through "
                        "--source-dir RECORDED=WHERE-THEY-ARE (moved); installed libraries stay readable")
    ns = p.parse_args(argv)
    names = ns.family or list(FAMILIES)
    unknown = [n for n in names if n not in FAMILIES]
    if unknown:
        p.error(f"unknown family {', '.join(unknown)}; known: {', '.join(FAMILIES)}")

    from tests.harness.evaluation import compare, report
    from tests.harness.evaluation.run import Torch, evaluate_family

    tmp = None
    if ns.workdir is None:
        tmp = tempfile.TemporaryDirectory(prefix="fxcache-eval-")
        workdir = Path(tmp.name)
    else:
        workdir = Path(ns.workdir).resolve()
        workdir.mkdir(parents=True, exist_ok=True)

    def log(msg: str) -> None:
        print(msg, file=sys.stderr, flush=True)

    source_dirs = tuple(ns.source_dir)
    torch = Torch(fresh=ns.fresh)
    results = []
    versions: dict[str, str] = {}
    try:
        for name in names:
            results.append(evaluate_family(torch, FAMILIES[name], workdir, rebuild=ns.rebuild, log=log,
                                           new_option=ns.new_kinds_option, build_traces=ns.build_traces,
                                           source_dirs=source_dirs, sources=ns.sources))
            versions.update(results[-1].pop("versions"))
            v = results[-1]["verdicts"]
            log(f"{name}: {v['right']} right, {v['wrong']} wrong, {v['undecided']} undecided, "
                f"{v['not-describable']} not describable")
    finally:
        torch.close()
        if tmp is not None:
            tmp.cleanup()
    meta = {"fresh": ns.fresh, "build_traces": ns.build_traces, "source_dirs": list(source_dirs), "sources": ns.sources, "torch_version": versions.get("torch"), "transformers_version": versions.get("transformers")}
    text = report.markdown(results, meta)
    if ns.markdown:
        Path(ns.markdown).write_text(text)
    else:
        sys.stdout.write(text)
    t = report.totals(results)
    if ns.json:
        Path(ns.json).write_text(json.dumps({"meta": meta, "totals": t, "families": results}, indent=1))
    return compare.exit_status(t)

