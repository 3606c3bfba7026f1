"""The documentation site: it builds without a warning, documents every public name,
has no broken internal link, and its code examples run as written."""

from __future__ import annotations

import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

import botorch_bandits

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Build the HTML site once (the same command as ``make docs``)."""
    out = tmp_path_factory.mktemp("docs") / "html"
    command = [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html"]
    result = subprocess.run(
        [*command, str(DOCS), str(out)],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    warnings = [
        ln for ln in result.stderr.splitlines() if "WARNING" in ln or "ERROR" in ln
    ]
    assert result.returncode == 0 and not warnings, result.stderr[-5000:]
    return out


def _documented_names(site: Path) -> set[str]:
    from sphinx.util.inventory import InventoryFile

    with open(site / "objects.inv", "rb") as fh:
        inventory = InventoryFile.load(fh, "", lambda base, uri: uri)
    by_type = getattr(inventory, "data", inventory)  # a dict before Sphinx 8.2
    return {name for entries in by_type.values() for name in entries}


@pytest.mark.parametrize("module", ["botorch_bandits", "botorch_bandits.ax"])
def test_every_public_name_has_a_rendered_entry(site: Path, module: str) -> None:
    import importlib

    mod = importlib.import_module(module)
    documented = _documented_names(site)
    missing = [n for n in mod.__all__ if f"{module}.{n}" not in documented]
    assert not missing, f"{module}.__all__ names without an API entry: {missing}"


class _Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.links: list[str] = []
        self.ids: set[str] = set()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for key, value in attrs:
            if value is None:
                continue
            if key == "id" or (tag == "a" and key == "name"):
                self.ids.add(value)
            if (tag, key) in {("a", "href"), ("img", "src"), ("link", "href")} or (
                tag == "script" and key == "src"
            ):
                self.links.append(value)


def _parse(path: Path) -> _Links:
    parser = _Links()
    parser.feed(path.read_text(encoding="utf-8"))
    return parser


def test_internal_links_resolve(site: Path) -> None:
    pages = sorted(site.rglob("*.html"))
    parsed = {p: _parse(p) for p in pages}
    checked, broken = 0, []
    for page, links in parsed.items():
        for link in links.links:
            parts = urlsplit(link)
            if parts.scheme or link.startswith("//") or link.startswith("mailto:"):
                continue  # external: not checked (the build machine has no network)
            target = (
                page
                if not parts.path
                else (page.parent / unquote(parts.path)).resolve()
            )
            if target.is_dir():
                target = target / "index.html"
            checked += 1
            if not target.exists():
                broken.append(f"{page.relative_to(site)} -> {link} (no file)")
            elif parts.fragment and target.suffix == ".html":
                ids = parsed[target].ids if target in parsed else _parse(target).ids
                if unquote(parts.fragment) not in ids:
                    broken.append(f"{page.relative_to(site)} -> {link} (no anchor)")
    assert checked > 1000, checked
    assert not broken, "\n".join(broken[:50])


def test_site_has_every_page_and_rendered_tutorials(site: Path) -> None:
    sources = [
        p.relative_to(DOCS).with_suffix(".html")
        for p in DOCS.rglob("*.md")
        if "_build" not in p.parts and "data" not in p.relative_to(DOCS).parts[:1]
    ]
    assert all((site / s).exists() for s in sources)
    notebooks = sorted((ROOT / "tutorials").glob("*.ipynb"))
    for nb in notebooks:
        html = (site / "tutorials" / nb.with_suffix(".html").name).read_text()
        assert "cell_output" in html, f"{nb.name} rendered without outputs"
    # formulas are typeset by the MathJax shipped with the site, not a CDN
    assert (site / "_static" / "mathjax" / "tex-chtml.js").exists()
    assert "mathjax/tex-chtml.js" in (site / "api" / "beta.html").read_text()


_BASES = re.compile(r"Bases:(.*?)</p>", re.S)
_CODE_NAME = re.compile(r'<span class="pre">([^<]*)</span>')


def test_api_pages_name_no_private_base(site: Path) -> None:
    """The API pages' "Bases:" name only classes a reader can look up (docs/conf.py):
    no private class (``_SDFMixin``), no undocumented base of the package
    (``ScheduledUCB``, ``RoundScheduleMixin``), but their nearest public ancestors."""
    shown: dict[str, str] = {}
    for page in sorted((site / "api").glob("*.html")):
        for bases in _BASES.findall(page.read_text(encoding="utf-8")):
            for name in _CODE_NAME.findall(bases):
                shown.setdefault(name, page.name)
    private = {
        name: page
        for name, page in shown.items()
        if any(part.startswith("_") for part in name.split("."))
    }
    assert not private, f"private bases on the API pages: {private}"
    undocumented = {"ScheduledUCB", "RoundScheduleMixin"} & set(shown)
    assert not undocumented, f"bases without an entry: {undocumented}"
    # GPUCB's and GPThompsonSampling's, in place of the private ones
    assert {"AnalyticAcquisitionFunction", "AcquisitionFunction"} <= set(shown), shown


_BLOCK = re.compile(r"^```python\n(.*?)^```", re.S | re.M)


def _blocks(path: Path) -> list[str]:
    return _BLOCK.findall(path.read_text(encoding="utf-8"))


_PAGES_WITH_CODE = sorted(
    p.relative_to(ROOT)
    for p in DOCS.rglob("*.md")
    if "_build" not in p.parts and _blocks(p)
)


def test_pages_with_code_are_found() -> None:
    assert Path("docs/quickstart.md") in _PAGES_WITH_CODE


#: the site's code box shows about 90 characters (the README's example, which the quick
#: start repeats verbatim, has a line of 89)
MAX_CODE_LINE = 90


def test_code_lines_fit_the_code_box() -> None:
    long = [
        f"{page}: {len(line)} characters: {line[:60]}..."
        for page in _PAGES_WITH_CODE
        for block in _blocks(ROOT / page)
        for line in block.splitlines()
        if len(line) > MAX_CODE_LINE
    ]
    assert not long, "\n".join(long)


@pytest.mark.parametrize("page", _PAGES_WITH_CODE, ids=str)
def test_code_on_the_page_runs_as_written(page: Path, tmp_path: Path) -> None:
    """Every ```python block of a page runs, in order, in one fresh interpreter."""
    code = "\n".join(_blocks(ROOT / page))
    result = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={"MPLBACKEND": "Agg", "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)},
        timeout=300,
    )
    assert result.returncode == 0, result.stderr[-3000:]


def test_readme_examples_are_the_executed_ones() -> None:
    """The README's Python blocks appear verbatim on a page whose code the tests run."""
    executed = "\n".join(b for p in _PAGES_WITH_CODE for b in _blocks(ROOT / p))
    readme = _blocks(ROOT / "README.md")
    assert readme, "the README has no quick-start example"
    for block in readme:
        assert block in executed, block[:200]


def test_version_attribute_matches_the_distribution() -> None:
    from importlib.metadata import version

    assert botorch_bandits.__version__ == version("botorch-bandits")
