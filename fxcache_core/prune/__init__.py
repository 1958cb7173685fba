"""Pruning: gc's policy, plan and execution, deletion through dir fds, units of
files that go together, and disk usage (df)."""
