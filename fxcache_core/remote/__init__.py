"""Inductor's remote cache on Redis, and fxcache's remembered reads of it."""
