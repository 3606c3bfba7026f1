"""The ``pip install`` that adds an extra to this installation of botorch-bandits, as
it was installed (read from its ``direct_url.json``, PEP 610): the missing-extra
messages print it, so that it works as printed."""

from __future__ import annotations

import json
import shlex
import sys
from importlib import metadata
from pathlib import Path
from urllib.parse import unquote, urlparse

__all__ = ["install_hint"]

#: the distribution's name on an index
DISTRIBUTION = "botorch-bandits"


def _origin() -> tuple[str, str | None]:
    """How the package was installed: ``("dir", path)`` from a folder (editable or
    not), ``("file", path)`` from a wheel or source archive, ``("index", None)``
    from an index; ``("source", path)`` when it runs from a folder it was not
    installed from (a clone on the path)."""
    here = Path(__file__).resolve().parents[1]
    source = ("source", str(here)) if (here / "pyproject.toml").exists() else None
    installed = False
    # a clone's own build metadata (an .egg-info beside the package) is found first
    # from its folder: read the installed record, the one with direct_url.json
    for dist in metadata.distributions(name=DISTRIBUTION):
        text = dist.read_text("direct_url.json")
        installed = (
            installed or text is not None or dist.read_text("RECORD") is not None
        )
        if text:
            return _from_url(json.loads(text))
    if installed or source is None:
        return "index", None
    return source


def _from_url(info: dict) -> tuple[str, str | None]:
    """PEP 610's record of a direct installation, as :func:`_origin` says it."""
    url = urlparse(info.get("url", ""))
    if url.scheme != "file":
        return "index", None
    path = unquote(url.path)
    if info.get("dir_info", {}).get("editable"):
        return "dir", path
    return "file", path


def install_hint(extras: str) -> str:
    """The command that installs ``extras`` (comma-separated names) into this
    environment for this installation: with this interpreter's pip, from the
    folder or the file the package was installed from, or from the index.

    Args:
        extras: The extras' names, e.g. ``"plot"`` or ``"ax,plot"``.

    Returns:
        The command, e.g. ``/venv/bin/python -m pip install '/dist/botorch_bandits-0.1.0-py3-none-any.whl[plot]'``.
    """
    kind, path = _origin()
    pip = f"{shlex.quote(sys.executable)} -m pip install"
    if kind in ("dir", "source"):
        return f"{pip} -e {shlex.quote(f'{path}[{extras}]')}"
    if kind == "file" and path is not None and Path(path).exists():
        return f"{pip} {shlex.quote(f'{path}[{extras}]')}"
    return f"{pip} {shlex.quote(f'{DISTRIBUTION}[{extras}]')}"
