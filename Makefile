# fxcache developer entry points. Each target installs what it needs into .venv.
#   make demo   build a real torch.compile cache (CPU) and tour every command on it
#   make test   the full suite, what CI runs: unit, cli, then torch (builds its real caches
#               once per session, in a temp dir, in the background while the fast tiers run)
#   make test-fast  every test that needs no torch compile and no browser, on every core (tests/unit, tests/cli;
#               -m "not torch and not package and not browser")
#   make package    build the wheel, install it in a bare venv without torch, run --version and every --help
#   make lint   ruff, then import-linter's layers and no-cycle contracts (pyproject.toml)
#   make bench  benchmarks, not part of make test: guard evaluation (pytest-benchmark),
#               then ls/match/gc at scale (BENCH_SIZES entries, default 1000,10000),
#               then listing a Redis remote cache (needs redis-server), then explain on a 100 MB trace,
#               then report's page of 10,000 entries
#   make eval   fxcache match against torch on model families and call patterns the suite does not
#               use (tests/harness/evaluation; not part of make test: about 30 min); EVAL_ARGS
#               passes options (--family NAME, --workdir DIR to keep caches and torch's answers)
#   make docs   the manual (docs/, mkdocs.yml) built into site/ with mkdocs build --strict; its
#               outputs and CLI reference are checked by tests/cli/test_docs.py (make test-fast)
#   make setup  just the venv: pinned CPU torch 2.13.0 + fxcache in editable mode

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.fxcache-installed
DEMO_CACHE ?= demo-cache
BENCH_SIZES ?= 1000,10000

.PHONY: setup demo test test-fast package lint docs bench eval clean

setup: $(STAMP)

$(STAMP): pyproject.toml constraints.txt
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --disable-pip-version-check -c constraints.txt -e '.[torch,dev]'
	touch $(STAMP)

demo: setup
	$(BIN)/python -m demo.tour $(DEMO_CACHE)

# The suite starts hundreds of fresh Python processes; where PYTHONDONTWRITEBYTECODE is
# set (as on CI's machines) none of them would write the bytecode of fxcache's own modules,
# and each would compile them again (about 0.35 s of CPU for what match imports).
# compileall writes it once, up front.
BYTECODE := $(BIN)/python -m compileall -q -j 0 fxcache_core fxcache_cli tests demo >/dev/null

test: setup
	$(BYTECODE)
	$(BIN)/python -m pytest -q -m "not package"

test-fast: setup
	$(BYTECODE)
	$(BIN)/python -m pytest -q -n auto -m "not torch and not package and not browser" tests/unit tests/cli

package: setup
	$(BIN)/python -m pytest -q -m package tests/cli/test_packaging.py

docs: setup
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --site-dir site

bench: setup
	$(BIN)/python -m pytest benchmarks -q --benchmark-only --benchmark-columns=min,median,mean,ops,rounds --benchmark-sort=name
	$(BIN)/python -m benchmarks.bench_scale --sizes $(BENCH_SIZES)
	$(BIN)/python -m benchmarks.bench_remote
	$(BIN)/python -m benchmarks.bench_explain
	$(BIN)/python -m benchmarks.bench_report

eval: setup
	$(BIN)/python -m tests.harness.evaluation $(EVAL_ARGS)

lint: setup
	$(BIN)/ruff check fxcache_core fxcache_cli tests demo benchmarks tools
	$(BIN)/lint-imports --no-cache

clean:
	rm -rf $(VENV) $(DEMO_CACHE) $(DEMO_CACHE)-tour site .pytest_cache .ruff_cache .hypothesis
