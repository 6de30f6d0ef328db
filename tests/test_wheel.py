"""The package builds as a wheel that holds the package and nothing else, and the wheel works
when installed into a fresh virtual environment, run from outside the repository.

The wheel is built offline (``pip wheel --no-deps --no-build-isolation``, with the setuptools of
the test environment) from a copy of the working tree, so the tree itself gets no ``build/``
folder. The fresh venv (``--system-site-packages``) sees the test environment's dependencies
(NumPy, SymPy, ...) through a ``.pth`` line -- which adds that folder to ``sys.path`` but runs
none of its ``.pth`` files, so the editable install of the source tree stays invisible -- and
gets the wheel with ``pip install --no-deps --ignore-installed``. The test asserts that ``replica`` is then
imported from the fresh venv.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent

IGNORED = shutil.ignore_patterns(".git", ".venv", "out", "build", "dist", "*.egg-info",
                                 "__pycache__", "*.pyc", "_build", "_gallery", ".replica-cache",
                                 ".pytest_cache")


def _run(cmd, cwd, env=None, timeout=240):
    proc = subprocess.run([str(c) for c in cmd], cwd=cwd, capture_output=True, text=True,
                          timeout=timeout, env=env)
    assert proc.returncode == 0, (cmd, proc.stdout[-2000:], proc.stderr[-2000:])
    return proc.stdout


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("wheel")
    tree = tmp / "tree"
    shutil.copytree(REPO, tree, ignore=IGNORED)
    _run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation",
          "-w", tmp / "dist", "."], cwd=tree)
    (path,) = (tmp / "dist").glob("replica-*.whl")
    return path


@pytest.mark.slow
def test_wheel_holds_the_package_and_nothing_else(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    dist_info = [n for n in names if ".dist-info/" in n]
    package = [n for n in names if n not in dist_info]
    assert all(n.startswith("replica/") for n in package), sorted(
        n for n in package if not n.startswith("replica/"))
    assert not [n for n in names if "__pycache__" in n or n.endswith(".pyc")]
    source = {p.relative_to(REPO).as_posix() for p in (REPO / "replica").rglob("*.py")}
    data = {p.relative_to(REPO).as_posix()
            for p in (REPO / "replica" / "derivations" / "data").glob("*.csv")}
    assert data  # the finite-size study the appendices draw
    # every module and the package data, and no test, notebook, example or doc
    assert set(package) == source | data
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in dist_info)
    metadata = zipfile.ZipFile(wheel).read(
        next(n for n in dist_info if n.endswith("METADATA"))).decode()
    assert "License-Expression: MIT" in metadata
    entry = zipfile.ZipFile(wheel).read(
        next(n for n in dist_info if n.endswith("entry_points.txt"))).decode()
    assert "replica = replica.cli:console" in entry


@pytest.mark.slow
def test_wheel_installs_and_runs_in_a_fresh_venv(wheel, tmp_path):
    venv = tmp_path / "venv"
    _run([sys.executable, "-m", "venv", "--system-site-packages", "--without-pip", venv],
         cwd=tmp_path)
    python = venv / "bin" / "python"
    purelib = Path(_run([python, "-c", "import sysconfig; print(sysconfig.get_paths()"
                                       "['purelib'])"], cwd=tmp_path).strip())
    deps = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}
    (purelib / "test_environment_dependencies.pth").write_text("\n".join(sorted(deps)) + "\n")
    # --ignore-installed: the test environment's own (editable) replica is visible through the
    # .pth line; pip must neither take it for this install nor uninstall it
    _run([sys.executable, "-m", "pip", "--python", python, "install", "--quiet", "--no-deps",
          "--no-index", "--ignore-installed", wheel], cwd=tmp_path)

    outside = tmp_path / "elsewhere"
    outside.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in {"PYTHONPATH", "PYTHONHOME"}}
    env["REPLICA_LAMBDIFY_CACHE"] = "0"
    where = _run([python, "-c", "import replica; print(replica.__file__)"], cwd=outside,
                 env=env).strip()
    assert Path(where).resolve().is_relative_to(venv.resolve()), where
    assert "usage: replica" in _run([python, "-m", "replica", "--help"], cwd=outside, env=env)
    assert "replica 0." in _run([venv / "bin" / "replica", "--version"], cwd=outside, env=env)
    out = json.loads(_run([python, "-m", "replica", "solve", "isotropic", "--alpha", "2",
                           "--tau", "4", "--kappa", "1/2", "--rho", "1/100", "--dps", "20",
                           "--json"], cwd=outside, env=env))
    assert out["status"] == "converged" and out["digits"] == 20
    assert out["errors"]["e_icl"].startswith("0.8224846817216")
