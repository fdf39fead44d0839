"""The README's commands from the installed wheel, in a project outside the checkout and in an empty directory.

``scripts/build-dist`` builds the wheel and sdist exactly as a release would; the wheel
goes into a fresh virtualenv without extras (its dependencies are borrowed from the test
venv through a ``.pth`` line, so no index is needed; the Docker SDK, the `docker` extra,
is left out), and every default must then resolve from the working directory — never from
where the package happens to be installed.  Where the directory holds no corpus, the
corpus the wheel carries is graded, and the run says so.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.timeout(900)


def _sh(*args: str | Path, cwd: Path | None = None, env: dict[str, str] | None = None,
        timeout: float = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(a) for a in args], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=timeout, check=False)


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Path]]:
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
    # Dependencies only, as a plain path line (so the test venv's editable brainbench finder is not
    # loaded), minus the Docker SDK: this is an install without the `docker` extra.
    # Outside pytest's 0700 temp dirs: the embedded server runs as an unprivileged user when we are root,
    # and it must reach its binaries through these links.
    deps = Path(tempfile.mkdtemp(prefix="bbtest-wheel-deps-"))
    deps.chmod(0o755)
    for entry in Path(sysconfig.get_paths()["purelib"]).iterdir():
        if not re.match(r"(?i)(docker|brainbench|__editable__|_brainbench|.*\.pth$)", entry.name):
            (deps / entry.name).symlink_to(entry)
    (site / "zz-test-deps.pth").write_text(f"{deps}\n")
    project = root / "project"
    project.mkdir()
    for name in ("fixtures", "gold"):
        shutil.copytree(REPO / name, project / name)
    yield venv, project
    shutil.rmtree(deps, ignore_errors=True)


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
    # Half a project (gold/ without fixtures/) is an error naming the missing directory, never a fallback.
    half = project.parent / "half"
    (half / "gold").mkdir(parents=True)
    missing = _sh(bench, "run", cwd=half, env=_env())
    assert missing.returncode == 2
    assert missing.stderr.startswith(f"--fixtures {half / 'fixtures'}: no such directory"), missing.stderr


def test_an_empty_directory_grades_the_shipped_corpus_and_says_so(installed: tuple[Path, Path]) -> None:
    venv, project = installed
    bench = venv / "bin" / "brainbench"
    empty = project.parent / "empty"
    empty.mkdir()
    ledger = json.loads((REPO / "fixtures" / "_ledger.json").read_text())
    total = ledger["generated_fixtures"] + len(ledger["hand_authored_fixtures"])
    gated = total - ledger["holdout"]  # a run without --include-holdout replays the rest
    run = _sh(bench, "run", "--out", "result.json", cwd=empty, env=_env())
    assert run.returncode == 0, run.stderr[-3000:]
    assert run.stdout.startswith("# BrainBench scoreboard")
    first = run.stderr.splitlines()[0]
    assert first == (f"no fixtures/ or gold/ in {empty}: grading the corpus shipped with brainbench 0.1.0 "
                     f"({total} fixtures, fixtures_hash {ledger['fixtures_hash'][:12]}…); `brainbench corpus init DIR` "
                     "copies it, with its baseline, into a project of your own")
    doc = json.loads((empty / "result.json").read_text())
    assert doc["receipt"]["fixtures_hash"] == ledger["fixtures_hash"] and doc["seed_failures"] == []
    # The closing line: verdict, where the result went, how long it took.
    last = run.stderr.strip().splitlines()[-1]
    assert re.fullmatch(r"brainbench: clean, not gated \(no --compare\), exit 0 · result result\.json · "
                        rf"[0-9.]+ s · replayed {gated}/{gated} fixtures, [0-9,]+ hook calls", last), last
    # ... and `corpus init` makes it a project of the user's own, gated by the shipped baseline.
    init = _sh(bench, "corpus", "init", "mine", cwd=empty, env=_env())
    assert init.returncode == 0, init.stderr
    mine = empty / "mine"
    assert (mine / "baselines" / "main.json").read_bytes() == (REPO / "baselines" / "main.json").read_bytes()
    gated = _sh(bench, "run", "--compare", "baselines/main.json", "--quiet", cwd=mine, env=_env())
    assert gated.returncode == 0, gated.stderr[-3000:]
    assert "## Gate: PASS (same-hash)" in gated.stdout and "shipped" not in gated.stderr
    again = _sh(bench, "corpus", "init", "mine", cwd=empty, env=_env())
    assert again.returncode == 2
    assert again.stderr == f"brainbench corpus init: {Path('mine') / 'fixtures'}: already exists; " \
                           "`corpus init` writes a corpus only where there is none\n"


def test_a_missing_extra_is_named(installed: tuple[Path, Path]) -> None:
    venv, project = installed
    bench = venv / "bin" / "brainbench"
    extra = "pip install 'docker>=7.0' (or reinstall BrainBench with [docker])"  # no index serves brainbench
    for args in (("run", "--executor", "docker"), ("run", "--image", "codex=some/hook:1"),
                 ("doctor", "--image", "some/hook:1")):
        proc = _sh(bench, *args, cwd=project, env=_env())
        assert proc.returncode == 2, (args, proc.stderr)
        [line] = proc.stderr.strip().splitlines()
        assert line.endswith(f"needs the Docker SDK, which this install lacks (the `docker` extra): {extra}"), line
        assert "Docker engine" not in line


def test_the_documented_install_line_installs_what_build_dist_built(installed: tuple[Path, Path]) -> None:
    doc = (REPO / "docs" / "RUNNING.md").read_text()  # "Installing without the checkout"
    [line] = re.findall(r"^pip install '(dist/[^']+)'", doc, re.M)
    wheel = line.removesuffix("[docker]")
    built = sorted(p.name for p in (installed[0].parent / "dist").glob("*.whl"))
    assert built == [Path(wheel).name], (built, line)
    dry = _sh(sys.executable, "-m", "pip", "install", "--dry-run", "--no-deps", "--no-index", "--quiet",
              str(installed[0].parent / line), cwd=REPO)
    assert dry.returncode == 0, dry.stderr
