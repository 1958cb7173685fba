"""transformers offline and quiet: the environment every process of the suite runs in.

Set by the suite's conftest at its import, before any process starts, so the fxcache runs
made ahead on the build threads and those a test makes see the same environment
(:mod:`tests.harness.match_runs` takes a run made ahead only where they do); and by
:mod:`tests.harness.models` before it imports transformers, for processes started alone.
Imports neither torch nor transformers.
"""

import os

OFFLINE_ENV = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
               "TRANSFORMERS_VERBOSITY": "error", "TOKENIZERS_PARALLELISM": "false"}


def offline() -> None:
    """Make transformers work offline and quietly (call before importing it)."""
    os.environ.update(OFFLINE_ENV)
