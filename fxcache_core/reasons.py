"""Reasons as data: a stable code beside the sentence.

A verdict says why (an entry fails a clause, a key cannot take the inputs, a
file is kept). Each such reason is a :class:`Reason`: it *is* its text (a
``str``, so it prints, joins and compares as text always did) and carries a
stable ``code`` a JSON consumer can branch on (``"clause-failed"``,
``"placeholder-not-given"``). Codes are lowercase words joined by ``-``; once
published in JSON a code never changes meaning (add a new one instead).

Texts name the parameters of core calls through :func:`fxcache_core.errors.param`,
never CLI flags (ccache's statistics table, pip's status codes: one row per thing,
a stable machine id beside the words).
"""

from __future__ import annotations


class Reason(str):
    """A reason's text with its stable ``code``.

    ``Reason("s0 = 40 fails s0 <= 7", "clause-failed")``: a ``str`` (the text),
    :attr:`text` the same as a plain ``str``, :meth:`to_json` its JSON form.
    Reasons made before codes existed are plain ``str``; :func:`code_of` gives
    them ``"unspecified"``.

    Attributes:
        code: the stable machine id of this kind of reason.
    """

    __slots__ = ("code",)
    code: str

    def __new__(cls, text: str, code: str) -> Reason:
        self = super().__new__(cls, text)
        self.code = code
        return self

    def __reduce__(self):  # pickles (worker pools, the index) keep the code
        return (Reason, (str(self), self.code))

    @property
    def text(self) -> str:
        """The sentence, as a plain ``str``."""
        return str.__str__(self)

    def to_json(self) -> dict[str, str]:
        """``{"code": ..., "text": ...}``."""
        return {"code": self.code, "text": self.text}


def code_of(reason: str | None) -> str | None:
    """The code of ``reason`` (``"unspecified"`` for a plain string), None for None."""
    if reason is None:
        return None
    return getattr(reason, "code", "unspecified")
