"""What ``make demo`` runs: build a real Inductor cache, then tour fxcache on it.

- ``demo.tour``: ``make demo`` (``python -m demo.tour [CACHE_DIR]``).
- ``demo.cases``: a registry of tiny compiled functions (imports torch).
- ``demo.build_cache``: builds a real Inductor cache from those cases
  (``python -m demo.build_cache CACHE_DIR``); importing it does not import torch.
- ``demo.recorder``: wraps torch's cache lookups and writes to record them (used by
  ``build_cache``'s summary).
- ``demo.record_defaults``: regenerates ``fxcache_core/keying/torch_defaults.py``.

The torch-side test harness (torch's own lookup as an oracle, model builders, traced
runs, compile variants, a remote-cache builder) lives in ``tests/harness`` and
imports from here, never the other way round. Nothing in this package is imported
by ``fxcache_core`` / ``fxcache_cli``.
"""
