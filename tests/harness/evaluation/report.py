"""The evaluation's report: a markdown table per family, and the totals (JSON is the run's dict)."""

from __future__ import annotations

from tests.harness.evaluation.compare import GRADES, NOT_DESCRIBABLE, RIGHT, UNDECIDED, WRONG


def totals(results: list[dict]) -> dict[str, dict[str, int]]:
    """Verdict lines and key lines per grade, over every family."""
    out = {"verdicts": dict.fromkeys(GRADES, 0), "key_lines": dict.fromkeys(GRADES, 0)}
    for r in results:
        for part in out:
            for g in GRADES:
                out[part][g] += r[part][g]
    return out


def _row(counts: dict[str, int]) -> str:
    return " | ".join(str(counts[g]) for g in (RIGHT, WRONG, UNDECIDED, NOT_DESCRIBABLE))


def _cell(text: str | None) -> str:
    return (text or "").replace("|", "\\|").replace("\n", " ")


def markdown(results: list[dict], meta: dict) -> str:
    """The report: totals, a summary row per family, then each family's lines that are not right."""
    t = totals(results)
    out = [f"# fxcache match against torch: {len(results)} families, "
           f"{sum(t['verdicts'].values())} calls", "",
           f"torch {meta.get('torch_version') or '?'}, transformers {meta.get('transformers_version') or '?'}; "
           "torch's answers from "
           f"{'fresh processes' if meta.get('fresh') else 'children forked per call from a server that compiled nothing'}."
           + (f" fxcache was given the TORCH_TRACE of the build of {sum(1 for r in results if r.get('build_traces'))} "
              "families (--build-traces)." if meta.get("build_traces") else " fxcache had the cache alone."),
           "", "| family | dynamic | verdicts: right | wrong | undecided | not describable | key lines: right | wrong "
           "| undecided |", "|---|---|---:|---:|---:|---:|---:|---:|---:|"]
    for r in results:
        k = r["key_lines"]
        out.append(f"| {r['family']} | {r['dynamic']} | {_row(r['verdicts'])} | {k[RIGHT]} | {k[WRONG]} "
                   f"| {k[UNDECIDED]} |")
    k = t["key_lines"]
    out.append(f"| **all** | | {_row(t['verdicts'])} | {k[RIGHT]} | {k[WRONG]} | {k[UNDECIDED]} |")
    for r in results:
        out += ["", f"## {r['family']}: {r['doc']}", "",
                f"`--fn {r['fn']}`; {r['keys_in_cache']} keys in the cache; {r['seconds']} s", "",
                "| call | grade | torch | fxcache | reason |", "|---|---|---|---|---|"]
        for row in r["rows"]:
            v = row["verdict"]
            call = row["call"] + (f" (after {', '.join(row['warm_up'])})" if row["warm_up"] else "")
            out.append(f"| `{_cell(call)}` | {v['grade']} | {_cell(v['torch'])} | {_cell(v['fxcache'])} "
                       f"| {_cell(v['reason'])} |")
        bad = [(row, k) for row in r["rows"] for k in row["keys"] if k["grade"] in (WRONG, UNDECIDED)]
        if bad:
            out += ["", "Key lines not right:", ""]
            for row, k in bad:
                out.append(f"- `{_cell(row['call'])}` {k['key']}: {k['grade']}: torch {k['torch']}, "
                           f"fxcache {k['fxcache']} ({k['reason']})")
    return "\n".join(out) + "\n"
