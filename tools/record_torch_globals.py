"""Record the globals torch writes into the pickles of a cache dir, and how they are used:
the table fxcache's code scan holds every entry against (``fxcache_core/decode/torch_globals.json``).

    python -m tools.record_torch_globals                 # build the caches, read the fixtures, write the table
    python -m tools.record_torch_globals --cache DIR     # also read a cache made elsewhere (a GPU, another torch)
    python -m tools.record_torch_globals --no-build --cache DIR ...   # read only the caches given (and the fixtures)
    python -m tools.record_torch_globals --keep ...      # keep what the table holds now, add what is read
    python -m tools.record_torch_globals --workdir DIR   # build into DIR and keep it (a build there is reused)

Reads, with fxcache's own restricted unpickler (nothing is run), every FX and
AOTAutograd entry (``fxgraph/``, ``aotautograd/``) and every saved Dynamo profile
(``dynamo/code_state_*.pkl``) of:

- two caches built here with the repo's torch (the pin in constraints.txt), in a temp
  dir: the tests' corpus (``tests.harness.cases``, with a job id, so Dynamo saves its
  profile) and the model workloads the suite builds (``tests.harness.model_runs``:
  GPT-2, ResNet, Llama training, BERT), and a module and a training step compiled with
  bundled AOTAutograd entries (``tests.harness.blob_app --bundled``: the compiled graphs
  pickled inside the AOTAutograd entry); about four minutes on two cores;
- the checked-in caches of other torch versions (``tests/fixtures/torch_versions/*/cache``,
  ``tests/fixtures/torch_upgrade/cache``), and the Dynamo ``Source`` objects their
  ``truth.json`` holds, pickled by that torch as it pickles them into AOTAutograd entries;
- every ``--cache DIR`` given.

For each kind of pickle it records every global named and how (``call``: ``REDUCE``;
``new``: ``NEWOBJ``; named only), the union over every file read (``seen``). Where the
pickles of one kind name three or more classes of one module, it asks the repo's torch
(in a child process) for every class that module defines (``__module__`` that module),
and records them with the uses seen in that module (``classes``): torch writes the
classes of Dynamo's ``source`` module, AOTAutograd's ``schemas``, and so on, by the
dozen, and a cache of another model names ones the recording did not see. A function
is never added that way: only a global seen is allowed as a function.

Rerun it when torch is upgraded (the pin), when a fixture of another torch is added,
or when ``fxcache verify`` reports a global that a cache torch really wrote names
(run it with ``--keep --cache`` that cache); review the diff, then commit.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
OUT = REPO / "fxcache_core" / "decode" / "torch_globals.json"
FIXTURES = REPO / "tests" / "fixtures"
MODULE_CLASSES_MIN = 3
"""Classes of one module seen in one kind of pickle from which every class of that
module is allowed (with the uses seen)."""


def kind_of(rel: str) -> str | None:
    """The kind of pickle at ``rel`` (relative to the cache dir), or None: not one torch loads."""
    parts = rel.split("/")
    if any(p.startswith(".") for p in parts):
        return None  # temp files torch skips
    if parts[0] == "fxgraph" and len(parts) == 4:
        return "fxgraph"
    if parts[0] == "aotautograd" and len(parts) == 3:
        return "aotautograd"
    if parts[0] == "dynamo" and len(parts) == 2 and parts[1].startswith("code_state_") and parts[1].endswith(".pkl"):
        return "pgo"
    return None


def read_cache(root: Path, seen: dict[str, dict[str, set[str]]]) -> int:
    """Add the globals of every pickle under ``root`` to ``seen`` (kind -> name -> uses);
    the number of files read."""
    from fxcache_core.decode.unpickler import load_stubs

    n = 0
    for p in sorted(root.rglob("*")):
        kind = kind_of(p.relative_to(root).as_posix())
        if kind is None or not p.is_file() or p.is_symlink():
            continue
        uses: dict = {}
        load_stubs(p.read_bytes(), uses=uses)
        for name, u in uses.items():
            seen[kind].setdefault(name, set()).update(u.uses)
        n += 1
    return n


def read_truth_sources(truth: Path, seen: dict[str, dict[str, set[str]]]) -> int:
    """Add the globals of the pickled ``Source`` objects a fixture's ``truth.json`` holds."""
    import base64

    from fxcache_core.decode.unpickler import load_stubs

    doc = json.loads(truth.read_text())
    for s in doc.get("sources", ()):
        uses: dict = {}
        load_stubs(base64.b64decode(s["pickle"]), uses=uses)
        for name, u in uses.items():
            seen["aotautograd"].setdefault(name, set()).update(u.uses)
    return len(doc.get("sources", ()))


def build_here(tmp: Path) -> list[tuple[str, Path]]:
    """The tests' corpus, the model workloads and bundled AOTAutograd entries, compiled by the repo's torch into ``tmp``
    (``real/inductor``, ``models/inductor``; one already there is read as it is)."""
    from demo.build_cache import build_cache_subprocess
    from tests.harness.model_runs import build_subprocess

    real, models = tmp / "real" / "inductor", tmp / "models" / "inductor"
    bundled = tmp / "bundled" / "inductor"
    if not real.is_dir():
        build_cache_subprocess(real, pgo_job_id="fxcache-globals", corpus=("tests.harness.cases",))
    if not models.is_dir():
        build_subprocess(models)
    if not bundled.is_dir():  # bundled AOTAutograd entries pickle the compiled graphs inside them
        for batch in ("3", "6"):
            subprocess.run([sys.executable, "-m", "tests.harness.blob_app", str(bundled), "--bundled",
                            "--batch", batch], check=True, cwd=REPO, stdout=subprocess.DEVNULL)
    return [("the tests' corpus (tests.harness.cases)", real), ("the model workloads (tests.harness.models)", models),
            ("bundled AOTAutograd entries (tests.harness.blob_app --bundled)", bundled)]


def _module_classes(modules: list[str]) -> dict[str, list[str]]:
    """Every class each module defines, as the repo's torch lists them (a child process)."""
    code = ("import importlib, inspect, json, sys\nout = {}\nfor m in json.loads(sys.argv[1]):\n"
            "    try:\n        mod = importlib.import_module(m)\n    except Exception:\n        continue\n"
            "    out[m] = sorted(n for n, o in vars(mod).items() if inspect.isclass(o) and o.__module__ == m)\n"
            "print(json.dumps(out))\n")
    proc = subprocess.run([sys.executable, "-c", code, json.dumps(modules)], capture_output=True, text=True,
                          check=True, cwd=REPO)
    return json.loads(proc.stdout.strip().splitlines()[-1])


def table(seen: dict[str, dict[str, set[str]]]) -> dict[str, dict]:
    """The table's ``kinds``: ``seen`` and the ``classes`` rows (module docstring)."""
    by_module: dict[tuple[str, str], set[str]] = defaultdict(set)
    for kind, names in seen.items():
        for name in names:
            module, _, attr = name.rpartition(".")
            if module and attr[:1].isupper():
                by_module[(kind, module)].add(attr)
    wanted = sorted({m for (_, m), attrs in by_module.items() if len(attrs) >= MODULE_CLASSES_MIN})
    classes = _module_classes(wanted) if wanted else {}
    out: dict[str, dict] = {}
    for kind in sorted(seen):
        rows = {}
        for (k, module), attrs in sorted(by_module.items()):
            defined = set(classes.get(module, ()))
            if k != kind or len(attrs & defined) < MODULE_CLASSES_MIN:
                continue
            uses = set().union(*(seen[kind][f"{module}.{a}"] for a in attrs & defined))
            rows[module] = {"uses": sorted(uses), "names": sorted(defined)}
        out[kind] = {"seen": {n: sorted(u) for n, u in sorted(seen[kind].items())}, "classes": rows}
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m tools.record_torch_globals", description=__doc__.split("\n")[0])
    p.add_argument("--cache", action="append", default=[], metavar="DIR", help="also read this cache dir")
    p.add_argument("--no-build", action="store_true", help="build nothing with the repo's torch")
    p.add_argument("--keep", action="store_true", help="keep the table's rows, add what is read")
    p.add_argument("--workdir", default=None, metavar="DIR",
                   help="build into DIR and keep it (a build already there is read; default: a temp dir)")
    p.add_argument("--out", default=str(OUT))
    ns = p.parse_args(argv)
    import torch

    here = torch.__version__
    seen: dict[str, dict[str, set[str]]] = {"fxgraph": {}, "aotautograd": {}, "pgo": {}}
    recorded: list[str] = []
    if ns.keep and Path(ns.out).is_file():
        old = json.loads(Path(ns.out).read_text())
        recorded += old.get("recorded_from", [])
        for kind, row in old["kinds"].items():
            for name, uses in row["seen"].items():
                seen.setdefault(kind, {}).setdefault(name, set()).update(uses)
    with tempfile.TemporaryDirectory(prefix="fxcache-globals-") as tmp:
        work = Path(ns.workdir) if ns.workdir else Path(tmp)
        caches = [] if ns.no_build else [(f"torch {here}: {what}", d) for what, d in build_here(work)]
        for d in sorted((FIXTURES / "torch_versions").iterdir()):
            caches.append((f"torch {d.name}: tests/fixtures/torch_versions/{d.name}", d / "cache"))
            read_truth_sources(d / "truth.json", seen)
        caches.append(("torch 2.13 (a run of 2.14.1 beside it): tests/fixtures/torch_upgrade", FIXTURES / "torch_upgrade" / "cache"))
        caches += [(f"a cache given with --cache ({Path(c).name})", Path(c)) for c in ns.cache]
        for label, d in caches:
            n = read_cache(Path(d), seen)
            print(f"{n:5d} pickles  {label}")
            recorded.append(label)
    from fxcache_core.decode.code_scan import dumps

    Path(ns.out).write_text(dumps(table(seen), sorted(set(recorded))), encoding="utf-8")
    print(" ".join(f"{k}: {len(v)} globals" for k, v in seen.items()) + f" -> {ns.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
