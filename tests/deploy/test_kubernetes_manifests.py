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
    assert {p.name for p in MANIFESTS} >= {"shard-job.yaml", "shard-job-images.yaml", "merge-job.yaml",
                                          "results-pvc.yaml"}


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


def test_images_variant_runs_each_seam_as_a_hardened_sidecar_behind_its_own_token() -> None:
    """shard-job-images.yaml: the seams are native sidecars running the call server, each
    mounting only its own token; the runner's endpoints are the ports the sidecars listen on."""
    job = yaml.safe_load((MANIFESTS[0].parent / "shard-job-images.yaml").read_text())
    merge = yaml.safe_load((MANIFESTS[0].parent / "merge-job.yaml").read_text())
    pod = job["spec"]["template"]["spec"]
    runner = next(c for c in pod["containers"] if c["name"] == "brainbench")
    env = {e["name"]: e["value"] for e in runner["env"]}
    assert int(env["SHARDS"]) == job["spec"]["completions"] == int(
        next(e["value"] for e in merge["spec"]["template"]["spec"]["containers"][0]["env"] if e["name"] == "SHARDS"))
    assert env["BRAINBENCH_EXECUTOR"] == "sidecar"
    endpoints = dict(item.split("=", 1) for item in env["BRAINBENCH_SEAM_ENDPOINT"].split())
    assert set(endpoints) == {"openclaw", "claude-code", "codex"}
    assert not pod.get("shareProcessNamespace") and pod["automountServiceAccountToken"] is False

    first, *sidecars = pod["initContainers"]
    assert "restartPolicy" not in first  # a plain init container: done before any sidecar starts
    assert [c["name"] for c in sidecars] == ["postgres", "seam-openclaw", "seam-claude-code", "seam-codex"]
    assert all(c["restartPolicy"] == "Always" for c in sidecars)
    secrets_volume = "secrets"
    for seam, address in endpoints.items():
        box = next(c for c in sidecars if c["name"] == f"seam-{seam}")
        command = box["command"]
        assert command[0].startswith("/opt/brainbench-call-server/") and command[-1] == "--"
        assert command[command.index("--listen") + 1] == address and address.startswith("127.0.0.1:")
        token_file = command[command.index("--token-file") + 1]
        mounts = box["volumeMounts"]
        secret_mounts = [m for m in mounts if m["name"] == secrets_volume]
        # Its own token and nothing else of the pod's secrets.
        assert secret_mounts == [{"name": secrets_volume, "mountPath": token_file, "subPath": seam, "readOnly": True}]
        assert {m["name"] for m in mounts} == {"call-server", secrets_volume, f"{seam}-work"}
        assert next(m for m in mounts if m["name"] == "call-server")["readOnly"] is True
        security = box["securityContext"]
        assert security["runAsNonRoot"] and security["readOnlyRootFilesystem"]
        assert security["allowPrivilegeEscalation"] is False and security["capabilities"]["drop"] == ["ALL"]
        assert box["resources"]["limits"]["memory"] and box["resources"]["limits"]["cpu"]
    runner_volumes = {m["name"] for m in runner["volumeMounts"]}
    assert not any(name.endswith("-work") for name in runner_volumes)
    assert env["TMPDIR"] == "/scratch" and all(
        any(m["mountPath"] == "/scratch" for m in c["volumeMounts"]) for c in sidecars[1:])
