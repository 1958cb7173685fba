"""What ``make demo`` runs: build a real Inductor cache, then tour fxcache on it.

- ``demo.tour``: ``make demo`` (``python -m demo.tour [CACHE_DIR]``).
- ``demo.cases``: the :class:`~demo.cases.Case` type and the demo's eight tiny
  functions (imports torch).
- ``demo.models``: a small ``transformers`` model from a config, nothing downloaded
  (imports torch and transformers).
- ``demo.build_cache``: builds a real Inductor cache from a corpus of cases (the
  demo's by default; ``python -m demo.build_cache CACHE_DIR``), in a process started
  as a :class:`~demo.build_cache.BuildOptions` says; importing it does not import torch.
- ``demo.traced_run``: a later run of one demo function under ``TORCH_TRACE`` (a hit,
  then a guard miss), the run the tour's ``fxcache explain`` reads (imports torch).
- ``demo.recorder``: wraps torch's cache lookups and writes to record them, and reads
  torch's cache counters (used by ``build_cache``'s summary); it imports nothing of
  ``demo``.

The tables and fixtures the repository keeps are recorded by the scripts in
``tools/`` (``tools/README.md``). The torch-side test harness (the tests' corpus of
cases, torch's own lookup as an oracle, model builders, traced runs, compile
variants, a remote-cache builder) lives in ``tests/harness`` and imports from here,
never the other way round. Nothing in this package is imported by ``fxcache_core`` /
``fxcache_cli``.
"""
