"""``fxcache report`` of a real cache and a real traced run, in a real browser.

The cache and the run are test_explain.py's ``replay`` (``tests.harness.traced``: a hit,
a Dynamo recompile, a config and a dtype change, a first compile, a guard miss beyond a
``mark_dynamic`` range, a bypass, a training step, on a copy of the session's real
cache). The page's data is what ``df``, ``gc --dry-run``, ``ls``, ``coverage`` and
``explain`` print of them; in headless chromium (tests/browser.py, the network off) it
draws every chart with no console message and no request, shows the numbers of its
JSON, and each section is saved as a screenshot (``build/test-artifacts/report``;
``tools/report_screenshots.py`` copies them into the docs).
"""

from __future__ import annotations

import json

import pytest

from tests.browser import artifacts_dir
from tests.helpers import assert_report_is_what_the_commands_print, cli_json, run_fxcache
from tests.torch import test_explain

pytestmark = [pytest.mark.torch, pytest.mark.browser]
traced = test_explain.traced  # the session's traced runs (a fixture)

SHOTS = ("overview", "function", "run")
"""The sections saved as ``report-<name>.png``: the overview, the function with the most
lookups on one 2-D map, the run."""


@pytest.fixture(scope="module")
def replay(traced) -> dict:
    run = traced["replay"]
    page = artifacts_dir("report") / "replay.html"
    data = cli_json(run_fxcache("--cache-dir", str(run["cache"]), "report", str(page),
                                "--from-trace", str(run["trace"]), "--json", block_torch=True))
    return {**run, "data": data, "page": page}


def test_the_page_data_is_what_the_commands_print_of_the_cache_and_the_run(replay):
    assert_report_is_what_the_commands_print(replay["cache"], replay["data"], replay["trace"], every_row=False)


def test_the_maps_place_the_runs_lookups_with_what_explain_says_of_them(replay):
    explained = {x["seq"]: x for x in replay["explain"]["lookups"]}
    placed = [(f, m, c) for f in replay["data"]["functions"] for m in f["maps"] for c in m["calls"]]
    assert {c["cause"] for _, _, c in placed} >= {"hit", "guard-miss"}
    for _, m, c in placed:
        x = explained[c["seq"]]
        assert (x["key"], x["cause"], x["entry"], x["wrote"]) == (m["key"], c["cause"], c["entry"], c["wrote"])
        assert m["x"]["start"] <= c["x"] <= m["x"]["end"]
        assert m["y"] is None or c["y"] in [r["y"] for r in m["rows"]]
    # The guard miss beyond mark_dynamic's range (x.size(0) = 100 > 64) sits at 100.
    miss = [c for f, m, c in placed if f["function"] == "mark_dynamic_range" and c["cause"] == "guard-miss"]
    assert miss and all(c["x"] == 100 for c in miss)


@pytest.fixture(scope="module")
def loaded(browser, replay):
    return browser.load(replay["page"])


def test_the_page_draws_every_chart_with_no_console_message_and_no_request(browser, loaded, replay):
    assert loaded.charts == "ready", loaded.console
    assert loaded.console == [] and loaded.requests == [] and loaded.dialog is None
    drawn = browser.js("return [...document.querySelectorAll('[data-chart]')]"
                       ".map(e => [e.dataset.chart, e.dataset.drawn, e.querySelectorAll('svg').length])")
    maps = sum(len(f["maps"]) for f in replay["data"]["functions"])
    assert sorted(c for c, _, _ in drawn) == sorted(["kinds", "functions", "timeline", "seconds"] + ["map"] * maps)
    assert all(ok == "yes" and svgs >= 1 for _, ok, svgs in drawn), drawn


def test_the_numbers_on_the_page_are_its_json(browser, loaded, replay):
    assert browser.js("return JSON.parse(document.getElementById('fxcache-data').textContent)") == replay["data"]
    shown = browser.js("return [...document.querySelectorAll('[data-json]')].map(e => [e.dataset.json, e.dataset.value])")
    assert len(shown) > 50
    for path, value in shown:
        want = replay["data"]
        for part in path.split("."):
            want = want[int(part)] if isinstance(want, list) else want[part]
        assert json.loads(value) == want, (path, value, want)
    verdict = browser.js("return document.getElementById('verdict').textContent")
    assert verdict == replay["explain"]["summary"]["verdict"]


def test_each_section_renders_and_is_saved_as_a_screenshot(browser, loaded, replay):
    functions = replay["data"]["functions"]
    # The function with the most lookups on one 2-D map (the docs show it).
    best = max(range(len(functions)), key=lambda i: max(
        [(m["y"] is not None, len(m["calls"])) for m in functions[i]["maps"]] or [(False, 0)]))
    shots = artifacts_dir("report")
    for name, css in zip(SHOTS, ("#overview", f"#function-{best}", "#run"), strict=True):
        png = browser.screenshot(css, shots / f"report-{name}.png").read_bytes()
        assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 10_000
    # Each map marks the run's lookups it placed, one symbol each (its legend's are not marks).
    marks = browser.js("return [...document.querySelectorAll('figure.map')]"
                       ".map(f => f.querySelectorAll('svg .mark-symbol.role-mark path').length)")
    assert marks == [len(m["calls"]) for f in functions for m in f["maps"]]
    assert sum(marks) > 0
