"""The README's commands from the installed wheel, in a project outside the checkout.

``scripts/build-dist`` builds the wheel and sdist exactly as a release would; the wheel
goes into a fresh virtualenv (its dependencies are borrowed from the test venv through a
``.pth`` line, so no index is needed), and every default must then resolve from the
working directory — never from where the package happens to be installed.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tarfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.timeout(900)


def _sh(*args: str | Path, cwd: Path | None = None, env: dict[str, str] | None = None,
        timeout: float = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(a) for a in args], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=timeout, check=False)


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("wheel")
    dist = root / "dist"
    built = _sh("bash", REPO / "scripts" / "build-dist", dist, env={**os.environ, "PYTHON": sys.executable})
    assert built.returncode == 0, built.stderr[-3000:]
    [wheel] = dist.glob("brainbench-*.whl")
    [sdist] = dist.glob("brainbench-*.tar.gz")
    with tarfile.open(sdist) as tar:
        names = {n.split("/", 1)[1] for n in tar.getnames() if "/" in n}
    assert {"pyproject.toml", "README.md", "runner/brainbench/cli.py"} <= names
    venv = root / "venv"
    assert _sh(sys.executable, "-m", "venv", "--without-pip", venv).returncode == 0
    py = venv / "bin" / "python"
    pip = _sh(sys.executable, "-m", "pip", "--python", py, "install", "--quiet", "--no-deps", "--no-index", wheel)
    assert pip.returncode == 0, pip.stderr
    site = Path(_sh(py, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])").stdout.strip())
    # Dependencies only: a plain path line, so the test venv's editable brainbench finder is not loaded.
    (site / "zz-test-deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    project = root / "project"
    project.mkdir()
    for name in ("fixtures", "gold"):
        shutil.copytree(REPO / name, project / name)
    return venv, project


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("BRAINBENCH_") and k not in ("PYTHONPATH", "CI")}
    return env


def test_the_wheel_is_what_runs(installed: tuple[Path, Path]) -> None:
    venv, project = installed
    where = _sh(venv / "bin" / "python", "-c", "import brainbench; print(brainbench.__file__)", cwd=project,
                env=_env())
    assert where.stdout.strip().startswith(str(venv)), where


def test_version_names_revision_and_contract(installed: tuple[Path, Path]) -> None:
    venv, project = installed
    proc = _sh(venv / "bin" / "brainbench", "--version", cwd=project, env=_env())
    head = _sh("git", "rev-parse", "HEAD", cwd=REPO).stdout.strip()
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == f"brainbench 0.1.0 (revision {head}, hook contract v1)"


def test_readme_commands_from_a_project_outside_the_checkout(installed: tuple[Path, Path]) -> None:
    venv, project = installed
    bench = venv / "bin" / "brainbench"
    validate = _sh(bench, "validate", cwd=project, env=_env())
    assert validate.returncode == 0, validate.stderr
    ledger = json.loads((REPO / "fixtures" / "_ledger.json").read_text())
    assert f"fixtures_hash {ledger['fixtures_hash']}" in validate.stdout
    # The full gate run on the embedded server: the default install has everything it needs.
    run = _sh(bench, "run", "--quiet", "--out", "result.json", cwd=project, env=_env())
    assert run.returncode == 0, run.stderr[-3000:]
    assert run.stdout.startswith("# BrainBench scoreboard")
    doc = json.loads((project / "result.json").read_text())
    assert doc["receipt"]["fixtures_hash"] == ledger["fixtures_hash"] and doc["seed_failures"] == []
    assert (project / ".brainbench" / "brainbench-ledger.jsonl").is_file()
    schemas = _sh(bench, "schema", "export", "schemas", cwd=project, env=_env())
    assert schemas.returncode == 0 and (project / "schemas" / "result.schema.json").is_file(), schemas.stderr
    # Outside any project, the defaults do not silently fall back to the package's own corpus.
    elsewhere = project.parent / "empty"
    elsewhere.mkdir()
    missing = _sh(bench, "run", cwd=elsewhere, env=_env())
    assert missing.returncode == 2
    assert len(missing.stderr.strip().splitlines()) == 2, missing.stderr  # one line per missing directory
