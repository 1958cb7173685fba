"""fxcache's test suite: one package, imported as ``tests`` (``from tests.helpers import ...``).

tests/README.md says how to run each tier and what the suite sets.
"""
