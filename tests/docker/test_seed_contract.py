"""Seed contract v1 end to end: an image that seeds its own one-table brain, graded through the contract.

The image is built here from a Debian base with psql and jq: ``init`` creates its
table (using pg_trgm, which the runner must have created first), ``seed`` copies the
seed document's pages into it, the hook answers from it.  Fixture ids make ``seed``
fail or hang on purpose, so one run shows all three outcomes.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import psycopg
import pytest
from brainbench.executors.docker.static_helper import TARGET as STATIC_SERVER
from brainbench.models.result import RunResult
from brainbench.report.trace_file import load_result
from image_build import build_image  # type: ignore[import-not-found]
from memo_image import CREATE_TABLE, HOOK, SEED_PAGES  # type: ignore[import-not-found]
from reference_corpus import copy_reference_corpus  # type: ignore[import-not-found]

SHELL_BASES = ("brainbench/example-base:bookworm",)
REFERENCE_IDS = ("kta-001-deal-recall", "ms-001-two-source-alias", "ms-002-nondefault-active",
                 "wb-001-pricing-concern", "cont-001-widget-pass-writer", "cont-001-widget-pass-reader")
FAILS, HANGS = "kta-901-seed-fails", "kta-902-seed-hangs"

INIT = """#!/bin/sh
set -eu
psql "$BRAINBENCH_DATABASE_URL" -X -q -v ON_ERROR_STOP=1 -c "SELECT similarity('a', 'a')" \\
  -c "@CREATE_TABLE@" >/dev/null
""".replace("@CREATE_TABLE@", CREATE_TABLE)
SEED = """#!/bin/sh
set -eu
doc=$(cat)
case "${BRAINBENCH_FIXTURE:-}" in
  *seed-fails*) echo "memo-seed: refusing $BRAINBENCH_FIXTURE" >&2; echo "on purpose" >&2; exit 3 ;;
  *seed-hangs*) sleep 60 ;;
esac
""" + SEED_PAGES
LABEL = {"version": 1, "extensions": ["pg_trgm"], "init": ["/opt/memo/init"], "seed": ["/opt/memo/seed"],
         "init_timeout_s": 30, "seed_timeout_s": 2}


def _bench(*args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    return subprocess.run([sys.executable, "-m", "brainbench.cli", *args], capture_output=True, text=True,
                          timeout=timeout, check=False, env={**env, "COLUMNS": "250"})


def _memo_image(client: Any, tag: str, label: dict[str, Any] | str, init: str = INIT) -> str:
    base = next((ref for ref in SHELL_BASES if _have(client, ref)), None)
    if base is None:
        pytest.skip("no local Debian base with psql and jq; run: scripts/build-images --offline")
    text = label if isinstance(label, str) else json.dumps(label)
    return build_image(client, tag, {
        "Dockerfile": f"FROM {base}\nCOPY init seed hook /opt/memo/\nLABEL io.brainbench.brain={json.dumps(text)}\n"
                      'LABEL io.brainbench.contract-version="1" io.brainbench.modes="exec"\n'
                      'USER 65534:65534\nENTRYPOINT ["/opt/memo/hook"]\n',
        "init": init, "seed": SEED, "hook": HOOK})


def _have(client: Any, ref: str) -> bool:
    try:
        client.images.get(ref)
    except Exception:
        return False
    return True


@pytest.fixture(scope="module")
def memo_image(docker_client: Any) -> str:
    return _memo_image(docker_client, "bbtest-seed-memo:1", LABEL)


@pytest.fixture(scope="module")
def corpus(reference: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    fx, gd = copy_reference_corpus(reference, tmp_path_factory.mktemp("seedcorpus"), REFERENCE_IDS)
    for new_id in (FAILS, HANGS):
        doc = json.loads((fx / "kta-001-deal-recall.fixture.json").read_text())
        doc["fixture_id"] = new_id
        (fx / f"{new_id}.fixture.json").write_text(json.dumps(doc))
        gold = json.loads((gd / "kta-001-deal-recall.gold.json").read_text())
        gold["fixture_id"] = new_id
        (gd / f"{new_id}.gold.json").write_text(json.dumps(gold))
    return fx, gd


def _run(corpus: tuple[Path, Path], tmp: Path, *extra: str) -> tuple[subprocess.CompletedProcess[str], RunResult]:
    out = tmp / "result.json"
    proc = _bench("run", "--fixtures", str(corpus[0]), "--gold", str(corpus[1]), "--out", str(out),
                  "--ledger", str(tmp / "ledger.jsonl"), "--quiet", "--format", "markdown", *extra)
    assert out.is_file(), proc.stderr[-3000:]
    return proc, RunResult.model_validate_json(out.read_text())


def _rows(result: RunResult, harness: str) -> list[dict[str, Any]]:
    return [{k: v for k, v in r.model_dump(mode="json").items() if k != "latency_ms"}
            for r in result.turn_rows if r.harness == harness]


def test_a_run_grades_the_image_through_its_own_brain(memo_image: str, corpus: tuple[Path, Path],
                                                      docker_client: Any, tmp_path: Path) -> None:
    (tmp_path / "plain").mkdir()
    (tmp_path / "seeded").mkdir()
    _, plain = _run(corpus, tmp_path / "plain")
    proc, result = _run(corpus, tmp_path / "seeded", "--image", f"claude-code={memo_image}",
                        "--html", str(tmp_path / "html"))

    # A failing and a hanging seed are seed failures of their fixture: exit 2, with the detail.
    assert proc.returncode == 2, proc.stderr[-3000:]
    failures = {f.fixture_id: f.error for f in result.seed_failures}
    assert set(failures) == {FAILS, HANGS}
    assert "seed (/opt/memo/seed) exited 3" in failures[FAILS]
    assert f"stderr tail: memo-seed: refusing {FAILS} | on purpose" in failures[FAILS]
    assert "\n" not in failures[FAILS]  # one line, in the result and the scoreboard
    assert f"image {memo_image}" in failures[FAILS] and "seam claude-code" in failures[FAILS]
    assert "timed out after 2 s and was killed" in failures[HANGS]
    assert "SEED FAILURES (2)" in proc.stdout + proc.stderr

    # Its rows: production, with the digest; graded from the brain its own seed wrote.
    seam = next(s for s in result.meta.run.seams if s.harness == "claude-code")  # type: ignore[union-attr]
    assert (seam.seam, seam.image, seam.brain_contract) == ("production", memo_image, 1)
    assert seam.image_digest == docker_client.images.get(memo_image).id
    ours = [r for r in result.turn_rows if r.harness == "claude-code"]
    assert ours and any(r.injected_slugs for r in ours)
    assert not {FAILS, HANGS} & {r.fixture_id for r in ours}  # not replayed on a brain it never seeded
    assert {c.seam for c in result.cells if c.harness == "claude-code"} == {"production"}
    assert result.meta.faults == []

    # Write-back and continuity: not applicable, said so, never scored.
    na = {(n.harness, n.suite): n for n in result.meta.not_applicable}
    assert set(na) == {("claude-code", "write-back"), ("claude-code", "continuity")}
    assert na[("claude-code", "write-back")].reason == "image-seeded brain: no write-back command in seed contract v1"
    assert na[("claude-code", "write-back")].fixtures == ["wb-001-pricing-concern", "cont-001-widget-pass-writer"]
    assert na[("claude-code", "continuity")].fixtures == ["cont-001-widget-pass-reader"]
    assert not [c for c in result.cells if c.harness == "claude-code" and c.suite in ("write-back", "continuity")]
    assert not [r for r in ours if r.suite == "continuity"]
    assert "| claude-code | production | write-back | n/a |" in proc.stdout
    assert "not applicable" in proc.stdout
    assert '"not_applicable":[{"harness":"claude-code","suite"' in (tmp_path / "html" / "index.html").read_text()

    # The other seams share our brain as before: their rows and cells do not move.
    for harness in ("openclaw", "codex"):
        assert _rows(result, harness) == _rows(plain, harness), harness
        assert [c for c in result.cells if c.harness == harness] == [c for c in plain.cells if c.harness == harness]
    assert not plain.meta.not_applicable
    assert "not_applicable" not in json.loads((tmp_path / "plain" / "result.json").read_text())["_meta"]


def test_doctor_passes_a_good_contract(memo_image: str) -> None:
    proc = _bench("doctor", "--image", memo_image)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    for check in ("seed contract label", "seed contract init (exec)", "seed contract seed (exec)", "happy path (exec)"):
        assert check in proc.stdout
    assert "FAIL" not in proc.stdout


@pytest.mark.parametrize(("label", "expect"), [
    ({**LABEL, "version": 3}, "field 'version': Input should be 1 or 2"),
    ({**LABEL, "write_back": ["/opt/memo/wb"]}, 'write_back needs "version": 2'),
    ('{"version": 1, "init": ["/opt/memo/init"]}', "field 'seed': Field required"),
])
def test_doctor_fails_a_bad_label_in_one_line(docker_client: Any, label: dict[str, Any] | str, expect: str) -> None:
    image = _memo_image(docker_client, "bbtest-seed-memo:bad", label)
    proc = _bench("doctor", "--image", image)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "seed contract label" in proc.stdout and "FAIL" in proc.stdout
    assert expect in " ".join(proc.stdout.split())  # the table may wrap the line


def test_doctor_fails_a_seed_that_does_not_seed(docker_client: Any) -> None:
    image = _memo_image(docker_client, "bbtest-seed-memo:noseed", {**LABEL, "seed": ["/bin/false"]})
    proc = _bench("doctor", "--image", image)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "seed contract seed (exec)" in proc.stdout and "exited 1" in proc.stdout
    assert "happy path" not in proc.stdout  # nothing to ask a brain that was never seeded


def test_a_bad_label_stops_the_run_in_one_line(docker_client: Any, corpus: tuple[Path, Path],
                                               tmp_path: Path) -> None:
    image = _memo_image(docker_client, "bbtest-seed-memo:bad2", {**LABEL, "seed": "/opt/memo/seed"})
    proc = _bench("run", "--fixtures", str(corpus[0]), "--gold", str(corpus[1]), "--image", f"codex={image}",
                  "--ledger", str(tmp_path / "l.jsonl"), "--quiet", "--fixture", "kta-001-deal-recall")
    assert proc.returncode == 2
    assert f"image {image}: label io.brainbench.brain: field 'seed'" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_a_failing_init_is_a_seed_failure_of_every_fixture_of_that_seam(docker_client: Any, corpus: tuple[Path, Path],
                                                                        tmp_path: Path) -> None:
    image = _memo_image(docker_client, "bbtest-seed-memo:noinit",
                        {**LABEL, "init": ["/bin/sh", "-c", "echo 'memo-init: no schema today' >&2; exit 4"]})
    proc, result = _run(corpus, tmp_path, "--image", f"codex={image}", "--fixture", "kta-001-deal-recall",
                        "--fixture", "ms-001-two-source-alias")
    assert proc.returncode == 2, proc.stderr[-3000:]
    failures = {f.fixture_id: f.error for f in result.seed_failures}
    assert set(failures) == {"kta-001-deal-recall", "ms-001-two-source-alias"}
    for error in failures.values():
        assert "in seam codex" in error and "exited 4" in error and "memo-init: no schema today" in error
    assert not [r for r in result.turn_rows if r.harness == "codex"]
    assert {r.harness for r in result.turn_rows} == {"openclaw", "claude-code"}  # the others are graded


# --- "server": "private": a Postgres of the seam's own, whose superuser init, seed and hook get ---

# What only a superuser may do (gbrain's migrations do the like): an event trigger, row-level
# security that the schema's owner bypasses.  On the shared server's owner role it fails.
SUPER_INIT = """#!/bin/sh
set -eu
psql "$BRAINBENCH_DATABASE_URL" -X -q -v ON_ERROR_STOP=1 -c "SELECT similarity('a', 'a'), gen_random_uuid()" \\
  -c "DO \\$\\$ BEGIN IF NOT (SELECT rolsuper AND rolbypassrls FROM pg_roles WHERE rolname = current_user)
      THEN RAISE 'memo-init: not superuser'; END IF; END \\$\\$" \\
  -c "CREATE FUNCTION memo_ddl() RETURNS event_trigger LANGUAGE plpgsql AS \\$\\$ BEGIN END \\$\\$" \\
  -c "CREATE EVENT TRIGGER memo_ddl ON ddl_command_end EXECUTE FUNCTION memo_ddl()" \\
  -c "CREATE TABLE memo (source text, slug text, title text, body text, PRIMARY KEY (source, slug))" \\
  -c "ALTER TABLE memo ENABLE ROW LEVEL SECURITY" >/dev/null
"""
PRIVATE_LABEL = {**LABEL, "server": "private", "extensions": ["pg_trgm", "pgcrypto", "vector"]}
PRIVATE_IDS = ("kta-001-deal-recall", "ms-001-two-source-alias", "ms-002-nondefault-active")


@pytest.fixture(scope="module")
def private_server_image(docker_client: Any, monkeypatch_module: pytest.MonkeyPatch) -> str:
    from pgvector_brain import ensure_pgvector_image  # type: ignore[import-not-found]

    image = ensure_pgvector_image(docker_client)
    monkeypatch_module.setenv("BRAINBENCH_PRIVATE_BRAIN_IMAGE", image)
    return image


@pytest.fixture(scope="module")
def monkeypatch_module() -> Any:
    with pytest.MonkeyPatch.context() as mp:
        yield mp


@pytest.fixture(scope="module")
def super_memo_image(docker_client: Any) -> str:
    return _memo_image(docker_client, "bbtest-seed-memo:private", PRIVATE_LABEL, SUPER_INIT)


def _left_over(client: Any, run_id: str) -> list[str]:
    label = {"label": f"brainbench.run_id={run_id}"}
    return ([c.name for c in client.containers.list(all=True, filters=label)]
            + [n.name for n in client.networks.list(filters=label)])


def test_a_private_server_seam_runs_a_superuser_init_and_is_graded(
        super_memo_image: str, memo_image: str, private_server_image: str, corpus: tuple[Path, Path],
        docker_client: Any, tmp_path: Path) -> None:
    picks = [x for fid in PRIVATE_IDS for x in ("--fixture", fid)]
    (tmp_path / "shared").mkdir()
    (tmp_path / "private").mkdir()
    _, shared = _run(corpus, tmp_path / "shared", "--image", f"claude-code={memo_image}", *picks)
    proc, result = _run(corpus, tmp_path / "private", "--image", f"claude-code={super_memo_image}", *picks,
                        "--no-quiet")

    assert proc.returncode == 0, proc.stderr[-3000:]
    # Progress names each set-up step of an image-seeded seam as it starts, then counts its seeds.
    for phase in (f"seam claude-code: starting a private brain server for image {super_memo_image}",
                  f"seam claude-code: building the brain template of image {super_memo_image}",
                  f"seam claude-code: running init of image {super_memo_image}"):
        assert phase in proc.stderr, proc.stderr
    assert re.search(r"seeded [0-9]+/[0-9]+ image brains, replayed", proc.stderr), proc.stderr
    assert result.seed_failures == [] and result.meta.faults == []
    seam = next(s for s in result.meta.run.seams if s.harness == "claude-code")  # type: ignore[union-attr]
    assert (seam.seam, seam.brain_contract) == ("production", 1)
    # The same memory system on its own server answers exactly as on the shared one.
    rows = _rows(result, "claude-code")
    assert rows and any(r["injected_slugs"] for r in rows)
    assert rows == _rows(shared, "claude-code")
    for harness in ("openclaw", "codex"):
        assert _rows(result, harness) == _rows(shared, harness), harness
    # The server and its network went with the run.
    assert _left_over(docker_client, result.meta.run.run_id) == []  # type: ignore[union-attr]


def test_a_superuser_init_fails_on_the_shared_server(super_memo_image: str, docker_client: Any,
                                                     corpus: tuple[Path, Path], tmp_path: Path) -> None:
    """The same init without "server": "private" runs as an owner role: the gap the private server closes."""
    image = _memo_image(docker_client, "bbtest-seed-memo:super-shared", {**LABEL, "extensions": ["pg_trgm"]},
                        SUPER_INIT.replace(", gen_random_uuid()", ""))
    proc, result = _run(corpus, tmp_path, "--image", f"claude-code={image}", "--fixture", "kta-001-deal-recall")
    assert proc.returncode == 2
    assert "memo-init: not superuser" in result.seed_failures[0].error


def _probe(process: Any, host: str, port: int = 5432) -> int | None:
    """pg_isready from inside the seam, as its hook would try (host: an address or a socket directory)."""
    from brainbench.executors.base import HookCall

    outcome = process.run_command(["pg_isready", "-h", host, "-p", str(port), "-t", "3"],
                                  HookCall(payload=b"", env={}, timeout_s=15))
    return outcome.exit_code


class _Listener:
    """A TCP listener on every interface of this machine (the engine's host) that counts who got through."""

    def __init__(self) -> None:
        import socket
        import threading

        self.sock = socket.socket()
        self.sock.bind(("0.0.0.0", 0))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        self.reached = 0
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.reached += 1
            conn.close()

    def close(self) -> None:
        self.sock.close()


def _host_addresses(client: Any, network: Any) -> list[str]:
    """Addresses of this machine a container could aim at: a bridge's gateway, and the primary address."""
    import socket

    gateways = [c["Gateway"] for c in network.attrs["IPAM"]["Config"] if c.get("Gateway")]
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        probe.connect(("192.0.2.1", 9))  # no packet is sent: this only picks the outgoing address
        primary = probe.getsockname()[0]
    return list(dict.fromkeys([*gateways, primary]))


async def _isolation(super_image: str, plain_image: str, shared_url: str, shared_pg: Any, run_id: str,
                     work: Path, client: Any) -> None:
    """``shared_pg``: the shared brain's container (TCP), or None for the embedded server's socket."""
    import anyio
    from brainbench.executors.base import RunContext, SeamLaunch
    from brainbench.executors.docker import DockerExecutor
    from brainbench.executors.docker.config import DockerConfig

    executor = DockerExecutor(DockerConfig(database_url=shared_url), run_id=run_id)
    await executor.prepare(RunContext(run_id=run_id, database_url=shared_url, work_root=work, pool_size=1))
    seams = {}
    listener = _Listener()
    # Control: a container on an ordinary bridge reaches this machine's listener (so a miss below is a seal).
    bridge = client.networks.create(f"{run_id}-control", driver="bridge")
    try:
        for harness, image in (("claude-code", super_image), ("codex", plain_image)):
            (work / harness).mkdir()
            seams[harness] = await executor.start(SeamLaunch(
                seam=harness, command=(), mode="exec", image=image, shared_paths=(str(work / harness),),
                run_id=run_id, env={"BRAINBENCH_DATABASE_URL": shared_url}))
        private, plain = seams["claude-code"], seams["codex"]
        assert plain.brain_server_url is None and private.brain_server_url is not None
        scratch = private.box.private.root  # type: ignore[attr-defined]
        if shared_pg is not None:
            shared_pg.reload()
            shared_host = shared_pg.attrs["NetworkSettings"]["Networks"][executor.network_name]["IPAddress"]
        else:
            assert executor.db_target is not None and executor.db_target.socket_dir is not None
            shared_host = executor.db_target.socket_dir
            plain_mounts = [m["Destination"] for m in plain.container.attrs["Mounts"]]  # type: ignore[attr-defined]
            assert shared_host in plain_mounts  # the probe below is not vacuous

        mine = ["brainbench.private_brain=1", f"brainbench.run_id={run_id}"]
        brains = client.containers.list(filters={"label": mine})
        assert len(brains) == 1
        brain = brains[0].attrs
        # No network at all, and of the host only the directory its socket goes to (the runner's way in).
        assert brain["HostConfig"]["NetworkMode"] == "none" and not brain["NetworkSettings"]["Networks"].get("bridge")
        assert [(m["Destination"], m["Type"]) for m in brain["Mounts"]] == [("/var/run/postgresql", "bind")]
        assert brain["HostConfig"]["CapDrop"] == ["ALL"] and not brain["HostConfig"]["Privileged"]
        assert not brain["HostConfig"]["PortBindings"]
        seam_box = private.container.attrs  # type: ignore[attr-defined]
        assert seam_box["HostConfig"]["NetworkMode"] == f"container:{brain['Id']}"  # its server's, nothing more
        # Its own work subtree and the runner's read-only static call server, nothing else.
        assert sorted(m["Destination"] for m in seam_box["Mounts"]) == sorted([str(work / "claude-code"),
                                                                               STATIC_SERVER])

        # The private seam reaches its server (on their shared loopback) and not the shared brain;
        # the plain seam the shared brain, and nothing of the private one.
        assert await anyio.to_thread.run_sync(_probe, private, "127.0.0.1") == 0
        assert await anyio.to_thread.run_sync(_probe, private, shared_host) != 0
        assert await anyio.to_thread.run_sync(_probe, plain, shared_host) == 0
        assert await anyio.to_thread.run_sync(_probe, plain, "127.0.0.1") != 0

        # Neither the seam nor its server's superuser (a program run by COPY) reaches this machine.
        addresses = _host_addresses(client, bridge)
        for address in addresses:
            await anyio.to_thread.run_sync(_probe, private, address, listener.port)
            with psycopg.connect(private.brain_server_url, autocommit=True) as conn:
                # The program reads its row first: one that exits before Postgres has written it makes
                # COPY fail with a broken pipe, which says nothing about the network.
                conn.execute(f"COPY (SELECT 1) TO PROGRAM 'cat >/dev/null; pg_isready -h {address} "
                             f"-p {listener.port} -t 3 >/dev/null 2>&1; exit 0'")
        assert listener.reached == 0, addresses
        # (pg_isready says "no response" of a listener that is not Postgres: what counts is that it got through.)
        client.containers.run(plain_image, entrypoint=["/bin/sh", "-c", f"pg_isready -h {addresses[0]} -p "
                                                       f"{listener.port} -t 3; exit 0"], network=bridge.name,
                              remove=True)
        assert listener.reached == 1  # the same probe from an ordinary bridge gets through
    finally:
        for process in seams.values():
            await process.stop()
        await executor.close()
        listener.close()
        bridge.remove()
    assert not scratch.exists()  # the socket's directory went with the server


def test_a_private_server_is_reachable_by_its_seam_alone(super_memo_image: str, memo_image: str,
                                                          private_server_image: str, docker_client: Any,
                                                          run_id: str, tmp_path: Path) -> None:
    import anyio
    from pgvector_brain import pgvector_brain  # type: ignore[import-not-found]

    with pgvector_brain(docker_client, private_server_image) as (shared_pg, shared_url):
        anyio.run(_isolation, super_memo_image, memo_image, shared_url, shared_pg, run_id, tmp_path, docker_client)
    assert _left_over(docker_client, run_id) == []


def test_doctor_seeds_a_private_server_image_there(super_memo_image: str, private_server_image: str) -> None:
    proc = _bench("doctor", "--image", super_memo_image)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    text = " ".join(proc.stdout.split())
    assert "seed contract init (exec) │ PASS" in text and "happy path (exec) │ PASS" in text
    assert "private" in text and "FAIL" not in proc.stdout


def test_a_missing_private_server_image_stops_the_run_in_one_line(super_memo_image: str, corpus: tuple[Path, Path],
                                                                  tmp_path: Path) -> None:
    proc = _bench("run", "--fixtures", str(corpus[0]), "--gold", str(corpus[1]), "--image",
                  f"claude-code={super_memo_image}", "--private-brain-image", "bbtest-brainsrv/no-such-postgres:1",
                  "--ledger", str(tmp_path / "l.jsonl"), "--quiet", "--fixture", "kta-001-deal-recall")
    assert proc.returncode == 2
    assert ("seam claude-code: its image declares a private brain server, whose image "
            "bbtest-brainsrv/no-such-postgres:1 is not on the engine") in proc.stderr
    assert "Traceback" not in proc.stderr


def test_a_private_server_seam_never_sees_the_embedded_brains_socket(super_memo_image: str, memo_image: str,
                                                                      private_server_image: str, docker_client: Any,
                                                                      run_id: str, tmp_path: Path) -> None:
    import anyio
    from brainbench.brain.server import EmbeddedPostgres

    pg = EmbeddedPostgres()
    try:
        anyio.run(_isolation, super_memo_image, memo_image, pg.database_url("postgres"), None, run_id, tmp_path,
                  docker_client)
    finally:
        pg.close()
    assert _left_over(docker_client, run_id) == []


def test_a_run_records_each_phase_of_an_image_seeded_seam(memo_image: str, corpus: tuple[Path, Path],
                                                          tmp_path: Path) -> None:
    """``_meta.phases``, the progress line, ``explain --phases`` and the report; and the warm-up call
    before each seeded brain's first graded turn changes no cell and no turn row."""
    out = tmp_path / "warm" / "result.json"
    proc = _bench("run", "--fixtures", str(corpus[0]), "--gold", str(corpus[1]), "--out", str(out),
                  "--ledger", str(tmp_path / "ledger.jsonl"), "--image", f"claude-code={memo_image}",
                  "--jobs", "1", "--html", str(tmp_path / "html"))
    assert out.is_file(), proc.stderr[-3000:]
    result = load_result(out)  # with its trace
    phases = result.meta.phases
    assert phases is not None and phases.jobs == 1 and phases.wall_s > 0
    seams = {s.harness: s for s in phases.seams}
    assert set(seams) == {"openclaw", "claude-code", "codex"}
    memo = seams["claude-code"]
    assert (memo.image, memo.image_seeded) == (memo_image, True)
    assert memo.template_init is not None and memo.template_init.count == 1 and memo.template_init.total_s > 0
    assert memo.clone is not None and memo.seed is not None and memo.brain_start is not None
    seeded_fixtures = {r.fixture_id for r in result.turn_rows if r.harness == "claude-code"}
    # A clone and a seed for every fixture it was asked to seed, the two broken ones included; a
    # warm-up call only on a brain that seeded; every clone dropped, and the seam stopped.
    assert memo.clone.count == memo.seed.count == len(seeded_fixtures) + 2
    assert memo.brain_start.count == len(seeded_fixtures)
    assert memo.teardown is not None and memo.teardown.count == memo.clone.count + 1
    # The hanging seed was killed at its 2 s timeout: the seed phase holds it.
    assert memo.seed.total_s >= 2
    traces = [t for t in result.trace if t.harness == "claude-code"]
    calls = memo.hook_calls
    assert calls.count >= len(traces) > 0  # SessionStart calls are hook calls too; the warm-up is not
    assert calls.p50_ms is not None and calls.p95_ms is not None and calls.p50_ms <= calls.p95_ms
    slow_turns = sum(1 for t in traces if t.latency_ms > calls.deadline_ms)
    assert slow_turns <= calls.over_deadline <= calls.count - len(traces) + slow_turns
    for harness in ("openclaw", "codex"):  # our own seams: hook calls only
        ours = seams[harness]
        assert not ours.image_seeded and ours.template_init is None and ours.seed is None
        assert ours.hook_calls.count >= len([t for t in result.trace if t.harness == harness]) > 0
    # The progress output names each phase; explain and the HTML report show them.
    assert re.search(r"seam claude-code: template\+init [\d.]+ s/1, clone [\d.]+ s/\d+, seed [\d.]+ s/\d+, "
                     r"brain start [\d.]+ s/\d+, hook calls \d+ \(p50 \d+ ms, p95 \d+ ms, total [\d.]+ s, "
                     r"\d+ over 800 ms\)", proc.stderr), proc.stderr[-3000:]
    explained = _bench("explain", str(out), "--phases")
    assert explained.returncode == 0, explained.stderr
    assert "phases · claude-code" in explained.stdout and "brain start" in explained.stdout
    assert "share of phase time" in explained.stdout
    html = (tmp_path / "html" / "index.html").read_text()
    assert '<details id="phases">' in html and "brain start" in html

    # Without the warm-up call (BRAINBENCH_IMAGE_WARM_UP=0, for measuring only) the cells and turn
    # rows are the same: the call warms the brain and is graded nowhere.
    cold_out = tmp_path / "cold" / "result.json"
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    cold = subprocess.run([sys.executable, "-m", "brainbench.cli", "run", "--fixtures", str(corpus[0]),
                           "--gold", str(corpus[1]), "--out", str(cold_out), "--ledger",
                           str(tmp_path / "ledger.jsonl"), "--image", f"claude-code={memo_image}", "--jobs", "1",
                           "--quiet"], capture_output=True, text=True, timeout=300, check=False,
                          env={**env, "BRAINBENCH_IMAGE_WARM_UP": "0"})
    assert cold_out.is_file(), cold.stderr[-3000:]
    unwarmed = RunResult.model_validate_json(cold_out.read_text())
    assert unwarmed.meta.phases is not None
    assert next(s for s in unwarmed.meta.phases.seams if s.harness == "claude-code").brain_start.count == 0  # type: ignore[union-attr]
    assert result.cells == unwarmed.cells
    for harness in ("openclaw", "claude-code", "codex"):
        assert _rows(result, harness) == _rows(unwarmed, harness), harness
    assert result.seed_failures == unwarmed.seed_failures
