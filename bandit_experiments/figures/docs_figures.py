"""The figures on the documentation pages, made from files commands wrote
(``python -m bandit_experiments docs-figures``). A page holds each measured figure inside a
block ``<!-- figures: KIND PATH -->`` ... ``<!-- /figures -->``; the block's body is
rendered from the data file PATH (relative to the repository) by the renderer of
KIND (:data:`RENDERERS`), or for an image kind (:data:`~.images.IMAGES`, PATH may
end in ``#PART``) is a link to the PNG drawn from it, with its caption. ``record`` runs a command and keeps its output, with the
command line, date and commit, as such a file; ``--check`` fails where a page's
blocks differ from their files; :func:`loose_figures` finds measured-looking
figures outside any block."""

from __future__ import annotations

import csv
import datetime as _dt
import io
import os
import re
import subprocess
from collections.abc import Callable
from pathlib import Path

import numpy as np

from bandit_experiments.figures import images
from botorch_bandits.demo.ax_demo_report import read_regret, summary_lines

BLOCK = re.compile(
    r"(<!-- figures: (?P<kind>[\w-]+) (?P<path>\S+) -->\n)(?P<body>.*?)(<!-- /figures -->)",
    re.S,
)
#: a measured-looking figure: an interval (1.2 ± 0.3), a time (45 s, 0.42 ms), a
#: decimal ratio (2.4×) or a size (2.3 MB). Settings are not figures: written in inline
#: code (`1.5×`, `30` s) they pass; plain numbers and percentages are not read
FIGURE = re.compile(
    r"\d\s?±\s?\d|\b\d+(?:\.\d+)?\s?(?:s|ms|min)\b|\d\.\d+\s?×"
    r"|\b\d+(?:\.\d+)?\s?(?:GiB|MiB|MB)\b"
)


def _fenced(text: str) -> str:
    return "```text\n" + text.rstrip("\n") + "\n```\n"


def _output(path: Path) -> str:
    """A recorded output (see :func:`record`): its command, when, and its text."""
    lines = path.read_text().splitlines(keepends=True)
    meta = {}
    while lines and lines[0].startswith("# "):
        key, _, value = lines.pop(0)[2:].partition(": ")
        meta[key] = value.strip()
    said = f"`{meta.get('recorded by', '?')}`"
    when = ", ".join(v for v in (meta.get("date"), meta.get("commit")) if v)
    return f"Output of {said} ({when}):\n\n" + _fenced("".join(lines))


def _text(path: Path) -> str:
    """A text or Markdown file a command wrote, as it is."""
    return path.read_text().rstrip("\n") + "\n"


def _log(path: Path) -> str:
    """A command's printed output kept as it is (in a code box)."""
    return _fenced(path.read_text())


def _code(path: Path) -> str:
    """A Python file as it is (in a code box the docs tests run)."""
    return "```python\n" + path.read_text().rstrip("\n") + "\n```\n"


def _demo(path: Path) -> str:
    """The main job's summary, from its ``regret.csv``."""
    return _fenced("\n".join(summary_lines(read_regret(path))))


def _finals(path: Path) -> str:
    """One row per experiment, problem and algorithm: the final value of each
    metric, mean ± s.e. over seeds (a file :func:`collect_finals` wrote)."""
    rows = list(csv.DictReader(io.StringIO(path.read_text())))
    out = [
        "| experiment | problem | algorithm | metric | T | mean ± s.e. | seeds |",
        "| --- | --- | --- | --- | ---: | ---: | ---: |",
    ]
    for r in rows:
        out.append(
            f"| {r['experiment']} | {r['problem']} | {r['algorithm']} | {r['metric']} "
            f"| {r['step']} | {_g(r['mean'])} ± {_g(r['se'])} | {r['n_seeds']} |"
        )
    return "\n".join(out) + "\n"


def _timings(path: Path) -> str:
    """``timings.csv`` of ``reproduce``: seconds per experiment and their sum; with
    its jobs' seconds and workers where the file has them (since issue 62)."""
    rows = list(csv.DictReader(io.StringIO(path.read_text())))
    jobs = bool(rows) and bool(rows[0].get("job_seconds"))
    head = "| experiment | seeds | horizon | seconds |"
    rule = "| --- | ---: | ---: | ---: |"
    if jobs:
        head, rule = f"{head} its jobs' seconds | workers |", f"{rule} ---: | ---: |"
    out = [head, rule]
    for r in rows:
        line = f"| {r['experiment']} | {r['seeds']} | {r['horizon']} | {r['seconds']} |"
        out.append(f"{line} {r['job_seconds']} | {r['workers']} |" if jobs else line)
    total = sum(float(r["seconds"]) for r in rows)
    line = f"| **sum** | | | **{total:.1f}** ({total / 60:.1f} min) |"
    if jobs:
        busy = sum(float(r["job_seconds"]) for r in rows)
        line = f"{line} **{busy:.1f}** | |"
    out.append(line)
    return "\n".join(out) + "\n"


def _g(value: str) -> str:
    return f"{float(value):.4g}"


#: kind -> renderer of a block's body from its data file
RENDERERS: dict[str, Callable[[Path], str]] = {
    "output": _output,
    "text": _text,
    "log": _log,
    "code": _code,
    "demo": _demo,
    "finals": _finals,
    "timings": _timings,
}


def render(
    text: str,
    root: Path,
    page: Path | None = None,
    stale: list[Path] | None = None,
    draw: bool = True,
) -> str:
    """``text`` with every block's body rendered from its file (paths relative to
    ``root``, the repository). An image block's picture is drawn when its stamp
    differs from its data's, and added to the list ``stale`` if one is given; with
    ``draw=False`` (``--check``) nothing is drawn and such a block is left as it is.
    Links are relative to ``page`` (default: ``root``)."""

    def body(m: re.Match) -> str:
        kind, (data, _, part) = m["kind"], m["path"].partition("#")
        path = root / data
        if kind not in RENDERERS and kind not in images.IMAGES:
            known = sorted([*RENDERERS, *images.IMAGES])
            raise ValueError(f"unknown figures kind {kind!r} (known: {known})")
        if not path.exists() or (kind in RENDERERS and not path.is_file()):
            raise FileNotFoundError(f"figures block: {data} does not exist")
        if kind in RENDERERS:
            return m.group(1) + RENDERERS[kind](path) + m.group(5)
        png = images.picture_path(kind, m["path"])
        have, caption = images.stamp_of(root / png)
        if have != images.stamp(kind, path, part or None):
            if stale is not None:
                stale.append(png)
            if not draw:  # (its caption comes with the drawing)
                return m.group(0)
            caption = images.draw(kind, path, part or None, root / png)
        where = page.parent if page else root
        link = Path(os.path.relpath(root / png, where)).as_posix()
        drawn = (
            f"drawn by `python -m bandit_experiments docs-figures` from `{m['path']}`"
        )
        return (
            m.group(1) + f"![{caption}]({link})\n\n*{caption}; {drawn}.*\n" + m.group(5)
        )

    return BLOCK.sub(body, text)


def pages(root: Path) -> list[Path]:
    """The documentation pages: README.md and every Markdown page under docs/ (not
    the built site, nor the data files in docs/data)."""
    docs = [
        p
        for p in sorted((root / "docs").rglob("*.md"))
        if p.relative_to(root / "docs").parts[0] not in ("_build", "data")
    ]
    # CHANGELOG.md is a page too (docs/changelog.md includes it); REPRODUCTION.md,
    # which docs/reproduction-report.md includes, is written whole by
    # `reproduction-report` from a reproduce run's CSVs (tests/test_reproduction_report.py)
    return [root / "README.md", root / "CHANGELOG.md", *docs]


def update(root: Path, check: bool = False) -> list[Path]:
    """Render every page's blocks; with ``check`` write nothing. Returns the pages
    whose blocks differed from their files, or whose pictures are older than their
    data (rewritten and redrawn unless ``check``)."""
    changed = []
    for page in pages(root):
        text = page.read_text()
        stale: list[Path] = []
        new = render(text, root, page, stale, draw=not check)
        if new != text or stale:
            changed.append(page)
            if not check:
                page.write_text(new)
    return changed


def loose_figures(text: str) -> list[tuple[int, str]]:
    """(line number, line) of each measured-looking figure (:data:`FIGURE`) outside
    the blocks, code fences, inline code and maths of a Markdown page."""
    spans = [(m.start(), m.end()) for m in BLOCK.finditer(text)]
    found, fenced, pos = [], False, 0
    for number, line in enumerate(text.splitlines(keepends=True), 1):
        start, pos = pos, pos + len(line)
        if any(a <= start < b for a, b in spans):
            continue
        if line.lstrip().startswith("```"):
            fenced = not fenced
            continue
        bare = re.sub(r"`[^`]*`|\$[^$]*\$", "", line)
        if not fenced and FIGURE.search(bare):
            found.append((number, line.rstrip("\n")))
    return found


def record(command: list[str], out: Path, root: Path) -> str:
    """Run ``command`` (in ``root``) and write its standard output to ``out`` after a
    header naming the command, the date and the commit (said to have uncommitted
    changes when the package's code differs from it); returns the output."""
    done = subprocess.run(command, cwd=root, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(
            f"{' '.join(command)} exited {done.returncode}: {done.stderr[-2000:]}"
        )
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"],
        cwd=root,
        capture_output=True,
        text=True,
    ).stdout.strip()
    dirty = subprocess.run(  # the package's code differs from the commit's
        ["git", "diff", "--quiet", "HEAD", "--", "botorch_bandits"], cwd=root
    ).returncode
    if commit and dirty:
        commit += " with uncommitted changes to botorch_bandits/"
    head = (
        f"# recorded by: {' '.join(command)}\n"
        f"# date: {_dt.date.today().isoformat()}\n"
        f"# commit: {commit or 'unknown'}\n"
    )
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(head + done.stdout)
    return done.stdout


#: the columns :func:`collect_finals` and :func:`collect_curves` keep
KEPT_COLUMNS = (
    "experiment",
    "problem",
    "algorithm",
    "metric",
    "step",
    "mean",
    "se",
    "n_seeds",
)


def collect_finals(run_dir: Path, out: Path) -> int:
    """From the step CSVs of a ``reproduce`` folder, keep each experiment, problem,
    algorithm and metric's row at its last step (the files themselves are MBs);
    returns the rows written."""
    rows = []
    for path in sorted(run_dir.glob("*.csv")):
        if path.name == "timings.csv" or path.name.endswith("-runs.csv"):
            continue
        with open(path, newline="") as fh:
            reader = csv.DictReader(fh)
            if reader.fieldnames is None or "step" not in reader.fieldnames:
                continue
            last: dict[tuple, dict] = {}
            for r in reader:
                key = (r["experiment"], r["problem"], r["algorithm"], r["metric"])
                if key not in last or int(r["step"]) >= int(last[key]["step"]):
                    last[key] = r
        rows += last.values()
    return _write_rows(out, rows)


def _write_rows(out: Path, rows: list[dict]) -> int:
    """The rows of a reproduction's step CSVs (:data:`KEPT_COLUMNS`) as ``out``;
    returns how many."""
    out.parent.mkdir(parents=True, exist_ok=True)
    with open(out, "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=KEPT_COLUMNS, extrasaction="ignore")
        w.writeheader()
        w.writerows(rows)
    return len(rows)


#: the steps per curve :func:`collect_curves` keeps (log-spaced, the last always)
CURVE_POINTS = 60


def collect_curves(run_dir: Path, out: Path, experiments: list[str]) -> int:
    """From the step CSVs of a ``reproduce`` folder, keep each curve of
    ``experiments`` at about :data:`CURVE_POINTS` log-spaced steps (the first and the
    last always) in ``out``, for the docs' pictures; returns the rows written."""
    kept = []
    for name in experiments:
        path = run_dir / f"{name}.csv"
        if not path.is_file():
            raise FileNotFoundError(f"{path} does not exist (run `reproduce {name}`)")
        with open(path, newline="") as fh:
            rows = list(csv.DictReader(fh))
        curves: dict[tuple, list[dict]] = {}
        for r in rows:
            curves.setdefault((r["problem"], r["algorithm"], r["metric"]), []).append(r)
        for curve in curves.values():
            curve.sort(key=lambda r: int(r["step"]))
            last = int(curve[-1]["step"])
            wanted = {round(v) for v in np.geomspace(1, last, CURVE_POINTS)} | {last}
            steps = [int(r["step"]) for r in curve]
            # the recorded step nearest each wanted one
            picks = {min(steps, key=lambda s, w=w: abs(s - w)) for w in wanted}
            kept += [r for r in curve if int(r["step"]) in picks]
    return _write_rows(out, kept)


__all__ = [
    "BLOCK",
    "CURVE_POINTS",
    "FIGURE",
    "RENDERERS",
    "collect_curves",
    "collect_finals",
    "loose_figures",
    "pages",
    "record",
    "render",
    "update",
]
