"""Decoded entries of one scan, cached: the catalog, its persistent index, and verify."""
