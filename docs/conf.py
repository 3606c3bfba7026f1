"""Sphinx configuration of the botorch_bandits documentation.

Build with ``make docs`` (``sphinx-build -W --keep-going -b html docs docs/_build/html``):
every warning is an error. The tutorials are rendered from the notebooks in ``tutorials/``
with their stored outputs (``make tutorials`` regenerates them); nothing is executed here.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from sphinx.pycode import ModuleAnalyzer

import botorch_bandits

DOCS = Path(__file__).resolve().parent
ROOT = DOCS.parent

project = "botorch_bandits"
author = "botorch_bandits developers"
copyright = "2026, botorch_bandits developers"
release = botorch_bandits.__version__
version = release

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
    "sphinx.ext.mathjax",
    "sphinx.ext.viewcode",
    "myst_nb",
    # MathJax served from the built site itself, so formulas render without a network
    "sphinx-mathjax-offline",
]

# -- MyST and notebooks ----------------------------------------------------------------
myst_enable_extensions = ["dollarmath", "colon_fence", "deflist"]
myst_heading_anchors = 3
nb_execution_mode = "off"  # the notebooks are stored with their outputs
nb_merge_streams = True

# -- autodoc -----------------------------------------------------------------------------
autodoc_member_order = "bysource"
autodoc_typehints = "signature"
autodoc_default_options = {"show-inheritance": True}
autodoc_mock_imports: list[str] = []
napoleon_google_docstring = True
napoleon_numpy_docstring = False
napoleon_use_rtype = False

# -- HTML --------------------------------------------------------------------------------
html_theme = "furo"
html_title = f"botorch_bandits {release}"
html_static_path: list[str] = []
html_show_sourcelink = False

exclude_patterns = ["_build", "**.ipynb_checkpoints"]
source_suffix = {".md": "myst-nb", ".ipynb": "myst-nb", ".rst": "restructuredtext"}


def _copy_tutorials() -> None:
    """Sphinx reads sources inside ``docs/`` only: mirror ``tutorials/*.ipynb`` there."""
    target = DOCS / "tutorials"
    target.mkdir(exist_ok=True)
    wanted = {p.name for p in (ROOT / "tutorials").glob("*.ipynb")}
    for stale in target.glob("*.ipynb"):
        if stale.name not in wanted:
            stale.unlink()
    for name in sorted(wanted):
        src, dst = ROOT / "tutorials" / name, target / name
        if not dst.exists() or dst.read_bytes() != src.read_bytes():
            shutil.copyfile(src, dst)


_copy_tutorials()

# Constants re-exported by a package (``botorch_bandits.LOG_BASE_READINGS``) carry their
# documentation as a docstring after the assignment in the module that defines them;
# autodoc only looks in the package's own ``__init__`` and would fall back to the
# docstring of the value's type (``dict``, ``float``).
_DEFINING_MODULES = {
    "botorch_bandits": [
        "botorch_bandits",
        "botorch_bandits._version",
        "botorch_bandits.beta.gain",
        "botorch_bandits.changepoint",
        "botorch_bandits.acquisition",
    ],
    "botorch_bandits.ax": ["botorch_bandits.ax.generation"],
}


def _re_exported_constant_docs(app, what, name, obj, options, lines) -> None:
    if what != "data":
        return
    package, _, attr = name.rpartition(".")
    for module in _DEFINING_MODULES.get(package, []):
        docs = ModuleAnalyzer.for_module(module).find_attr_docs().get(("", attr))
        if docs:
            lines[:] = list(docs)
            return


def setup(app) -> None:
    app.connect("autodoc-process-docstring", _re_exported_constant_docs)
