"""Errors fxcache raises for bad input.

Every error a user can cause (a wrong cache dir, an unknown key prefix, a
malformed shape spec, an entry that cannot be decoded, a guard string outside
the supported grammar) derives from :class:`FxcacheError`; the CLI turns each
into a one-line message and exit code 2.

Errors speak in the parameters of the core call that was given the bad value,
never in CLI flags: a message names a parameter through :func:`param`, and the
error carries ``param`` and ``value`` as fields. ``str(error)`` names the
parameter as a library caller wrote it (``shapes``); the CLI's error layer
renders the same message with its flag (``--shapes``) through
:meth:`FxcacheError.render`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

_PARAM = re.compile("\x1e([A-Za-z_][A-Za-z0-9_]*)\x1f")


def param(name: str) -> str:
    """A parameter's name inside a message or reason text, to be rendered by who
    shows it: as ``name`` itself by :func:`render` by default (library callers),
    as its flag by the CLI. ``name`` is the core parameter (``"shapes"``,
    ``"sym"``, ``"cache_dir"``, ``"dynamic"``)."""
    return f"\x1e{name}\x1f"


def render(text: str, name_of: Callable[[str], str] | None = None) -> str:
    """``text`` with each :func:`param` marker replaced by ``name_of(name)``
    (default: the parameter's own name). Text without markers is returned as is."""
    if "\x1e" not in text:
        return text
    return _PARAM.sub(lambda m: (name_of or _same)(m.group(1)), text)


def params_in(text: str) -> tuple[str, ...]:
    """The parameters ``text`` names through :func:`param`, in order."""
    return tuple(m.group(1) for m in _PARAM.finditer(text))


def _same(name: str) -> str:
    return name


class FxcacheError(Exception):
    """Base class of every error caused by the input fxcache was given.

    Attributes:
        message: the message, its parameters as :func:`param` markers.
        param: the parameter whose value is wrong (``"shapes"``), or None when
            the error is about the cache rather than an argument.
        value: the value given for ``param`` (as given), or None.
    """

    def __init__(self, message: str = "", *, param: str | None = None, value: Any = None) -> None:
        super().__init__(message)
        self.message, self.param, self.value = message, param, value

    def render(self, name_of: Callable[[str], str] | None = None) -> str:
        """The message, each parameter named by ``name_of`` (the CLI: its flag)."""
        return render(self.message, name_of)

    def __str__(self) -> str:
        return render(self.message)


class CacheDirError(FxcacheError):
    """The cache dir does not exist, is not a directory, or cannot be read."""


class KeyLookupError(FxcacheError):
    """A key prefix matches no key, or more than one key."""


class ShapeSpecError(FxcacheError):
    """A ``--shapes``/``--sym`` binding is malformed or names nothing the key has."""


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
