"""The package's rooms (issue 27), read from its own imports by tests/structure.py:
no import cycles, no import from a lower layer to a higher one, function-local
imports only for optional extras (and the command line's lazy loading), the
benchmarks' rooms importing only from lower tiers (issue 47), modules of at most 700
lines with docstrings of at most ten lines, the Ax node module at most 400 lines,
and docs/design.md's layout table as the code is now."""

from __future__ import annotations

import ast

import structure  # tests/structure.py


def test_no_import_cycles() -> None:
    assert structure.cycles(structure.graph()) == []


def test_no_import_runs_from_a_lower_layer_up() -> None:
    assert structure.upward() == []


def test_benchmark_rooms_import_only_from_lower_tiers() -> None:
    assert structure.room_imports() == []
    # every benchmark module is in a room (room_tier raises otherwise)
    rooms = {
        m: structure.room_tier(m)
        for m in structure.modules()
        if m.startswith("botorch_bandits.benchmarks.")
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
