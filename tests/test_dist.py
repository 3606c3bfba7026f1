"""Release packaging: ``python -m build`` makes a wheel and an sdist, and the wheel,
installed with no extras into a fresh virtual environment (Python >= 3.11, the package's
floor), imports and runs its CLI."""

from __future__ import annotations

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
    assert "reproduce" in helped.stdout and "demo" in helped.stdout
