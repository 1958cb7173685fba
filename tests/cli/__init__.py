"""Tier 2: the CLI on synthetic caches and on the recorded caches of other torch versions."""
