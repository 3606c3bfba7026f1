"""``Args:`` coverage of the library's public callables (issue 61), read with ``ast``.

A public callable is a module-level function or class whose name does not start
with ``_``, and a public method (or ``__call__``) of a public class, in the modules
of ``botorch_bandits/`` (the whole installed library, its command line included). A class's constructor
(``__init__``, or a dataclass's fields) is documented in the class docstring's
``Args:`` (Google style; a dataclass's fields also under ``Attributes:``) or in
``__init__``'s own. A callable with at least one parameter besides ``self``/``cls``
is covered when its ``Args:`` (or ``Keyword Args:``) names every parameter and, for
a function annotated to return something other than ``None``, its docstring has
``Returns:`` (or ``Yields:``).
``python tests/args_coverage.py [--missing] [FILE ...]`` prints the table.
"""

from __future__ import annotations

import ast
import re
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "botorch_bandits"
EXCLUDED: tuple[str, ...] = ()  # the experiments are outside the package
#: section headers whose entries document parameters (napoleon's spellings)
ARGS_HEADERS = ("Args", "Arguments", "Parameters", "Keyword Args", "Keyword Arguments")
RETURNS_HEADERS = ("Returns", "Return", "Yields", "Yield")
#: a dataclass's (or NamedTuple's) fields may be documented as its attributes
FIELD_HEADERS = ("Attributes",)
_HEADER = re.compile(r"^(\s*)([A-Z][A-Za-z ]*):\s*$")
_ENTRY = re.compile(r"^(\*{0,2}\w+(?:\s*,\s*\*{0,2}\w+)*)\s*(?:\(.*\))?\s*:")


@dataclass
class Callable:
    """One public callable and what its docstring documents."""

    module: str
    qualname: str
    lineno: int
    params: list[str]
    has_args: bool
    documented: set[str] = field(default_factory=set)
    needs_returns: bool = False
    has_returns: bool = False

    @property
    def missing(self) -> list[str]:
        """The parameters the ``Args:`` section does not name."""
        return [p for p in self.params if p.lstrip("*") not in self.documented]

    @property
    def covered(self) -> bool:
        """Every parameter documented, and ``Returns:`` where one is needed."""
        return not self.missing and (self.has_returns or not self.needs_returns)

    def problem(self) -> str:
        """What is missing, in words (empty when covered)."""
        out = []
        if not self.has_args:
            out.append("no Args:")
        elif self.missing:
            out.append("undocumented: " + ", ".join(self.missing))
        if self.needs_returns and not self.has_returns:
            out.append("no Returns:")
        return "; ".join(out)


def sections(doc: str | None) -> dict[str, list[str]]:
    """The docstring's Google sections: header -> the lines indented below it."""
    found: dict[str, list[str]] = {}
    if not doc:
        return found
    lines = doc.expandtabs().splitlines()
    i = 0
    while i < len(lines):
        m = _HEADER.match(lines[i])
        if (
            not m
            or m.group(2).strip() not in ARGS_HEADERS + FIELD_HEADERS + RETURNS_HEADERS
        ):
            i += 1
            continue
        indent, body = len(m.group(1)), []
        i += 1
        while i < len(lines):
            line = lines[i]
            if line.strip() and len(line) - len(line.lstrip()) <= indent:
                break
            body.append(line)
            i += 1
        found.setdefault(m.group(2).strip(), []).extend(body)
    return found


def documented_names(
    doc: str | None, headers: tuple[str, ...] = ARGS_HEADERS
) -> tuple[bool, set[str]]:
    """Whether the docstring has an ``Args:`` section (one of ``headers``), and the
    names its entries give (an entry may name several: ``dim, a, b, r: ...``)."""
    secs = sections(doc)
    body = [line for h in headers for line in secs.get(h, [])]
    if not any(h in secs for h in headers):
        return False, set()
    indents = [len(x) - len(x.lstrip()) for x in body if x.strip()]
    first = min(indents, default=0)
    names: set[str] = set()
    for line in body:
        if line.strip() and len(line) - len(line.lstrip()) == first:
            m = _ENTRY.match(line.strip())
            if m:
                names |= {n.strip().lstrip("*") for n in m.group(1).split(",")}
    return True, names


def has_returns(doc: str | None) -> bool:
    """Whether the docstring has a ``Returns:``/``Yields:`` section."""
    return any(h in sections(doc) for h in RETURNS_HEADERS)


def _params(fn: ast.FunctionDef | ast.AsyncFunctionDef, method: bool) -> list[str]:
    a = fn.args
    names = [x.arg for x in a.posonlyargs + a.args]
    if method and names and not _is_static(fn):
        names = names[1:]  # self / cls
    names += [x.arg for x in a.kwonlyargs]
    if a.vararg:
        names.append("*" + a.vararg.arg)
    if a.kwarg:
        names.append("**" + a.kwarg.arg)
    return names


def _decorators(fn: ast.AST) -> set[str]:
    out = set()
    for d in getattr(fn, "decorator_list", []):
        d = d.func if isinstance(d, ast.Call) else d
        if isinstance(d, ast.Name):
            out.add(d.id)
        elif isinstance(d, ast.Attribute):
            out.add(d.attr)
    return out


def _is_static(fn: ast.AST) -> bool:
    return "staticmethod" in _decorators(fn)


def _returns_something(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """Annotated to return a value (not ``None``/``NoReturn``); unknown without one."""
    r = fn.returns
    if r is None:
        return False
    text = ast.unparse(r).strip("'\"")
    return text not in ("None", "NoReturn", "Never", "typing.NoReturn")


def _dataclass_fields(cls: ast.ClassDef) -> list[str]:
    """The constructor parameters of a ``@dataclass`` (annotated class attributes,
    leaving out ``ClassVar`` and ``field(init=False)``)."""
    out = []
    for node in cls.body:
        if not isinstance(node, ast.AnnAssign) or not isinstance(node.target, ast.Name):
            continue
        if "ClassVar" in ast.unparse(node.annotation):
            continue
        v = node.value
        if (
            isinstance(v, ast.Call)
            and isinstance(v.func, ast.Name | ast.Attribute)
            and any(
                k.arg == "init"
                and isinstance(k.value, ast.Constant)
                and k.value.value is False
                for k in v.keywords
            )
        ):
            continue
        out.append(node.target.id)
    return out


def _top_level(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """The module's statements, looking inside top-level ``if``/``try`` blocks."""
    for node in body:
        if isinstance(node, ast.If):
            yield from _top_level(node.body + node.orelse)
        elif isinstance(node, ast.Try):
            yield from _top_level(node.body + node.orelse)
        else:
            yield node


def _function(module: str, qual: str, fn: ast.AST, method: bool) -> Callable | None:
    if "overload" in _decorators(fn) or "property" in _decorators(fn):
        return None
    if {"setter", "deleter"} & _decorators(fn):
        return None
    doc = ast.get_docstring(fn)
    params = _params(fn, method)
    if not params:
        return None
    has, names = documented_names(doc)
    return Callable(
        module,
        qual,
        fn.lineno,
        params,
        has,
        names,
        needs_returns=_returns_something(fn),
        has_returns=has_returns(doc),
    )


def _class(module: str, cls: ast.ClassDef, prefix: str = "") -> Iterator[Callable]:
    qual = prefix + cls.name
    doc = ast.get_docstring(cls)
    methods = {
        n.name: n
        for n in cls.body
        if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)
    }
    init = methods.get("__init__")
    headers = ARGS_HEADERS
    if init is not None:
        params = _params(init, method=True)
    elif "dataclass" in _decorators(cls) or any(
        ast.unparse(b).endswith("NamedTuple") for b in cls.bases
    ):
        params = _dataclass_fields(cls)
        headers = ARGS_HEADERS + FIELD_HEADERS
    else:
        params = []
    if params:
        has_c, names_c = documented_names(doc, headers)
        init_doc = ast.get_docstring(init) if init is not None else None
        has_i, names_i = documented_names(init_doc)
        yield Callable(
            module, qual, cls.lineno, params, has_c or has_i, names_c | names_i
        )
    for name, fn in methods.items():
        if name.startswith("_") and name != "__call__":
            continue
        c = _function(module, f"{qual}.{name}", fn, method=True)
        if c is not None:
            yield c
    for node in cls.body:
        if isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
            yield from _class(module, node, prefix=qual + ".")


def module_name(path: Path) -> str:
    """``botorch_bandits/ax/space.py`` -> ``botorch_bandits.ax.space``."""
    path = path.resolve()
    if not path.is_relative_to(ROOT):  # a module outside the repository: its name
        return path.stem
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def callables(path: Path) -> list[Callable]:
    """The public callables of one module that take parameters."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    module = module_name(path)
    out: list[Callable] = []
    for node in _top_level(tree.body):
        if getattr(node, "name", "_").startswith("_"):
            continue
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            c = _function(module, node.name, node, method=False)
            if c is not None:
                out.append(c)
        elif isinstance(node, ast.ClassDef):
            out.extend(_class(module, node))
    return out


def library_files() -> list[Path]:
    """The library's modules: every module of ``botorch_bandits/``."""
    return sorted(
        p
        for p in PACKAGE.rglob("*.py")
        if p.relative_to(PACKAGE).parts[0] not in EXCLUDED
    )


def collect(paths: Iterable[Path] | None = None) -> list[Callable]:
    """Every public callable with parameters in ``paths`` (default: the library)."""
    return [c for p in (paths or library_files()) for c in callables(Path(p))]


def docstrings_with_args(paths: Iterable[Path] | None = None) -> tuple[int, int]:
    """The issue's other figure: of every docstring (modules, classes, functions,
    private ones too) in ``paths``, how many have an ``Args:`` section, and how many
    there are."""
    n = with_args = 0
    for p in paths or library_files():
        for node in ast.walk(ast.parse(Path(p).read_text(encoding="utf-8"))):
            if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef):
                doc = ast.get_docstring(node)
                if doc:
                    n += 1
                    with_args += documented_names(doc)[0]
    return with_args, n


def _pct(n: int, d: int) -> str:
    return f"{100 * n / d:5.1f} %" if d else "    - "


def table(items: list[Callable]) -> str:
    """Per module and overall: callables, with ``Args:``, fully covered."""
    rows = [f"{'module':48} {'callables':>9} {'with Args:':>16} {'covered':>16}"]
    by_module: dict[str, list[Callable]] = {}
    for c in items:
        by_module.setdefault(c.module, []).append(c)

    def row(name: str, cs: list[Callable]) -> str:
        n, a, k = len(cs), sum(c.has_args for c in cs), sum(c.covered for c in cs)
        return f"{name:48} {n:9d} {a:6d} ({_pct(a, n)}) {k:6d} ({_pct(k, n)})"

    for m in sorted(by_module):
        rows.append(row(m, by_module[m]))
    rows.append(row("overall", items))
    return "\n".join(rows)


def main(argv: list[str]) -> int:
    show_missing = "--missing" in argv
    paths = [Path(a) for a in argv if not a.startswith("--")]
    items = collect(paths or None)
    print(table(items))
    a, n = docstrings_with_args(paths or None)
    print(f"\ndocstrings with an Args: section: {a} of {n} ({_pct(a, n).strip()})")
    if show_missing:
        print()
        for c in items:
            if not c.covered:
                print(f"{c.module}:{c.lineno} {c.qualname}: {c.problem()}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
