"""``fxcache report``'s page in a real browser (headless chromium, the network off), for a
cache and a trace whose every name is hostile (synthetic because hostile: tests/synth.py
``report_cache``; torch writes no such names): the charts draw with no console message
and no request, no injected markup runs or becomes an element, and the names show as
the text they are. The real cache's page: tests/torch/test_report.py. One browser for
the module (tests/browser.py), one page load.
"""

from __future__ import annotations

import json

import pytest

from tests.browser import artifacts_dir
from tests.helpers import cli_json, run_fxcache
from tests.synth import HOSTILE_NAMES, report_cache

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def loaded(browser, tmp_path_factory) -> dict:
    made = report_cache(tmp_path_factory.mktemp("report"))
    page = artifacts_dir("report") / "hostile.html"
    data = cli_json(run_fxcache("--cache-dir", str(made["cache"]), "report", str(page),
                                "--from-trace", str(made["trace"]), "--json"))
    return {**made, "data": data, "page": page, "load": browser.load(page)}


def test_the_page_draws_every_chart_with_no_console_message_and_no_request(browser, loaded):
    load = loaded["load"]
    assert load.charts == "ready", load.console
    assert load.console == [] and load.requests == [] and load.dialog is None
    drawn = browser.js("return [...document.querySelectorAll('[data-chart]')]"
                       ".map(e => [e.dataset.chart, e.dataset.drawn, e.querySelectorAll('svg').length])")
    assert {c for c, _, _ in drawn} == {"kinds", "functions", "map", "timeline", "seconds"}
    assert all(ok == "yes" and svgs >= 1 for _, ok, svgs in drawn), drawn
    marks = browser.js("return [...document.querySelectorAll('figure.map')]"
                       ".map(f => f.querySelectorAll('svg .mark-symbol.role-mark path').length)")
    assert marks == [len(m["calls"]) for f in loaded["data"]["functions"] for m in f["maps"]] and sum(marks) == 2


def test_injected_names_run_nothing_and_make_no_element(browser, loaded):
    assert loaded["load"].dialog is None  # no alert(1)
    counts = browser.js("return ['script', 'img', 'iframe', 'object'].map(t => document.getElementsByTagName(t).length)")
    assert counts == [3, 0, 0, 0]
    handlers = browser.js("return [...document.querySelectorAll('*')].flatMap(e => [...e.attributes])"
                          ".filter(a => a.name.startsWith('on')).length")
    assert handlers == 0


def test_names_show_as_the_text_they_are(browser, loaded):
    heading = browser.js("return document.querySelector('#function-0 h3').textContent")
    assert heading.startswith(loaded["function"]) and HOSTILE_NAMES[1] in heading
    entry = browser.js("return [...document.querySelectorAll('#function-0 tr.entry td.mono')].map(e => e.textContent)")
    assert "└ " + loaded["entry"] in entry
    lookups = browser.js("return [...document.querySelectorAll('#lookups tbody tr')].map(r => r.cells[2].textContent)")
    assert lookups and all(HOSTILE_NAMES[0] in t for t in lookups)
    labels = browser.js("return [...document.querySelectorAll('#chart-functions svg text')].map(t => t.textContent)")
    assert any(loaded["function"] in t for t in labels)  # a chart's label is text too
    browser.screenshot("#function-0", artifacts_dir("report") / "hostile-function.png")


def test_the_numbers_shown_are_the_embedded_json(browser, loaded):
    embedded = browser.js("return JSON.parse(document.getElementById('fxcache-data').textContent)")
    assert embedded == loaded["data"]
    shown = browser.js("return [...document.querySelectorAll('[data-json]')].map(e => [e.dataset.json, e.dataset.value])")
    assert len(shown) > 20
    for path, value in shown:
        want = embedded
        for part in path.split("."):
            want = want[int(part)] if isinstance(want, list) else want[part]
        assert json.loads(value) == want, (path, value, want)


def test_a_cache_with_nothing_to_draw_says_so_without_a_console_message(browser, tmp_path):
    page, cache = tmp_path / "empty.html", tmp_path / "cache"
    cache.mkdir()
    r = run_fxcache("--cache-dir", str(cache), "report", str(page))
    assert r.returncode == 0, r.stderr
    load = browser.load(page)
    assert load.charts == "ready" and load.console == [] and load.requests == []
    assert browser.js("return [...document.querySelectorAll('[data-chart]')].map(e => e.textContent)") == [
        "(nothing to draw)"] * 2
