"""The example workflow: actionlint-clean, reusable, allowed to comment, one updated comment."""

from __future__ import annotations

import subprocess
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[2]
WORKFLOW = REPO / ".github" / "workflows" / "brainbench.yml"


def _lint(*files: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", str(REPO / "scripts" / "lint-workflows"), *map(str, files)], capture_output=True,
                          text=True, timeout=600, check=False)


def test_actionlint_passes_our_workflows_and_catches_a_broken_one(tmp_path: Path) -> None:
    ours = _lint()
    assert ours.returncode == 0, ours.stdout + ours.stderr
    broken = tmp_path / "broken.yml"
    broken.write_text(WORKFLOW.read_text().replace("${{ steps.gate.outputs.exit-code }}",
                                                   "${{ steps.gate.output.exit-code }}"))
    bad = _lint(broken)
    assert bad.returncode == 1 and 'property "output" is not defined' in bad.stdout, bad.stdout + bad.stderr


def test_workflow_is_reusable_and_has_the_permissions_it_uses() -> None:
    doc = yaml.safe_load(WORKFLOW.read_text())
    triggers = doc[True]  # YAML 1.1 reads the key `on` as a boolean
    assert {"pull_request", "workflow_call"} <= set(triggers)
    assert doc["permissions"] == {"contents": "read", "pull-requests": "write"}
    steps = doc["jobs"]["gate"]["steps"]
    uses = [s.get("uses", "") for s in steps]
    assert any(u.startswith("actions/cache@") for u in uses)
    assert any(u.startswith("actions/setup-python@") for u in uses)
    comment = next(s for s in steps if s.get("name", "").startswith("Post or update"))
    # One comment, found again by its marker and edited in place.
    assert "--method PATCH" in comment["run"] and "startswith" in comment["run"]
    install = next(s for s in steps if s.get("name") == "Install BrainBench")
    assert "[embedded]" not in install["run"]  # the default install is enough
