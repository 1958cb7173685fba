"""What an FX graph key is made of, and what differs between two keys.

Torch hashes an ``FxGraphHashDetails`` into the FX key and stores, in every
entry, one debug line per component (``FxGraphCachePickler.debug_lines`` in
torch/_inductor/codecache.py)::

    [<component hash>] <name>: <readable value>

``name`` is an attribute (``gm``, ``torch_version``) or an item of a list or
dict attribute (``example_inputs[2]``, ``inductor_config[max_autotune]``,
``system_info[hash]``). The component hash is torch's own hash of the value,
so two keys differ exactly where their component hashes differ (or where one
has a component the other lacks). The readable value is torch's ``str`` of
it, cut at 1024 characters for bytes.

AOTAutograd entries store no debug lines: an AOTAutograd key is compared
through what its entries store (guards) and the FX keys they load.

Nothing here imports torch.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from fxcache_core.cache.keys import KeyKind
from fxcache_core.cache.scan import CacheKey, Entry
from fxcache_core.catalog.reader import Catalog, Unreadable
from fxcache_core.decode.entries import DecodedEntry
from fxcache_core.errors import KeyLookupError

_LINE_RE = re.compile(r"\[([a-z0-9]+)\] ([A-Za-z_][\w]*(?:\[[^\]\n]*\])?): (.*)", re.DOTALL)

# Components that say which torch build and machine made the key: an entry whose
# values differ from the installed torch's can never be looked up again.
BUILD_COMPONENTS = ("torch_version", "system_info")

CALL_GROUPS = {
    "gm": "the FX graph",
    "example_inputs": "the graph's inputs: dtype, shape, stride, device",
}
"""Groups that describe what was compiled; they have no default."""
BUILD_GROUPS = {
    "torch_version": "a digest of torch's sources",
    "system_info": "the machine: device, compilers, versions",
    "cpp_runtime_thread_count": "the CPU threads the compiled code uses",
}
"""Groups that describe the torch build and machine; they have no default."""


def is_setting(group: str) -> bool:
    """Whether a component group is a setting (inductor config, ``fx_kwargs``,
    deterministic algorithms, custom passes...): every group that neither
    describes the graph (:data:`CALL_GROUPS`) nor the build (:data:`BUILD_GROUPS`).
    A setting has a default, recorded in :mod:`fxcache_core.keying.defaults`."""
    return group not in CALL_GROUPS and group not in BUILD_GROUPS


@dataclass(frozen=True)
class Component:
    """One hashed part of an FX key.

    Attributes:
        name: ``gm``, ``example_inputs[0]``, ``inductor_config[max_autotune]``...
        hash: torch's hash of the value (base32, as in the debug line).
        value: torch's readable form of the value ("" when it was empty).
    """

    name: str
    hash: str
    value: str

    @property
    def group(self) -> str:
        """The attribute the component belongs to: ``inductor_config`` for
        ``inductor_config[max_autotune]``."""
        return self.name.split("[", 1)[0]

    @property
    def readable(self) -> str:
        """The value for display: ``torch_version`` is raw digest bytes, shown as its
        hash; tensor metadata is cut to dtype, shape, stride, device and what is
        not at its default (``float32[8, 4] stride (1, 8) cpu, memory_format=None``)."""
        if self.name == "torch_version":
            return f"(a digest of torch's sources; hash {self.hash[:12]})"
        if self.value.startswith("TensorMetadata(") and (short := _tensor_metadata(self.value)):
            return short
        if self.name == "system_info[version]" and (short := _system_versions(self.value)):
            return short
        return self.value

    def to_json(self) -> dict[str, str]:
        """``name``, ``hash``, ``value`` (readable) and ``raw`` (as torch printed it)."""
        return {"name": self.name, "hash": self.hash, "value": self.readable, "raw": self.value}


_TM_FIELD_RE = re.compile(r"(\w+)=((?:torch\.Size\(\[[^\]]*\]\))|(?:\([^()]*\))|(?:device\([^()]*\))|[^,()]+)")
_TM_DEFAULTS = {"layout": "torch.strided", "memory_format": "torch.contiguous_format",
                "storage_offset": "0", "storage_bytes": "None", "requires_grad": "False",
                "is_coalesced": "None", "dense_dim": "None", "sparse_dim": "None"}


def _tensor_metadata(text: str) -> str | None:
    """``TensorMetadata(dtype=torch.float32, shape=torch.Size([8, 4]), stride=(4, 1), ...)``
    (torch/_inductor/codecache.py, ``extract_tensor_metadata_for_cache_key``) as
    ``float32[8, 4] stride (4, 1) cpu`` plus the fields not at their defaults; None
    if it does not read as expected."""
    fields = dict(_TM_FIELD_RE.findall(text[len("TensorMetadata("):]))
    try:
        dtype = fields.pop("dtype").removeprefix("torch.")
        shape = fields.pop("shape").removeprefix("torch.Size(").removesuffix(")")
        stride = fields.pop("stride")
        device = re.sub(r"device\(type='(\w+)'(?:, index=([0-9]+))?\)",
                        lambda m: m.group(1) + (f":{m.group(2)}" if m.group(2) else ""), fields.pop("device"))
    except KeyError:
        return None
    extra = [f"{k}={v}" for k, v in fields.items()
             if v != _TM_DEFAULTS.get(k, "False")]
    return f"{dtype}{shape} stride {stride} {device}" + (", " + ", ".join(extra) if extra else "")


def tensor_fields(text: str) -> dict[str, str] | None:
    """``TensorMetadata(...)`` (an ``example_inputs[i]`` value) as its fields, ``dtype``
    (``float32``), ``shape`` (``[8, 4]``), ``stride`` (``(4, 1)``) and the rest as printed;
    None if the text is not tensor metadata."""
    if not text.startswith("TensorMetadata("):
        return None
    fields = dict(_TM_FIELD_RE.findall(text[len("TensorMetadata("):]))
    if "dtype" not in fields or "shape" not in fields:
        return None
    fields["dtype"] = fields["dtype"].removeprefix("torch.")
    fields["shape"] = fields["shape"].removeprefix("torch.Size(").removesuffix(")")
    return fields


_VERSION_ITEM_RE = re.compile(r"'(\w{1,40})': ('[^']{0,4000}'|None)")
_HEX64_RE = re.compile(r"[0-9a-f]{64}")


def _system_versions(text: str) -> str | None:
    """``system_info[version]`` (``CacheBase.get_system()`` in
    torch/_inductor/codecache.py: ``{'triton': triton_key(), 'cuda': ...}``; in
    CPU keys too from torch 2.15 on) as ``triton 3.9.0 (sources 58b25352786f…), cuda 13.0``.

    ``triton_key()`` (triton/runtime/cache.py) is the version followed by the
    sha256 digests of triton's sources joined by ``-``; it is shown as the
    version and the first digest. None if the text does not read that way.
    """
    items = _VERSION_ITEM_RE.findall(text)
    if not items:
        return None
    parts = []
    for name, raw in items:
        if raw == "None":
            parts.append(f"{name}: none")
            continue
        value = raw[1:-1]
        head = value.split("-", 1)[0]
        if name == "triton" and len(head) > 64 and _HEX64_RE.fullmatch(head[-64:]):
            parts.append(f"triton {head[:-64]} (sources {head[-64:][:12]}…)")
        else:
            parts.append(f"{name} {value}")
    return ", ".join(parts)


@dataclass(frozen=True)
class GroupSummary:
    """The components of one group of a key, against torch's defaults.

    Attributes:
        group: ``inductor_config``, ``example_inputs``...
        components: how many.
        about: what the group describes (for the graph and build groups), else "".
        not_default: settings whose hash is not that of torch's default
            (:mod:`fxcache_core.keying.defaults`), each with the default's value.
        unknown: settings with no recorded default (a torch other than the one
            the table was recorded with may hash settings it does not know).
    """

    group: str
    components: int
    about: str = ""
    not_default: tuple[tuple[Component, str], ...] = ()
    unknown: tuple[Component, ...] = ()

    @property
    def setting(self) -> bool:
        return is_setting(self.group)

    def to_json(self) -> dict[str, object]:
        return {"group": self.group, "components": self.components, "setting": self.setting,
                "about": self.about or None,
                "not_default": [{**c.to_json(), "default": d} for c, d in self.not_default],
                "no_recorded_default": [c.name for c in self.unknown]}


def settings_not_at_default(components: Sequence[Component],
                            defaults: Mapping[str, tuple[str, str]] | None = None) -> tuple[GroupSummary, ...]:
    """One :class:`GroupSummary` per group of ``components``, in torch's order.

    "Default" means the value a plain ``torch.compile(f)`` on torch
    :func:`fxcache_core.keying.defaults.torch_version` hashes, on the machine the
    table was recorded on (``tools/record_defaults.py``), with no ``TORCHINDUCTOR_*``
    variable set; a key built by another torch may show settings whose default
    changed as not at default, unless ``defaults`` gives that torch's own table
    (:func:`fxcache_core.keying.defaults.default_settings_for`).
    """
    from fxcache_core.keying.defaults import default_settings

    if defaults is None:
        defaults = default_settings()

    groups: dict[str, list[Component]] = {}
    for c in components:
        groups.setdefault(c.group, []).append(c)
    out = []
    for g, cs in groups.items():
        if not is_setting(g):
            out.append(GroupSummary(g, len(cs), CALL_GROUPS.get(g) or BUILD_GROUPS.get(g, "")))
            continue
        off = tuple((c, defaults[c.name][1]) for c in cs
                    if c.name in defaults and not c.hash.startswith(defaults[c.name][0]))
        unknown = tuple(c for c in cs if c.name not in defaults)
        out.append(GroupSummary(g, len(cs), "", off, unknown))
    return tuple(out)


_OP_RE = re.compile(r"torch\.ops\.(\w+)\.(\w+)")


def graph_summary(gm: Component) -> str:
    """``3 ops: mul, add, sum`` from the printed graph of a ``gm`` component."""
    ops = [f"{m.group(2)}" for m in _OP_RE.finditer(gm.value)]
    names = list(dict.fromkeys(ops))
    shown = ", ".join(names[:8]) + (f" and {len(names) - 8} more" if len(names) > 8 else "")
    return f"{len(ops)} ops" + (f": {shown}" if shown else "")


def parse_debug_lines(lines: Sequence[str]) -> tuple[Component, ...]:
    """The components of an FX key from its entry's debug lines, in torch's order.

    A line that does not have the ``[hash] name: value`` shape is skipped.
    """
    out = []
    for line in lines:
        m = _LINE_RE.fullmatch(line)
        if m:
            out.append(Component(name=m.group(2), hash=m.group(1), value=m.group(3)))
    return tuple(out)


@dataclass(frozen=True)
class KeyAnatomy:
    """What a key is made of.

    Attributes:
        key: the key.
        components: FX keys: the components, from its first readable entry
            (empty for an AOTAutograd key, or when no entry can be read).
        loads: AOTAutograd keys: (role, FX key) pairs its entries load, in
            order of first appearance.
        entry: the entry the components were read from (None if none could be read).
    """

    key: CacheKey
    components: tuple[Component, ...]
    loads: tuple[tuple[str, str], ...] = ()
    entry: str | None = None

    def to_json(self, group: str | None = None, *, stale: Sequence[str] | None = None,
                origin: object | None = None) -> dict[str, object]:
        """``kind``, ``key``, ``entry``, ``components`` (only ``group``'s when given),
        ``groups`` (:func:`settings_not_at_default`), ``loads`` (``role``, ``key``),
        ``stale`` (the build components that differ from the installed torch's,
        :func:`stale_components`; None when not compared), ``origin`` (the key's
        origin, :func:`~fxcache_core.functions.origin.key_origin`, as text; None when
        unknown) and ``defaults_of`` (``torch X.Y.Z``: the recorded defaults
        ``groups`` compares with)."""
        from fxcache_core.keying.defaults import torch_version

        comps = [c for c in self.components if group is None or c.group == group]
        return {"kind": self.key.kind.value, "key": self.key.key, "entry": self.entry,
                "components": [c.to_json() for c in comps],
                "groups": [g.to_json() for g in settings_not_at_default(self.components)],
                "loads": [{"role": r, "key": k} for r, k in self.loads],
                "stale": list(stale) if stale is not None else None,
                "origin": str(origin) if origin else None,
                "defaults_of": f"torch {torch_version()}"}


def anatomy(catalog: Catalog, key: CacheKey) -> KeyAnatomy:
    """Read the anatomy of ``key`` from its entries (nothing is executed).

    An FX key's components come from its first readable entry, decoded with its
    debug lines, which the catalog does not keep (:meth:`Catalog.decode_now`).
    """
    if key.kind is KeyKind.FX_GRAPH:
        for e in key.entries:
            d = catalog.decode_now(e)
            if isinstance(d, DecodedEntry):
                return KeyAnatomy(key=key, components=parse_debug_lines(d.debug_lines), entry=e.name)
        return KeyAnatomy(key=key, components=())
    loads: list[tuple[str, str]] = []
    entry = None
    for e in key.entries:
        d = catalog.load(e)
        if not isinstance(d, DecodedEntry):
            continue
        for role, ref in (("forward", d.forward), ("backward", d.backward)):
            if ref is not None and (role, ref.key) not in loads:
                loads.append((role, ref.key))
        if entry is None:
            entry = e.name
    return KeyAnatomy(key=key, components=(), loads=tuple(loads), entry=entry)


@dataclass(frozen=True)
class ComponentDiff:
    """One component that differs between two keys; a side is None when absent."""

    name: str
    a: Component | None
    b: Component | None

    def to_json(self) -> dict[str, object]:
        return {"name": self.name, "a": self.a.to_json() if self.a else None,
                "b": self.b.to_json() if self.b else None}


def diff_components(a: Sequence[Component], b: Sequence[Component]) -> tuple[ComponentDiff, ...]:
    """The components whose hashes differ, or that only one side has, in A's order
    then B's. Equal hashes mean equal values as torch hashed them."""
    by_a = {c.name: c for c in a}
    by_b = {c.name: c for c in b}
    out = []
    for name in list(by_a) + [n for n in by_b if n not in by_a]:
        ca, cb = by_a.get(name), by_b.get(name)
        if ca is None or cb is None or ca.hash != cb.hash:
            out.append(ComponentDiff(name, ca, cb))
    return tuple(out)


@dataclass(frozen=True)
class ComparedPair:
    """Two FX keys compared component by component.

    Attributes:
        role: "" for the keys asked for; ``forward``/``backward`` for the FX keys
            two AOTAutograd keys load.
        a, b: their anatomies.
        differ: the components whose hashes differ (or that one side lacks).
    """

    role: str
    a: KeyAnatomy
    b: KeyAnatomy
    differ: tuple[ComponentDiff, ...]

    def to_json(self) -> dict[str, object]:
        return {"role": self.role or None, "a": self.a.key.key, "b": self.b.key.key,
                "differ": [d.to_json() for d in self.differ]}


@dataclass(frozen=True)
class KeyComparison:
    """Why two keys are not one (``fxcache diff``).

    Attributes:
        a, b: the two keys' anatomies.
        pairs: the FX keys compared: the two keys themselves, or for AOTAutograd
            keys (which store no components) the FX keys they load, role by role,
            where both caches have them.
    """

    a: KeyAnatomy
    b: KeyAnatomy
    pairs: tuple[ComparedPair, ...]

    def __iter__(self):
        """(a, b, [(role, a, b, differ)...]): the tuple ``compare_keys`` used to return."""
        return iter((self.a, self.b, [(p.role, p.a, p.b, p.differ) for p in self.pairs]))

    def to_json(self) -> dict[str, object]:
        """``a``, ``b``, ``kind``, ``loads`` (``a``/``b``: ``role``, ``key``) and ``compared``."""
        return {"a": self.a.key.key, "b": self.b.key.key, "kind": self.a.key.kind.value,
                "loads": {"a": [{"role": r, "key": k} for r, k in self.a.loads],
                          "b": [{"role": r, "key": k} for r, k in self.b.loads]},
                "compared": [p.to_json() for p in self.pairs]}


def compare_keys(cat_a: Catalog, a: CacheKey, cat_b: Catalog, b: CacheKey) -> KeyComparison:
    """Compare two keys of one kind, each in its own catalog (``fxcache diff``).

    For FX keys the keys themselves are compared (role ""); for AOTAutograd keys,
    which store no components, the FX keys they load, role by role (``forward``,
    ``backward``) where both caches have them.

    Raises:
        KeyLookupError: the keys are of different kinds, or a compared key has no
            readable entry.
    """
    if a.kind is not b.kind:
        raise KeyLookupError(f"{a.key[:12]} is an {a.kind.value} key and {b.key[:12]} an "
                             f"{b.kind.value} key: compare keys of one kind")
    an_a, an_b = anatomy(cat_a, a), anatomy(cat_b, b)
    pairs = [("", an_a, an_b)]
    if a.kind is KeyKind.AOT_AUTOGRAD:
        fx_a, fx_b = dict(an_a.loads), dict(an_b.loads)
        pairs = []
        for role in sorted(set(fx_a) & set(fx_b)):
            fa, fb = cat_a.scan.key(fx_a[role]), cat_b.scan.key(fx_b[role])
            if fa is not None and fb is not None:
                pairs.append((role, anatomy(cat_a, fa), anatomy(cat_b, fb)))
    out = []
    for role, x, y in pairs:
        if x.entry is None or y.entry is None:
            raise KeyLookupError(f"no readable entry in {(x if x.entry is None else y).key.key[:12]}: "
                                 "nothing to compare")
        out.append(ComparedPair(role, x, y, diff_components(x.components, y.components)))
    return KeyComparison(an_a, an_b, tuple(out))


def stale_components(components: Sequence[Component], current: dict[str, str]) -> tuple[str, ...]:
    """Names of the build components (``torch_version``, ``system_info[...]``)
    whose hash differs from ``current`` (name -> hash, see
    :func:`fxcache_core.keying.current.current_build`). Components absent on either
    side are not evidence and are not reported."""
    return tuple(c.name for c in components
                 if c.group in BUILD_COMPONENTS and c.name in current and current[c.name] != c.hash)


_SYMBOL_RE = re.compile(r"\b[su][0-9]+\b")

COSMETIC_COMPONENTS = frozenset({
    "inductor_config[disable_progress]",
    "inductor_config[verbose_progress]",
    "inductor_config[worker_log_path]",
    "inductor_config[sleep_sec_TESTING_ONLY]",
})
"""Components torch hashes into the FX key although they only change progress
output, logging or test sleeps, never the compiled code (their meaning in
torch/_inductor/config.py): keys that differ only there are fragmentation."""


def canonical_components(components: Sequence[Component]) -> tuple[tuple[str, str], ...]:
    """The components with symbol names made irrelevant: each ``s77``/``u3`` is
    renamed in order of first appearance (``s#0``, ``s#1``...), in the values
    that name symbols; :data:`COSMETIC_COMPONENTS` are left out; other
    components are kept by hash.

    Dynamo names a symbol after its source (``L['x'].size()[0]``), so the same
    graph traced from a parameter of another name gets another key.
    """
    names: dict[str, str] = {}

    def rename(m: re.Match[str]) -> str:
        return names.setdefault(m.group(0), f"{m.group(0)[0]}#{len(names)}")

    return tuple((c.name, _SYMBOL_RE.sub(rename, c.value)) if _SYMBOL_RE.search(c.value)
                 else (c.name, c.hash) for c in components if c.name not in COSMETIC_COMPONENTS)


@dataclass(frozen=True)
class Fragment:
    """FX keys that are one key but for symbol names or cosmetic settings.

    Attributes:
        keys: the keys, sorted.
        differ: the components whose hashes differ between the first key and the others.
    """

    keys: tuple[CacheKey, ...]
    differ: tuple[str, ...]

    @property
    def reason(self) -> str:
        cosmetic = [d for d in self.differ if d in COSMETIC_COMPONENTS]
        named = [d for d in self.differ if d not in COSMETIC_COMPONENTS]
        parts = []
        if named:
            parts.append("symbol names (" + ", ".join(named) + "): the same graph traced from inputs "
                         "named differently")
        if cosmetic:
            parts.append("settings that never change the compiled code (" + ", ".join(cosmetic)
                         + "): make them the same in every job")
        return "they differ only in " + "; and in ".join(parts)

    def to_json(self) -> dict[str, object]:
        """``keys``, ``differ``, ``reason`` and ``size`` (bytes of their entries)."""
        return {"keys": [k.key for k in self.keys], "differ": list(self.differ), "reason": self.reason,
                "size": sum(k.size for k in self.keys)}


def fragmentation(catalog: Catalog) -> tuple[Fragment, ...]:
    """Groups of FX keys equal up to symbol names and :data:`COSMETIC_COMPONENTS`
    (``fxcache ls --dupes``).

    Reads every FX key's first readable entry (in one batch for the decode workers);
    keys with none are left out. Memory: per key a digest and the hashes of the few
    components that may differ within a group (cosmetic ones, and those whose values
    name symbols), besides the catalog's light entry; the components themselves are
    hundreds of KB a key, one key's at a time.
    """
    fx_keys = [k for k in catalog.scan.keys if k.kind is KeyKind.FX_GRAPH]
    first = {k.entries[0].file.where: i for i, k in enumerate(fx_keys) if k.entries}
    seen: dict[int, tuple[bytes, dict[str, str]]] = {}
    unread: list[int] = []

    def keep(i: int, comps: tuple[Component, ...]) -> None:
        if comps:
            may_differ = {c.name: c.hash for c in comps
                          if c.name in COSMETIC_COMPONENTS or _SYMBOL_RE.search(c.value)}
            seen[i] = (hashlib.sha256(repr(canonical_components(comps)).encode()).digest(), may_differ)

    def took(e: Entry, d: DecodedEntry | Unreadable) -> None:  # one key's debug lines at a time
        if isinstance(d, DecodedEntry):
            keep(first[e.file.where], parse_debug_lines(d.debug_lines))
        else:
            unread.append(first[e.file.where])  # its next readable entry speaks for it: below

    catalog.decode_each_now([k.entries[0] for k in fx_keys if k.entries], took)
    for i in unread:  # as anatomy() reads an FX key, past its first entry
        d = next((d for e in fx_keys[i].entries[1:] if isinstance(d := catalog.decode_now(e), DecodedEntry)), None)
        if d is not None:
            keep(i, parse_debug_lines(d.debug_lines))
    groups: dict[bytes, list[int]] = {}
    for i in sorted(seen):  # the scan's order, whatever order the workers answered in
        groups.setdefault(seen[i][0], []).append(i)
    out = []
    for members in groups.values():
        if len(members) < 2:
            continue
        maps = [seen[i][1] for i in members]
        names = dict.fromkeys(n for m in maps for n in m)  # first seen first, as diff_components orders them
        differ = {n for n in names if len({m.get(n) for m in maps}) > 1}
        out.append(Fragment(tuple(fx_keys[i] for i in members), tuple(sorted(differ))))
    return tuple(out)
