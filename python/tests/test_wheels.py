"""The Python side as wheels (docs/install.md): ``rrl-client`` (python/) and ``rrl-jobs``
(python/environments/rrl_jobs) build with ``pip wheel`` from a copy of their sources (so no build
output lands in the repository), install with ``--no-deps`` into a fresh virtual environment, and every
module they hold imports there, from a directory outside the repository.

The fresh environment has no packages of its own but the two wheels; it sees this environment's packages
(torch, verifiers, ...; the repository's .venv when pytest runs from it) through one ``.pth`` file naming
this environment's site-packages. A ``.pth`` line that is a path only appends that directory to
``sys.path``: the ``.pth`` files inside it are not run, so the editable ``rrl_client`` that
python/setup-venv.sh installs there (a finder installed by such a file) is not seen, and each module must
come from the wheel, which the test checks by the module's file.

The build uses this environment's setuptools without build isolation and without an index (nothing is
downloaded); without setuptools it skips loudly, and fails under RRL_REQUIRE_PYTHON=1 (CI).
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

PYTHON_DIR = Path(__file__).resolve().parents[1]
# Each wheel's project folder (relative to python/) and the top-level packages it holds.
PROJECTS = {"rrl_client": (".", ("rrl_client", "rrl_gym")), "rrl_jobs": ("environments/rrl_jobs", ("rrl_jobs",))}
# Package data that must arrive in the wheels, each read at run time beside its module.
DATA_FILES = ("rrl_client/contracts.json", "rrl_client/corpus/reserved.txt")
# Left out of the copy the wheels are built from: tests and what a build or a tool leaves behind.
NOT_COPIED = shutil.ignore_patterns("tests", "__pycache__", "*.egg-info", "build", "dist", ".*_cache")

# Imports every module named on stdin (a JSON list) and prints where each was found; `__main__` modules are
# found, not run (importing one runs its command).
IMPORT_ALL = """
import importlib, importlib.util, json, sys
found = {}
for name in json.load(sys.stdin):
    if name.rsplit(".", 1)[-1] == "__main__":
        spec = importlib.util.find_spec(name)
        found[name] = spec.origin if spec else None
    else:
        found[name] = importlib.import_module(name).__file__
print(json.dumps(found))
"""


def _needs_setuptools() -> None:
    if importlib.util.find_spec("setuptools") is not None:
        return
    why = f"building the wheels needs setuptools in {sys.executable}: run python/setup-venv.sh"
    if os.environ.get("RRL_REQUIRE_PYTHON") == "1":
        pytest.fail(f"RRL_REQUIRE_PYTHON=1 but {why}")
    pytest.skip(f"SKIPPED LOUDLY (the wheels): {why}")


def _run(cmd: list[str], stdin: str | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    r = subprocess.run(cmd, input=stdin, cwd=cwd, capture_output=True, text=True, timeout=600, check=False)
    assert r.returncode == 0, f"{' '.join(cmd)} exited {r.returncode}:\n{r.stdout}\n{r.stderr}"
    return r


def _modules(wheel: Path) -> list[str]:
    """The modules a wheel holds, by its file list: `a/b.py` is `a.b`, `a/__init__.py` is `a`."""
    names = [n[: -len(".py")].replace("/", ".") for n in zipfile.ZipFile(wheel).namelist() if n.endswith(".py")]
    return sorted(n.removesuffix(".__init__") for n in names)


def _source_packages(project: Path, tops: tuple[str, ...]) -> set[str]:
    """The packages of the sources: every folder under a top-level package that has an __init__.py."""
    return {str(p.parent.relative_to(project)).replace(os.sep, ".") for top in tops for p in (project / top).rglob("__init__.py")}


@pytest.fixture(scope="module")
def wheels(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Both wheels, built by pip from a copy of python/."""
    _needs_setuptools()
    tmp = tmp_path_factory.mktemp("wheels")
    src = tmp / "python"
    shutil.copytree(PYTHON_DIR, src, ignore=NOT_COPIED)
    out = tmp / "dist"
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check"]
    _run([*pip, "wheel", "--no-deps", "--no-build-isolation", "--no-index", "-q", "-w", str(out), *(str(src / d) for d, _ in PROJECTS.values())])
    built = {w.name.split("-")[0]: w for w in out.glob("*.whl")}
    assert sorted(built) == sorted(PROJECTS), f"built {sorted(w.name for w in out.iterdir())}"
    return built


@pytest.fixture(scope="module")
def venv(wheels: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh virtual environment with both wheels installed (--no-deps) and this environment's packages in view."""
    home = tmp_path_factory.mktemp("venv") / "venv"
    _run([sys.executable, "-m", "venv", "--without-pip", str(home)])
    python = home / "bin" / "python"
    site = Path(_run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"]).stdout.strip())
    ours = dict.fromkeys(sysconfig.get_paths()[k] for k in ("purelib", "platlib"))
    (site / "rrl-repository-venv.pth").write_text("".join(f"{p}\n" for p in ours))
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "--python", str(python)]
    _run([*pip, "install", "--no-deps", "--no-index", "-q", *(str(w) for w in wheels.values())])
    return home


def test_the_wheels_hold_every_package_and_their_data(wheels: dict[str, Path]) -> None:
    for name, (folder, tops) in PROJECTS.items():
        held = set(_modules(wheels[name]))
        missing = sorted(_source_packages(PYTHON_DIR / folder, tops) - held)
        assert not missing, f"{wheels[name].name} lacks the packages {missing} ({Path('python', folder, 'pyproject.toml')})"
    files = set(zipfile.ZipFile(wheels["rrl_client"]).namelist())
    assert not [f for f in DATA_FILES if f not in files], f"package data missing from {wheels['rrl_client'].name}"


def test_every_module_of_the_wheels_imports_from_the_fresh_venv(wheels: dict[str, Path], venv: Path, tmp_path: Path) -> None:
    modules = [m for w in wheels.values() for m in _modules(w)]
    python = venv / "bin" / "python"
    # -I: neither the working directory nor PYTHONPATH nor the user's site-packages is on the path.
    r = _run([str(python), "-I", "-c", IMPORT_ALL], stdin=json.dumps(modules), cwd=tmp_path)
    found: dict[str, str | None] = json.loads(r.stdout)
    assert sorted(found) == sorted(modules)
    elsewhere = {m: f for m, f in found.items() if f is None or not Path(f).resolve().is_relative_to(venv.resolve())}
    assert not elsewhere, f"modules not imported from the fresh venv {venv}: {elsewhere}"
    site = Path(found["rrl_client"] or "").parents[1]
    assert [f for f in DATA_FILES if not (site / f).is_file()] == [], "package data not installed beside its module"
