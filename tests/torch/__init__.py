"""Tier 3: real caches torch compiles here, with torch's own lookup as the oracle."""
