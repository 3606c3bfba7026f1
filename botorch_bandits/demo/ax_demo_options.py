"""The main job's record of a run (``botorch-bandits demo``): the values that make a
run the run it is (:data:`RUN_OPTIONS`), stored in its SQLite file beside Ax's tables
when it begins and checked when it resumes (:func:`check_run_options`)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

#: what makes a demo run the run it is, with the command line's flag of each: a
#: resume must give the same values (recorded in the run's file)
RUN_OPTIONS: dict[str, str] = {
    "trials": "--trials/--smoke",
    "parallelism": "--parallelism",
    "seed": "--seed",
    "seeds": "--seeds/--smoke",
    "mode": "--mode",
    "strategies": "--bandit-only",
}
_RUN_TABLE = "botorch_bandits_demo_run"


def check_run_options(db: Path, resume: bool, options: dict[str, Any]) -> None:
    """Record a new run's :data:`RUN_OPTIONS` in its SQLite file (a table of ours
    beside Ax's), or, resuming, refuse values other than the recorded ones, naming
    each, and a file that records none (empty, or not a demo run's).

    Args:
        db: The run's SQLite file (``demo.db``; a new run's is created if missing).
        resume: Whether the run resumes (compare the recorded values) or is new
            (record them, replacing any recorded before).
        options: The run's values, JSON-serializable, under every name of
            :data:`RUN_OPTIONS` (other keys are ignored).

    Raises:
        ValueError: If ``db`` cannot be read as a SQLite database; or, with
            ``resume``, if it records no run's options, records only some of them
            (an earlier version's file), or values other than ``options`` (each
            named with its command-line flag). The file is left as it is.
        KeyError: If ``options`` lacks a name of :data:`RUN_OPTIONS`.
    """
    values = {k: json.dumps(options[k]) for k in RUN_OPTIONS}
    try:
        con = sqlite3.connect(db)
        try:
            with con:
                if not resume:
                    con.execute(
                        f"CREATE TABLE IF NOT EXISTS {_RUN_TABLE} "
                        "(option TEXT PRIMARY KEY, value TEXT NOT NULL)"
                    )
                    con.executemany(
                        f"INSERT OR REPLACE INTO {_RUN_TABLE} VALUES (?, ?)",
                        list(values.items()),
                    )
                    return
                has = con.execute(
                    "SELECT 1 FROM sqlite_master WHERE type='table' AND name=?",
                    (_RUN_TABLE,),
                ).fetchone()
                stored = (
                    dict(con.execute(f"SELECT option, value FROM {_RUN_TABLE}"))
                    if has
                    else {}
                )
        finally:
            con.close()
    except sqlite3.DatabaseError as err:
        raise ValueError(
            f"{db} cannot be read as a SQLite database ({err}); it was left as it "
            "is. Move it away, or start a fresh run without --resume (which "
            "replaces it)."
        ) from err
    if not stored:
        raise ValueError(
            f"--resume: {db} holds no demo run ({db.stat().st_size} bytes, no record "
            "of a run's options: empty, or written by another program or an "
            "earlier version); it was left as it is. Start a fresh run without "
            "--resume (which replaces it)."
        )
    unknown = [k for k in RUN_OPTIONS if k not in stored]
    if unknown:
        raise ValueError(
            f"--resume: {db} was written by an earlier version of the demo (it records "
            f"no {', '.join(unknown)}), which this version cannot resume; it was left "
            "as it is. Start a fresh run without --resume (which replaces it)."
        )
    differ = [k for k in RUN_OPTIONS if stored.get(k) != values[k]]
    if differ:
        said = "; ".join(
            f"{k} ({RUN_OPTIONS[k]}) {json.loads(stored[k])!r} when it began, "
            f"{options[k]!r} now"
            for k in differ
            if k in stored
        ) or ", ".join(differ)
        raise ValueError(
            f"--resume continues the run stored in {db} and would change it: "
            f"{said}. Pass the values it began with, or start a fresh run without "
            "--resume (which replaces it)."
        )


__all__ = ["RUN_OPTIONS", "check_run_options"]
