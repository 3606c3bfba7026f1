"""``python -m botorch_bandits.cli``: the ``botorch-bandits`` command."""

from __future__ import annotations

import sys

from botorch_bandits.cli import main

sys.exit(main())
