"""Torch-side demo and test infrastructure for fxcache.

- ``demo.cases``: a registry of tiny compiled functions (imports torch).
- ``demo.build_cache``: builds a real Inductor cache from those cases
  (``python -m demo.build_cache CACHE_DIR``); importing it does not import torch.
- ``demo.oracle``: asks torch itself which cache entries a call hits
  (``python -m demo.oracle CACHE_DIR CASE SHAPES_JSON``); importing it does not
  import torch.

Nothing in this package is imported by ``fxcache_core`` / ``fxcache_cli``.
"""
