"""shard-job-images.yaml's pod played by Docker: every seam image a sidecar behind its call server.

No cluster runs here, so the pod is reproduced container by container from the manifest:
the ``secrets`` init container (the static call server copied out, fresh tokens), the
Postgres sidecar, one sidecar per seam image running the call server in listen mode with
its own token and scratch, and the runner, all in one network namespace (a pod's
loopback), with the manifest's images, commands, arguments, env, users and read-only
roots.  The merge pod then merges and gates the shard: the result must be the committed
baseline's.  A seam's token opens no other seam's call server, and a runner with a wrong
token is refused.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from brainbench.gate.baseline import canonical_baseline, parse_baseline
from brainbench.models.result import RunResult

REPO = Path(__file__).resolve().parents[2]
MANIFESTS = REPO / "deploy" / "kubernetes"
LABELS = {"brainbench.test": "kubernetes-sidecar-pod"}


def _pod(name: str) -> dict[str, Any]:
    return yaml.safe_load((MANIFESTS / name).read_text())["spec"]["template"]["spec"]


def _env(container: dict[str, Any], **override: str) -> dict[str, str]:
    return {**{e["name"]: e["value"] for e in container.get("env", [])}, **override}


def _hardening(container: dict[str, Any]) -> dict[str, Any]:
    security = container.get("securityContext", {})
    return {"read_only": bool(security.get("readOnlyRootFilesystem")),
            "cap_drop": security.get("capabilities", {}).get("drop"),
            "security_opt": ["no-new-privileges:true"] if security.get("allowPrivilegeEscalation") is False else []}


def _user(container: dict[str, Any], pod: dict[str, Any]) -> str:
    security = {**pod["securityContext"], **container.get("securityContext", {})}
    return f"{security['runAsUser']}:{security.get('runAsGroup', security['runAsUser'])}"


class Pod:
    """The shard pod's containers, started in the manifest's order in one network namespace."""

    def __init__(self, client: Any, image: str, root: Path) -> None:
        self.client, self.image, self.root = client, image, root
        self.spec = _pod("shard-job-images.yaml")
        self.containers: list[Any] = []
        self.secrets = root / "secrets"  # the emptyDir the init container fills
        self.netns: Any = None
        self.by_name: dict[str, Any] = {}

    def _image(self, container: dict[str, Any]) -> str:
        return self.image if container["image"].startswith("brainbench/brainbench-corpus") else container["image"]

    def _mounts(self, container: dict[str, Any]) -> dict[str, dict[str, str]]:
        """Every volume a host directory of the pod (an emptyDir is mode 0777, as the kubelet makes
        it; a Docker tmpfs would take the image's directory mode instead), ``subPath`` included."""
        volumes: dict[str, dict[str, str]] = {}
        for mount in container.get("volumeMounts", []):
            source = self.root / mount["name"]
            if mount.get("subPath"):
                source = source / mount["subPath"]
            if not source.exists():
                source.mkdir(parents=True)
                source.chmod(0o777)
            volumes[str(source)] = {"bind": mount["mountPath"], "mode": "ro" if mount.get("readOnly") else "rw"}
        return volumes

    def run(self, container: dict[str, Any], *, detach: bool, **extra: Any) -> Any:
        volumes = self._mounts(container)
        network = {"network_mode": f"container:{self.netns.id}"} if self.netns is not None else {}
        kwargs = {"entrypoint": container.get("command"), "command": container.get("args"),
                  "environment": _env(container), "user": _user(container, self.spec),
                  "group_add": [str(self.spec["securityContext"]["fsGroup"])], "volumes": volumes,
                  "labels": LABELS, "detach": True, **_hardening(container), **network, **extra}
        started = self.client.containers.run(self._image(container), **kwargs)
        self.containers.append(started)
        self.by_name[container["name"]] = started
        if not detach:
            code = started.wait(timeout=900)["StatusCode"]
            return code, started.logs().decode(errors="replace")
        return started

    def start_sidecars(self) -> None:
        init, postgres, *seams = self.spec["initContainers"]
        code, logs = self.run(init, detach=False, network_mode="none")
        assert code == 0, logs
        self.netns = self.run(postgres, detach=True, network_mode="bridge")
        probe = postgres["startupProbe"]["exec"]["command"]
        for _ in range(120):
            if self.netns.exec_run(probe).exit_code == 0:
                break
            time.sleep(0.5)
        else:
            raise AssertionError("the Postgres sidecar never became ready: " + self.netns.logs().decode()[-2000:])
        for seam in seams:
            limits = seam["resources"]["limits"]
            self.run(seam, detach=True, mem_limit=limits["memory"].replace("Mi", "m"),
                     nano_cpus=int(float(limits["cpu"]) * 1e9))

    def seam(self, name: str) -> Any:
        return self.by_name[f"seam-{name}"]

    def remove(self) -> None:
        for container in reversed(self.containers):
            container.remove(force=True)


@pytest.fixture(scope="module")
def pod(docker_client: Any, corpus_image: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Pod]:
    """One pod for the module (its sidecars start once); each test runs a runner container in it."""
    tmp_path = tmp_path_factory.mktemp("pod")
    results = tmp_path / "results"
    results.mkdir()
    results.chmod(0o777)  # fsGroup 65534 in the cluster; a world-writable dir stands in for it
    started = Pod(docker_client, corpus_image, tmp_path)
    try:
        assert docker_client.containers.run(corpus_image, entrypoint=["ls", "/opt/brainbench/libexec/call-server"],
                                            remove=True), f"{corpus_image} has no static call server"
        started.start_sidecars()
        yield started
    finally:
        started.remove()


# Run by a hook inside one seam's sidecar: another seam's call server, the handshake played with this
# seam's token (call_server.py's proofs, by hand).
PROBE = """
import hashlib, hmac, json, secrets, socket, sys
token = open("/run/brainbench/call-token").read().strip().encode()
def proof(role, mine, theirs):
    return hmac.new(token, f"{role}|{mine}|{theirs}".encode(), hashlib.sha256).hexdigest()
with socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=10) as conn:
    lines, nonce = conn.makefile(), secrets.token_hex(16)
    conn.sendall((json.dumps({"id": 0, "hello": True, "nonce": nonce}) + "\\n").encode())
    challenge = json.loads(lines.readline())
    assert challenge["proof"] != proof("brainbench-call-server", nonce, challenge["challenge"])
    auth = proof("brainbench-call-client", nonce, challenge["challenge"])
    conn.sendall((json.dumps({"id": 1, "auth": auth}) + "\\n").encode())
    print(lines.readline().strip())
"""


def test_sidecar_pod_and_merge_pod_grade_the_images_like_the_committed_baseline(pod: Pod) -> None:
    runner = next(c for c in pod.spec["containers"] if c["name"] == "brainbench")
    endpoints = dict(item.split("=", 1) for item in _env(runner)["BRAINBENCH_SEAM_ENDPOINT"].split())

    # Isolation first: openclaw's token opens neither codex's nor claude-code's call server.
    for other in ("codex", "claude-code"):
        probe = pod.seam("openclaw").exec_run(["python", "-c", PROBE, endpoints[other].rsplit(":", 1)[1]])
        assert probe.exit_code == 0 and json.loads(probe.output)["error"] == "unauthorized", probe.output

    code, logs = pod.run({**runner, "env": [*runner["env"], {"name": "SHARDS", "value": "1"},
                                            {"name": "JOB_COMPLETION_INDEX", "value": "0"}]}, detach=False)
    assert code == 0, logs
    shard = json.loads((pod.root / "results" / "main" / "shard-1-of-1.json").read_text())
    assert {s["harness"]: (s["executor"], s["mode"]) for s in shard["_meta"]["run"]["seams"]} == {
        s: ("sidecar", "exec") for s in ("openclaw", "claude-code", "codex")}
    assert not shard["_meta"]["faults"], shard["_meta"]["faults"]

    merge = next(c for c in _pod("merge-job.yaml")["containers"] if c["name"] == "merge")
    code, logs = pod.run({**merge, "env": [*merge["env"], {"name": "SHARDS", "value": "1"}]}, detach=False,
                         network_mode="none")
    assert code == 0, logs  # the merge Job's gate passed against the committed baseline
    merged = RunResult.model_validate_json((pod.root / "results" / "main" / "result.json").read_text())
    main = parse_baseline(REPO / "baselines" / "main.json")
    current = canonical_baseline(merged, harnesses=main.config.harnesses, suites=main.config.suites)
    assert current.cells == main.cells and current.counts == main.counts


def test_a_runner_with_a_wrong_token_is_refused(pod: Pod) -> None:
    runner = next(c for c in pod.spec["containers"] if c["name"] == "brainbench")
    wrong = pod.root / "wrong-secrets"
    wrong.mkdir()
    for name in ("openclaw", "claude-code", "codex", "postgres-password"):
        (wrong / name).write_bytes((pod.secrets / name).read_bytes() if name != "codex" else b"guess\n")
        (wrong / name).chmod(0o444)
    mounts = [{**m, "name": "wrong-secrets"} if m["name"] == "secrets" else m for m in runner["volumeMounts"]]
    refused = {**runner, "volumeMounts": mounts, "command": ["/bin/sh", "-c"], "args": [
        'BRAINBENCH_DATABASE_URL="postgresql://brainbench:$(cat /run/brainbench/secrets/postgres-password)'
        '@127.0.0.1:5432/brainbench" exec brainbench run --quiet --fixtures /corpus/fixtures --gold /corpus/gold '
        "--harness codex --ledger /scratch/ledger.jsonl"]}
    code, logs = pod.run(refused, detach=False)
    assert code == 2, logs
    assert "codex: the peer at 127.0.0.1:" in logs and "cannot prove it holds the seam's token" in logs, logs
    assert "Traceback" not in logs
