"""Every measured figure on the documentation pages comes from a file a command
wrote: the pages' figure blocks equal what ``python -m bandit_experiments docs-figures`` renders
from their files, and no page has a measured-looking figure (± interval, decimal
ratio, time, size) outside a block."""

from __future__ import annotations

import re
import shutil
import sys
from pathlib import Path

import pytest

from bandit_experiments.cli import main
from bandit_experiments.figures import docs_figures as figures
from bandit_experiments.figures import images

ROOT = Path(__file__).resolve().parents[1]


def test_every_block_equals_its_file() -> None:
    """Re-rendered from docs/data, every page is unchanged (a figure typed or edited
    by hand inside a block, or a file changed without rendering, fails here)."""
    differ = figures.update(ROOT, check=True)
    assert differ == [], (
        f"{[str(p.relative_to(ROOT)) for p in differ]} differ from their files: run "
        "`python -m bandit_experiments docs-figures`"
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
        data, _, part = m["path"].partition("#")
        if m["kind"] in figures.RENDERERS:
            assert (ROOT / data).is_file() and not part, m["path"]
        else:
            assert m["kind"] in images.IMAGES, m["kind"]
            assert (ROOT / data).exists(), m["path"]
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


#: the pages that show a picture, and the kinds each shows at least
PICTURES = {
    "README.md": {"demo-picture"},
    "docs/index.md": {"demo-picture"},
    "docs/demo.md": {"demo-picture"},
    "docs/ax.md": {"online-picture"},
    "docs/measured.md": {
        "demo-picture",
        "bench-picture",
        "online-picture",
        "reproduction-picture",
    },
    "docs/reproducing.md": {"reproduction-picture"},
}


def test_the_pages_show_pictures_drawn_from_their_data() -> None:
    """Each page of :data:`PICTURES` links a PNG of each kind; every linked PNG
    exists and carries the stamp of its block's data and drawer."""
    shown: dict[str, set[str]] = {}
    for page in figures.pages(ROOT):
        for m in figures.BLOCK.finditer(page.read_text()):
            if m["kind"] not in images.IMAGES:
                continue
            name = str(page.relative_to(ROOT))
            shown.setdefault(name, set()).add(m["kind"])
            png = ROOT / images.picture_path(m["kind"], m["path"])
            data, _, part = m["path"].partition("#")
            have, caption = images.stamp_of(png)
            assert have == images.stamp(m["kind"], ROOT / data, part or None), png
            assert "lower is better" in caption and png.name in m["body"], caption
    for page, kinds in PICTURES.items():
        assert kinds <= shown.get(page, set()), (page, shown.get(page))
    # one reproduction picture per paper
    papers = {
        re.sub(r"\d+$", "", m["path"].partition("#")[2].split("-")[0])
        for page in figures.pages(ROOT)
        for m in figures.BLOCK.finditer(page.read_text())
        if m["kind"] == "reproduction-picture"
    }
    assert papers >= {"srinivas", "chowdhury", "verma", "shi", "avanesov"}, papers


def test_a_picture_older_than_its_data_is_caught_and_redrawn(tmp_path) -> None:
    data = tmp_path / "docs" / "data" / "regret.csv"
    data.parent.mkdir(parents=True)
    shutil.copy(ROOT / "docs" / "data" / "demo" / "regret.csv", data)
    page = tmp_path / "docs" / "guide" / "p.md"
    page.parent.mkdir()
    block = "<!-- figures: demo-picture docs/data/regret.csv -->\n<!-- /figures -->\n"
    page.write_text(block)
    stale: list[Path] = []
    assert figures.render(block, tmp_path, page, stale, draw=False) == block
    png = images.picture_path("demo-picture", "docs/data/regret.csv")
    assert stale == [png] and not (tmp_path / png).exists()  # --check draws nothing
    text = figures.render(block, tmp_path, page)
    assert "![The main job: cumulative regret" in text
    assert "](../figures/demo-regret-csv.png)" in text  # relative to the page
    assert (tmp_path / png).read_bytes().startswith(b"\x89PNG")
    stale.clear()
    assert figures.render(text, tmp_path, page, stale, False) == text and stale == []
    rows = data.read_text().splitlines()
    last = rows[-1].rsplit(",", 1)
    rows[-1] = f"{last[0]},{float(last[1]) + 1.0}"
    data.write_text("\n".join(rows) + "\n")  # the data changed: the picture is old
    assert figures.render(text, tmp_path, page, stale, False) == text and stale == [png]
    figures.render(text, tmp_path, page)
    have, _ = images.stamp_of(tmp_path / png)
    assert have == images.stamp("demo-picture", data, None)


def test_collect_curves_keeps_log_spaced_steps(tmp_path) -> None:
    rows = ["experiment,problem,algorithm,step,metric,mean,se,n_seeds"]
    rows += [f"e,p,A,{t},r,{t / 10},0.1,3" for t in range(1, 1001)]
    (tmp_path / "e.csv").write_text("\n".join(rows) + "\n")
    out = tmp_path / "curves.csv"
    n = figures.collect_curves(tmp_path, out, ["e"])
    kept = out.read_text().splitlines()[1:]
    steps = [int(r.split(",")[4]) for r in kept]
    assert n == len(kept) and n <= figures.CURVE_POINTS
    assert steps[0] == 1 and steps[-1] == 1000 and steps == sorted(steps)
    with pytest.raises(FileNotFoundError, match="reproduce nope"):
        figures.collect_curves(tmp_path, out, ["nope"])


def test_a_code_block_is_the_file_as_it_is(tmp_path) -> None:
    script = tmp_path / "x.py"
    script.write_text("print(1)\n")
    text = "<!-- figures: code x.py -->\n<!-- /figures -->"
    assert figures.render(text, tmp_path) == (
        "<!-- figures: code x.py -->\n```python\nprint(1)\n```\n<!-- /figures -->"
    )


def test_the_benchmark_picture_ratio_and_its_interval() -> None:
    r, lo, hi = images._ratio(2.0, 0.0, 1.0, 0.0)
    assert (r, lo, hi) == (2.0, 2.0, 2.0)
    r, lo, hi = images._ratio(2.0, 0.2, 1.0, 0.1)  # 10 % each: exp(0.1414) apart
    assert lo < r < hi and abs(hi / r - 1.1519) < 1e-3 and abs(r / lo - 1.1519) < 1e-3
    assert images._ratio(0.0, 0.0, 0.0, 0.0) == (1.0, 1.0, 1.0)  # both at the optimum
    assert images._ratio(0.0, 0.0, 1.0, 0.1)[0] == images.RATIO_RANGE[0]
    assert images._ratio(1.0, 0.1, 0.0, 0.0)[0] == images.RATIO_RANGE[1]
