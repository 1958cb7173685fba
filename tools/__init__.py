"""Maintenance scripts: each records or builds something the repository keeps (a table
in ``fxcache_core/keying``, a test fixture, golden outputs). See ``tools/README.md``
for what each writes, when to rerun it, and the exact command."""
