"""The docstring pass of issue 61 cannot drift back: every public callable with
parameters in the library names each parameter under ``Args:`` (and has
``Returns:`` where its annotation returns a value), as read by tests/args_coverage.py.
The last test shows the check fails on an undocumented parameter."""

from __future__ import annotations

import textwrap
from pathlib import Path

import args_coverage  # tests/args_coverage.py

PKG = args_coverage.PACKAGE


def covered_files() -> list[Path]:
    """Every module of the installed library (``botorch_bandits/``)."""
    return args_coverage.library_files()


def _undocumented(files: list[Path]) -> dict[str, str]:
    return {
        f"{c.module}.{c.qualname}": c.problem()
        for c in args_coverage.collect(files)
        if not c.covered
    }


def test_every_public_callable_documents_its_parameters() -> None:
    files = covered_files()
    assert all(p.is_file() for p in files)
    assert len(args_coverage.collect(files)) > 450  # the check reads the modules
    assert _undocumented(files) == {}


def test_the_check_fails_on_an_undocumented_parameter(tmp_path: Path) -> None:
    source = textwrap.dedent(
        '''
        from dataclasses import dataclass

        def scale(x: float, factor: float = 2.0) -> float:
            """x times factor.

            Args:
                x: The value.
                factor: The factor.

            Returns:
                The product.
            """

        def shift(x: float, by: float) -> float:
            """x plus by.

            Args:
                x: The value.
            """

        class Box:
            """A box.

            Args:
                lo, hi: Its bounds.
            """

            def __init__(self, lo: float, hi: float) -> None: ...

            def clip(self, x: float) -> None:
                """Clip in place."""

        @dataclass
        class Point:
            """A point.

            Attributes:
                x: Its coordinate.
            """

            x: float
            label: str = ""
        '''
    )
    path = tmp_path / "sample.py"
    path.write_text(source)
    found = {c.qualname: c for c in args_coverage.callables(path)}
    assert found["scale"].covered and found["Box"].covered
    assert found["shift"].missing == ["by"] and not found["shift"].has_returns
    assert found["Box.clip"].problem() == "no Args:"
    assert found["Point"].missing == ["label"]
    assert _undocumented([path]) == {
        "sample.shift": "undocumented: by; no Returns:",
        "sample.Box.clip": "no Args:",
        "sample.Point": "undocumented: label",
    }
