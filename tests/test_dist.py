"""Release packaging: ``python -m build`` makes a wheel and an sdist; the wheel holds the
library only (no reproduction, benchmark, study, figure or research-command module: those
are the repository's ``bandit_experiments/``, issue 61), and installed with no extras into
a fresh virtual environment (Python >= 3.11, the package's floor) it imports and runs its
CLI."""

from __future__ import annotations

import re
import subprocess
import sys
import tarfile
import venv
import zipfile
from pathlib import Path

import pytest
import torch

ROOT = Path(__file__).resolve().parents[1]
#: the floor BoTorch >= 0.17 and Ax >= 1.2.3 set; pyproject.toml's requires-python
REQUIRES_PYTHON = ">=3.11"


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    result = subprocess.run(
        [sys.executable, "-m", "build", "--outdir", str(out), str(ROOT)],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    return out


def test_wheel_and_sdist_carry_license_types_and_version(dist: Path) -> None:
    import botorch_bandits

    version = botorch_bandits.__version__
    (wheel,) = dist.glob(f"botorch_bandits-{version}-py3-none-any.whl")
    (sdist,) = dist.glob(f"botorch_bandits-{version}.tar.gz")
    names = zipfile.ZipFile(wheel).namelist()
    assert "botorch_bandits/py.typed" in names
    assert f"botorch_bandits-{version}.dist-info/licenses/LICENSE" in names
    metadata = zipfile.ZipFile(wheel).read(
        f"botorch_bandits-{version}.dist-info/METADATA"
    )
    assert b"License-Expression: MIT" in metadata
    assert f"Requires-Python: {REQUIRES_PYTHON}".encode() in metadata
    assert f"Version: {version}".encode() in metadata
    members = {m.split("/", 1)[1] for m in tarfile.open(sdist).getnames() if "/" in m}
    for wanted in ("LICENSE", "CHANGELOG.md", "README.md", "docs/conf.py", "tests"):
        assert wanted in members, wanted
    # the sdist is the source tree the tests, docs and tutorials run from: it carries
    # the experiments they run, which the wheel built from it leaves out
    assert "bandit_experiments/cli/__init__.py" in members


#: what marks an experiment module (a folder or a module's name): the reproduction
#: harness, the Ax and online benchmarks, the studies, the docs' figures
EXPERIMENT_NAME = re.compile(r"reproduc|bench|stud(y|ies)|figure|claims|report_data")


def test_the_wheel_holds_the_library_only(dist: Path) -> None:
    """No reproduction, benchmark, study, figure or research-command module in the
    wheel: only ``botorch_bandits`` (its library, test functions and demos) and the
    dist-info; the console command is the library's (``demo``, ``loop-demo``)."""
    (wheel,) = dist.glob("*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    tops = {n.split("/", 1)[0] for n in names}
    assert tops == {
        "botorch_bandits",
        next(t for t in tops if t.endswith(".dist-info")),
    }
    modules = [n for n in names if n.endswith(".py")]
    assert not [n for n in modules if EXPERIMENT_NAME.search(n)], modules
    cli = sorted(
        n.rsplit("/", 1)[1] for n in modules if n.startswith("botorch_bandits/cli/")
    )
    assert cli == ["__init__.py", "__main__.py", "common.py", "demos.py"]
    # the main job and the papers' problems that tutorials reuse are in it
    for wanted in (
        "demo/ax_demo.py",
        "demo/loop_demo.py",
        "test_functions/problems.py",
    ):
        assert f"botorch_bandits/{wanted}" in names, wanted


@pytest.mark.slow  # a fresh venv and a pip install (~1 min)
def test_wheel_installs_into_a_fresh_venv_and_runs(dist: Path, tmp_path: Path) -> None:
    """No extras: ``import botorch_bandits`` and ``botorch-bandits --help`` work, and
    the installed metadata says ``Requires-Python: >=3.11``. The venv is made with
    this interpreter, which must itself be >= 3.11 (pip refuses the wheel on 3.10)."""
    assert sys.version_info >= (3, 11), "the package needs Python >= 3.11"
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=True).create(env_dir)
    python, cli = env_dir / "bin" / "python", env_dir / "bin" / "botorch-bandits"
    # the torch of this environment, so that pip does not fetch another build of it
    constraints = tmp_path / "constraints.txt"
    constraints.write_text(f"torch=={torch.__version__}\n")
    (wheel,) = dist.glob("*.whl")
    install = subprocess.run(
        [python, "-m", "pip", "install", "--quiet", "-c", constraints, wheel],
        capture_output=True,
        text=True,
    )
    assert install.returncode == 0, install.stdout[-3000:] + install.stderr[-3000:]
    imported = subprocess.run(
        [python, "-c", "import botorch_bandits, sys; print(botorch_bandits.__file__)"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert imported.returncode == 0, imported.stderr
    assert str(env_dir) in imported.stdout  # the installed copy, not the checkout
    installed = subprocess.run(
        [
            python,
            "-c",
            "import importlib.metadata as m, sys; print(sys.version_info[:2] >= (3, 11));"
            " print(m.metadata('botorch-bandits')['Requires-Python'])",
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert installed.returncode == 0, installed.stderr
    assert installed.stdout.split("\n")[:2] == ["True", REQUIRES_PYTHON]
    helped = subprocess.run([cli, "--help"], capture_output=True, text=True)
    assert helped.returncode == 0, helped.stderr
    assert "{demo,loop-demo}" in helped.stdout and "reproduce" not in helped.stdout
    # the experiments are not installed
    found = subprocess.run(
        [python, "-c", "import bandit_experiments"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert (
        found.returncode == 1 and "No module named 'bandit_experiments'" in found.stderr
    )
