"""The research commands, run from a clone of the repository as
``python -m bandit_experiments COMMAND``: :data:`COMMANDS`, the table from a command's
name to its :class:`~botorch_bandits.cli.common.Command`, run by the library's
:func:`~botorch_bandits.cli.run_commands` (one-line errors, clean stops on Ctrl-C and
SIGTERM). The commands live in ``ax_commands``, ``reproduction``, ``studies`` and
``docs``; each imports torch, BoTorch or Ax only when it runs."""

from __future__ import annotations

from collections.abc import Sequence

from bandit_experiments.cli import ax_commands, docs, reproduction, studies
from botorch_bandits.cli import run_commands
from botorch_bandits.cli.common import Command

__all__ = ["COMMANDS", "PROG", "main"]

#: how the commands are run (the name their messages and usage lines give)
PROG = "python -m bandit_experiments"

#: command name -> the command, in the order ``--help`` lists them
COMMANDS: dict[str, Command] = {
    "ax-check": ax_commands.AX_CHECK,
    "ax-bench": ax_commands.AX_BENCH,
    "ax-online": ax_commands.AX_ONLINE,
    "botorch-loop": studies.BOTORCH_LOOP,
    "ts-where": studies.TS_WHERE,
    "ts-variance": studies.TS_VARIANCE,
    "batch-tradeoff": studies.BATCH_TRADEOFF,
    "beta-guide": studies.BETA_GUIDE,
    "benchmark-engine": studies.BENCHMARK_ENGINE,
    "reproduce": reproduction.REPRODUCE,
    "reproduction-report": reproduction.REPRODUCTION_REPORT,
    "cpd-detector": studies.CPD_DETECTOR,
    "fit-quality": studies.FIT_QUALITY,
    "docs-figures": docs.DOCS_FIGURES,
}


def main(argv: Sequence[str] | None = None) -> int:
    """Run a research command (from the repository's top folder)."""
    return run_commands(
        COMMANDS,
        argv,
        prog=PROG,
        description="The reproductions, benchmarks, studies and the docs' figures "
        "of botorch_bandits (run from a clone of the repository).",
        install="pip install -e '.[{extras}]' in the clone",
    )
