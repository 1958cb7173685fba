"""The docs stay true: every output they show is what fxcache prints now, and the
CLI reference and the reason-code table are what the code gives now.

``tools/render_docs.py --check`` re-runs each shown command on the recorded caches
(``tests/fixtures``: no torch) and fails on any difference;
``tools/gen_cli_reference.py --check`` makes the reference again from the Typer app.
Each check is also shown failing on a hand-edited copy.
"""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

import pytest

from tests.cli_run import fxcache_forked_as
from tests.helpers import REPO_ROOT
from tools import gen_cli_reference, render_docs

# The pages README.md links to: each must exist and be in mkdocs.yml's nav.
PAGES = [
    "index.md", "getting-started.md", "concepts.md", "blobs-and-standalone.md",
    "tasks/whats-in-my-cache.md", "tasks/disk-usage.md", "tasks/will-this-call-hit.md",
    "tasks/why-recompile.md", "tasks/shipped-cache.md", "tasks/ship-a-warm-cache.md",
    "tasks/shrink-the-cache.md", "tasks/remote-cache.md", "tasks/ci-recipes.md",
    "tasks/one-page-report.md",
    "reference/cli.md", "reference/json.md",
    "safety.md", "performance.md", "torch-versions.md", "architecture.md",
]


def _tool(*args: str, cwd=REPO_ROOT) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=300)


def _forked(argv: list[str], env: Mapping[str, str], cwd: Path) -> tuple[int, str, str]:
    """render_docs's runner here: each shown command forked from the CLI server, with the
    environment, working dir and empty stdin render_docs gives it (as ``python -m
    fxcache_cli`` would have them, without a fresh interpreter's start-up)."""
    run = fxcache_forked_as(argv, env, cwd, timeout=120)
    return run.returncode, run.stdout, run.stderr


def test_every_output_the_docs_show_is_what_fxcache_prints_now(capsys):
    code = render_docs.main(["--check"], runner=_forked)
    out, err = capsys.readouterr()
    assert code == 0, out[-6000:] + err[-2000:]


def test_an_output_line_edited_by_hand_fails_the_check(tmp_path, capsys):
    page = tmp_path / "disk-usage.md"
    text = (REPO_ROOT / "docs" / "tasks" / "disk-usage.md").read_text()
    edited = re.sub(r"^(total\s+\d+\s+)\S+", r"\g<1>9.9 MB", text, count=1, flags=re.M)
    assert edited != text
    page.write_text(edited)
    assert render_docs.main(["--check", str(page)], runner=_forked) == 1
    out, err = capsys.readouterr()
    assert "+total" in out and "9.9 MB" in out and "no longer prints" in err
    assert page.read_text() == edited  # --check writes nothing


def test_the_tool_runs_a_fresh_fxcache_that_prints_what_the_forked_one_does(tmp_path):
    """The tool as CI and a writer run it (``python -m tools.render_docs``: every shown
    command a fresh ``python -m fxcache_cli``) renders a page as the forked runs above do."""
    page = tmp_path / "page.md"
    page.write_text("<!-- fxcache: v2.15 ls --by function -->\n```console\n```\n")
    proc = _tool("tools.render_docs", str(page))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    fresh = page.read_text()
    assert "\n$ fxcache ls --by function\n" in fresh and len(fresh.splitlines()) > 5, fresh
    assert render_docs.render_page(page, _forked) == (fresh, fresh)


def test_the_shown_commands_stay_few_and_name_known_caches():
    shown = [s for p in render_docs.default_pages() for s in render_docs.find_shown(p.read_text())]
    assert 10 <= len(shown) <= 40
    with pytest.raises(ValueError, match="unknown cache"):
        render_docs.find_shown("<!-- fxcache: v9 ls -->\n```console\n$ fxcache ls\n```\n")


def test_the_cli_reference_is_what_the_app_gives_now(capsys):
    code = gen_cli_reference.main(["--check"])
    out, err = capsys.readouterr()
    assert code == 0, out[-6000:] + err[-2000:]


def test_a_reference_edited_by_hand_differs_from_what_the_script_writes():
    page = gen_cli_reference.CLI_PAGE.read_text()
    assert gen_cli_reference.cli_page() == page
    assert gen_cli_reference.cli_page() != page.replace("Print the plan and exit.", "Delete it all.", 1)
    json_page = gen_cli_reference.JSON_PAGE.read_text()
    edited = json_page.replace("| `clause-failed` |", "| `clause-failed-or-not` |", 1)
    assert edited != json_page
    assert gen_cli_reference.json_page(edited) == json_page


def test_the_reference_names_every_command_and_exit_code():
    from fxcache_cli import _errors
    from fxcache_cli._commands import commands_dict

    page = gen_cli_reference.CLI_PAGE.read_text()
    for name in commands_dict:
        assert f"\n## fxcache {name}\n" in page
    for code in (_errors.SUCCESS, _errors.FAILURE, _errors.BAD_INPUT, _errors.UNDECIDED,
                 _errors.INTERRUPTED, _errors.BROKEN_PIPE):
        assert re.search(rf"^\| {code} \| `", page, re.M)
    assert "| `clause-failed` | " in gen_cli_reference.JSON_PAGE.read_text()


def test_every_page_the_readme_links_to_is_in_the_site():
    nav = (REPO_ROOT / "mkdocs.yml").read_text()
    for page in PAGES:
        assert (REPO_ROOT / "docs" / page).is_file(), page
        assert f": {page}\n" in nav, page
    assert sorted(PAGES) == sorted(str(p.relative_to(REPO_ROOT / "docs"))
                                   for p in (REPO_ROOT / "docs").rglob("*.md"))
