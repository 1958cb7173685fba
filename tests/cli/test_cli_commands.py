"""The command table and the modes that became commands (synthetic caches, no torch).

``match --audit``, ``match --coverage KEY --range ...`` and ``ls --dupes`` are
deprecated spellings of ``fxcache audit``, ``fxcache coverage KEY --range ...`` and
``fxcache dupes``: the same stdout byte for byte, human and JSON, the same exit code,
and one line more on stderr; the table's summaries are the commands' docstrings.
"""

from __future__ import annotations

import importlib
import inspect
import json

import pytest

from fxcache_cli._commands import commands_dict
from fxcache_core.cache.keys import KeyKind
from tests.cli_run import fxcache_forked
from tests.synth import fake_key, fx_entry_bytes, write_entry


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    root = tmp_path_factory.mktemp("modes")
    k = fake_key(KeyKind.FX_GRAPH, "cov")
    write_entry(root, KeyKind.FX_GRAPH, k, fx_entry_bytes("2 <= L['t0'] and L['t0'] <= 7", k), name="a")
    write_entry(root, KeyKind.FX_GRAPH, k, fx_entry_bytes("16 <= L['t0']", k), name="b")
    write_entry(root, KeyKind.FX_GRAPH, k, fx_entry_bytes("L['t0'] >= 5 and (100 // (L['t0'] - 30)) > 0", k),
                name="c")
    s = fake_key(KeyKind.FX_GRAPH, "shadow")
    for i, g in enumerate(("2 <= L['t0'] and L['t0'] <= 100", "L['t0'] >= 10 and L['t0'] <= 20",
                           "8 <= L['t0']", "(L['t0'] % 4) == 0")):
        write_entry(root, KeyKind.FX_GRAPH, s, fx_entry_bytes(g, s), name=f"e{i}")
    for seed, p in (("d1", "True"), ("d2", "False")):
        d = fake_key(KeyKind.FX_GRAPH, seed)
        write_entry(root, KeyKind.FX_GRAPH, d, fx_entry_bytes(None, d, extra_lines=(
            "[h1] inductor_config[max_autotune]: True", f"[p{p}] inductor_config[disable_progress]: {p}")))
    return root, k, s


DEPRECATED = {
    "audit": "fxcache: 'match --audit' is deprecated; use 'fxcache audit'\n",
    "dupes": "fxcache: 'ls --dupes' is deprecated; use 'fxcache dupes'\n",
    "coverage": "fxcache: 'match --coverage' is deprecated; use 'fxcache coverage KEY --range ...'\n",
}


@pytest.mark.parametrize("json_flag", [[], ["--json"]])
@pytest.mark.parametrize("old,new", [
    (["match", "--audit"], ["audit"]),
    (["ls", "--dupes"], ["dupes"]),
    (["match", "--coverage", "{k}", "--range", "t0=0:40"], ["coverage", "{k}", "--range", "t0=0:40"]),
    (["match", "--coverage", "{s}", "--range", "s0=0:300", "--dynamic", "true"],
     ["coverage", "{s}", "--range", "s0=0:300", "--dynamic", "true"]),
    (["match", "--coverage", "{k}", "--range", "t0=9:2"], ["coverage", "{k}", "--range", "t0=9:2"]),
    (["match", "--coverage", "{k}", "--range", "t0=0:9", "--sym", "t9=3"],
     ["coverage", "{k}", "--range", "t0=0:9", "--sym", "t9=3"]),
])
def test_an_old_spelling_prints_what_its_command_prints_and_one_deprecation_line(cache, old, new, json_flag):
    root, k, s = cache

    def run(args):
        args = [a.format(k=k[:8], s=s[:8]) for a in args]
        return fxcache_forked("--cache-dir", root, *args, *json_flag)

    a, b = run(old), run(new)
    assert (a.returncode, a.stdout) == (b.returncode, b.stdout)
    assert a.stderr == DEPRECATED[new[0]] + b.stderr
    assert a.stdout or b.stderr
    if json_flag and a.returncode == 0:
        json.loads(a.stdout)


@pytest.mark.parametrize("cmd,old", [("match", "--audit"), ("match", "--coverage"), ("match", "--range"),
                                     ("ls", "--dupes")])
def test_an_old_spelling_is_not_in_its_commands_help(cmd, old):
    text = fxcache_forked(cmd, "--help").stdout
    options = [line.split()[1] if line.split()[0].endswith(",") else line.split()[0]
               for line in text.splitlines() if line.lstrip().startswith("-")]
    assert "--json" in options and old not in options


def test_dupes_finds_the_synthetic_fragment(cache):
    root, _, _ = cache
    groups = json.loads(fxcache_forked("--cache-dir", root, "dupes", "--json").stdout)
    assert groups and all(len(g["keys"]) >= 2 for g in groups)


def test_each_summary_is_the_first_paragraph_of_its_commands_docstring():
    for name, info in commands_dict.items():
        fn = getattr(importlib.import_module(info.module), info.function)
        first = inspect.getdoc(fn).split("\n\n")[0]
        assert first == info.summary, name


def test_help_lists_every_command_of_the_table_in_order():
    text = fxcache_forked("--help").stdout
    listed = [line.split()[0] for line in text.split("Commands:\n")[1].splitlines() if line.startswith("  ")]
    assert listed == list(commands_dict)


def test_an_unknown_command_suggests_a_close_one():
    p = fxcache_forked("covrage")
    assert p.returncode == 2 and "Did you mean 'coverage'?" in p.stderr
