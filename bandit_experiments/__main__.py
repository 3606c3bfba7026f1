"""``python -m bandit_experiments COMMAND``: the research commands
(:mod:`bandit_experiments.cli`)."""

from __future__ import annotations

import sys

from bandit_experiments.cli import main

if __name__ == "__main__":
    sys.exit(main())
