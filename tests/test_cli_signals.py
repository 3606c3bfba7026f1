"""The command line's small refusals and stops (issue 60): SIGHUP (the terminal or
SSH session closed) stops a command as SIGTERM does, with the demo's resume hint
and exit status 129; an empty ``--out`` is refused instead of writing into the
current folder."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import pytest

from botorch_bandits import cli

# the demo's command line, its run replaced by one that hangs up on itself: the
# signal comes where a long run would be (the demo's own work is tested elsewhere)
_HANG_UP = """
import dataclasses, os, signal, sys, time
from botorch_bandits import cli

def run(args, parser):
    os.kill(os.getpid(), signal.SIGHUP)
    deadline = time.time() + 20
    while time.time() < deadline:  # the run goes on unless the signal stops it
        time.sleep(0.01)
    return 0

# the demo's own options and resume hint, another run
cli.COMMANDS["demo"] = dataclasses.replace(cli.COMMANDS["demo"], run=run)
sys.exit(cli.main(["demo", "--trials", "8", "--out", sys.argv[1]]))
"""


def _default_sighup() -> None:
    signal.signal(signal.SIGHUP, signal.SIG_DFL)


@pytest.mark.skipif(not hasattr(signal, "SIGHUP"), reason="no SIGHUP here")
def test_a_hang_up_stops_the_demo_with_its_resume_hint(tmp_path) -> None:
    """Before, SIGHUP ended the process at once (its default): no line, no hint."""
    out = subprocess.run(
        [sys.executable, "-c", _HANG_UP, str(tmp_path / "run")],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONWARNINGS": "ignore"},
        # SIGHUP must reach the command even when the tests run under nohup (it
        # starts them with SIGHUP ignored, which children inherit and the command
        # keeps ignoring, on purpose)
        preexec_fn=_default_sighup,
    )
    assert out.returncode == 128 + signal.SIGHUP, (out.returncode, out.stderr)
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1, out.stderr
    assert lines[0].startswith("botorch-bandits: hung up (SIGHUP")
    assert f"demo --resume --trials 8 --out {tmp_path / 'run'}" in lines[0]


@pytest.mark.parametrize("out", ["", "  "])
def test_an_empty_out_is_refused(tmp_path, monkeypatch, capsys, out) -> None:
    """``demo --out ""`` wrote ``demo.db`` into the current folder, over one
    there; now it is refused before anything is written."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "demo.db").write_bytes(b"mine")
    assert cli.main(["demo", "--smoke", "--out", out]) == 2
    err = capsys.readouterr().err
    assert "--out" in err and "empty" in err
    assert (tmp_path / "demo.db").read_bytes() == b"mine"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["demo.db"]
