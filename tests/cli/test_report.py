"""``fxcache report`` on a cache and a trace whose every name is hostile: its data is what
the other commands print, and what the cache and the trace hold stays text in the page.

The cache and the trace are synthetic because they are hostile (tests/synth.py
``report_cache``: a function, a file and an entry named as markup; torch writes no such
names). The page is made in this process with a stub in place of the charting library
(the real one, in a real browser: test_report_browser.py and tests/torch/test_report.py),
so these tests read the HTML as text.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest

from tests.cli_run import fxcache_in_process
from tests.helpers import assert_report_is_what_the_commands_print, run_fxcache, run_module
from tests.synth import HOSTILE_NAMES, report_cache

STUB_LIBRARY = "window.vegaEmbed = () => Promise.resolve();"


@pytest.fixture(scope="module")
def hostile(tmp_path_factory) -> dict:
    made = report_cache(tmp_path_factory.mktemp("report"))
    for dirpath, _, names in os.walk(made["cache"]):  # atime after mtime: reading changes no age
        for n in names:
            st = os.stat(os.path.join(dirpath, n))
            os.utime(os.path.join(dirpath, n), ns=(st.st_mtime_ns + 10**9, st.st_mtime_ns))
    return made


@pytest.fixture(scope="module")
def page(hostile, tmp_path_factory) -> dict:
    """``fxcache report --from-trace --json`` of the hostile cache: the JSON it printed and the page."""
    from fxcache_cli import _report_page

    out = tmp_path_factory.mktemp("page") / "report.html"
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(_report_page, "chart_library", lambda: STUB_LIBRARY)
        r = fxcache_in_process("--cache-dir", str(hostile["cache"]), "report", str(out),
                               "--from-trace", str(hostile["trace"]), "--json")
    assert r.returncode == 0, r
    return {"data": json.loads(r.stdout), "html": out.read_text(encoding="utf-8"), "path": out}


class _Page(HTMLParser):
    """Every start tag (with its attributes), the text, and each element's raw content."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []
        self.scripts: list[str] = []
        self._in_script = False

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        self._in_script = tag == "script"
        if tag == "script":
            self.scripts.append("")

    def handle_endtag(self, tag):
        self._in_script = False

    def handle_data(self, data):
        if self._in_script:
            self.scripts[-1] += data
        else:
            self.text.append(data)


def _parsed(html: str) -> _Page:
    p = _Page()
    p.feed(html)
    p.close()
    return p


def test_the_page_data_is_what_df_ls_gc_coverage_and_explain_print(hostile, page):
    data = page["data"]
    assert data["format"] == "fxcache-report/1"
    (f,) = data["functions"]
    assert {m["key"] for m in f["maps"]} == {hostile["fx"], hostile["aot"]}
    assert_report_is_what_the_commands_print(hostile["cache"], data, hostile["trace"], every_row=False)


def test_the_run_is_placed_on_the_map_of_the_key_it_looked_up(hostile, page):
    (f,) = page["data"]["functions"]
    fx = next(m for m in f["maps"] if m["key"] == hostile["fx"])
    assert (fx["x"]["source"], fx["y"]["source"]) == ("L['x'].size()[0]", "L['x'].size()[1]")
    hit, miss = sorted(fx["calls"], key=lambda c: c["seq"])
    assert (hit["cause"], hit["x"], hit["y"]) == ("hit", 4, 3)
    assert (miss["cause"], miss["x"], miss["y"]) == ("guard-miss", 10, 3)
    row = next(r["coverage"] for r in fx["rows"] if r["y"] == 3)
    at = {v: g for g in row["segments"] for v in range(g["start"], g["end"] + 1)}
    assert at[4]["outcome"] == "hit" and at[4]["entry"] == hit["entry"]  # the map agrees with the run
    assert at[10]["outcome"] == "miss"
    assert at[16]["outcome"] == "hit" and at[16]["entry"] == hostile["entry"]


def test_the_page_embeds_its_data_and_shows_its_numbers_from_it(page):
    p = _parsed(page["html"])
    (embedded,) = [s for (t, a), s in zip([t for t in p.tags if t[0] == "script"], p.scripts, strict=True)
                   if t == "script" and a.get("id") == "fxcache-data"]
    assert json.loads(embedded) == page["data"]
    shown = [a for t, a in p.tags if "data-json" in a]
    assert len(shown) > 20
    for a in shown:
        value = page["data"]
        for part in a["data-json"].split("."):
            value = value[int(part)] if isinstance(value, list) else value[part]
        assert json.loads(a["data-value"]) == value, a


def test_names_from_the_cache_and_the_trace_stay_text(hostile, page):
    html = page["html"]
    p = _parsed(html)
    scripts = [a for t, a in p.tags if t == "script"]
    assert [a.get("type") for a in scripts] == ["application/json", "module", "module"]
    assert {t for t, _ in p.tags} <= {"html", "head", "meta", "title", "style", "body", "header", "h1", "h2", "h3",
                                      "p", "code", "nav", "a", "main", "section", "dl", "dt", "dd", "span", "div",
                                      "figure", "figcaption", "table", "thead", "tbody", "tfoot", "tr", "th", "td",
                                      "script"}
    assert not [(t, k) for t, a in p.tags for k in a if k.startswith("on")]
    text = "".join(p.text)
    for name in (*HOSTILE_NAMES, hostile["function"], hostile["entry"]):
        assert name in text  # shown, as text
    assert html.count("</script>") == 3 and html.lower().count("<script") == 3
    assert "<img" not in html


def test_the_page_allows_its_own_scripts_and_no_request(page):
    p = _parsed(page["html"])
    csp = next(a["content"] for t, a in p.tags if t == "meta" and a.get("http-equiv") == "Content-Security-Policy")
    rules = dict(r.strip().split(" ", 1) for r in csp.split(";"))
    assert rules["default-src"] == "'none'" and "unsafe" not in rules["script-src"]
    code = [s for (t, a), s in zip([t for t in p.tags if t[0] == "script"], p.scripts, strict=True)
            if a.get("type") == "module"]
    assert code[0] == STUB_LIBRARY
    hashes = {"'sha256-" + base64.b64encode(hashlib.sha256(c.encode()).digest()).decode() + "'" for c in code}
    assert set(rules["script-src"].split()) == hashes


def test_text_put_in_a_script_element_cannot_end_it():
    from fxcache_cli._report_page import _script_text, embedded_json

    hostile = {"name": "</script><!--<script>", "x": "&<>"}
    text = embedded_json(hostile)
    assert not re.search(r"[<>&]", text) and json.loads(text) == hostile
    assert "</script" not in _script_text("let s = '</script>'; // <!-- x").lower()


def test_a_map_too_costly_for_its_budget_judges_less_and_says_so(hostile):
    from fxcache_core.cache.scan import scan_cache
    from fxcache_core.catalog.reader import Catalog
    from fxcache_core.guards.key_guards import entry_guards
    from fxcache_core.report.shape_maps import key_map

    cat = Catalog(scan_cache(hostile["cache"]))
    key = cat.scan.key(hostile["fx"])
    guards = [entry_guards(cat, e) for e in key.entries]
    full = key_map(cat, key, guards)
    small = key_map(cat, key, guards, budget=60)
    assert full.limited is None and (full.x.start, full.x.end) == (0, 32) and len(full.rows) == 5
    assert small.limited.code == "map-budget" and "x.size(0) judged from 0 to 15 of 0 to 32" in small.limited
    assert (small.x.start, small.x.end) == (0, 15) and len(small.rows) == 1  # never below 16 values, one row
    assert small.clause_bound < full.clause_bound


def test_an_output_in_a_missing_dir_is_one_line_and_exit_2(hostile, tmp_path):
    r = run_fxcache("--cache-dir", str(hostile["cache"]), "report", str(tmp_path / "no" / "page.html"))
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "no such directory" in r.stderr, r.stderr


def test_without_the_report_extra_it_is_one_line_and_exit_2(hostile, tmp_path):
    shadow = tmp_path / "site" / "vl_convert"
    shadow.mkdir(parents=True)
    (shadow / "__init__.py").write_text("raise ImportError(\"No module named 'vl_convert'\")\n")
    env = {"PYTHONPATH": os.pathsep.join([str(shadow.parent), os.environ.get("PYTHONPATH", ""), str(Path.cwd())])}
    r = run_module("fxcache_cli", "--cache-dir", str(hostile["cache"]), "report", str(tmp_path / "p.html"), env=env)
    assert r.returncode == 2, r.stderr
    assert r.stderr == ("fxcache: error: report needs the report extra: pip install 'fxcache[report]' "
                        "(missing: vl-convert-python)\n"), r.stderr
    assert not (tmp_path / "p.html").exists() and sys.executable
