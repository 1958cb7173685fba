"""What an evaluation family is: :class:`Family` (a compiled callable, its build and its
queries) and :class:`Query` (one call), with the helpers the family lists write calls with
(:func:`q`, :func:`t`). Nothing here imports torch."""

from __future__ import annotations

from dataclasses import dataclass, field

from tests.harness.evaluation.calls import NEW_KINDS_OPTION, Call


@dataclass(frozen=True)
class Query:
    """One call to ask about.

    Attributes:
        call: the call (:mod:`tests.harness.evaluation.calls`).
        warm_up: calls made first in the same process, not recorded; the query is then
            asked with ``--after-recompile``.
        note: what the call exercises, one line.
    """

    call: Call
    warm_up: tuple[Call, ...] = ()
    note: str = ""


@dataclass(frozen=True)
class Family:
    """A compiled callable and its calls.

    Attributes:
        name: the family's name (``--family``).
        target: ``module:attr``: a plain function (compiled with ``torch.compile``), or
            with ``model`` a builder returning an ``nn.Module`` (compiled whole).
        fn: ``fxcache match --fn``: the function's name, or the model's class.
        dynamic: ``torch.compile(dynamic=...)``.
        build: the build sequences, each a list of calls made in one process.
        queries: the queries.
        model: ``target`` builds a module compiled whole.
        positional: how many leading arguments of a call are passed by position.
        train: the call returns a loss; ``loss.backward()`` follows.
        doc: one line on what the family shows.
        states_grad: each call is described with its grad mode and every tensor's
            ``requires_grad`` (:func:`tests.harness.evaluation.calls.items`).
    """

    name: str
    target: str
    fn: str
    dynamic: bool | None
    build: tuple[tuple[Call, ...], ...]
    queries: tuple[Query, ...]
    model: bool = False
    positional: int = 0
    train: bool = False
    doc: str = ""
    match_extra: tuple[str, ...] = field(default=())
    states_grad: bool = False

    def match_args(self, query: Query, new_option: str = NEW_KINDS_OPTION) -> list[str]:
        """``fxcache match`` arguments for ``query``, as the docs tell a user to write them
        (``new_option``: :func:`tests.harness.evaluation.calls.items`)."""
        from tests.harness.evaluation.calls import describe

        mode = {True: "true", None: "none", False: "false"}[self.dynamic]
        out = ["--fn", self.fn, "--dynamic", mode, *self.match_extra, *describe(query.call, new_option, self.states_grad)]
        if query.warm_up:
            out.append("--after-recompile")
        return out


def q(note: str, warm_up: tuple[Call, ...] = (), **call) -> Query:
    return Query(call=dict(call), warm_up=warm_up, note=note)


def t(shape: list[int], **more) -> dict:
    return {"t": shape, **more}
