"""Packaging promises: no Ax import, the CLI, the README's two commands."""

from __future__ import annotations

import csv
import re
import subprocess
import sys
from pathlib import Path

import botorch_bandits
from bandit_experiments.cli import main as experiments_main
from botorch_bandits.cli import main

ROOT = Path(__file__).resolve().parents[1]


def test_import_does_not_import_ax() -> None:
    code = (
        "import sys, botorch_bandits, botorch_bandits.beta, botorch_bandits.acquisition;"
        "bad = sorted(m for m in sys.modules if m == 'ax' or m.startswith('ax.'));"
        "print(bad); sys.exit(1 if bad else 0)"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_all_resolves() -> None:
    # (ruff's RUF022 keeps __all__ sorted)
    names = botorch_bandits.__all__
    assert len(set(names)) == len(names)
    for name in names:
        assert hasattr(botorch_bandits, name), name


def test_lazy_names_are_the_defining_modules_objects() -> None:
    """The package imports its submodules on first use (PEP 562): every public name
    is the object its submodule defines, and an unknown name is an AttributeError."""
    import importlib

    import pytest

    for name, module in botorch_bandits._LAZY.items():
        assert getattr(botorch_bandits, name) is getattr(
            importlib.import_module(module), name
        ), name
    assert set(botorch_bandits._LAZY) | {"__version__", "ACQUISITION_FUNCTIONS"} == set(
        botorch_bandits.__all__
    )
    assert set(botorch_bandits.__all__) <= set(dir(botorch_bandits))
    assert botorch_bandits.beta.igp_ucb_beta is botorch_bandits.igp_ucb_beta
    # the `if TYPE_CHECKING:` imports (what type checkers see) name the same modules
    import ast

    tree = ast.parse(Path(botorch_bandits.__file__).read_text())
    guarded = next(
        node
        for node in tree.body
        if isinstance(node, ast.If) and getattr(node.test, "id", "") == "TYPE_CHECKING"
    )
    static = {
        alias.name: node.module
        for node in guarded.body
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
    }
    assert static == botorch_bandits._LAZY
    with pytest.raises(AttributeError, match="has no attribute 'IGPUBC'"):
        botorch_bandits.IGPUBC  # noqa: B018


HEAVY = ("torch", "botorch", "gpytorch", "ax", "matplotlib", "distributed", "pandas")


def test_import_and_cli_help_load_no_heavy_package() -> None:
    """`import botorch_bandits` and `botorch-bandits --help` (also a command's help),
    and `python -m bandit_experiments reproduce --help`, load none of torch, BoTorch,
    GPyTorch, Ax, matplotlib, Dask: the commands import them when they run."""
    code = (
        "import sys, contextlib, io\n"
        "import botorch_bandits\n"
        "from botorch_bandits.cli import main\n"
        "from bandit_experiments.cli import main as experiments\n"
        "for run, argv in ((main, ['--help']), (main, ['loop-demo', '--help']),\n"
        "                  (main, ['demo', '--help']), (experiments, ['--help']),\n"
        "                  (experiments, ['reproduce', '--help'])):\n"
        "    with contextlib.redirect_stdout(io.StringIO()):\n"
        "        try:\n"
        "            run(argv)\n"
        "        except SystemExit:\n"
        "            pass\n"
        f"heavy = {HEAVY!r}\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in heavy))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    )
    assert result.stdout.strip() == "[]", result.stdout
    # and a name that needs them still works on first use
    code = "import sys, botorch_bandits as b; b.IGPUCB; print('botorch' in sys.modules)"
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "True"


def test_cli_help() -> None:
    """``botorch-bandits`` has the library's commands only; the research commands are
    ``python -m bandit_experiments``'s, from the repository's top folder."""
    result = subprocess.run(
        [sys.executable, "-m", "botorch_bandits.cli", "--help"],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0
    assert "{demo,loop-demo}" in result.stdout and "reproduce" not in result.stdout
    result = subprocess.run(
        [sys.executable, "-m", "bandit_experiments", "--help"],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert result.returncode == 0
    assert result.stdout.startswith("usage: python -m bandit_experiments ")
    for command in ("reproduce", "ax-bench", "ts-variance", "docs-figures"):
        assert command in result.stdout
    assert "loop-demo" not in result.stdout


def test_cli_rejects_bad_horizon(capsys) -> None:
    try:
        main(["loop-demo", "--horizon", "0"])
    except SystemExit as exc:
        assert exc.code == 2
    assert "--horizon" in capsys.readouterr().err


def test_loop_demo_smoke_writes_csv_and_png(tmp_path: Path, capsys) -> None:
    out = tmp_path / "demo"
    assert main(["loop-demo", "--smoke", "--no-progress", "--out", str(out)]) == 0
    with open(out / "regret.csv") as fh:
        rows = list(csv.DictReader(fh))
    assert {r["algorithm"] for r in rows} == {"IGP-UCB", "GP-TS", "GP-UCB"}
    assert len(rows) == 3 * 10  # every step of every algorithm
    last = [r for r in rows if r["step"] == "10"]
    assert all(float(r["mean_cumulative_regret"]) >= 0 for r in last)
    png = (out / "regret.png").read_bytes()
    assert png.startswith(b"\x89PNG") and len(png) > 5000
    assert "final cumulative regret" in capsys.readouterr().out


def test_readme_opens_with_two_commands_and_ci_runs_the_second() -> None:
    readme = (ROOT / "README.md").read_text()
    block = re.search(r"\A# [^\n]+\n\n```\n(.*?)```", readme, re.S)
    assert block, "README must open with a code block right after its title"
    commands = [line for line in block.group(1).splitlines() if line.strip()]
    assert commands == ["make demo", "make test"]
    ci = (ROOT / ".ci" / "run").read_text()
    assert "README.md" in ci and "sed -n 2p" in ci


def test_cli_refuses_contradictory_or_empty_sizes(capsys) -> None:
    """Issue 31: ``demo --smoke --trials 12`` ran 8 trials, and ``ax-bench --growth
    0,-5`` printed a row for n = -5; both now stop before any work, naming the
    argument."""
    assert main(["demo", "--smoke", "--trials", "12", "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert "--smoke" in err and "--trials 12" in err
    assert experiments_main(["ax-bench", "--growth", "0,-5"]) == 2
    err = capsys.readouterr().err
    assert "--growth" in err and "'0,-5'" in err and ">= 1" in err


def test_the_ax_module_without_ax_names_the_extra() -> None:
    """Without Ax installed, importing ``botorch_bandits.ax`` fails with one line
    that names the extra (Ax hidden from the import system in a subprocess)."""
    code = (
        "import sys\n"
        "class Hide:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name == 'ax' or name.startswith('ax.'):\n"
        "            raise ModuleNotFoundError(f'No module named {name!r}', name=name)\n"
        "sys.meta_path.insert(0, Hide())\n"
        "try:\n"
        "    from botorch_bandits.ax import bandit_generation_strategy\n"
        "except ModuleNotFoundError as err:\n"
        "    print(err.name, '|', err)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    name, _, message = result.stdout.strip().partition(" | ")
    assert name == "ax"
    assert "-m pip install" in message and "[ax]'" in message and "Ax >= 1.3" in message
