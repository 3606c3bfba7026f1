"""Every measured figure on the documentation pages comes from a file a command
wrote: the pages' figure blocks equal what ``botorch-bandits docs-figures`` renders
from their files, and no page has a measured-looking figure (± interval, decimal
ratio, time, size) outside a block."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from botorch_bandits.benchmarks.figures import docs_figures as figures
from botorch_bandits.cli import main

ROOT = Path(__file__).resolve().parents[1]


def test_every_block_equals_its_file() -> None:
    """Re-rendered from docs/data, every page is unchanged (a figure typed or edited
    by hand inside a block, or a file changed without rendering, fails here)."""
    differ = figures.update(ROOT, check=True)
    assert differ == [], (
        f"{[str(p.relative_to(ROOT)) for p in differ]} differ from their files: run "
        "`botorch-bandits docs-figures`"
    )


def test_no_page_has_a_figure_outside_a_block() -> None:
    loose = {
        str(page.relative_to(ROOT)): figures.loose_figures(page.read_text())
        for page in figures.pages(ROOT)
    }
    loose = {page: found for page, found in loose.items() if found}
    assert loose == {}, loose


def test_the_pages_have_blocks_and_their_files_exist() -> None:
    blocks = [
        m
        for page in figures.pages(ROOT)
        for m in figures.BLOCK.finditer(page.read_text())
    ]
    assert len(blocks) >= 5
    for m in blocks:
        assert m["kind"] in figures.RENDERERS
        assert (ROOT / m["path"]).is_file(), m["path"]
    measured = (ROOT / "docs" / "measured.md").read_text()
    assert "<!-- figures: demo docs/data/demo/regret.csv -->" in measured


def _site(tmp_path: Path) -> Path:
    """A copy of the repository's pages and data to edit."""
    for name in ("README.md", "CHANGELOG.md"):
        shutil.copy(ROOT / name, tmp_path / name)
    shutil.copytree(
        ROOT / "docs", tmp_path / "docs", ignore=shutil.ignore_patterns("_build")
    )
    return tmp_path


def test_a_figure_edited_by_hand_is_caught_and_rerendered(tmp_path) -> None:
    root = _site(tmp_path)
    page = root / "docs" / "measured.md"
    text = page.read_text()
    m = next(figures.BLOCK.finditer(text))
    body = m["body"]
    digit = next(i for i, c in enumerate(body) if c.isdigit())
    edited = body[:digit] + str((int(body[digit]) + 1) % 10) + body[digit + 1 :]
    page.write_text(text[: m.start("body")] + edited + text[m.end("body") :])
    assert figures.update(root, check=True) == [page]
    assert main(["docs-figures", "--check", "--root", str(root)]) == 1
    assert main(["docs-figures", "--root", str(root)]) == 0
    assert page.read_text() == text


def test_a_changed_file_changes_the_page(tmp_path) -> None:
    root = _site(tmp_path)
    data = root / "docs" / "data" / "demo" / "regret.csv"
    rows = data.read_text().splitlines()
    last = rows[-1].rsplit(",", 1)
    rows[-1] = f"{last[0]},{float(last[1]) + 1.0}"
    data.write_text("\n".join(rows) + "\n")
    assert root / "docs" / "measured.md" in figures.update(root, check=True)


def test_loose_figures_are_found_outside_blocks_only() -> None:
    text = (
        "Intro with a setting T = 30000 and delta = 0.1.\n"
        "A hand-typed result 12.3 ± 0.4.\n"
        "<!-- figures: text docs/x.md -->\nInside 1.0 ± 0.1, 3 s.\n<!-- /figures -->\n"
        "```text\n7.0 ± 1.0 in code\n```\n"
        "Inline `2.0 ± 0.5` and maths $1 \\pm 2$; `1.5×` growth; 7 models × 5.\n"
        "It took 45.2 s.\nIt was 2.5× faster.\nIt peaked at 502 MiB.\nIn 105 s.\n"
    )
    found = figures.loose_figures(text)
    assert [n for n, _ in found] == [2, 10, 11, 12, 13]


def test_record_keeps_the_command_and_its_output(tmp_path) -> None:
    out = tmp_path / "data" / "x.txt"
    command = [sys.executable, "-c", "print('value 1.25')"]
    figures.record(command, out, ROOT)
    text = out.read_text()
    assert text.splitlines()[0] == f"# recorded by: {' '.join(command)}"
    assert text.endswith("value 1.25\n")
    rendered = figures.RENDERERS["output"](out)
    assert "value 1.25" in rendered and "Output of" in rendered
    with pytest.raises(RuntimeError, match="exited 3"):
        figures.record([sys.executable, "-c", "raise SystemExit(3)"], out, ROOT)


def test_collect_finals_keeps_the_last_step(tmp_path) -> None:
    (tmp_path / "e.csv").write_text(
        "experiment,problem,algorithm,step,metric,mean,se,n_seeds\n"
        "e,p,A,1,r,1.0,0.1,3\ne,p,A,2,r,2.5,0.2,3\ne,p,B,2,r,4.0,0.3,3\n"
    )
    (tmp_path / "e-runs.csv").write_text("ignored\n")
    out = tmp_path / "finals.csv"
    assert figures.collect_finals(tmp_path, out) == 2
    table = figures.RENDERERS["finals"](out)
    assert "| e | p | A | r | 2 | 2.5 ± 0.2 | 3 |" in table


def test_an_unknown_kind_or_missing_file_is_named(tmp_path) -> None:
    with pytest.raises(ValueError, match="unknown figures kind 'nope'"):
        figures.render("<!-- figures: nope a.csv -->\nx\n<!-- /figures -->", tmp_path)
    with pytest.raises(FileNotFoundError, match=r"a\.csv does not exist"):
        figures.render("<!-- figures: text a.csv -->\nx\n<!-- /figures -->", tmp_path)
