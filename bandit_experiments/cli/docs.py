"""``docs-figures``: render the documentation's figure blocks from the files commands
wrote, check them (``--check``: also no measured-looking figure outside a block),
record a command's output as such a file (``--record``), or keep the last step
(``--collect-finals``) or some steps of each curve (``--collect-curves``) of a
``reproduce`` folder's CSVs."""

from __future__ import annotations

import argparse
from pathlib import Path

from botorch_bandits.cli.common import Command, CommandError


def _arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--root", default=".", help="the repository's top folder (the current one)"
    )
    parser.add_argument(
        "--check",
        action="store_true",
        help="write nothing; exit 1 if a page's blocks differ from their files or a "
        "page has a measured-looking figure outside a block",
    )
    parser.add_argument(
        "--record",
        metavar="FILE",
        help="run the command given after -- and keep its output in FILE, with the "
        "command line, date and commit (e.g. --record docs/data/engine.txt -- "
        "python -m bandit_experiments benchmark-engine)",
    )
    parser.add_argument(
        "--collect-finals",
        nargs=2,
        metavar=("RUN_DIR", "FILE"),
        help="keep the last step of each curve in a reproduce folder's CSVs in FILE",
    )
    parser.add_argument(
        "--collect-curves",
        nargs="+",
        metavar="ARG",
        help="RUN_DIR FILE EXPERIMENT [EXPERIMENT ...]: keep about 60 log-spaced steps "
        "of each curve of the experiments in a reproduce folder's CSVs in FILE (the "
        "docs' reproduction pictures)",
    )
    parser.add_argument(
        "record_command", nargs=argparse.REMAINDER, help=argparse.SUPPRESS
    )


def _run(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from bandit_experiments.figures import docs_figures as figures

    root = Path(args.root)
    given = [
        flag
        for flag, on in (
            ("--check", args.check),
            ("--record", args.record),
            ("--collect-finals", args.collect_finals),
            ("--collect-curves", args.collect_curves),
        )
        if on
    ]
    if len(given) > 1:
        raise CommandError(f"give one of {', '.join(given)}, not several")
    if args.record_command and not args.record:
        raise CommandError(
            f"a command ({' '.join(args.record_command)}) goes with --record FILE only"
        )
    if args.record:
        command = (
            args.record_command[1:]
            if args.record_command[:1] == ["--"]
            else args.record_command
        )
        if not command:
            raise CommandError("--record FILE needs the command after --")
        print(figures.record(command, Path(args.record), root), end="")
        print(f"recorded in {args.record}")
        return 0
    if args.collect_finals:
        run_dir, out = (Path(p) for p in args.collect_finals)
        n = figures.collect_finals(run_dir, out)
        print(f"wrote {out}: {n} rows (the last step of each curve in {run_dir})")
        return 0
    if args.collect_curves:
        if len(args.collect_curves) < 3:
            raise CommandError(
                "--collect-curves needs RUN_DIR FILE and at least one EXPERIMENT, got "
                f"{' '.join(args.collect_curves)}"
            )
        run_dir, out, *names = args.collect_curves
        try:
            n = figures.collect_curves(Path(run_dir), Path(out), names)
        except FileNotFoundError as err:
            raise CommandError(str(err)) from err
        print(f"wrote {out}: {n} rows ({', '.join(names)} from {run_dir})")
        return 0
    try:
        changed = figures.update(root, check=args.check)
    except (ValueError, FileNotFoundError) as err:
        raise CommandError(str(err)) from err
    loose = {
        page: figures.loose_figures(page.read_text()) for page in figures.pages(root)
    }
    loose = {page: found for page, found in loose.items() if found}
    for page in changed:
        verb = "differs from its files" if args.check else "rendered"
        print(f"{page.relative_to(root)}: {verb}")
    for page, found in loose.items():
        for number, line in found:
            print(f"{page.relative_to(root)}:{number}: figure outside a block: {line}")
    if args.check and (changed or loose):
        return 1
    print(
        f"{len(figures.pages(root))} pages: {len(changed)} "
        f"{'differ' if args.check else 'rendered'}, {len(loose)} with loose figures"
    )
    return 0


DOCS_FIGURES = Command(
    help="Render (or --check) the documentation's figures from the files commands "
    "wrote; --record keeps a command's output as such a file.",
    add_arguments=_arguments,
    run=_run,
)
