"""The Kubernetes Indexed Job, played by Docker: each shard pod and the merge pod exactly as the manifests say.

No cluster runs here, so the pods are reproduced container by container: the Postgres
sidecar, the runner sharing its network namespace (a pod's loopback), the same image,
command, arguments, env, user and read-only root, and one host directory standing in for
the results volume.  The manifests themselves are validated against the Kubernetes
schemas in tests/deploy/.
"""

from __future__ import annotations

import json
import time
import uuid
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parents[2]
MANIFESTS = REPO / "deploy" / "kubernetes"
SHARDS = 2


def _pod(name: str) -> dict[str, Any]:
    return yaml.safe_load((MANIFESTS / name).read_text())["spec"]["template"]["spec"]


def _env(container: dict[str, Any], **override: str) -> dict[str, str]:
    return {**{e["name"]: e["value"] for e in container.get("env", [])}, **override}


def _start_sidecar(client: Any, spec: dict[str, Any], name: str, root: Path) -> Any:
    sidecar = next(c for c in spec["initContainers"] if c["name"] == "postgres")
    # As the pod runs it: the pod's uid, a read-only root, every path it writes a volume
    # (host directories of mode 0777, as the kubelet makes an emptyDir).
    volumes = {}
    for mount in sidecar["volumeMounts"]:
        source = root / name / mount["name"] / mount.get("subPath", "")
        source.mkdir(parents=True, exist_ok=True)
        source.chmod(0o777)
        volumes[str(source)] = {"bind": mount["mountPath"], "mode": "rw"}
    security = {**spec["securityContext"], **sidecar["securityContext"]}
    container = client.containers.run(sidecar["image"], name=name, environment=_env(sidecar), detach=True,
                                      user=f"{security['runAsUser']}:{security['runAsGroup']}",
                                      read_only=security["readOnlyRootFilesystem"],
                                      cap_drop=security["capabilities"]["drop"], volumes=volumes,
                                      network_mode="bridge", labels={"brainbench.test": "kubernetes-pods"})
    probe = sidecar["startupProbe"]["exec"]["command"]
    for _ in range(120):
        if container.exec_run(probe).exit_code == 0:
            return container
        time.sleep(0.5)
    container.remove(force=True)
    raise AssertionError("the Postgres sidecar never became ready")


def _run_main(client: Any, container: dict[str, Any], image: str, results: Path, network: str | None,
              env: dict[str, str]) -> tuple[int, str]:
    security = container["securityContext"]
    run = client.containers.run(
        image, entrypoint=container["command"], command=container["args"], environment=env,
        user="65534:65534", read_only=security["readOnlyRootFilesystem"], cap_drop=security["capabilities"]["drop"],
        security_opt=["no-new-privileges:true"], tmpfs={"/scratch": "rw,size=1g,mode=1777"},
        volumes={str(results): {"bind": "/results", "mode": "rw"}},
        network_mode=f"container:{network}" if network else "none", detach=True,
        labels={"brainbench.test": "kubernetes-pods"})
    try:
        code = run.wait(timeout=600)["StatusCode"]
        return code, run.logs().decode(errors="replace")
    finally:
        run.remove(force=True)


def test_indexed_job_pods_and_merge_pod_produce_the_single_runs_verdict(docker_client: Any, corpus_image: str,
                                                                        tmp_path: Path) -> None:
    results = tmp_path / "results"
    results.mkdir()
    results.chmod(0o777)  # fsGroup 65534 in the cluster; a world-writable dir stands in for it
    shard_spec = _pod("shard-job.yaml")
    runner = next(c for c in shard_spec["containers"] if c["name"] == "brainbench")
    for index in range(SHARDS):
        sidecar = _start_sidecar(docker_client, shard_spec, f"bbtest-k8s-pg-{uuid.uuid4().hex[:8]}", tmp_path)
        try:
            env = _env(runner, SHARDS=str(SHARDS), JOB_COMPLETION_INDEX=str(index))
            code, logs = _run_main(docker_client, runner, corpus_image, results, sidecar.id, env)
        finally:
            sidecar.remove(force=True)
        assert code == 0, logs
    shard_files = sorted((results / "main").glob(f"shard-*-of-{SHARDS}.json"))
    assert [p.name for p in shard_files] == [f"shard-{i}-of-{SHARDS}.json" for i in range(1, SHARDS + 1)]
    assert all(json.loads(p.read_text())["_meta"]["shard"]["keys"] for p in shard_files)

    merge = next(c for c in _pod("merge-job.yaml")["containers"] if c["name"] == "merge")
    code, logs = _run_main(docker_client, merge, corpus_image, results, None, _env(merge, SHARDS=str(SHARDS)))
    assert code == 0, logs
    assert "# BrainBench scoreboard" in logs
    merged = json.loads((results / "main" / "result.json").read_text())
    committed = json.loads((REPO / "baselines" / "main.json").read_text())
    assert {f"{c['harness']}/{c['suite']}" for c in merged["cells"]} == set(committed["cells"])
    for cell in merged["cells"]:
        key = f"{cell['harness']}/{cell['suite']}"
        assert cell["gold_failed"] == committed["counts"][key]["gold_failed"], key


def test_a_shard_pod_with_faults_exits_2_with_its_result_and_ledger_on_the_volume(
        docker_client: Any, corpus_image: str, tmp_path: Path) -> None:
    """The pod's code is the runner's (no wrapper ``exit 0``): a seam that crashes on every call is
    a shard with faults, exit 2; its result and its ledger line are on the results volume, and
    nothing was an internal error (the default ledger lay on the read-only corpus)."""
    results = tmp_path / "results"
    results.mkdir()
    results.chmod(0o777)
    shard_spec = _pod("shard-job.yaml")
    runner = next(c for c in shard_spec["containers"] if c["name"] == "brainbench")
    sidecar = _start_sidecar(docker_client, shard_spec, f"bbtest-k8s-pg-{uuid.uuid4().hex[:8]}", tmp_path)
    try:
        env = _env(runner, SHARDS="8", JOB_COMPLETION_INDEX="0", BRAINBENCH_ARGS="--suite know-to-ask",
                   BRAINBENCH_SEAM_COMMAND_CLAUDE_CODE="/bin/false")
        code, logs = _run_main(docker_client, runner, corpus_image, results, sidecar.id, env)
    finally:
        sidecar.remove(force=True)
    assert code == 2, logs
    assert "internal error" not in logs and "Traceback" not in logs, logs
    shard = json.loads((results / "main" / "shard-1-of-8.json").read_text())
    assert shard["_meta"]["faults"] and {f["harness"] for f in shard["_meta"]["faults"]} == {"claude-code"}
    ledger = (results / "main" / "ledger-shard-1-of-8.jsonl").read_text().splitlines()
    assert len(ledger) == 1 and json.loads(ledger[0])["exit_code"] == 2


def test_a_run_on_the_read_only_corpus_without_ledger_keeps_its_line_in_scratch(
        docker_client: Any, corpus_image: str, tmp_path: Path) -> None:
    """The pod's read-only root, a run without --ledger: the line goes to TMPDIR (the pod's scratch),
    one stderr line says so, and the run exits as it graded."""
    results = tmp_path / "results"
    results.mkdir()
    results.chmod(0o777)
    shard_spec = _pod("shard-job.yaml")
    runner = dict(next(c for c in shard_spec["containers"] if c["name"] == "brainbench"))
    runner["args"] = ["brainbench run --fixtures /corpus/fixtures --gold /corpus/gold --fixture kta-001-deal-recall "
                      "--harness claude-code --out /results/r.json --quiet "
                      "--database-url postgresql://brainbench:brainbench@127.0.0.1:5432/brainbench "
                      "&& ls /scratch/brainbench-ledgers"]
    sidecar = _start_sidecar(docker_client, shard_spec, f"bbtest-k8s-pg-{uuid.uuid4().hex[:8]}", tmp_path)
    try:
        code, logs = _run_main(docker_client, runner, corpus_image, results, sidecar.id, _env(runner))
    finally:
        sidecar.remove(force=True)
    assert code == 0, logs
    assert "internal error" not in logs and "Traceback" not in logs, logs
    assert "the project's ledger /corpus/.brainbench/brainbench-ledger.jsonl is not writable" in logs, logs
    assert "ledger-" in logs.splitlines()[-1], logs
