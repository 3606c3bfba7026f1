"""The benchmarks' module paths before issue 47 (``botorch_bandits.benchmarks.X``)
still import for one release: each gives its new module, the very same objects, with
a ``DeprecationWarning`` that names the new path; and nothing of the project (the
package, tests, tutorials, docs, README) uses an old path any more."""

from __future__ import annotations

import importlib
import re
import subprocess
import sys
from pathlib import Path

import pytest

import botorch_bandits.benchmarks as benchmarks
from botorch_bandits.benchmarks import MOVED

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = "botorch_bandits.benchmarks"


def _forget(monkeypatch: pytest.MonkeyPatch, old: str) -> None:
    """Undo an earlier import of the old path (the test imports it afresh)."""
    monkeypatch.delitem(sys.modules, f"{PACKAGE}.{old}", raising=False)
    monkeypatch.delattr(benchmarks, old, raising=False)


def _public(module) -> list[str]:
    return list(
        getattr(module, "__all__", [n for n in vars(module) if not n.startswith("_")])
    )


def test_every_moved_module_exists_and_no_old_path_is_a_module_again() -> None:
    assert len(MOVED) == 39
    for old, new in MOVED.items():
        assert (
            ROOT / "botorch_bandits" / "benchmarks" / f"{new.replace('.', '/')}.py"
        ).exists()
        assert not (ROOT / "botorch_bandits" / "benchmarks" / f"{old}.py").exists()
        assert not (ROOT / "botorch_bandits" / "benchmarks" / old).exists()


@pytest.mark.parametrize(("old", "new"), sorted(MOVED.items()))
def test_an_old_path_imports_its_new_module_and_warns(
    monkeypatch: pytest.MonkeyPatch, old: str, new: str
) -> None:
    module = importlib.import_module(f"{PACKAGE}.{new}")
    _forget(monkeypatch, old)
    with pytest.warns(DeprecationWarning) as caught:
        aliased = importlib.import_module(f"{PACKAGE}.{old}")
    assert [str(w.message) for w in caught] == [
        f"`{PACKAGE}.{old}` moved to `{PACKAGE}.{new}` (issue 47); import it from "
        "there: the old path will be removed in the next release."
    ]
    assert aliased is module
    assert _public(module)
    for name in _public(module):
        assert getattr(aliased, name) is getattr(module, name)


def test_from_an_old_path_import_a_name(monkeypatch: pytest.MonkeyPatch) -> None:
    from botorch_bandits.benchmarks.papers import constrained

    _forget(monkeypatch, "constrained")
    with pytest.warns(DeprecationWarning, match=r"benchmarks\.papers\.constrained`"):
        from botorch_bandits.benchmarks.constrained import simulate_constrained
    assert simulate_constrained is constrained.simulate_constrained
    _forget(monkeypatch, "demo")
    with pytest.warns(DeprecationWarning, match=r"benchmarks\.demos\.loop_demo`"):
        from botorch_bandits.benchmarks import demo
    assert (
        demo.run_bandit
        is importlib.import_module(f"{PACKAGE}.demos.loop_demo").run_bandit
    )
    # names that moved out of a module keep their old path too
    from botorch_bandits.benchmarks.common.summary import mean_and_standard_error

    assert demo.mean_and_standard_error is mean_and_standard_error


def test_the_warning_points_at_the_importing_line() -> None:
    """A script importing an old path sees the warning under Python's default
    filters (a DeprecationWarning shows when it is attributed to ``__main__``)."""
    code = "from botorch_bandits.benchmarks.constrained import simulate_constrained\n"
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert (
        "<string>:1: DeprecationWarning: `botorch_bandits.benchmarks.constrained`"
        in (done.stderr)
    )


def test_no_old_path_is_used() -> None:
    """The package, tests, tutorials, docs and README name modules by their new
    paths only (this file and the CHANGELOG's history aside)."""
    names = "|".join(sorted(MOVED, key=len, reverse=True))
    dotted = re.compile(rf"(?<![\w.])(?:botorch_bandits\.)?benchmarks\.({names})(?!\w)")
    slashed = re.compile(rf"(?<![\w.])(?:botorch_bandits/)?benchmarks/({names})\.py")
    imported = re.compile(
        rf"from botorch_bandits\.benchmarks import [^\n]*\b({names})\b"
    )
    files = [ROOT / "README.md"]
    for folder, pattern in [
        ("botorch_bandits", "*.py"),
        ("tests", "*.py"),
        ("tutorials", "*.ipynb"),
        ("docs", "*.md"),
    ]:
        files += sorted((ROOT / folder).rglob(pattern))
    found = []
    for path in files:
        if path == Path(__file__).resolve() or "_build" in path.parts:
            continue
        for i, line in enumerate(path.read_text().splitlines(), 1):
            if dotted.search(line) or slashed.search(line) or imported.search(line):
                found.append(f"{path.relative_to(ROOT)}:{i}: {line.strip()}")
    assert found == []
