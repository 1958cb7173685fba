"""How pack and ``unpack --dry-run`` name what they pack: entries no readable entry records a
frame for (``torch.compile(nn.Linear(...))``: the frame is torch's own ``Linear.forward``, as
the pack evaluation found) are named by their keys, never as a bare ``?``."""

from __future__ import annotations

from types import SimpleNamespace

from fxcache_cli.pack import _function_label


def test_an_unknown_function_is_named_by_its_keys():
    es = [SimpleNamespace(key=k) for k in ("fkj564acz5rpitkv", "ardctzvqhbgiw63m", "fkj564acz5rpitkv")]
    assert _function_label("?", es) == "(function not recorded; keys ardctzvqhbgi, fkj564acz5rp)"
    many = [SimpleNamespace(key=f"k{i:02d}" + "x" * 20) for i in range(5)]
    assert _function_label("?", many).endswith("and 2 more)")


def test_a_known_function_is_shown_as_recorded():
    assert _function_label("Head.forward (app.py:6)", []) == "Head.forward (app.py:6)"
