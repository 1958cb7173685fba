"""Tier 1: the library in-process, on synthetic inputs; no torch."""
