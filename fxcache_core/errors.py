"""Errors fxcache raises for bad input.

Every error a user can cause (a wrong cache dir, an unknown key prefix, a
malformed shape spec, an entry that cannot be decoded, a guard string outside
the supported grammar) derives from :class:`FxcacheError`; the CLI turns each
into a one-line message and exit code 2.

Errors speak in the parameters of the core call that was given the bad value,
never in CLI flags: a message names a parameter through :func:`param`, and the
error carries ``param`` and ``value`` as fields. :func:`param` asks the naming in
force, as gettext's ``_()`` asks the locale: a library caller reads the parameter
(``inputs``); the CLI installs its own naming once, at start-up
(:func:`use_names`), and reads its flag (``--inputs``). The flag spellings live in
the CLI, not here. Nothing is rendered after the fact, so no text read from a cache
can pose as a parameter.
"""

from __future__ import annotations

from collections.abc import Callable
from contextvars import ContextVar
from typing import Any

_NAMES: ContextVar[Callable[[str], str] | None] = ContextVar("fxcache_param_names", default=None)


def param(name: str) -> str:
    """How the caller calls the core parameter ``name`` (``"inputs"``, ``"sym"``,
    ``"cache_dir"``, ``"dynamic"``), for a message or reason text: the name itself,
    or what the naming installed by :func:`use_names` makes of it (the CLI: its
    flag). Call it when the text is made, never at import."""
    names = _NAMES.get()
    return names(name) if names is not None else name


def use_names(names: Callable[[str], str] | None) -> Callable[[], None]:
    """Install ``names`` (core parameter -> the caller's word for it) for the texts
    made from now on in this context; None: the parameters' own names. Returns a
    function that puts the previous naming back."""
    token = _NAMES.set(names)
    return lambda: _NAMES.reset(token)


class FxcacheError(Exception):
    """Base class of every error caused by the input fxcache was given.

    Attributes:
        message: the message (parameters named through :func:`param`).
        param: the parameter whose value is wrong (``"inputs"``), or None when
            the error is about the cache rather than an argument.
        value: the value given for ``param`` (as given), or None.
    """

    def __init__(self, message: str = "", *, param: str | None = None, value: Any = None) -> None:
        super().__init__(message)
        self.message, self.param, self.value = message, param, value


class CacheDirError(FxcacheError):
    """The cache dir does not exist, is not a directory, or cannot be read."""


class KeyLookupError(FxcacheError):
    """A key prefix matches no key, or more than one key."""


class ShapeSpecError(FxcacheError):
    """A ``--inputs``/``--sym`` binding is malformed or names nothing the key has."""


class EntryDecodeError(FxcacheError):
    """An entry file is truncated, corrupt, or not a pickle of a known cache object."""


class EntryTooLarge(EntryDecodeError):
    """An entry needs more memory to decode than fxcache allows: not evidence that
    it is invalid (torch, with more memory, may load it)."""


class GuardParseError(FxcacheError):
    """A guards expression uses syntax outside the whitelist, or exceeds a size limit."""


class FunctionLookupError(FxcacheError):
    """No key was compiled from the function asked for (``--fn NAME``).

    Attributes:
        function: the name asked for.
        names: the functions the cache has keys of, sorted.
    """

    def __init__(self, function: str, names: tuple[str, ...] | list[str]) -> None:
        self.function, self.names = function, tuple(names)
        shown = ", ".join(self.names[:20]) + (f" and {len(self.names) - 20} more" if len(self.names) > 20 else "")
        super().__init__(f"no key was compiled from a function named {function!r}; "
                         + (f"the cache has keys of: {shown}" if self.names else "no key records its function"))


class FunctionAmbiguousError(FxcacheError):
    """The function asked for (``--fn NAME``) names more than one function: ``forward``
    of several classes, a decorator's ``wrapper`` shared by several models.

    Attributes:
        function: the name asked for.
        candidates: each function it names, as ``Class.forward (file.py:12)``, sorted.
    """

    def __init__(self, function: str, candidates: tuple[str, ...] | list[str]) -> None:
        self.function, self.candidates = function, tuple(candidates)
        shown = "; ".join(self.candidates[:20]) + (
            f" and {len(self.candidates) - 20} more" if len(self.candidates) > 20 else "")
        super().__init__(f"{function!r} names {len(self.candidates)} functions: {shown}; give one of "
                         f"them to {param('function')} (its class, Class.forward, or the whole line)",
                         param="function", value=function)
