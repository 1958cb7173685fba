"""Compare ``fxcache match --json`` with torch's lookups for one call: right, wrong, undecided.

Nothing here imports torch or runs anything: it reads the two answers.

Torch's answer, per function (:func:`torch_verdict`): its first lookup by guards (the
AOTAutograd key, or FX where the AOTAutograd cache was bypassed) on a key the cache
did not have is NEW GRAPH; a hit whose FX entries loaded too is HIT of that entry;
anything else on a key the cache had is MISS (``tests.helpers.torch_status``). A call
that raised before any lookup is ``raises`` (match is right with ERROR, or with NEW
GRAPH: nothing cached served the call, and the trace torch began raised). A lookup of an abandoned trace does not
count: a miss on a key the call never writes, followed by another lookup of the same
kind (Dynamo traced the frame again, with more specialized, and looked up the key of
that graph: Wav2Vec2's forward does so on every first call).

Per key (:func:`key_lines`): every lookup torch made by guards on a key the cache had is
a line (HIT of its entry, or MISS), compared with match's result for that key; every
FX lookup by exact guards string after an AOTAutograd hit is a line, compared with
the entry match says that hit loads; and an AOTAutograd key match calls a hit or a
miss that torch never looked up is a wrong line.

Grades: ``right`` (decided, as torch), ``wrong`` (decided, not as torch), ``undecided``
(match said UNDECIDED, or did not bind the key), ``not-describable`` (match rejected the
call's description: exit 2).
"""

from __future__ import annotations

from dataclasses import dataclass

RIGHT, WRONG, UNDECIDED, NOT_DESCRIBABLE = "right", "wrong", "undecided", "not-describable"
GRADES = (RIGHT, WRONG, UNDECIDED, NOT_DESCRIBABLE)


@dataclass(frozen=True)
class TorchVerdict:
    """What torch did for one call, in match's words.

    Attributes:
        status: ``hit``, ``miss``, ``new-graph``, or ``raises`` (the call raised before
            any lookup), or ``no-lookup`` (it compiled nothing).
        key: the key of the deciding lookup (None for ``raises``/``no-lookup``).
        entry: the entry loaded, for ``hit``.
        error: ``Type: message`` of what the call raised, if it did (after its lookups too).
    """

    status: str
    key: str | None = None
    entry: str | None = None
    error: str | None = None

    def text(self) -> str:
        head = {"hit": f"HIT {(self.entry or '')[:16]}", "miss": f"MISS (key {(self.key or '')[:12]})",
                "new-graph": f"NEW GRAPH (key {(self.key or '')[:12]}, not in the cache)",
                "raises": "raises before any lookup", "no-lookup": "no cache lookup"}[self.status]
        return head + (f"; then raised {self.error}" if self.error and self.status != "raises" else
                       f": {self.error}" if self.error else "")


def abandoned(lookups: list[dict], writes: list[dict]) -> set[int]:
    """Indexes of the lookups of abandoned traces (module doc)."""
    written = {w["key"] for w in writes}
    out = set()
    for i, lk in enumerate(lookups):
        if lk["mode"] == "guards" and lk["hit"] is None and lk["key"] not in written and any(
                later["mode"] == "guards" and later["kind"] == lk["kind"] for later in lookups[i + 1:]):
            out.add(i)
    return out


def torch_verdict(lookups: list[dict], present: set[str], error: dict | None = None,
                  writes: list[dict] | None = None) -> TorchVerdict:
    """Torch's verdict for one call from its recorded ``lookups`` and ``writes`` (module doc)."""
    err = f"{error['type']}: {error['message']}" if error else None
    skip = abandoned(lookups, writes or [])
    guarded = [lk for i, lk in enumerate(lookups) if lk["mode"] == "guards" and i not in skip]
    if not guarded:
        return TorchVerdict("raises" if error else "no-lookup", error=err)
    first = guarded[0]
    if first["key"] not in present:
        return TorchVerdict("new-graph", first["key"], error=err)
    exact = [lk["hit"] for lk in lookups if lk["mode"] == "exact"]
    if first["hit"] and all(exact):
        return TorchVerdict("hit", first["key"], first["hit"], error=err)
    return TorchVerdict("miss", first["key"], error=err)


@dataclass(frozen=True)
class Line:
    """One compared line: a function's verdict or one key's lookup.

    Attributes:
        grade: ``right``, ``wrong``, ``undecided`` or ``not-describable``.
        torch: torch's answer, in words.
        fxcache: match's answer, in words.
        reason: match's reason code (``why_code``, or the key's first reason code).
        key: the key, for a key line.
    """

    grade: str
    torch: str
    fxcache: str
    reason: str | None = None
    key: str | None = None

    def to_json(self) -> dict[str, object]:
        return {"grade": self.grade, "torch": self.torch, "fxcache": self.fxcache, "reason": self.reason,
                "key": self.key}


def pick_verdict(report: dict, fn: str) -> dict | None:
    """The verdict of the function asked for (``--fn``): the one named ``fn`` (or
    ``Class.forward`` for a model), else the first."""
    verdicts = report.get("verdicts", {}).get("functions", [])
    for v in verdicts:
        name = v.get("function") or ""
        if name == fn or name.split(".")[0] == fn or name.endswith("." + fn):
            return v
    return verdicts[0] if verdicts else None


def function_line(report: dict | None, usage_error: str | None, tv: TorchVerdict, fn: str) -> Line:
    """The verdict line: match's verdict for ``fn`` against torch's ``tv``."""
    if report is None:
        return Line(NOT_DESCRIBABLE, tv.text(), f"exit 2: {usage_error}", "usage-error")
    v = pick_verdict(report, fn)
    if v is None:
        return Line(UNDECIDED, tv.text(), "no verdict for the function", None)
    said = v.get("line") or v["status"]
    if v["status"] == "undecided":
        return Line(UNDECIDED, tv.text(), said, v.get("why_code"))
    if tv.status in ("raises", "no-lookup"):
        # no cached graph served the call: torch traced it and the trace raised (a
        # float64 input to float32 weights). NEW GRAPH says exactly what the cache can
        # know (nothing here serves it; torch traces again); whether that trace
        # succeeds is the model's code, which the cache does not hold
        ok = v["status"] == "error" or (v["status"] == "new-graph" and tv.status == "raises")
    elif tv.status == "hit" and tv.error and v["status"] == "error":
        # torch loaded the entry, then raised (a marked range wider than the entry's
        # guards): right where match names that entry and says the call raises after it
        ok = v.get("why_code") == "mark-range-raises" and (v.get("entry") or "")[:16] in (tv.entry or "")
    elif v["status"] != tv.status:
        ok = False
    elif tv.status == "hit":
        ok = v.get("entry") == tv.entry and v.get("key") == tv.key
    elif tv.status == "miss":
        ok = v.get("key") in (None, tv.key) or tv.key in (v.get("keys") or [])
    else:
        ok = True
    return Line(RIGHT if ok else WRONG, tv.text(), said, v.get("why_code"))


def key_lines(report: dict | None, lookups: list[dict], present: set[str]) -> list[Line]:
    """The key lines (module doc); none when match rejected the call."""
    if report is None:
        return []
    ours = {r["key"]: r for r in report.get("results", [])}
    loads = {ld["key"]: ld["entry"] for r in ours.values() for ld in r.get("loads", [])}
    out: list[Line] = []
    looked = set()
    unbound = False
    for lk in lookups:
        key = lk["key"]
        looked.add(key)
        if key not in present:
            continue
        short = f"{lk['kind']} {key[:12]}"
        if lk["mode"] == "guards":
            want = f"HIT {lk['hit'][:16]}" if lk["hit"] else "MISS"
            r = ours.get(key)
            if r is None:
                out.append(Line(UNDECIDED, want, "key not bound", None, short))
                unbound = True
                continue
            code = (r.get("uncertain_codes") or r.get("reason_codes") or [None])[0]
            said = r["status"] + (f" {r['hit'][:16]}" if r.get("hit") and r["status"] == "hit" else "")
            if r["status"] == "undecided":
                out.append(Line(UNDECIDED, want, said, code, short))
            elif r["status"] == ("hit" if lk["hit"] else "miss") and r.get("hit") == lk["hit"] or (
                    r["status"] == "miss" and not lk["hit"]):
                out.append(Line(RIGHT, want, said, code, short))
            else:
                out.append(Line(WRONG, want, said, code, short))
        elif lk["mode"] == "exact":
            want = f"loads {lk['hit'][:16]}" if lk["hit"] else "loads nothing (FX entry gone)"
            got = loads.get(key)
            aot = [r for r in ours.values() if r["kind"] == "aotautograd" and r["status"] == "undecided"]
            if got is None and (aot or unbound):
                # the FX entry torch loads is the one an AOTAutograd entry names: fxcache
                # decided no AOTAutograd key of this lookup, so it says nothing of it either
                out.append(Line(UNDECIDED, want, "the AOTAutograd key is undecided or not bound", None, short))
            else:
                said = f"loads {got[:16]}" if got else "loads nothing"
                out.append(Line(RIGHT if got == lk["hit"] else WRONG, want, said, None, short))
    for key, r in ours.items():
        if r["kind"] == "aotautograd" and key in present and key not in looked and r["status"] in ("hit", "miss"):
            out.append(Line(WRONG, "not looked up", r["status"], (r.get("reason_codes") or [None])[0],
                            f"aotautograd {key[:12]}"))
    return out


def tally(lines: list[Line]) -> dict[str, int]:
    """Lines per grade."""
    return {g: sum(1 for ln in lines if ln.grade == g) for g in GRADES}


def exit_status(totals: dict[str, dict[str, int]]) -> int:
    """1 when any verdict or key line is wrong, else 0 (:func:`tests.harness.evaluation.report.totals`)."""
    return 1 if totals["verdicts"][WRONG] or totals["key_lines"][WRONG] else 0
