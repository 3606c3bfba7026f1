"""The package's structure read from its own imports (issue 27): every module's
layer (the repository's ``bandit_experiments`` above the whole library), its imports
of the package's and the experiments' modules (at the top and inside functions), the
cycles, the imports that run from a lower layer up, and the layout table of
docs/design.md. ``python tests/structure.py [--lines]`` prints that table (with the
modules' line counts) and the counts."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "botorch_bandits"
#: the repository's experiments (not installed): they import the library, never the
#: other way round
EXPERIMENTS = ROOT / "bandit_experiments"
#: the top-level names whose modules this file reads
TOPS = ("botorch_bandits", "bandit_experiments")
#: layers, lowest first: a module may import only from its own layer or below
LAYERS: list[tuple[str, tuple[str, ...]]] = [
    (
        "foundations",
        (
            "_version",
            "_install",
            "_io",
            "_matching",
            "validation",
            "seeding",
            "hyperparameters",
            "upstream",
        ),
    ),
    (
        "leaves",
        (
            "beta",
            "constraints",
            "delays",
            "changepoint",
            "scale_free",
            "residuals",
            "models",
        ),
    ),
    ("acquisition", ("acquisition",)),
    ("decision core", ("core",)),
    ("Ax adapter", ("ax",)),
    ("test functions", ("test_functions",)),
    ("the main job", ("demo",)),
    ("command line", ("cli",)),
    ("package root", ("__init__",)),
    ("experiments (bandit_experiments/, not installed)", ()),
]
#: the rooms of ``bandit_experiments/`` in tiers, lowest first: a room imports only
#: from rooms of a lower tier (and the library)
EXPERIMENT_ROOMS: list[tuple[str, ...]] = [
    ("common",),
    ("reproduction", "ax_benchmark"),
    ("studies", "online_benchmark"),
    ("figures",),  # the docs' pictures draw from every other room
    ("cli",),  # the research commands run them all
    ("__main__",),  # python -m bandit_experiments
]
#: optional extras (and platform-only modules): the only packages a function may
#: import locally
OPTIONAL = {
    "ax",
    "matplotlib",
    "tqdm",
    "distributed",
    "dask",
    "sklearn",
    "threadpoolctl",  # comes with scikit-learn (the lr extra)
    "PIL",  # Pillow, which matplotlib (the plot extra) requires
    "sqlalchemy",
    "pandas",
    "tabulate",
    "nbclient",
    "nbformat",
    "build",
    "fcntl",  # POSIX only: the SQLite writer lock
}


def modules(folders: tuple[Path, ...] = (PACKAGE, EXPERIMENTS)) -> dict[str, Path]:
    """``botorch_bandits.x.y`` (and ``bandit_experiments.x.y``) -> its file, for every
    module of the package (and of the experiments)."""
    out = {}
    for folder in folders:
        for path in sorted(folder.rglob("*.py")):
            parts = path.relative_to(ROOT).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            out[".".join(parts)] = path
    return out


def library() -> dict[str, Path]:
    """The installed package's modules only (``botorch_bandits``)."""
    return modules((PACKAGE,))


def layer(module: str) -> int:
    """The layer index of a package (or experiments) module."""
    if module.split(".")[0] == "bandit_experiments":
        return len(LAYERS) - 1
    parts = module.split(".")
    head = parts[1] if len(parts) > 1 else "__init__"
    head = head.split(".")[0]
    for i, (_, names) in enumerate(LAYERS):
        if head in names:
            return i
    raise KeyError(f"{module} is in no layer of tests/structure.py")


def _type_checking_nodes(tree: ast.AST) -> set[int]:
    out: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for sub in node.body:
                out.update(id(n) for n in ast.walk(sub))
    return out


def imports(path: Path, known: dict[str, Path]) -> list[tuple[str, bool, int]]:
    """(imported package module, inside a function?, line) for every import of a
    package module in ``path`` (``TYPE_CHECKING`` blocks left out); other imports as
    (top-level name, inside a function?, line) with a leading ``!``."""
    tree = ast.parse(path.read_text())
    skip = _type_checking_nodes(tree)
    local: set[int] = set()
    for fn in ast.walk(tree):
        if isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef):
            local.update(id(n) for n in ast.walk(fn) if n is not fn)
    out = []
    for node in ast.walk(tree):
        if id(node) in skip or not isinstance(node, ast.Import | ast.ImportFrom):
            continue
        inner = id(node) in local
        if isinstance(node, ast.ImportFrom):
            if node.level:
                continue
            base = node.module or ""
            targets = [f"{base}.{a.name}" for a in node.names]
            targets = [t if t in known else base for t in targets]
        else:
            targets = [a.name for a in node.names]
        for t in targets:
            if t.split(".")[0] in TOPS:
                while t not in known and "." in t:
                    t = t.rsplit(".", 1)[0]
                out.append((t, inner, node.lineno))
            else:
                out.append(("!" + t.split(".")[0], inner, node.lineno))
    return out


def graph() -> dict[str, set[str]]:
    """Module -> the package modules it imports (anywhere but TYPE_CHECKING)."""
    known = modules()
    return {
        m: {t for t, _, _ in imports(p, known) if not t.startswith("!") and t != m}
        for m, p in known.items()
    }


def cycles(g: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []
    counter = [0]
    sys.setrecursionlimit(10000)

    def visit(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in g.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(g):
        if v not in index:
            visit(v)
    return out


def upward() -> list[tuple[str, str]]:
    """Imports from a module to a module of a higher layer."""
    g = graph()
    return sorted(
        (a, b) for a, targets in g.items() for b in targets if layer(b) > layer(a)
    )


def local_imports() -> list[tuple[str, str, int]]:
    """Function-local imports that are not of an optional extra: (module, what,
    line). The command lines' lazy imports of the package and the experiments are
    allowed (they keep ``--help`` free of torch), and so are imports of
    ``botorch_bandits.ax`` (it needs the optional Ax)."""
    known = modules()
    out = []
    for m, p in known.items():
        for t, inner, line in imports(p, known):
            if not inner:
                continue
            if t.startswith("!") and t[1:] in OPTIONAL:
                continue
            command_line = layer(m) == layer("botorch_bandits.cli") or m.startswith(
                "bandit_experiments.cli"
            )
            if command_line and not t.startswith("!"):
                continue
            if t == "botorch_bandits.ax" or t.startswith("botorch_bandits.ax."):
                continue  # the Ax adapter needs the optional Ax
            out.append((m, t.lstrip("!"), line))
    return out


def room_tier(module: str) -> int | None:
    """The tier of a module's room in ``bandit_experiments/``
    (:data:`EXPERIMENT_ROOMS`); ``None`` for a library module or for the experiments'
    package itself."""
    parts = module.split(".")
    if parts[0] != "bandit_experiments" or len(parts) == 1:
        return None
    for i, rooms in enumerate(EXPERIMENT_ROOMS):
        if parts[1] in rooms:
            return i
    raise KeyError(f"{module} is in no room of tests/structure.py")


def room_imports() -> list[tuple[str, str]]:
    """Imports between the rooms of ``bandit_experiments/`` that do not run to a
    lower tier."""
    out = []
    for a, targets in graph().items():
        for b in targets:
            ta, tb = room_tier(a), room_tier(b)
            if ta is not None and tb is not None and a.split(".")[1] != b.split(".")[1]:
                if tb >= ta:
                    out.append((a, b))
    return sorted(out)


def experiment_imports() -> list[tuple[str, str, int]]:
    """Imports of the experiments by the library, anywhere in a module (functions
    and ``TYPE_CHECKING`` blocks included): (module, what, line). The wheel has no
    ``bandit_experiments``, so any such import fails for a user."""
    out = []
    for m, p in library().items():
        for node in ast.walk(ast.parse(p.read_text())):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and not node.level:
                names = [node.module or ""]
            else:
                continue
            out += [
                (m, n, node.lineno)
                for n in names
                if n.split(".")[0] == "bandit_experiments"
            ]
    return out


def lines(path: Path) -> int:
    return len(path.read_text().splitlines())


def layout_table(with_lines: bool = False) -> str:
    """The Markdown table of docs/design.md: each layer and its modules (with their
    line counts: ``with_lines``), highest layer first."""
    known = modules()
    rows = ["| layer | modules |", "| --- | --- |"]
    for i in reversed(range(len(LAYERS))):
        names = []
        for m in sorted(mm for mm in known if layer(mm) == i):
            name = f"`{m.removeprefix('botorch_bandits.') or 'botorch_bandits'}`"
            names.append(f"{name} ({lines(known[m])})" if with_lines else name)
        rows.append(f"| {i}. {LAYERS[i][0]} | {', '.join(names)} |")
    return "\n".join(rows)


if __name__ == "__main__":
    print(layout_table(with_lines="--lines" in sys.argv))
    g = graph()
    print(
        f"\nmodules {len(g)}, cycles {len(cycles(g))}, upward imports {len(upward())}"
    )
    print(f"function-local imports of required modules: {len(local_imports())}")
    print(
        f"imports between experiment rooms not to a lower tier: {len(room_imports())}"
    )
    print(f"imports of the experiments by the library: {len(experiment_imports())}")
    biggest = max(modules().values(), key=lines)
    print(f"largest module: {biggest.relative_to(ROOT)} ({lines(biggest)} lines)")
