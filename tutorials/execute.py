"""Run the tutorial notebooks top to bottom and store them with their outputs.

The documentation site renders ``tutorials/*.ipynb`` with execution turned off, so
each notebook is kept in the repository together with the outputs of a full-size
run. This script regenerates them::

    .venv/bin/python tutorials/execute.py                  # every tutorial (make tutorials)
    .venv/bin/python tutorials/execute.py tutorials/03_long_term_constraints.ipynb
    .venv/bin/python tutorials/execute.py --smoke          # tiny run, files left untouched

Each notebook runs in a fresh ``python3`` kernel (the interpreter running this
script) whose working directory is a temporary folder, so nothing it writes lands
in the repository. The kernel's environment has ``SMOKE_TEST`` and ``CI`` removed
(full size) and the inline matplotlib backend, so figures are stored as PNG
outputs. An error output, a timeout or a dead kernel stops that notebook: its
file is not rewritten, the notebook and the cell are named, and the exit status
is non-zero once every notebook has been tried.

Before a notebook is written back it is made stable and lean: timing metadata
and volatile kernel details are dropped, execution counts are renumbered 1, 2, ...
over the executed cells, consecutive stream outputs are merged, carriage-return
progress updates are reduced to their final state, and progress-bar widgets are
removed. ``--smoke`` runs the tiny version (as the tests do) only to check that
the notebooks run; its outputs are never stored.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

HERE = Path(__file__).resolve().parent
INLINE_BACKEND = "module://matplotlib_inline.backend_inline"
# cell metadata written by nbclient (record_timing) or by Jupyter extensions
VOLATILE_CELL_METADATA = ("execution", "ExecuteTime")
WIDGET_MIME = "application/vnd.jupyter.widget-view+json"
KERNELSPEC = {"display_name": "Python 3", "language": "python", "name": "python3"}


class NotebookFailed(RuntimeError):
    """A notebook stopped on an error; the message names the notebook and the cell."""


def kernel_environment(smoke: bool) -> dict[str, str]:
    """The environment of the notebook's kernel: full size unless ``smoke``."""
    env = dict(os.environ)
    for name in ("SMOKE_TEST", "CI"):
        env.pop(name, None)
    if smoke:
        env["SMOKE_TEST"] = "1"
    env["MPLBACKEND"] = INLINE_BACKEND  # figures become image/png outputs
    env["PYDEVD_DISABLE_FILE_VALIDATION"] = "1"  # no debugger warning on stderr
    return env


def describe_cell(nb: nbformat.NotebookNode, index: int) -> str:
    cell = nb.cells[index]
    first = next((ln for ln in cell.source.splitlines() if ln.strip()), "")
    return f"cell {index} ({first[:60]!r})"


def error_outputs(nb: nbformat.NotebookNode) -> list[str]:
    """Every error output left in the notebook, as 'cell N: ename: evalue'."""
    found = []
    for index, cell in enumerate(nb.cells):
        for output in cell.get("outputs", []):
            if output.get("output_type") == "error":
                found.append(
                    f"{describe_cell(nb, index)}: {output.get('ename')}: "
                    f"{output.get('evalue')}"
                )
    return found


def run_notebook(
    nb: nbformat.NotebookNode, name: str, *, smoke: bool, timeout: int
) -> None:
    """Execute ``nb`` in place in a fresh kernel in a temporary working directory."""
    current = {"index": -1}

    def on_cell_start(cell: nbformat.NotebookNode, cell_index: int) -> None:
        current["index"] = cell_index

    with tempfile.TemporaryDirectory(prefix="tutorial-") as workdir:
        client = NotebookClient(
            nb,
            timeout=timeout,
            kernel_name="python3",
            record_timing=False,
            allow_errors=False,
            resources={"metadata": {"path": workdir}},
            on_cell_start=on_cell_start,
        )
        try:
            client.execute(env=kernel_environment(smoke))
        except CellExecutionError as exc:
            where = describe_cell(nb, current["index"])
            summary = f"{exc.ename}: {exc.evalue}"
            raise NotebookFailed(f"{name}: {where} raised {summary}\n{exc}") from exc
        except Exception as exc:  # timeout, dead kernel, kernel failed to start
            where = (
                describe_cell(nb, current["index"])
                if current["index"] >= 0
                else "kernel start"
            )
            raise NotebookFailed(
                f"{name}: {where} failed: {type(exc).__name__}: {exc}"
            ) from exc
    errors = error_outputs(nb)
    if errors:
        raise NotebookFailed(f"{name}: error output in " + "; ".join(errors))


def clean_stream_text(text: str) -> str:
    """Keep what a terminal would show: the part of each line after its last CR."""
    text = text.replace("\r\n", "\n")
    lines = [line.rsplit("\r", 1)[-1] for line in text.split("\n")]
    return "\n".join(lines)


def clean_outputs(outputs: list) -> list:
    cleaned: list = []
    for output in outputs:
        kind = output.get("output_type")
        if kind == "stream":
            text = clean_stream_text(output.get("text", ""))
            if not text:
                continue
            previous = cleaned[-1] if cleaned else None
            if (
                previous is not None
                and previous.get("output_type") == "stream"
                and previous.get("name") == output.get("name")
            ):
                previous["text"] += text
                continue
            output["text"] = text
        elif kind in ("display_data", "execute_result"):
            data = output.get("data", {})
            if WIDGET_MIME in data:  # a progress-bar widget: no use without a kernel
                continue
        cleaned.append(output)
    return cleaned


def normalize(nb: nbformat.NotebookNode) -> None:
    """Drop volatile metadata and noise, renumber the executed cells 1, 2, ..."""
    nb.metadata.pop("widgets", None)
    nb.metadata["kernelspec"] = dict(KERNELSPEC)
    language_info = nb.metadata.get("language_info", {})
    language_info.pop("version", None)  # the interpreter's patch version
    nb.metadata["language_info"] = language_info or {"name": "python"}
    count = 0
    for cell in nb.cells:
        for key in VOLATILE_CELL_METADATA:
            cell.metadata.pop(key, None)
        if cell.cell_type != "code":
            continue
        cell.outputs = clean_outputs(cell.get("outputs", []))
        if cell.get("execution_count") is None:
            continue  # an empty cell that was never run
        count += 1
        cell.execution_count = count
        for output in cell.outputs:
            if output.get("output_type") == "execute_result":
                output["execution_count"] = count


def human_size(num_bytes: int) -> str:
    if num_bytes < 1024 * 1024:
        return f"{num_bytes / 1024:.1f} KB"
    return f"{num_bytes / 1024 / 1024:.2f} MB"


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description="Execute tutorial notebooks at full size and store their outputs."
    )
    parser.add_argument(
        "notebooks",
        nargs="*",
        type=Path,
        metavar="NOTEBOOK",
        help="notebooks to run (default: every tutorials/*.ipynb, sorted)",
    )
    parser.add_argument(
        "--smoke",
        action="store_true",
        help="run the tiny version (SMOKE_TEST=1) to check the notebooks run; "
        "the files are not rewritten",
    )
    parser.add_argument(
        "--timeout",
        type=int,
        default=1800,
        metavar="S",
        help="seconds one cell may run before the notebook fails (default: 1800)",
    )
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    paths = args.notebooks or sorted(HERE.glob("*.ipynb"))
    missing = [str(p) for p in paths if not p.is_file()]
    if missing:
        print("no such notebook: " + ", ".join(missing), file=sys.stderr)
        return 2
    mode = "smoke" if args.smoke else "full"
    failures = []
    total = time.perf_counter()
    for path in paths:
        name = path.name
        print(f"{name}: running ({mode})", flush=True)
        nb = nbformat.read(path, as_version=4)
        start = time.perf_counter()
        try:
            run_notebook(nb, name, smoke=args.smoke, timeout=args.timeout)
        except NotebookFailed as exc:
            wall = time.perf_counter() - start
            print(f"FAILED after {wall:.1f} s, not written: {exc}", file=sys.stderr)
            failures.append(name)
            continue
        wall = time.perf_counter() - start
        if args.smoke:
            print(f"{name}: ok in {wall:.1f} s (smoke run, file not written)")
            continue
        normalize(nb)
        nbformat.validate(nb)
        text = nbformat.writes(nb)
        if not text.endswith("\n"):
            text += "\n"
        path.write_text(text, encoding="utf-8")
        size = human_size(path.stat().st_size)
        print(f"{name}: ok in {wall:.1f} s, stored {size}", flush=True)
    print(f"{len(paths)} notebook(s) in {time.perf_counter() - total:.1f} s")
    if failures:
        print("failed: " + ", ".join(failures), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
