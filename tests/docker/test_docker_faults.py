"""Fault injection through the Docker executor: docs/FAULTS.md's "Failure semantics" table, in containers.

The local half lives in ``tests/faults`` (see docs/FAULTS.md); this module runs the same misbehaving
program, ``tests/faults/hooks/misbehave.py`` (unmodified), inside a hardened seam container.

Image: ``brainbench-test/faults:latest``, built FROM the local ``brainbench/base:bookworm`` (no
registry) from ``tests/docker/fault_image/``.  Its entrypoint, ``dispatch.py``, picks the behaviour
*per prompt* from ``FAULT_PLAN`` (seams.toml ``env``, forwarded as ``docker exec -e``), so one CLI run
covers every fault class: the suite stays at four CLI runs, three at a time.

CLI runs (``python -m brainbench.cli run --executor docker --harness openclaw,codex``, the session's
embedded Postgres, the fault image behind ``codex`` via ``--seams``, the real
``brainbench/openclaw:latest`` behind ``openclaw``):

* ``baseline``: both real images; exit 0, no fault.
* ``mixed`` (exec mode, 4 s per-seam timeout): one behaviour per prompt, covering
  adapter_timeout (hang), adapter_crash, contract_violation (partial JSON, unknown keys, JSON + text),
  blocked (exit 2), oversize and infra_error (exit 75).
* ``sleep_under``: a 3.2 s sleep against the 4 s deadline; graded cleanly, exit 0.
* ``stream_hang``: ``stream_misbehave.py hang_on_turn`` in stream mode; the worker is killed
  inside the container and a fresh one answers the next turn.

While the runs go, a watcher polls ``docker top`` of every fault container: a hung hook must be
gone from its container within the timeout (plus slack) while the container still runs.

``test_postgres_restart_*`` is the Docker twin of ``tests/faults/test_fault_database.py``: the
real ``brainbench/codex:latest`` image drives a conversation against a private embedded Postgres
whose socket directory is bind-mounted into the container.  The test crash-stops the server
between two turns and starts it again on the same data and socket directory.  That works across a
restart because the bind mount is the *directory*: the new postmaster creates a new socket file
inside it, and the container sees it.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import subprocess
import sys
import tarfile
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import pytest
from reference_corpus import copy_reference_corpus, private_seeded_brain  # type: ignore[import-not-found]

REPO = Path(__file__).resolve().parents[2]
FAULT_HOOKS = REPO / "tests" / "faults" / "hooks"
CONTEXT = Path(__file__).parent / "fault_image"
BASE_IMAGE = "brainbench/base:bookworm"
FAULT_IMAGE = "brainbench-test/faults:latest"
SEAM_IMAGES = ("brainbench/openclaw:latest", "brainbench/codex:latest")
FIXTURE_IDS = ("kta-001-deal-recall", "kta-002-quiet-smalltalk", "ms-002-nondefault-active")
FAULTY, OTHER = "codex", "openclaw"
CANNED_SLUG = "fault/canned"
JOBS = 2
# The faulty seam's per-seam timeout; the real seams keep a generous --timeout.
FAULT_TIMEOUT_S = 4.0
REAL_TIMEOUT = "30"
# docker exec start + python3 start-up must fit in the 0.8 s left over (the local suite leaves 0.8 s too).
SLEEP_UNDER_S = 3.2
# The mixed run's slow clean turn: it runs next to two other CLI runs, so it keeps a wider margin.
MIXED_SLEEP_S = 2.5
# How long after a hang's timeout its process may still show up in `docker top` (polling, daemon).
KILL_SLACK_S = 1.5

Turn = tuple[str, int]


@dataclass(frozen=True)
class Fault:
    behaviour: str
    fault_class: str
    detail: str


# One behaviour per prompt; prompts not listed (and every SessionStart) get a clean answer.
MIXED: dict[Turn, Fault] = {
    ("kta-001-deal-recall", 1): Fault("hang", "adapter_timeout", "no answer within"),
    # A clean answer after a 2.5 s sleep: keeps the container alive past the hang's deadline, so the
    # watcher can tell whether the hung process was killed (and checks a slow answer amid faults).
    ("kta-001-deal-recall", 3): Fault("sleep_under", "", ""),
    ("kta-001-deal-recall", 4): Fault("partial_json", "contract_violation", "invalid JSON"),
    ("kta-002-quiet-smalltalk", 1): Fault("unknown_keys", "contract_violation",
                                          "unknown output keys: brainbenchFaultExtra"),
    ("kta-002-quiet-smalltalk", 3): Fault("exit2_stderr", "blocked", "blocked this prompt"),
    ("kta-002-quiet-smalltalk", 4): Fault("oversize", "oversize", "the cap is 10000"),
    ("ms-002-nondefault-active", 1): Fault("db_lost", "infra_error", "brain unavailable"),
    ("ms-002-nondefault-active", 2): Fault("crash_on_start", "adapter_crash", "crash on start"),
    ("ms-002-nondefault-active", 3): Fault("json_garbage", "contract_violation", "invalid JSON"),
}
SLEEPS: dict[Turn, Fault] = {(fid, 1): Fault("sleep_under", "", "") for fid in FIXTURE_IDS}


@dataclass
class Run:
    name: str
    proc: subprocess.CompletedProcess[str]
    doc: dict[str, Any]
    seconds: float


@dataclass
class Seen:
    first: float
    last: float
    container: str


@dataclass
class TopWatcher:
    """Polls ``docker top`` of every running container of the fault image."""

    client: Any
    interval_s: float = 0.2
    hung: dict[tuple[str, int], Seen] = field(default_factory=dict)  # (container, pid) of a hang
    # container → times it was observed running; worker pids seen at once, per container
    snapshots: dict[str, list[float]] = field(default_factory=dict)
    max_stream_workers: int = 0
    stream_workers: set[tuple[str, int]] = field(default_factory=set)
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None

    def __enter__(self) -> TopWatcher:
        self._thread = threading.Thread(target=self._loop, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        assert self._thread is not None
        self._thread.join(timeout=30)

    def _loop(self) -> None:
        while not self._stop.is_set():
            try:
                containers = self.client.containers.list(
                    ignore_removed=True, filters={"label": [f"brainbench.seam={FAULTY}"]})
            except Exception:
                containers = []
            for container in containers:
                if container.attrs.get("Config", {}).get("Image") != FAULT_IMAGE:
                    continue
                try:
                    top = container.top(ps_args="-eo pid,args")
                except Exception:
                    continue  # removed between list and top
                now = time.monotonic()
                self.snapshots.setdefault(container.name, []).append(now)
                workers = 0
                for pid, args in top.get("Processes") or []:
                    if "misbehave.py hang" in args and "stream_misbehave" not in args:
                        seen = self.hung.setdefault((container.name, int(pid)), Seen(now, now, container.name))
                        seen.last = now
                    if "stream_misbehave.py" in args and "/bin/sh" not in args:
                        workers += 1
                        self.stream_workers.add((container.name, int(pid)))
                self.max_stream_workers = max(self.max_stream_workers, workers)
            self._stop.wait(self.interval_s)


# -- fixtures -----------------------------------------------------------------------------------


def _prompt_key(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]


@pytest.fixture(scope="module")
def fault_image(docker_client: Any) -> str:
    import docker.errors

    missing = []
    for ref in (BASE_IMAGE, *SEAM_IMAGES):
        try:
            docker_client.images.get(ref)
        except docker.errors.ImageNotFound:
            missing.append(ref)
    if missing:
        pytest.skip(f"images not built ({', '.join(missing)}): run scripts/build-images --offline")
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for path in (CONTEXT / "Dockerfile", CONTEXT / "dispatch.py", FAULT_HOOKS / "misbehave.py",
                     FAULT_HOOKS / "stream_misbehave.py"):
            tar.add(str(path), arcname=path.name)
    buf.seek(0)
    docker_client.images.build(fileobj=buf, custom_context=True, tag=FAULT_IMAGE, rm=True, pull=False,
                               buildargs={"BASE_IMAGE": BASE_IMAGE})
    return FAULT_IMAGE


@pytest.fixture(scope="module")
def corpus(reference: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    return copy_reference_corpus(reference, tmp_path_factory.mktemp("docker-fault-corpus"), FIXTURE_IDS)


@pytest.fixture(scope="module")
def prompts(corpus: tuple[Path, Path]) -> dict[Turn, str]:
    out = {}
    for fid in FIXTURE_IDS:
        doc = json.loads((corpus[0] / f"{fid}.fixture.json").read_text())
        out |= {(fid, t["turn_id"]): t["text"] for t in doc["turns"] if t["role"] == "user"}
    assert len({_prompt_key(p) for p in out.values()}) == len(out), "the plan needs distinct prompts"
    return out


def _plan(plan: dict[Turn, Fault], prompts: dict[Turn, str]) -> str:
    return json.dumps({_prompt_key(prompts[turn]): fault.behaviour for turn, fault in plan.items()})


def _toml(seam: str, body: dict[str, Any], env: dict[str, str]) -> str:
    lines = [f"[seams.{seam}]", *(f"{k} = {json.dumps(v)}" for k, v in body.items()), f"[seams.{seam}.env]",
             *(f"{k} = {json.dumps(v)}" for k, v in env.items())]
    return "\n".join(lines) + "\n"


def _bench(name: str, root: Path, corpus: tuple[Path, Path], db_url: str, seams: str | None) -> Run:
    work = root / name
    work.mkdir()
    out = work / "result.json"
    args = ["--fixtures", str(corpus[0]), "--gold", str(corpus[1]), "--out", str(out), "--suite", "know-to-ask",
            "--harness", f"{OTHER},{FAULTY}", "--executor", "docker", "--timeout", REAL_TIMEOUT,
            "--jobs", str(JOBS), "--database-url", db_url, "--quiet"]
    if seams is not None:
        (work / "seams.toml").write_text(seams)
        args += ["--seams", str(work / "seams.toml")]
    env = {k: v for k, v in os.environ.items() if k != "CI" and not k.startswith("BRAINBENCH_SEAM_COMMAND_")}
    start = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "brainbench.cli", "run", *args], capture_output=True, text=True,
                          timeout=600, check=False, env=env, cwd=work)
    doc = json.loads(out.read_text()) if out.exists() else {}
    return Run(name, proc, doc, time.monotonic() - start)


@pytest.fixture(scope="module")
def watched_runs(fault_image: str, corpus: tuple[Path, Path], prompts: dict[Turn, str], pg_server: Any,
                 docker_client: Any, tmp_path_factory: pytest.TempPathFactory
                 ) -> Iterator[tuple[dict[str, Run], TopWatcher]]:
    root = tmp_path_factory.mktemp("docker-fault-runs")
    url = pg_server.admin_url
    exec_seam = {"image": fault_image, "mode": "exec", "timeout_s": FAULT_TIMEOUT_S}
    seams = {
        "baseline": None,
        "mixed": _toml(FAULTY, exec_seam, {"FAULT_PLAN": _plan(MIXED, prompts), "FAULT_AFTER": "0",
                                           "FAULT_SLEEP_S": str(MIXED_SLEEP_S)}),
        "sleep_under": _toml(FAULTY, exec_seam, {"FAULT_PLAN": _plan(SLEEPS, prompts),
                                                 "FAULT_SLEEP_S": str(SLEEP_UNDER_S)}),
        "stream_hang": _toml(FAULTY, {"image": fault_image, "mode": "stream", "timeout_s": FAULT_TIMEOUT_S,
                                      "command": ["python3", "/hooks/stream_misbehave.py", "hang_on_turn"]},
                             {"FAULT_TURN": "2"}),
    }
    with TopWatcher(docker_client) as watcher, ThreadPoolExecutor(max_workers=3) as pool:
        # sleep_under runs alone at the end: its 0.8 s margin should not compete with three other runs.
        futures = {name: pool.submit(_bench, name, root, corpus, url, body)
                   for name, body in seams.items() if name != "sleep_under"}
        runs = {name: f.result() for name, f in futures.items()}
        runs["sleep_under"] = _bench("sleep_under", root, corpus, url, seams["sleep_under"])
    yield runs, watcher


@pytest.fixture(scope="module")
def runs(watched_runs: tuple[dict[str, Run], TopWatcher]) -> dict[str, Run]:
    return watched_runs[0]


def _cells(doc: dict[str, Any], harness: str) -> list[dict[str, Any]]:
    return [c for c in doc["cells"] if c["harness"] == harness]


def _rows(doc: dict[str, Any], harness: str) -> dict[Turn, dict[str, Any]]:
    return {(r["fixture_id"], r["turn_id"]): {k: v for k, v in r.items() if k != "latency_ms"}
            for r in doc["turn_rows"] if r["harness"] == harness}


def _check_run(run: Run, expected: dict[Turn, tuple[str, str]], baseline: Run, prompts: dict[Turn, str],
               clean_turn_injects: bool = True) -> None:
    proc, doc = run.proc, run.doc
    assert "Traceback" not in proc.stderr and "internal error" not in proc.stderr, proc.stderr[-3000:]
    assert doc, f"{run.name}: no result file (exit {proc.returncode}): {proc.stderr[-3000:]}"
    assert doc["_meta"]["run"]["complete"] is True
    seams = {s["harness"]: s for s in doc["_meta"]["run"]["seams"]}
    assert {s["executor"] for s in seams.values()} == {"docker"}

    faults = doc["_meta"]["faults"]
    got = {(f["fixture_id"], f["turn_id"]): f["fault_class"] for f in faults}
    assert got == {turn: cls for turn, (cls, _) in expected.items()}, faults
    assert len(faults) == len(expected), "one fault per faulted turn, none duplicated"
    assert {f["harness"] for f in faults} <= {FAULTY}, "a fault leaked onto the clean seam"
    for f in faults:
        assert expected[(f["fixture_id"], f["turn_id"])][1] in f["detail"], f
    if expected:
        assert proc.returncode == 2, proc.stderr[-3000:]
        counts: dict[str, int] = {}
        for cls, _ in expected.values():
            counts[cls] = counts.get(cls, 0) + 1
        assert doc["_meta"]["run"]["fault_counts"] == counts
    else:
        assert proc.returncode == 0, (proc.stdout[-3000:], proc.stderr[-3000:])

    # The clean seam is untouched: its cells and turn rows equal the clean docker run's.
    assert baseline.doc, "the clean baseline run failed"
    assert _cells(doc, OTHER) == _cells(baseline.doc, OTHER)
    assert _rows(doc, OTHER) == _rows(baseline.doc, OTHER)

    # The faulty seam: a faulted turn delivers nothing (codex is strict), a clean one the canned page.
    rows = _rows(doc, FAULTY)
    assert set(rows) == set(prompts)
    for turn, row in rows.items():
        injects = clean_turn_injects and turn not in expected
        assert (CANNED_SLUG in row["injected_slugs"]) is injects, (turn, row)
        if not injects:
            assert row["injected_tokens"] == 0, (turn, row)


# -- CLI runs -----------------------------------------------------------------------------------


def test_clean_docker_baseline(runs: dict[str, Run]) -> None:
    base = runs["baseline"]
    assert base.proc.returncode == 0, base.proc.stderr[-3000:]
    assert base.doc["_meta"]["faults"] == []
    # Our own adapter images, named (with their digests) as what was graded; none swapped in.
    seams = base.doc["_meta"]["run"]["seams"]
    assert all(s["image"] == f"brainbench/{s['harness']}:latest" and s["image_digest"] for s in seams), seams


def test_every_fault_class_in_one_docker_run(runs: dict[str, Run], prompts: dict[Turn, str]) -> None:
    run = runs["mixed"]
    _check_run(run, {turn: (f.fault_class, f.detail) for turn, f in MIXED.items() if f.fault_class},
               runs["baseline"], prompts)
    assert {f.fault_class for f in MIXED.values()} - {""} == {"adapter_timeout", "adapter_crash", "contract_violation",
                                                      "blocked", "oversize", "infra_error"}
    seam = next(s for s in run.doc["_meta"]["run"]["seams"] if s["harness"] == FAULTY)
    assert seam["image"] == FAULT_IMAGE and seam["seam"] == "production" and seam["image_digest"]


def test_sleep_just_under_the_timeout_is_graded_cleanly(runs: dict[str, Run], prompts: dict[Turn, str]) -> None:
    run = runs["sleep_under"]
    _check_run(run, {}, runs["baseline"], prompts)
    rows = _rows(run.doc, FAULTY)
    # The sleeping turns really slept (latency is measured on the host, around the docker exec).
    slow = [r["latency_ms"] for r in run.doc["turn_rows"]
            if r["harness"] == FAULTY and (r["fixture_id"], r["turn_id"]) in SLEEPS]
    assert len(slow) == len(SLEEPS) and min(slow) >= SLEEP_UNDER_S * 1000, slow
    assert all(CANNED_SLUG in rows[turn]["injected_slugs"] for turn in SLEEPS)


def test_stream_worker_hang_in_a_container(runs: dict[str, Run], prompts: dict[Turn, str],
                                           watched_runs: tuple[dict[str, Run], TopWatcher]) -> None:
    second = {(fid, sorted(t for f, t in prompts if f == fid)[1]) for fid in FIXTURE_IDS}
    _check_run(runs["stream_hang"], {turn: ("adapter_timeout", "no answer within") for turn in second},
               runs["baseline"], prompts)
    watcher = watched_runs[1]
    # A killed worker must really be gone: never more live workers than pool slots in one container.
    assert watcher.stream_workers, "the watcher never saw a stream worker"
    assert watcher.max_stream_workers <= JOBS, watcher.max_stream_workers


def test_hung_hooks_are_killed_inside_the_container(watched_runs: tuple[dict[str, Run], TopWatcher]) -> None:
    watcher = watched_runs[1]
    assert watcher.hung, "the watcher never saw the hanging hook (docker top)"
    for (container, pid), seen in watcher.hung.items():
        deadline = seen.first + FAULT_TIMEOUT_S + KILL_SLACK_S
        later = [t for t in watcher.snapshots[container] if t > deadline]
        assert later, f"{container} was not observed past the hang's deadline; cannot tell if pid {pid} died"
        assert seen.last <= deadline, f"pid {pid} in {container} outlived its timeout by {seen.last - deadline:.1f}s"


# -- executor level: kill inside the container, checked with docker top and exec ----------------


def _hook_call(prompt: str, timeout_s: float, env: dict[str, str]) -> Any:
    from brainbench.executors.base import HookCall

    payload = json.dumps({"hook_event_name": "UserPromptSubmit", "session_id": "s1", "prompt": prompt,
                          "cwd": "/tmp"}).encode()
    return HookCall(payload, env, timeout_s)


def test_exec_timeout_kills_the_hook_in_the_container(fault_image: str, run_id: str) -> None:
    from brainbench.executors.base import SeamLaunch
    from brainbench.executors.docker import DockerExecutor

    plan = json.dumps({_prompt_key("hang"): "hang", _prompt_key("child"): "leak_child"})

    async def main() -> None:
        executor = DockerExecutor(run_id=run_id)
        try:
            proc: Any = await executor.start(SeamLaunch(seam="codex", command=(), mode="exec", image=fault_image,
                                                        env={"FAULT_PLAN": plan}, run_id=run_id))
            outcome = await proc.call(_hook_call("hang", 1.5, {}))
            # The hook printed a complete answer before hanging: the timeout discards it.
            assert outcome.timed_out and outcome.stdout == b"" and outcome.exit_code is None, outcome
            container = proc.container
            hung = container.exec_run(["/bin/sh", "-c", "cat /tmp/hang-*.pid"]).output.decode().split()
            assert len(hung) == 1, hung
            top = container.top(ps_args="-eo pid,args")["Processes"]
            assert not [p for p in top if "misbehave" in p[1] or "dispatch" in p[1]], top
            probe = f"kill -0 {hung[0]} 2>/dev/null && echo alive || echo gone"
            assert container.exec_run(["/bin/sh", "-c", probe]).output.decode().strip() == "gone"
            container.reload()
            assert container.status == "running"

            # The container serves the next call after the kill.
            again = await proc.call(_hook_call("anything else", 10, {}))
            assert again.exit_code == 0 and CANNED_SLUG.encode() in again.stdout, again
        finally:
            await executor.close()

    anyio.run(main)


def test_exec_leaked_child_dies_with_the_hook(fault_image: str, run_id: str) -> None:
    """Locally, a child left in the hook's process group is killed once the hook exits (leak_child in
    tests/faults).  In a container it must not outlive the call either: each leak would hold a pid
    (pids limit 256) and stdout, which docker waits ~2 s on before it gives up."""
    from brainbench.executors.base import SeamLaunch
    from brainbench.executors.docker import DockerExecutor

    async def main() -> None:
        executor = DockerExecutor(run_id=run_id)
        try:
            proc: Any = await executor.start(SeamLaunch(
                seam="codex", command=(), mode="exec", image=fault_image, run_id=run_id,
                env={"FAULT_PLAN": json.dumps({_prompt_key("child"): "leak_child"})}))
            outcome = await proc.call(_hook_call("child", 10, {}))
            assert outcome.exit_code == 0 and CANNED_SLUG.encode() in outcome.stdout, outcome
            top = proc.container.top(ps_args="-eo pid,args")["Processes"]
            assert not [p for p in top if "time.sleep(600)" in p[1]], f"leaked child still running: {top}"
        finally:
            await executor.close()

    anyio.run(main)


# -- the brain's Postgres restarts under a running codex container ---------------------------------

DB_FIXTURE = "kta-001-deal-recall"


@pytest.fixture(scope="module")
def seeded(reference: Path, docker_client: Any) -> Iterator[tuple[Any, str, Any]]:
    import docker.errors

    try:
        docker_client.images.get("brainbench/codex:latest")
    except docker.errors.ImageNotFound:
        pytest.skip("brainbench/codex:latest not built: run scripts/build-images --offline")
    with private_seeded_brain(reference, DB_FIXTURE, "dockerdbfault") as brain:  # the test stops and starts it
        yield brain


@pytest.mark.parametrize("mode", ["stream", "exec"])
def test_postgres_restart_under_a_codex_container(seeded: tuple[Any, str, Any], mode: str, run_id: str,
                                                  tmp_path: Path) -> None:
    from brainbench.executors.base import SeamLaunch
    from brainbench.executors.docker import DockerConfig, DockerExecutor
    from brainbench.harnesses.registry import SEAMS
    from brainbench.models.corpus import PublicTurn
    from outage import CountingSeam, outage_and_recovery  # type: ignore[import-not-found]

    pg, url, fixture = seeded
    turns = {t.turn_id: t for t in (PublicTurn.of(t) for t in fixture.turns)}
    env = {"BRAINBENCH_DATABASE_URL": url, "BRAINBENCH_SOURCE": fixture.source}

    seen: dict[str, Any] = {}

    async def scenario() -> None:
        # The brain is part of the run's context, given before any seam starts.
        executor = DockerExecutor(DockerConfig(database_url=url), run_id=run_id, pool_size=1)
        launch = SeamLaunch(seam="codex", command=SEAMS["codex"].command(mode == "stream"),
                            mode=mode,  # type: ignore[arg-type]
                            image="brainbench/codex:latest", shared_paths=(str(tmp_path),), run_id=run_id)
        try:
            inner: Any = await executor.start(launch)
            await outage_and_recovery(CountingSeam(inner), pg, turns, env, tmp_path, f"brainbench-dockerdb-{mode}",
                                      on_first_answer=lambda: seen.update(container=inner.container.id,
                                                                          workers=dict(inner._sessions)))
            # The same container answered: the socket's directory is bind-mounted, so the
            # restarted server's new socket file is visible without a recreate.
            assert inner.container.id == seen["container"]
            if mode == "stream":
                assert seen["workers"] and inner._sessions == seen["workers"], "the warm stream worker was replaced"
        finally:
            await executor.close()

    anyio.run(scenario)
