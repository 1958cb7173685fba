"""Copy the screenshots of ``fxcache report``'s page that the browser test took into the docs.

    python -m tools.report_screenshots [--run] [--from DIR]

``tests/torch/test_report.py`` draws the page of a real cache and a real traced run in
headless chromium and saves each section (``report-overview.png``,
``report-function.png``, ``report-run.png``) under ``DIR`` (default
``build/test-artifacts/report``, or ``$FXCACHE_TEST_ARTIFACTS/report``). This copies
them to ``docs/images/``, where docs/tasks/one-page-report.md shows them. ``--run``
runs that test first (it needs torch, chromium and chromium-driver; it builds the
tests' real cache and traced run: a few minutes). Review the images, then commit them.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SHOTS = ("report-overview.png", "report-function.png", "report-run.png")
DOCS_IMAGES = REPO / "docs" / "images"
PNG = b"\x89PNG\r\n\x1a\n"


def default_dir() -> Path:
    return Path(os.environ.get("FXCACHE_TEST_ARTIFACTS") or REPO / "build" / "test-artifacts") / "report"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--from", dest="src", type=Path, default=None, help="where the test saved them")
    p.add_argument("--run", action="store_true", help="run tests/torch/test_report.py first")
    a = p.parse_args(argv)
    src = a.src or default_dir()
    if a.run:
        env = {**os.environ, "FXCACHE_TEST_ARTIFACTS": str(src.parent)}
        test = "tests/torch/test_report.py::test_each_section_renders_and_is_saved_as_a_screenshot"
        proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", test],
                              cwd=REPO, env=env)
        if proc.returncode:
            print("the test failed: no screenshot copied", file=sys.stderr)
            return 1
    missing = [n for n in SHOTS if not (src / n).is_file() or (src / n).read_bytes()[:8] != PNG]
    if missing:
        print(f"no screenshot {', '.join(missing)} in {src}: run tests/torch/test_report.py "
              "(or this script with --run) first", file=sys.stderr)
        return 1
    DOCS_IMAGES.mkdir(parents=True, exist_ok=True)
    for n in SHOTS:
        shutil.copyfile(src / n, DOCS_IMAGES / n)
        print(f"{DOCS_IMAGES.relative_to(REPO) / n}: {(DOCS_IMAGES / n).stat().st_size:,} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
