"""``brainbench brain serve FIXTURE --image IMAGE``: an image's seed contract commands, driven by hand.

The image's seam is started as a run starts it (hardened container, docker executor), its
template initialised and a clone seeded with FIXTURE by the image's own ``seed``; then one
command per line of stdin, each run exactly as a run runs it:

* ``write-back``: the fixture's write-back document (the gold extractor's facts) on the image's
  ``write_back`` command's stdin; prints its exit or its fault;
* a JSON request (``{"op": "recall", ...}``): the image's ``operations`` command; prints its answer
  as parsed (or the fault, on stderr);
* ``hook`` and a JSON payload: one hook call; prints what the harness would get;
* ``quit`` (or end of input): everything is dropped.
"""

from __future__ import annotations

import json
import sys
import uuid
from collections.abc import Callable
from typing import Any

import anyio
from pydantic import ValidationError

from brainbench.brain.databases import BrainDatabases
from brainbench.brain.image_brains import ImageSeededBrains
from brainbench.brain.seed_document import seed_document
from brainbench.brain.server import PostgresServer
from brainbench.corpus.loader import LoadedFixture
from brainbench.executors.base import HookCall, SeamLaunch
from brainbench.harnesses.grading import grade
from brainbench.harnesses.registry import SEAMS
from brainbench.memory.image import ImageMemory, first_error, run_failure
from brainbench.memory.operations import parse_request
from brainbench.models.seed import brain_contract_of
from brainbench.orchestrator.image_memory import command_runner
from brainbench.orchestrator.image_seed import brain_server, run_step, seed_env
from brainbench.writeback.document import write_back_document
from brainbench.writeback.extractors import GoldExtractor

HOOK_TIMEOUT_S = 30.0


class ByHandError(RuntimeError):
    """Why the image cannot be driven (one line)."""


async def drive(server: PostgresServer, image: str, harness: str, item: LoadedFixture,
                out: Callable[[str], None], err: Callable[[str], None],
                read_line: Callable[[], str] = sys.stdin.readline) -> None:
    from brainbench.executors.docker.config import DockerConfig
    from brainbench.executors.docker.provider import DockerExecutor

    run_id = f"bb-byhand-{uuid.uuid4().hex[:8]}"
    executor = DockerExecutor(DockerConfig(database_url=server.database_url("postgres")), run_id=run_id, pool_size=1)
    dbs = BrainDatabases(server, run_id.replace("-", "_"), [])
    try:
        proc = await executor.start(SeamLaunch(seam=harness, command=(), mode="exec", image=image, run_id=run_id))
        contract = brain_contract_of(image, dict(proc.image_labels))
        if contract is None:
            raise ByHandError(f"image {image} declares no seed contract (label io.brainbench.brain)")
        if contract.server == "private":
            dbs = brain_server(dbs, harness, image, contract, proc)
        else:
            await anyio.to_thread.run_sync(dbs.prepare)
        brains = ImageSeededBrains(dbs, harness, image, contract.extensions, superuser=contract.server == "private")
        url = await anyio.to_thread.run_sync(brains.prepare_template)
        if contract.init:
            failure, _ = await run_step(proc, contract.init, b"", {"BRAINBENCH_DATABASE_URL": url},
                                        contract.init_timeout_s)
            if failure:
                raise ByHandError(f"init {failure}")
        await anyio.to_thread.run_sync(brains.seal_template)
        brain = await anyio.to_thread.run_sync(brains.clone)
        fixture = item.fixture
        env = seed_env(brain.url, fixture)
        failure, _ = await run_step(proc, contract.seed, seed_document(fixture).model_dump_json().encode(), env,
                                    contract.seed_timeout_s)
        if failure:
            raise ByHandError(f"seed {failure}")
        err(f"image {image} (seed contract v{contract.version}, seam {harness}): {fixture.fixture_id} seeded into "
            f"{brain.name}")
        err("one command per line: write-back | {\"op\": ...} | hook {json} | quit")
        run = command_runner(proc)
        ops = ImageMemory.of(run, contract, env) if contract.operations else None
        while True:
            line = (await anyio.to_thread.run_sync(read_line)).strip()
            if not line or line == "quit":
                return
            await _one(line, item, contract, proc, run, ops, env, harness, out, err)
    finally:
        with anyio.CancelScope(shield=True):
            await executor.close()
            await anyio.to_thread.run_sync(dbs.close)


async def _one(line: str, item: LoadedFixture, contract: Any, proc: Any, run: Any, ops: ImageMemory | None,
               env: dict[str, str], harness: str, out: Callable[[str], None], err: Callable[[str], None]) -> None:
    if line == "write-back":
        if not contract.write_back:
            err("the image declares no write_back command")
            return
        document = write_back_document(item, GoldExtractor(item))
        outcome = await anyio.to_thread.run_sync(run, contract.write_back, document.model_dump_json().encode(), env,
                                                 contract.write_back_timeout_s)
        fault = run_failure("write_back", outcome, contract.write_back_timeout_s)
        facts = sum(len(s.facts) for s in document.segments)
        out(fault.detail if fault else f"write_back: exit 0 ({facts} facts in {len(document.segments)} segments, "
            f"page {document.page_slug})")
        return
    if line.startswith("hook"):
        payload = line[4:].strip().encode()
        outcome = await proc.call(HookCall(payload, env, HOOK_TIMEOUT_S))
        try:
            event = str(json.loads(payload or b"{}").get("hook_event_name", "UserPromptSubmit"))
        except (ValueError, AttributeError):
            event = "UserPromptSubmit"  # the hook still gets exactly what was typed
        graded = grade(outcome, SEAMS[harness].dialect, event)
        out(json.dumps({"context": graded.context, "fault": graded.fault, "detail": graded.detail or None}))
        return
    if ops is None:
        err("the image declares no operations command")
        return
    try:
        request = parse_request(json.loads(line))
    except ValidationError as exc:
        err(f"not a memory request: {first_error(exc)}")
        return
    except ValueError as exc:
        err(f"not a memory request: {str(exc).splitlines()[0]}")
        return
    answer = await anyio.to_thread.run_sync(ops.perform, request)
    for fault in ops.faults:
        err(f"fault ({fault.fault_class}): {fault.detail}")
    ops.faults.clear()
    out(answer.model_dump_json())
