"""The test harness's background builds start at collection only for fixtures of their name.

``conftest.pytest_collection_finish`` starts the build of every value a collected test
asks for by fixture name (``tests/harness/background.py``). A builder whose value is
reached only through a fixture of another name is built on demand, when its first test
runs, after the build threads may have gone idle: the suite still passes, minutes
later. This reads the test sources (no torch): each ``@builder("NAME")`` has a session
fixture ``NAME`` in the same file, or in conftest for the builds of tests/harness.
"""

from __future__ import annotations

import ast
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]


def _builders_and_fixtures(path: Path) -> tuple[set[str], set[str]]:
    tree = ast.parse(path.read_text())
    built: set[str] = set()
    fixtures: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "builder" and node.args:
            arg = node.args[0]
            if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                built.add(arg.value)
        if isinstance(node, ast.FunctionDef) and any(
                "fixture" in ast.unparse(d) for d in node.decorator_list):
            fixtures.add(node.name)
    return built, fixtures


def test_every_background_build_has_a_fixture_of_its_name():
    conftest_fixtures = _builders_and_fixtures(TESTS / "conftest.py")[1]
    missing = []
    seen = 0
    for path in sorted(TESTS.rglob("*.py")):
        if "harness" in path.parts:
            continue
        built, fixtures = _builders_and_fixtures(path)
        seen += len(built)
        missing += [f"{path.relative_to(TESTS)}: {name}" for name in built
                    if name not in fixtures | conftest_fixtures]
    assert seen >= 6  # the walk found the builders (model_cache, variants, pack_roundtrip, traced, redis_remote, rebuilt)
    assert not missing, missing


def test_every_file_with_a_background_build_has_a_place_in_the_torch_order():
    """conftest runs the torch tests file by file in the order their builds are ready
    (``_TORCH_ORDER``); a file missing there runs first and waits for its build while
    the tests of builds already made could run."""
    from tests import conftest

    files = [p.name for p in sorted((TESTS / "torch").glob("test_*.py"))
             if _builders_and_fixtures(p)[0]]
    assert len(files) >= 6
    assert [f for f in files if f not in conftest._TORCH_ORDER] == []
