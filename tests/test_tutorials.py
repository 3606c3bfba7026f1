"""Every tutorial notebook runs top to bottom in smoke mode."""

from __future__ import annotations

import os
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

TUTORIALS = sorted((Path(__file__).resolve().parents[1] / "tutorials").glob("*.ipynb"))


def test_there_are_tutorials() -> None:
    assert TUTORIALS, "tutorials/ holds no notebook"


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
