"""fxcache never executes what it reads: no module of fxcache_core or fxcache_cli can run text or a pickle.

A guards string, a trace, a pickle are untrusted. fxcache parses guards through an
ast whitelist into closures (``guards/compiler.py``), reads pickles through
``decode/unpickler.py`` (every global a stub) and loads CLI commands from a table of
its own module names. :func:`violations` walks every module of both packages (by
ast, imports inside functions and aliases followed) and reports:

- a reference to the builtins ``eval``, ``exec``, ``compile``, ``__import__`` (called
  or not: ``run = eval`` is caught), through ``builtins`` or ``__builtins__`` too;
- ``pickle.load``/``pickle.loads`` (and ``_pickle``'s), ``marshal.load``/``marshal.loads``;
- ``pickle.Unpickler``/``pickle._Unpickler`` except as the base of a class that sets
  its own ``find_class`` (the stub unpickler: a plain Unpickler is ``pickle.load``);
- ``importlib.import_module`` (or ``importlib.__import__``) with an argument that is
  not a string literal, except in :data:`ALLOWED_DYNAMIC_IMPORTS`;
- ``getattr`` on ``builtins``, ``pickle``, ``marshal`` or ``importlib`` (a name built
  at run time would get past every rule above).

A method named ``compile`` (``Compiler.compile``, ``re.compile``) is an attribute, not the
builtin. The check is shown to fail on modules planted in a temporary tree.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
while not (REPO / "pyproject.toml").is_file():  # tests/<tier>/ or tests/
    REPO = REPO.parent
PACKAGES = ("fxcache_core", "fxcache_cli")

FORBIDDEN_BUILTINS = frozenset({"eval", "exec", "compile", "__import__"})
FORBIDDEN = frozenset({*(f"builtins.{n}" for n in FORBIDDEN_BUILTINS),
                       "pickle.load", "pickle.loads", "_pickle.load", "_pickle.loads",
                       "marshal.load", "marshal.loads", "importlib.__import__"})
UNPICKLERS = frozenset({"pickle.Unpickler", "pickle._Unpickler", "_pickle.Unpickler"})
DANGEROUS_MODULES = frozenset({"builtins", "pickle", "_pickle", "marshal", "importlib"})

ALLOWED_DYNAMIC_IMPORTS = {
    # The CLI's lazy command table (pip's commands_dict): LazyGroup imports a
    # command's module only when that command runs, and the name it imports is
    # CommandInfo.module of an entry of fxcache_cli._commands.commands_dict, a
    # literal of fxcache's own module names (test_the_lazy_table_names_only_fxcache_cli_modules).
    ("fxcache_cli", "LazyGroup.get_command"): "commands_dict",
}
"""(package, enclosing class.function) -> the table the imported name must come from:
``importlib.import_module(x.module)`` where ``x = <table>[...]`` in that function."""


def _aliases(tree: ast.AST) -> dict[str, str]:
    """Local name -> what it is bound to by an import anywhere in the module
    (``pk`` -> ``pickle``, ``loads`` -> ``pickle.loads``)."""
    out: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                out[a.asname or a.name.split(".")[0]] = a.name if a.asname else a.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for a in node.names:
                out[a.asname or a.name] = f"{node.module}.{a.name}"
    return out


def _qualified(node: ast.AST, aliases: dict[str, str]) -> str | None:
    """``pickle.loads`` for ``pk.loads`` (``import pickle as pk``); ``builtins.eval``
    for a bare ``eval``; None for anything not reached from an import or a builtin."""
    if isinstance(node, ast.Name):
        if node.id in aliases:
            return aliases[node.id]
        if node.id == "__builtins__":
            return "builtins"
        return f"builtins.{node.id}" if node.id in FORBIDDEN_BUILTINS else None
    if isinstance(node, ast.Attribute):
        base = _qualified(node.value, aliases)
        return f"{base}.{node.attr}" if base else None
    if isinstance(node, ast.Subscript):  # __builtins__["eval"]
        base = _qualified(node.value, aliases)
        if base == "builtins" and isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, str):
            return f"builtins.{node.slice.value}"
    return None


_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)


def _bound(scope: ast.AST) -> set[str]:
    """Names a function or lambda binds itself (its parameters, assignments, defs;
    not those of scopes nested in it, comprehensions included): there a name such
    as ``compile`` is the local, not the builtin (Python decides a function's
    locals when it compiles it). A module or class body reads a name it has not
    bound yet from the builtins, so a binding there never counts."""
    out: set[str] = set()
    if isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
        a = scope.args
        out |= {x.arg for x in (*a.posonlyargs, *a.args, *a.kwonlyargs, a.vararg, a.kwarg) if x is not None}
    body = [scope.body] if isinstance(scope, ast.Lambda) else scope.body
    todo = list(body)
    while todo:
        n = todo.pop()
        if isinstance(n, _SCOPES):
            if not isinstance(n, ast.Lambda):
                out.add(n.name)
            continue
        if isinstance(n, (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
            continue
        if isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del)):
            out.add(n.id)
        elif isinstance(n, ast.arg):
            out.add(n.arg)
        todo.extend(ast.iter_child_nodes(n))
    return out


class _Scan(ast.NodeVisitor):
    def __init__(self, package: str, where: str, aliases: dict[str, str]) -> None:
        self.package, self.where, self.aliases = package, where, aliases
        self.scope: list[ast.AST] = []
        self.bindings: list[set[str]] = []  # per scope, innermost last
        self.found: list[str] = []
        self.allowed_bases: set[int] = set()  # Unpickler bases of a class with its own find_class
        self.checked_calls: set[int] = set()  # import_module references already judged as a call

    def _flag(self, node: ast.AST, what: str) -> None:
        self.found.append(f"{self.where}:{getattr(node, 'lineno', '?')}: {what}")

    def _qualname(self) -> str:
        return ".".join(n.name for n in self.scope if isinstance(n, (ast.ClassDef, ast.FunctionDef,
                                                                       ast.AsyncFunctionDef)))

    def _is_local(self, name: str) -> bool:
        """``name`` bound by a function or lambda it is read in (see :func:`_bound`)."""
        return any(name in b for n, b in zip(self.scope, self.bindings, strict=True)
                   if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)))

    def visit_Module(self, node: ast.Module) -> None:
        self.scope.append(node)
        self.bindings.append(_bound(node))
        self.generic_visit(node)

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        sets_find_class = any(
            isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)) and s.name == "find_class"
            or isinstance(s, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "find_class"
                                                 for t in s.targets)
            for s in node.body)
        if sets_find_class:
            self.allowed_bases |= {id(b) for b in node.bases}
        for n in (*node.decorator_list, *node.bases, *node.keywords):  # read in the enclosing scope
            self.visit(n)
        self._nested(node, node.body)

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) -> None:
        a = node.args
        outer = [*a.defaults, *(d for d in a.kw_defaults if d is not None)]
        if not isinstance(node, ast.Lambda):
            outer += [*node.decorator_list, *([node.returns] if node.returns else [])]
            outer += [x.annotation for x in (*a.posonlyargs, *a.args, *a.kwonlyargs, a.vararg, a.kwarg)
                      if x is not None and x.annotation is not None]
        for n in outer:  # read in the enclosing scope
            self.visit(n)
        self._nested(node, [node.body] if isinstance(node, ast.Lambda) else node.body)

    visit_AsyncFunctionDef = visit_Lambda = visit_FunctionDef

    def _nested(self, node: ast.AST, body: list[ast.AST]) -> None:
        self.scope.append(node)
        self.bindings.append(_bound(node))
        for n in body:
            self.visit(n)
        self.bindings.pop()
        self.scope.pop()

    def visit_Call(self, node: ast.Call) -> None:
        q = _qualified(node.func, self.aliases)
        if q == "importlib.import_module":
            self.checked_calls.add(id(node.func))
            literal = node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)
            if not literal and not self._allowed_dynamic_import(node):
                self._flag(node, f"importlib.import_module({', '.join(map(ast.unparse, node.args))})")
        elif isinstance(node.func, ast.Name) and node.func.id == "getattr" and node.args:
            target = _qualified(node.args[0], self.aliases)
            if target in DANGEROUS_MODULES:
                self._flag(node, f"getattr on {target}")
        self.generic_visit(node)

    def _allowed_dynamic_import(self, node: ast.Call) -> bool:
        table = ALLOWED_DYNAMIC_IMPORTS.get((self.package, self._qualname()))
        if table is None or len(node.args) != 1 or node.keywords:
            return False
        arg = node.args[0]
        if not (isinstance(arg, ast.Attribute) and arg.attr == "module" and isinstance(arg.value, ast.Name)):
            return False
        func = next(n for n in reversed(self.scope) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)))
        return any(isinstance(a, ast.Assign) and [ast.unparse(t) for t in a.targets] == [arg.value.id]
                   and isinstance(a.value, ast.Subscript) and isinstance(a.value.value, ast.Name)
                   and a.value.value.id == table
                   for a in ast.walk(func))

    def _reference(self, node: ast.Name | ast.Attribute | ast.Subscript) -> None:
        root = node
        while isinstance(root, (ast.Attribute, ast.Subscript)):
            root = root.value
        if isinstance(root, ast.Name) and root.id not in self.aliases and self._is_local(root.id):
            return  # a local named like a builtin (a parameter ``compile``)
        q = _qualified(node, self.aliases)
        if q in FORBIDDEN:
            self._flag(node, q)
        elif q in UNPICKLERS and id(node) not in self.allowed_bases:
            self._flag(node, f"{q} without its own find_class")
        elif q == "importlib.import_module" and id(node) not in self.checked_calls:
            self._flag(node, "importlib.import_module, not called with a literal")

    def visit_Name(self, node: ast.Name) -> None:
        if isinstance(node.ctx, ast.Load):
            self._reference(node)

    def visit_Attribute(self, node: ast.Attribute) -> None:
        if isinstance(node.ctx, ast.Load):
            self._reference(node)
        self.generic_visit(node)  # builtins.eval.__call__: the inner builtins.eval too

    def visit_Subscript(self, node: ast.Subscript) -> None:
        if isinstance(node.ctx, ast.Load):
            self._reference(node)
        self.generic_visit(node)


def modules(root: Path) -> list[tuple[str, Path]]:
    """(package, file) of every module under ``root``'s fxcache_core and fxcache_cli."""
    return [(pkg, f) for pkg in PACKAGES for f in sorted((root / pkg).rglob("*.py"))
            if "__pycache__" not in f.parts]


def violations(root: Path) -> list[str]:
    """``file:line: what`` for every way a module under ``root`` could execute text or a pickle."""
    found: list[str] = []
    for pkg, f in modules(root):
        tree = ast.parse(f.read_text(encoding="utf-8"), filename=str(f))
        scan = _Scan(pkg, str(f.relative_to(root)), _aliases(tree))
        scan.visit(tree)
        found += scan.found
    return found


def test_no_module_can_execute_text_or_a_pickle():
    found = modules(REPO)
    names = {str(f.relative_to(REPO)) for _, f in found}
    # The walk reaches every package, where closures are built included.
    assert {"fxcache_core/guards/compiler.py", "fxcache_core/guards/grammar.py", "fxcache_core/guards/runtime.py",
            "fxcache_core/guards/expr.py", "fxcache_core/guards/sympy_form.py",
            "fxcache_core/decode/unpickler.py"} <= names
    assert sum(n.startswith("fxcache_cli/") for n in names) >= 10 and len(names) >= 100
    assert violations(REPO) == []


def test_the_lazy_table_names_only_fxcache_cli_modules():
    from fxcache_cli._commands import commands_dict

    for name, info in commands_dict.items():
        assert re.fullmatch(r"fxcache_cli\.[a-z_]+", info.module), (name, info.module)
        assert (REPO / (info.module.replace(".", "/") + ".py")).is_file(), (name, info.module)


PLANTED = [
    ("eval('1')", "builtins.eval"),
    ("exec('x = 1')", "builtins.exec"),
    ("compile('1', 'f', 'eval')", "builtins.compile"),
    ("__import__('os')", "builtins.__import__"),
    ("run = eval", "builtins.eval"),
    ("eval = eval\neval('1')", "builtins.eval"),
    ("def f(exec=exec):\n    return exec('1')", "builtins.exec"),
    ("def f(xs):\n    [eval for eval in xs]\n    return eval('1')", "builtins.eval"),
    ("def f(x=exec):\n    return x", "builtins.exec"),
    ("import builtins\nbuiltins.eval('1')", "builtins.eval"),
    ("import builtins\nbuiltins.eval.__call__('1')", "builtins.eval"),
    ("__builtins__['exec']('1')", "builtins.exec"),
    ("import builtins\ngetattr(builtins, 'ev' + 'al')('1')", "getattr on builtins"),
    ("import pickle\npickle.loads(b'')", "pickle.loads"),
    ("import pickle as pk\nwith open('f', 'rb') as f:\n    pk.load(f)", "pickle.load"),
    ("def f(b):\n    from pickle import loads as lo\n    return lo(b)", "pickle.loads"),
    ("import _pickle\n_pickle.loads(b'')", "_pickle.loads"),
    ("import io, pickle\npickle.Unpickler(io.BytesIO(b'')).load()", "pickle.Unpickler without its own find_class"),
    ("import pickle\nclass U(pickle.Unpickler):\n    pass", "pickle.Unpickler without its own find_class"),
    ("import marshal\nmarshal.loads(b'')", "marshal.loads"),
    ("from marshal import load\nload(open('f', 'rb'))", "marshal.load"),
    ("import importlib\nimportlib.import_module(name)", "importlib.import_module(name)"),
    ("from importlib import import_module as im\nim('fxcache_cli.' + name)", "importlib.import_module("),
    ("import importlib\nload = importlib.import_module", "importlib.import_module, not called with a literal"),
    ("import importlib\nimportlib.__import__('os')", "importlib.__import__"),
    ("import importlib\ngetattr(importlib, 'import_module')('os')", "getattr on importlib"),
]


@pytest.mark.parametrize(("code", "what"), PLANTED, ids=[c.replace("\n", "; ")[:60] for c, _ in PLANTED])
@pytest.mark.parametrize("package", PACKAGES)
def test_a_planted_call_is_caught(tmp_path, package, code, what):
    (tmp_path / package / "sub").mkdir(parents=True)
    (tmp_path / package / "sub" / "planted.py").write_text(f"name = 'x'\n\n\ndef ok():\n    return 1\n\n\n{code}\n")
    found = violations(tmp_path)
    assert found and all(f.startswith(f"{package}/sub/planted.py:") for f in found), found
    assert any(what in f for f in found), found


LAZY_GROUP = """\
import importlib
from ._commands import commands_dict


class LazyGroup:
    def get_command(self, ctx, cmd_name):
        info = commands_dict[cmd_name]
        return importlib.import_module(info.module)
"""


def test_only_the_lazy_command_table_imports_a_name_it_computes(tmp_path):
    for pkg in PACKAGES:
        (tmp_path / pkg).mkdir()
    (tmp_path / "fxcache_cli" / "app.py").write_text(LAZY_GROUP)
    assert violations(tmp_path) == []
    # The same code in core, in another method, or importing a name not from the table: caught.
    (tmp_path / "fxcache_core" / "app.py").write_text(LAZY_GROUP)
    (tmp_path / "fxcache_cli" / "other.py").write_text(LAZY_GROUP.replace("get_command", "get_other"))
    (tmp_path / "fxcache_cli" / "table.py").write_text(LAZY_GROUP.replace("commands_dict[cmd_name]", "ctx.obj"))
    found = violations(tmp_path)
    assert sorted(f.split(":")[0] for f in found) == ["fxcache_cli/other.py", "fxcache_cli/table.py",
                                                       "fxcache_core/app.py"], found


def test_what_only_looks_like_execution_is_not_flagged(tmp_path):
    (tmp_path / "fxcache_core").mkdir()
    (tmp_path / "fxcache_cli").mkdir()
    (tmp_path / "fxcache_core" / "fine.py").write_text(
        "import importlib\nimport pickle\nimport re\nfrom importlib import resources\n\n"
        "class Compiler:\n    def compile(self, node):\n        return node\n\n"
        "class Stubs(pickle.Unpickler):\n    def find_class(self, module, name):\n        return None\n\n"
        "Compiler().compile(re.compile('x'))\nimportlib.import_module('json')\npickle.dumps(1)\n"
        "x = {'eval': 1}['eval']\n")
    assert violations(tmp_path) == []
