"""Sphinx configuration of the botorch_bandits documentation.

Build with ``make docs`` (``sphinx-build -W --keep-going -b html docs docs/_build/html``):
every warning is an error. The tutorials are rendered from the notebooks in ``tutorials/``
with their stored outputs (``make tutorials`` regenerates them); nothing is executed here.
"""

from __future__ import annotations

import functools
import importlib
import re
import shutil
import sys
from pathlib import Path

from sphinx.pycode import ModuleAnalyzer

import botorch_bandits

DOCS = Path(__file__).resolve().parent
ROOT = DOCS.parent
# the repository's bandit_experiments (the Experiments API page) is not installed
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

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

# data: the files the figures are rendered from (docs-figures), not pages
exclude_patterns = ["_build", "**.ipynb_checkpoints", "data"]
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


# "Bases:" names only classes a reader can look up: a private base (``_SDFMixin``) or a
# class of the package without an entry of its own (``ScheduledUCB``, the mixins of
# ``acquisition._common``) is replaced by its nearest such ancestors (BoTorch's
# ``AnalyticAcquisitionFunction``, ``AcquisitionFunction``), ``object`` left out when
# another base remains.
_AUTODOC_TARGET = re.compile(r"^\s*\.\. auto(class|exception|module)::\s*(\S+)", re.M)


def _import_target(name: str) -> object:
    """The object a directive names: its longest importable module, then attributes."""
    parts = name.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for attr in parts[cut:]:
            obj = getattr(obj, attr)
        return obj
    raise ImportError(f"no module in {name!r}")


@functools.cache
def _documented() -> tuple[frozenset[type], frozenset[str]]:
    """The classes with an ``autoclass``/``autoexception`` entry on a page of the site,
    and the modules documented whole (``automodule``)."""
    classes, modules = set(), set()
    for page in sorted(DOCS.rglob("*.md")):
        if "_build" in page.parts:
            continue
        for kind, target in _AUTODOC_TARGET.findall(page.read_text(encoding="utf-8")):
            if kind == "module":
                modules.add(target)
            else:
                classes.add(_import_target(target))
    return frozenset(classes), frozenset(modules)


def _has_entry(cls: type) -> bool:
    if cls.__name__.startswith("_"):
        return False
    if cls.__module__.partition(".")[0] != "botorch_bandits":
        return True  # another library's public class (or a builtin)
    classes, modules = _documented()
    return cls in classes or cls.__module__ in modules


def _nearest_with_entry(cls: type) -> list[type]:
    if _has_entry(cls):
        return [cls]
    found: list[type] = []
    for base in cls.__bases__:
        found += [b for b in _nearest_with_entry(base) if b not in found]
    return found


def _bases_with_entries(app, name, obj, options, bases: list) -> None:
    shown: list = []
    for base in bases:  # generic aliases (``Generic[T]``) are kept as written
        for b in _nearest_with_entry(base) if isinstance(base, type) else [base]:
            if b not in shown:
                shown.append(b)
    if len(shown) > 1 and object in shown:
        shown.remove(object)
    bases[:] = shown or [object]


def setup(app) -> None:
    app.connect("autodoc-process-docstring", _re_exported_constant_docs)
    app.connect("autodoc-process-bases", _bases_with_entries)
