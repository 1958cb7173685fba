"""Torch's answers to the oracle queries the suite asks every run, recorded once.

    python -m tests.harness.recorded [--out tests/data/oracle-answers.json] [--add]

builds the session's real cache as the tests do (:func:`tests.harness.real_cache.build`),
asks torch every call of :func:`recorded_calls` on a copy of it
(:func:`tests.harness.oracle.answers`: each a fresh process's first call) and writes the
answers with the torch version that gave them. The tests read them back
(:func:`answers_for`) instead of asking torch again: torch stays the judge, asked once
per torch version. ``tests/torch/test_recorded_answers.py`` fails when the installed
torch is not the one that recorded them, when the call lists changed, or when this
session's real cache was not built as the recorded one was: rerun this script then.
``--add`` asks only the calls the file does not answer yet (a case or calls added), and
keeps the rest where nothing they rely on changed (:func:`record_added`).

Key and entry names are hashes of system facts and of content (paths, ISA-dependent
code), so they differ between builds and machines. The file never holds one: a key or
entry of the real cache is named by the write of the build that made it
(``@key:CASE:CALL:N``, ``@entry:CASE:CALL:N``: the N-th file written by the CALL-th call
of CASE, as the build's summary lists them), one the query itself made by its order in
the answer (``@new:I``), and :func:`answers_for` puts this session's names back.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

from tests.harness.oracle import call_id

DATA = Path(__file__).resolve().parents[1] / "data" / "oracle-answers.json"

# Answer fields that name a key or an entry of the cache (nested in lookups, writes, fx_refs).
_NAME_FIELDS = ("key", "hit", "entry", "candidates")
# Fields of the oracle's answer that are of the process and copy it ran in, never compared.
_DROPPED = ("cache_dir", "pid")


def recorded_calls() -> dict[str, list[tuple]]:
    """The calls whose answers are recorded, by how they are asked: ``real`` (a child of
    the oracle's fork server on a copy of the real cache), ``with_profile`` (the same, on
    a copy with the PGO state its build saved put back) and ``fresh`` (a fresh ``python
    -m tests.harness.oracle`` process on a copy of the real cache). Taken from the test
    files that ask them."""
    from tests.harness.oracle_queries import EQUIVALENCE_QUERIES
    from tests.torch import test_arguments as arguments
    from tests.torch import test_bound_failed as bounds
    from tests.torch import test_containers as containers
    from tests.torch import test_decomposed_args as decomposed
    from tests.torch import test_fn_op_args as fn_args
    from tests.torch import test_int_arguments as ints
    from tests.torch import test_kept_slices as kept
    from tests.torch import test_layer_slices as slices
    from tests.torch import test_op_consts as op_consts
    from tests.torch import test_oracle_suite as suite
    from tests.torch import test_py_exprs_oracle as exprs
    from tests.torch import test_real_cache as real
    from tests.torch import test_scalar_arguments as scalars
    from tests.torch import test_shapes_oracle as shapes
    from tests.torch import test_specialized_inputs as specialized
    from tests.torch import test_star_arguments as star
    from tests.torch import test_state_arguments as state
    from tests.torch import test_tensor_flow as flow

    calls = [*real.ORACLE_CALLS, *[tuple(p.values) for p in suite.PARAMS], suite.AFTER_RECOMPILE,
             arguments.FLAG_AFTER_RECOMPILE,
             *[(case, call) for case, call, _, _ in shapes.SHAPES_CALLS],
             *arguments.ARG_CALLS, *arguments.UNDECIDED_CALLS, *ints.CONSTANT_CALLS,
             *ints.CONSTANT_UNDECIDED, *ints.PINNED_CALLS, *ints.TUPLE_CALLS, *ints.TUPLE_UNDECIDED,
             *scalars.SCALAR_CALLS,
             *ints.RETRACE_CALLS, *ints.RETRACE_UNDECIDED, *ints.SPECIALIZED_UNDECIDED,
             *ints.RAMP_CALLS,
             *ints.RAMP_UNDECIDED, *ints.SIZE_BRANCH_CALLS, *ints.SIZE_BRANCH_UNDECIDED, *arguments.MODE_UNDECIDED,
             *star.UNATTRIBUTED_CALLS, *star.UNATTRIBUTED_UNDECIDED, *scalars.SYMBOLIC_CALLS,
             *scalars.SYMBOLIC_UNDECIDED, *star.KWARGS_CALLS, *star.KW_DICT_CALLS,
             *arguments.UNNAMED_CALLS, *ints.SIZES_CALLS, *ints.OPS_CALLS,
             *ints.OPS_UNDECIDED, *ints.BREAK_CALLS, *ints.BREAK_UNDECIDED,
             *scalars.DTYPE_CALLS, *scalars.DTYPE_UNDECIDED, *scalars.FLOAT_AFTER_RECOMPILE,
             *scalars.FLOAT_INPUT_CALLS, *scalars.FLOAT_INPUT_UNDECIDED, *scalars.HOOKED_UNDECIDED,
             *state.GRAD_CALLS,
             *state.GRAD_UNDECIDED, *scalars.FLOAT_DEFAULT_CALLS, *ints.INT_KW_CALLS,
             *ints.INT_KW_UNDECIDED, *arguments.ATTR_CALLS, *arguments.ATTR_UNDECIDED,
             *state.STATE_CALLS, *state.STATE_UNDECIDED, *star.STAR_CALLS, *star.STAR_UNDECIDED,
             *star.SPLIT_CALLS, *star.SPLIT_UNDECIDED, *slices.SLICE_CALLS, *slices.SLICE_UNDECIDED,
             *slices.BRANCH_INT_CALLS, *exprs.EXPR_CALLS, *exprs.EXPR_EDGE_CALLS,
             *decomposed.DECOMPOSED_CALLS, *decomposed.DECOMPOSED_UNDECIDED,
             *flow.TENSOR_FLOW_CALLS, *flow.TENSOR_FLOW_UNDECIDED, *flow.BODY_OP_CALLS, *flow.BODY_OP_UNDECIDED, *flow.KEYWORD_ONLY_UNDECIDED, *flow.REBOUND_UNDECIDED,
             *state.GRAD_OFF_CALLS, *state.GRAD_OFF_UNDECIDED,
             *fn_args.FN_ARG_CALLS, *fn_args.FN_ARG_UNDECIDED,
             *op_consts.OP_CONST_CALLS, *op_consts.OP_CONST_UNDECIDED,
             *kept.KEPT_CALLS, *kept.KEPT_UNDECIDED,
             *[(case, call) for case, call, _ in containers.CONTAINER_CALLS],
             *[(case, call) for case, call, _ in bounds.BOUND_UNDECIDED],
             *specialized.FLOAT_RESTART_CALLS, *specialized.STRIDE_CALLS, *specialized.STRIDE_AFTER_RECOMPILE]
    unique = {call_id(*c): c for c in calls}
    return {"real": list(unique.values()), "with_profile": [suite.WITH_PROFILE],
            "fresh": list(EQUIVALENCE_QUERIES)}


def _names(summary: dict[str, Any]) -> dict[str, str]:
    """This build's key and entry names -> their stable names (first write wins)."""
    out: dict[str, str] = {}
    for case, body in summary["cases"].items():
        for n_call, writes in enumerate(body["writes"]):
            for n, w in enumerate(writes):
                out.setdefault(w["key"], f"@key:{case}:{n_call}:{n}")
                out.setdefault(w["entry"], f"@entry:{case}:{n_call}:{n}")
    return out


def build_shape(summary: dict[str, Any]) -> dict[str, list[list[list[str]]]]:
    """What of a build the stable names rely on: per case, per call, each write's kind,
    phase and the stable name of its key (so which writes share a key)."""
    names = _names(summary)
    return {case: [[[w["kind"], w.get("phase") or "", names[w["key"]]] for w in writes]
                   for writes in body["writes"]]
            for case, body in summary["cases"].items()}


def stable_names(answer: dict[str, Any], names: dict[str, str]) -> dict[str, Any]:
    """``answer`` with stable names. Torch lists a lookup's ``candidates`` sorted by
    entry name, a hash: here they are sorted by stable name, and the names of new keys
    and entries are numbered in the order torch looked them up and wrote them, never in
    a candidates list's order."""
    new: dict[str, str] = {}

    def name(v: str) -> str:
        if v in names:
            return names[v]
        return new.setdefault(v, f"@new:{len(new)}")

    def walk(v: Any, field: str | None = None, candidates: bool = True) -> Any:
        if isinstance(v, dict):
            return {k: walk(x, k, candidates) for k, x in v.items()
                    if k not in _DROPPED and (candidates or k != "candidates")}
        if isinstance(v, list):
            out = [walk(x, field, candidates) for x in v]
            return sorted(out) if field == "candidates" else out
        if isinstance(v, str) and field in _NAME_FIELDS:
            return name(v)
        return v

    walk(answer, candidates=False)  # numbers the new names first
    return walk(answer)


def stable_form(answer: dict[str, Any], summary: dict[str, Any]) -> dict[str, Any]:
    """``answer`` (as :func:`tests.harness.oracle.torch_lookups` returns it, on a copy of
    the real cache whose build ``summary`` is given) as the file states answers: keys
    and entries by the build's write that made them, or ``@new:I``; no path, no pid."""
    return stable_names(answer, _names(summary))


def recorded(group: str, path: Path = DATA) -> dict[str, dict]:
    """The recorded answers of the calls of ``group``, in their stable form (compare with
    :func:`stable_form` of an answer asked now)."""
    rec = load(path)
    answers = rec["fresh"] if group == "fresh" else rec["answers"]
    return {cid: answers[cid] for cid in rec["calls"][group]}


def _local(answer: dict[str, Any], summary: dict[str, Any]) -> dict[str, Any]:
    def name(v: str) -> str:
        kind, _, where = v[1:].partition(":")
        if kind == "new":
            return f"new-{where}"  # a name no cache of the session has
        case, n_call, n = where.split(":")
        return summary["cases"][case]["writes"][int(n_call)][int(n)][kind]

    def walk(v: Any, field: str | None = None) -> Any:
        if isinstance(v, dict):
            return {k: walk(x, k) for k, x in v.items()}
        if isinstance(v, list):
            out = [walk(x, field) for x in v]
            return sorted(out) if field == "candidates" else out  # torch's order: by name
        if isinstance(v, str) and v.startswith(("@key:", "@entry:", "@new:")):
            return name(v)
        return v

    return walk(answer)


def load(path: Path = DATA) -> dict[str, Any]:
    """The recorded file: ``torch_version``, ``calls`` (group -> call ids), ``build``
    (:func:`build_shape` of the recorder's real cache), ``answers`` (call id -> the
    answer with stable names, asked of the fork server) and ``fresh`` (the same, asked
    of fresh processes)."""
    return json.loads(path.read_text())


def answers_for(summary: dict[str, Any], group: str, path: Path = DATA) -> dict[str, dict]:
    """The recorded answers of the calls of ``group`` (see :func:`recorded_calls`), as
    :func:`tests.harness.oracle.answers` returns them, in the names of the real cache
    whose build ``summary`` is given (this session's). Raises ``KeyError`` for a call
    not recorded."""
    return {cid: _local(a, summary) for cid, a in recorded(group, path).items()}


def record(out: Path = DATA) -> None:
    """Build the real cache, ask torch every recorded call, write ``out``."""
    import shutil
    import tempfile

    import torch

    tmp = tempfile.mkdtemp(prefix="fxcache-record-tmp-")
    os.environ["TMPDIR"] = tmp  # torch's precompiled headers, as the tests' torch processes
    tempfile.tempdir = None
    try:
        from tests.harness import oracle
        from tests.harness.background import build_dir
        from tests.harness.real_cache import build

        real = build()
        names = _names(real.summary)
        calls = recorded_calls()
        got = oracle.answers(real.root, calls["real"])
        with_profile = build_dir("real-cache-profile") / "inductor"
        shutil.copytree(real.root, with_profile, symlinks=True)
        real.with_pgo(with_profile)
        got.update(oracle.answers(with_profile, calls["with_profile"]))
        fresh = {}
        for case, shapes in calls["fresh"]:
            copy = build_dir("fresh-oracle") / "cache"
            shutil.copytree(real.root, copy, symlinks=True)
            fresh[call_id(case, shapes)] = oracle.torch_lookups(copy, case, shapes, fresh=True)
        body = {
            "torch_version": torch.__version__,
            "recorded_by": "python -m tests.harness.recorded",
            "calls": {g: [call_id(*c) for c in cs] for g, cs in calls.items()},
            "build": build_shape(real.summary),
            "answers": {cid: stable_names(a, names) for cid, a in sorted(got.items())},
            "fresh": {cid: stable_names(a, names) for cid, a in sorted(fresh.items())},
        }
        out.write_text(json.dumps(body, indent=1, sort_keys=True) + "\n")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def record_added(out: Path = DATA) -> list[str]:
    """Build the real cache, ask torch only the ``real`` calls ``out`` does not answer yet
    (calls added to a test file, of a case added to the corpus), and add their answers.
    The file's other answers stand only where nothing they rely on changed: the same
    torch, every case it records built as recorded (new cases may be added), the same
    ``with_profile`` and ``fresh`` calls; otherwise ``SystemExit`` says to record every
    call again. Returns the call ids asked."""
    import shutil
    import tempfile

    import torch

    rec = load(out)
    calls = recorded_calls()
    again = "record every call again: python -m tests.harness.recorded"
    if rec["torch_version"] != torch.__version__:
        raise SystemExit(f"{out} was recorded by torch {rec['torch_version']}, this is {torch.__version__}: {again}")
    for group in ("with_profile", "fresh"):
        if rec["calls"][group] != [call_id(*c) for c in calls[group]]:
            raise SystemExit(f"the {group} calls changed: {again}")
    tmp = tempfile.mkdtemp(prefix="fxcache-record-tmp-")
    os.environ["TMPDIR"] = tmp
    tempfile.tempdir = None
    try:
        from tests.harness import oracle
        from tests.harness.real_cache import build

        real = build()
        shape = build_shape(real.summary)
        changed = [case for case, writes in rec["build"].items() if shape.get(case) != writes]
        if changed:
            raise SystemExit(f"{', '.join(changed)} built otherwise than recorded: {again}")
        todo = [c for c in calls["real"] if call_id(*c) not in rec["answers"]]
        names = _names(real.summary)
        got = oracle.answers(real.root, todo) if todo else {}
        rec["answers"].update({cid: stable_names(a, names) for cid, a in got.items()})
        rec["answers"] = dict(sorted(rec["answers"].items()))
        rec["calls"] = {g: [call_id(*c) for c in cs] for g, cs in calls.items()}
        rec["build"] = shape
        out.write_text(json.dumps(rec, indent=1, sort_keys=True) + "\n")
        return sorted(got)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    import argparse

    p = argparse.ArgumentParser(prog="python -m tests.harness.recorded", description=__doc__.split("\n")[0])
    p.add_argument("--out", type=Path, default=DATA)
    p.add_argument("--add", action="store_true",
                   help="ask torch only the calls the file does not answer yet, and add them (see record_added)")
    ns = p.parse_args(argv)
    if ns.add:
        asked = record_added(ns.out)
        print(f"asked torch {len(asked)} call(s): {', '.join(asked) or 'none'}", file=sys.stderr)
    else:
        record(ns.out)
    print(f"wrote {ns.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
