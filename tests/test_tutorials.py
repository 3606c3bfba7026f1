"""Every tutorial notebook runs top to bottom in smoke mode, imports public names only,
and keeps its code lines within the 88 characters of the site's code box."""

from __future__ import annotations

import ast
import importlib
import os
import re
from pathlib import Path
from types import ModuleType

import nbformat
import pytest
from nbclient import NotebookClient

TUTORIALS = sorted((Path(__file__).resolve().parents[1] / "tutorials").glob("*.ipynb"))


def test_there_are_tutorials() -> None:
    assert TUTORIALS, "tutorials/ holds no notebook"


#: private attributes a tutorial may read, each with the reason
PRIVATE_ATTRIBUTES = {
    "_experiment": "ax.Client has no public getter of its Experiment (docs/design.md)",
}
MAX_LINE = 88  # ruff's line length; the site's code box shows about as many


def _code(path: Path) -> list[tuple[int, str]]:
    nb = nbformat.read(path, as_version=4)
    return [(i, c.source) for i, c in enumerate(nb.cells) if c.cell_type == "code"]


def _private_imports(tree: ast.AST) -> list[str]:
    """Imports of a private name, or of a name that the module's ``__all__`` leaves
    out (every module of this package must declare one to be imported from)."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [
                f"import {a.name}"
                for a in node.names
                if any(part.startswith("_") for part in a.name.split("."))
            ]
        if not isinstance(node, ast.ImportFrom):
            continue
        module = node.module or ""
        if node.level or any(part.startswith("_") for part in module.split(".")):
            found.append(f"from {'.' * node.level}{module} import ...")
            continue
        mod = importlib.import_module(module)
        public = getattr(mod, "__all__", None)
        if public is None and module.partition(".")[0] == "botorch_bandits":
            public = []  # no __all__: nothing of the module is declared public
        for alias in node.names:
            if alias.name.startswith("_"):
                found.append(f"from {module} import {alias.name}")
            elif isinstance(getattr(mod, alias.name, None), ModuleType):
                continue  # a public submodule (``from botorch_bandits import ax``)
            elif public is not None and alias.name not in public:
                found.append(f"from {module} import {alias.name}")
    return found


@pytest.mark.parametrize("path", TUTORIALS, ids=lambda p: p.name)
def test_notebook_uses_public_names_only(path: Path) -> None:
    bad = []
    for index, source in _code(path):
        tree = ast.parse(source)
        bad += [f"cell {index}: {imp}" for imp in _private_imports(tree)]
        bad += [
            f"cell {index}: .{node.attr}"
            for node in ast.walk(tree)
            if isinstance(node, ast.Attribute)
            and node.attr.startswith("_")
            and not node.attr.startswith("__")
            and node.attr not in PRIVATE_ATTRIBUTES
        ]
    assert not bad, f"{path.name}: private names: {bad}"


_FENCE = re.compile(r"^\s*(```|~~~)")


@pytest.mark.parametrize("path", TUTORIALS, ids=lambda p: p.name)
def test_notebook_lines_fit_the_code_box(path: Path) -> None:
    """Code cells and the code blocks of markdown cells (lines between fences)."""
    long = []
    for index, cell in enumerate(nbformat.read(path, as_version=4).cells):
        fenced = cell.cell_type == "code"
        for line in cell.source.splitlines():
            if cell.cell_type == "markdown" and _FENCE.match(line):
                fenced = not fenced
            elif fenced and len(line) > MAX_LINE:
                long.append(f"cell {index}: {len(line)} characters: {line[:60]}...")
    assert not long, f"{path.name}: lines over {MAX_LINE} characters: {long}"


#: the notebooks the default run executes (the others, 11-19 s each, under -m slow)
QUICK = ("01_", "05_")


@pytest.mark.parametrize(
    "path",
    [
        p if p.name.startswith(QUICK) else pytest.param(p, marks=pytest.mark.slow)
        for p in TUTORIALS
    ],
    ids=lambda p: p.name,
)
def test_notebook_runs(
    path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SMOKE_TEST", "1")
    monkeypatch.setenv("MPLBACKEND", "Agg")
    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(
        nb,
        timeout=600,
        kernel_name="python3",
        resources={"metadata": {"path": str(tmp_path)}},
    )
    client.execute()
    outputs = [
        o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])
    ]
    assert not [o for o in outputs if o.get("output_type") == "error"]
    text = "".join(
        o.get("text", "") for o in outputs if o.get("output_type") == "stream"
    )
    assert "R_T =" in text  # the regret summary was printed
    assert os.environ["SMOKE_TEST"] == "1"
