"""Torch's answers to the model queries of ``tests/torch/test_models_oracle.py``, recorded once.

    python -m tests.harness.recorded_models [--out tests/data/model-oracle-answers.json]

builds the model workloads' cache as the tests do (:func:`tests.harness.model_runs.build_subprocess`),
asks torch every query of ``test_models_oracle.QUERIES`` in one batched oracle process,
and the query that depends most on process state again alone in a child forked before
the first query (:func:`tests.harness.model_runs.oracle_subprocess`, each on a copy of
the cache), and writes the answers with the torch and transformers versions that gave
them. Each query compiles what misses, about a minute of CPU that every test session
would otherwise spend asking torch the same question; torch stays the judge, asked
again when it or the models' library changes.

Key and entry names are hashes of system facts and of content, so they differ between
builds and machines. As in :mod:`tests.harness.recorded`, the file never holds one: a key
or entry of the model cache is named by the write of the build that made it
(``@key:WORKLOAD:SEQ.CALL:N``: the N-th file written by the CALL-th call of build sequence
SEQ of WORKLOAD), one a query made by its order in the answer (``@new:I``), and
:func:`answers_for` puts this session's names back. ``test_models_oracle.py`` fails when the
installed torch or transformers is not the recorder's, when the queries changed, or when
this session's model cache was not built as the recorded one was: rerun this script then.
"""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path
from typing import Any

from tests.harness.recorded import stable_names

DATA = Path(__file__).resolve().parents[1] / "data" / "model-oracle-answers.json"
RERUN = "rerun `python -m tests.harness.recorded_models` and commit tests/data/model-oracle-answers.json"

_STABLE = re.compile(r"@(key|entry|new):(.*)")


def _writes(summary: dict[str, Any]):
    """``(stable place, write)`` of every entry file the model build wrote, in order."""
    for workload, body in summary["workloads"].items():
        for n_seq, seq in enumerate(body["sequences"]):
            for n_call, writes in enumerate(seq["writes"]):
                for n, w in enumerate(writes):
                    yield f"{workload}:{n_seq}.{n_call}:{n}", w


def _names(summary: dict[str, Any]) -> dict[str, str]:
    """This build's key and entry names -> their stable names (first write wins)."""
    out: dict[str, str] = {}
    for place, w in _writes(summary):
        out.setdefault(w["key"], f"@key:{place}")
        out.setdefault(w["entry"], f"@entry:{place}")
    return out


def build_shape(summary: dict[str, Any]) -> list[list[str]]:
    """What of a model build the stable names rely on: each write's place, kind, phase and
    the stable name of its key (so which writes share a key)."""
    names = _names(summary)
    return [[place, w["kind"], w.get("phase") or "", names[w["key"]]] for place, w in _writes(summary)]


def versions() -> dict[str, str]:
    """The installed torch's and transformers' versions (what the answers depend on)."""
    import torch
    import transformers

    return {"torch": torch.__version__, "transformers": transformers.__version__}


def _local(answer: Any, summary: dict[str, Any]) -> Any:
    places = {place: w for place, w in _writes(summary)}

    def name(v: str) -> str:
        m = _STABLE.fullmatch(v)
        kind, where = m.group(1), m.group(2)
        if kind == "new":
            return f"new-{where}"  # a name no cache of the session has
        return places[where][kind]

    def walk(v: Any, field: str | None = None) -> Any:
        if isinstance(v, dict):
            return {k: walk(x, k) for k, x in v.items()}
        if isinstance(v, list):
            out = [walk(x, field) for x in v]
            return sorted(out) if field == "candidates" else out  # torch's order: by name
        if isinstance(v, str) and _STABLE.fullmatch(v):
            return name(v)
        return v

    return walk(answer)


def load(path: Path = DATA) -> dict[str, Any]:
    """The recorded file: ``versions``, ``queries``, ``alone`` (the index of the query asked
    alone), ``build`` (:func:`build_shape` of the recorder's model cache), ``batched`` and
    ``alone_answer`` (the oracle's answers with stable names)."""
    return json.loads(path.read_text())


def check(summary: dict[str, Any], queries: list, alone: int, path: Path = DATA) -> str | None:
    """Why the recorded answers cannot stand for torch's on this session's model cache
    (``summary``, built here), or None when they can."""
    if not path.is_file():
        return f"{path} is missing: {RERUN}"
    rec = load(path)
    if rec["versions"] != versions():
        return f"recorded by {rec['versions']}, installed: {versions()}: {RERUN}"
    if rec["queries"] != json.loads(json.dumps(queries)) or rec["alone"] != alone:
        return f"the queries changed since they were recorded: {RERUN}"
    if rec["build"] != build_shape(summary):
        return f"this session's model cache was built otherwise than the recorded one: {RERUN}"
    return None


def answers_for(summary: dict[str, Any], path: Path = DATA) -> dict[str, Any]:
    """The recorded batched answer (``{"results": [...]}``, as
    :func:`tests.harness.model_runs.oracle` returns it) with ``"alone"``, in the names of
    the model cache whose build ``summary`` is given (this session's)."""
    rec = load(path)
    out = _local(rec["batched"], summary)
    out["alone"] = _local(rec["alone_answer"], summary)
    return out


def record(out: Path = DATA) -> None:
    """Build the model cache, ask torch every query, write ``out``."""
    import shutil
    import tempfile

    tmp = tempfile.mkdtemp(prefix="fxcache-record-tmp-")
    os.environ["TMPDIR"] = tmp  # torch's precompiled headers, as the tests' torch processes
    tempfile.tempdir = None
    try:
        from tests.harness.model_runs import build_subprocess, oracle_subprocess
        from tests.torch.test_models_oracle import QUERIES, _the_alone_query

        root = Path(tmp) / "model-cache" / "inductor"
        summary = build_subprocess(root)
        copies = []
        for name in ("batched", "alone"):
            copy = Path(tmp) / f"model-oracle-{name}" / "cache"
            shutil.copytree(root, copy, symlinks=True)
            copies.append(copy)
        alone = _the_alone_query()
        got = oracle_subprocess(copies[0], [[w, calls] for w, calls in QUERIES], alone=(copies[1], alone))
        names = _names(summary)
        # One naming for both answers: a key the alone query makes is the batched one's
        # (the same graph), and test_models_oracle compares them by name.
        both = stable_names({"batched": {"results": got["results"]},
                        "alone_answer": {"results": got["alone"]["results"]}}, names)
        body = {
            "recorded_by": "python -m tests.harness.recorded_models",
            "versions": versions(),
            "queries": json.loads(json.dumps(QUERIES)),
            "alone": alone,
            "build": build_shape(summary),
            **both,
        }
        out.write_text(json.dumps(body, indent=1, sort_keys=True) + "\n")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    import argparse

    p = argparse.ArgumentParser(prog="python -m tests.harness.recorded_models",
                                description=__doc__.split("\n")[0])
    p.add_argument("--out", type=Path, default=DATA)
    ns = p.parse_args(argv)
    record(ns.out)
    print(f"wrote {ns.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
