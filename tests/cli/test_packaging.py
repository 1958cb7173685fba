"""fxcache as a package: the metadata a stranger reads (``pip show``, the wheel's
METADATA), and a wheel that installs into a bare venv, without torch, where
``fxcache --version`` and every command's ``--help`` work.

The wheel test builds with the pip that runs the tests (``pip wheel
--no-build-isolation``: no second download of setuptools) and installs the wheel's
dependencies from the package index, as a user's ``pip install`` does: about 15 s
with pip's download cache warm, 30 s and more cold. It is marked ``package``: ``make package`` runs it (and CI,
after ``make test``); ``make test`` and ``make test-fast`` leave it out.
"""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from email.parser import Parser

import pytest

from fxcache_cli._commands import commands_dict
from tests.helpers import REPO_ROOT

tomllib = pytest.importorskip("tomllib")  # Python 3.11+; the metadata is the same on 3.10


@pytest.fixture(scope="module")
def project() -> dict:
    with open(REPO_ROOT / "pyproject.toml", "rb") as f:
        return tomllib.load(f)["project"]


def test_metadata_says_what_fxcache_is_and_under_which_license(project):
    assert "Inductor" in project["description"] and "cache" in project["description"]
    assert project["readme"] == "README.md"
    assert project["license"] == "BSD-3-Clause"
    assert project["license-files"] == ["LICENSE"]
    assert "BSD 3-Clause License" in (REPO_ROOT / "LICENSE").read_text()
    assert {"pytorch", "torch.compile", "inductor"} <= set(project["keywords"])
    classifiers = set(project["classifiers"])
    assert "Environment :: Console" in classifiers
    assert "Programming Language :: Python :: 3.10" in classifiers  # requires-python's floor
    assert project["requires-python"] == ">=3.10"


def test_project_urls_point_into_the_source_tree(project):
    urls = project["urls"]
    assert urls == {"Documentation": "docs/index.md", "Source": "./", "Changelog": "CHANGELOG.md"}
    assert (REPO_ROOT / urls["Changelog"]).is_file() and (REPO_ROOT / urls["Source"] / "pyproject.toml").is_file()


def test_the_console_script_is_the_module_named_after_the_program(project):
    assert project["scripts"] == {"fxcache": "fxcache_cli.fxcache:main"}


def test_torch_is_never_a_dependency_of_the_command(project):
    assert not [d for d in project["dependencies"] if d.split("[")[0].split("<")[0].split(">")[0].strip() == "torch"]


def test_the_readme_is_a_front_page(project):
    """A stranger reads it in two minutes; the manual is docs/."""
    lines = (REPO_ROOT / "README.md").read_text().splitlines()
    assert len(lines) <= 150
    assert lines[0] == "# fxcache" and "torch.compile" in "\n".join(lines[:12])


def _run(*cmd, **kw) -> subprocess.CompletedProcess[str]:
    p = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, timeout=600, **kw)
    assert p.returncode == 0, (cmd, p.stdout[-3000:], p.stderr[-3000:])
    return p


@pytest.mark.package
def test_the_wheel_installs_into_a_bare_venv_and_every_help_works_without_torch(tmp_path):
    dist = tmp_path / "dist"
    _run(sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
         "--disable-pip-version-check", "-w", dist, REPO_ROOT)
    (wheel,) = dist.glob("fxcache-*.whl")
    with zipfile.ZipFile(wheel) as z:
        meta_name = next(n for n in z.namelist() if n.endswith(".dist-info/METADATA"))
        meta = Parser().parsestr(z.read(meta_name).decode())
        assert any(n.endswith(".dist-info/licenses/LICENSE") for n in z.namelist())
        assert any(n == "fxcache_core/keying/torch_defaults.json" for n in z.namelist())
        assert any(n == "fxcache_core/decode/torch_globals.json" for n in z.namelist())  # the code scan's table
    assert meta["Name"] == "fxcache" and meta["License-Expression"] == "BSD-3-Clause"
    assert "Inductor" in meta["Summary"] and meta["Description-Content-Type"] == "text/markdown"
    assert "# fxcache" in meta.get_payload()  # the README is the long description
    assert {u.split(",")[0] for u in meta.get_all("Project-URL")} == {"Documentation", "Source", "Changelog"}

    venv = tmp_path / "bare"
    _run(sys.executable, "-m", "venv", venv)
    bin_ = venv / "bin"
    # Nothing of this checkout or of the test run's venv may leak into the bare one.
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV", "PIP_"))}
    env["PATH"] = f"{bin_}{os.pathsep}{env.get('PATH', '')}"
    _run(bin_ / "pip", "install", "-q", "--disable-pip-version-check", wheel, env=env, cwd=tmp_path)

    p = subprocess.run([bin_ / "python", "-c", "import torch"], capture_output=True, text=True, env=env, cwd=tmp_path)
    assert p.returncode != 0 and "No module named 'torch'" in p.stderr
    assert _run(bin_ / "fxcache", "--version", env=env, cwd=tmp_path).stdout.startswith("fxcache ")
    assert _run(bin_ / "python", "-m", "fxcache_cli", "--version", env=env, cwd=tmp_path).stdout.startswith("fxcache ")
    top = _run(bin_ / "fxcache", "--help", env=env, cwd=tmp_path).stdout
    assert "Usage: fxcache " in top and "--install-completion" in top
    for name in commands_dict:
        assert f"Usage: fxcache {name} " in _run(bin_ / "fxcache", name, "--help", env=env, cwd=tmp_path).stdout
