"""Under CI=true no test skips: every skip becomes a one-line failure (tests/ci_policy.py, tests/conftest.py).

The policy runs for real: a throw-away test directory with the three ways a test skips (a call to
pytest.skip, a skipif marker, a module-level importorskip) is run by pytest with our conftest as its
plugin, once as CI and once as a developer's machine.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from ci_policy import CI_SKIP_PREFIX, ci_failure, under_ci

TESTS = Path(__file__).resolve().parent
MODULE_SKIP = {"test_module.py": "import pytest\n\npytest.importorskip('no_such_module_bb33')\n\n"
                                 "def test_it():\n    pass\n"}
SKIPPING = {
    "test_calls_skip.py": "import pytest\n\ndef test_it():\n    pytest.skip('no engine here')\n",
    "test_marked.py": "import pytest\n\n@pytest.mark.skipif(True, reason='not root')\ndef test_it():\n    pass\n",
    "test_passes.py": "def test_it():\n    pass\n",
    "test_xfails.py": "import pytest\n\n@pytest.mark.xfail(reason='known', strict=True)\ndef test_it():\n"
                      "    assert False\n",
}


def _run(tmp_path: Path, ci: str | None, files: dict[str, str] = SKIPPING) -> subprocess.CompletedProcess[str]:
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_") and k != "CI"}
    env["PYTHONPATH"] = str(TESTS)
    if ci is not None:
        env["CI"] = ci
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "conftest", "-p", "no:randomly", "-p",
                           "no:cacheprovider", "-n", "0", "-rA", "-q", str(tmp_path)],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120, check=False)


def test_under_ci_every_skip_fails_with_one_line(tmp_path: Path) -> None:
    proc = _run(tmp_path, "true")
    assert proc.returncode == 1, proc.stdout
    lines = [line for line in proc.stdout.splitlines() if CI_SKIP_PREFIX in line]
    assert any("no engine here" in line for line in lines), proc.stdout
    assert any("not root" in line for line in lines), proc.stdout
    assert "2 passed" not in proc.stdout and "1 passed" in proc.stdout and "1 xfailed" in proc.stdout, proc.stdout
    assert "skipped" not in proc.stdout.splitlines()[-1], proc.stdout


def test_under_ci_a_module_that_skips_at_collection_fails_the_run(tmp_path: Path) -> None:
    proc = _run(tmp_path, "true", MODULE_SKIP)
    assert proc.returncode != 0, proc.stdout
    assert any(CI_SKIP_PREFIX in line and "no_such_module_bb33" in line for line in proc.stdout.splitlines())
    quiet = _run(tmp_path, None, MODULE_SKIP)
    assert quiet.returncode == 5 and "1 skipped" in quiet.stdout, quiet.stdout  # 5: nothing left to run


def test_on_a_developer_machine_skips_stay_skips(tmp_path: Path) -> None:
    proc = _run(tmp_path, None)
    assert proc.returncode == 0, proc.stdout
    assert CI_SKIP_PREFIX not in proc.stdout
    assert "1 passed" in proc.stdout and "2 skipped" in proc.stdout and "1 xfailed" in proc.stdout, proc.stdout


@pytest.mark.parametrize(("value", "ci"), [("true", True), ("TRUE", True), ("1", True), ("false", False),
                                          ("", False), ("0", False)])
def test_what_counts_as_ci(value: str, ci: bool) -> None:
    assert under_ci({"CI": value}) is ci
    assert (ci_failure("why", {"CI": value}) is not None) is ci
    assert under_ci({}) is False


def test_the_ci_entry_point_fails_when_the_container_layer_is_missing(tmp_path: Path) -> None:
    policy = TESTS.parent / ".ci" / "require-containers"
    for ci, code in (("true", 1), ("", 0)):
        env = {k: v for k, v in os.environ.items() if k != "CI"} | {"CI": ci}
        proc = subprocess.run(["bash", str(policy), "no Docker engine could be started"], env=env,
                              capture_output=True, text=True, timeout=30, check=False)
        assert proc.returncode == code, proc.stderr
        assert proc.stdout == "" and len(proc.stderr.splitlines()) == 1, proc.stderr
        assert "no Docker engine could be started" in proc.stderr
    run = (TESTS.parent / ".ci" / "run").read_text()
    # Every way the container layer can go missing goes through the policy, none prints a bare warning.
    assert run.count("bash .ci/require-containers") == 4, run
    assert "SKIPPED" not in run
