"""Former generated table of torch's default settings, kept importable by name.

The table is now data, ``fxcache_core/keying/torch_defaults.json``, read by
:mod:`fxcache_core.keying.defaults` on first use; ``DEFAULTS`` and
``TORCH_VERSION`` here are read from it. Nothing is defined here.
"""

# moved to keying.defaults (default_settings(), torch_version()); callers outside keying/ move at merge
from fxcache_core.keying.defaults import __getattr__  # noqa: F401
