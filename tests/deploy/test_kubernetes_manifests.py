"""Every Kubernetes manifest validates against the Kubernetes API schemas, offline (no cluster here)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml

MANIFESTS = sorted((Path(__file__).resolve().parents[2] / "deploy" / "kubernetes").glob("*.yaml"))
# Native sidecars (initContainers with restartPolicy: Always) and backoffLimitPerIndex need 1.29+.
VERSIONS = ("1.29.0", "1.31.0")


def test_there_are_manifests() -> None:
    assert {p.name for p in MANIFESTS} >= {"shard-job.yaml", "merge-job.yaml", "results-pvc.yaml"}


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("manifest", MANIFESTS, ids=lambda p: p.name)
def test_manifest_validates_strictly(manifest: Path, version: str) -> None:
    cli = Path(sys.executable).with_name("kubernetes-validate")
    proc = subprocess.run([str(cli), "--strict", "-k", version, str(manifest)], capture_output=True, text=True,
                          timeout=120, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_shard_count_is_spelled_once_per_job() -> None:
    shard = yaml.safe_load((MANIFESTS[0].parent / "shard-job.yaml").read_text())
    merge = yaml.safe_load((MANIFESTS[0].parent / "merge-job.yaml").read_text())
    spec = shard["spec"]
    assert spec["completionMode"] == "Indexed"

    def env(job: dict[str, object], container: str) -> dict[str, str]:
        pod = job["spec"]["template"]["spec"]  # type: ignore[index]
        main = next(c for c in pod["containers"] if c["name"] == container)
        return {e["name"]: e["value"] for e in main["env"]}

    # N lives in `completions` and in SHARDS: a mismatch would make merge refuse ("missing shard").
    assert int(env(shard, "brainbench")["SHARDS"]) == spec["completions"] == int(env(merge, "merge")["SHARDS"])
    sidecars = [c for c in shard["spec"]["template"]["spec"]["initContainers"] if c.get("restartPolicy") == "Always"]
    assert [c["name"] for c in sidecars] == ["postgres"]
