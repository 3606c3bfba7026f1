"""The package's rooms (issue 27), read from its own imports by tests/structure.py:
no import cycles, no import from a lower layer to a higher one, function-local
imports only for optional extras (and the command lines' lazy loading), the library
never importing the repository's experiments (issue 61), the experiments' rooms
importing only from lower tiers (issue 47), modules of at most 700 lines with
docstrings of at most ten lines, the Ax node module at most 400 lines, and
docs/design.md's layout table as the code is now."""

from __future__ import annotations

import ast
import importlib.util
import json
import re

import structure  # tests/structure.py


def test_no_import_cycles() -> None:
    assert structure.cycles(structure.graph()) == []


def test_no_import_runs_from_a_lower_layer_up() -> None:
    assert structure.upward() == []


def test_the_library_never_imports_the_experiments() -> None:
    """The wheel installs ``botorch_bandits`` only: no library module imports
    ``bandit_experiments``, not even inside a function; and the pre-issue-61 home of
    the experiments (``botorch_bandits.benchmarks``, with its import hook) is gone."""
    assert structure.experiment_imports() == []
    top = structure.layer("bandit_experiments")
    assert all(structure.layer(m) < top for m in structure.library())
    assert not (structure.PACKAGE / "benchmarks").exists()
    assert importlib.util.find_spec("botorch_bandits.benchmarks") is None


def test_experiment_rooms_import_only_from_lower_tiers() -> None:
    assert structure.room_imports() == []
    # every experiments module is in a room (room_tier raises otherwise)
    rooms = {
        m: structure.room_tier(m)
        for m in structure.modules()
        if m.startswith("bandit_experiments.")
    }
    assert len(rooms) > 40 and None not in rooms.values()


def test_function_local_imports_only_for_optional_extras() -> None:
    assert structure.local_imports() == []


def test_modules_are_rooms() -> None:
    sizes = {m: structure.lines(p) for m, p in structure.modules().items()}
    assert {m: n for m, n in sizes.items() if n > 700} == {}
    assert sizes["botorch_bandits.ax.generation"] <= 400
    long_docs = {}
    for m, p in structure.modules().items():
        doc = ast.get_docstring(ast.parse(p.read_text()), clean=False)
        if doc is not None and len(doc.strip().splitlines()) > 10:
            long_docs[m] = len(doc.strip().splitlines())
    assert long_docs == {}


def test_no_private_name_is_imported_across_modules() -> None:
    found = []
    for m, p in structure.modules().items():
        for node in ast.walk(ast.parse(p.read_text())):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith(
                "botorch_bandits"
            ):
                for a in node.names:
                    if a.name.startswith("_") and not a.name.startswith("__"):
                        found.append((m, node.module, a.name))
    assert found == []


def test_the_design_page_shows_the_layout_as_it_is() -> None:
    page = (structure.ROOT / "docs" / "design.md").read_text()
    assert structure.layout_table() in page


_PYTHON_BLOCK = re.compile(r"^```python\n(.*?)^```", re.S | re.M)


def _user_examples() -> dict[str, list[str]]:
    """The code a user copies: the tutorials' code cells, the docs' and the README's
    ``python`` blocks, and docs/examples/*.py."""
    root = structure.ROOT
    out = {}
    for nb in sorted((root / "tutorials").glob("*.ipynb")):
        cells = json.loads(nb.read_text())["cells"]
        code = ["".join(c["source"]) for c in cells if c["cell_type"] == "code"]
        out[str(nb.relative_to(root))] = code
    pages = [root / "README.md", *(root / "docs").rglob("*.md")]
    for page in pages:
        if "_build" not in page.parts and "data" not in page.parts:
            out[str(page.relative_to(root))] = _PYTHON_BLOCK.findall(page.read_text())
    for script in sorted((root / "docs" / "examples").glob("*.py")):
        out[str(script.relative_to(root))] = [script.read_text()]
    return out


def test_user_examples_import_only_public_library_names() -> None:
    """Issue 61: the tutorials and the docs' examples run on an installed wheel: they
    import no ``bandit_experiments`` module, no private module of the library and no
    private name."""
    found, imports = [], 0
    for where, snippets in _user_examples().items():
        for code in snippets:
            for node in ast.walk(ast.parse(code)):
                if isinstance(node, ast.Import):
                    pairs = [(a.name, "") for a in node.names]
                elif isinstance(node, ast.ImportFrom):
                    pairs = [(node.module or "", a.name) for a in node.names]
                else:
                    continue
                for module, name in pairs:
                    parts = module.split(".")
                    imports += parts[0] == "botorch_bandits"
                    private = any(
                        p.startswith("_") and not p.startswith("__")
                        for p in [*parts, name]
                    )
                    if parts[0] == "bandit_experiments" or (
                        parts[0] == "botorch_bandits" and private
                    ):
                        found.append((where, module, name))
    assert found == []
    assert imports > 30
