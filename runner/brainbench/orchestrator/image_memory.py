"""Seed contract v2, the runner's side: an image's ``write_back`` and ``operations`` commands.

Both run as ``init`` and ``seed`` do (``image_seed.run_step``): as the hook runs, in the seam's
own hardened container, with the URL of the fixture's clone (its owner role),
the contract's timeout and the executors' output cap.  Whatever a command does wrong is a
fault of that seam for that fixture (``models.result.Fault``, turn 0) and its cells fail
honestly; the runner and the other seams go on untouched.

* write-back: the :class:`~brainbench.models.write_back_doc.WriteBackDocument` on stdin, then
  the facts read back with ``recall`` (``page_slug`` set) and scored by our rules;
* the memory-trust suites: :class:`~brainbench.memory.image.ImageMemory` drives the fixture's
  steps through ``operations``; the runner's own scans read the clone (it created it).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from functools import partial
from typing import Any

import anyio

from brainbench.corpus.loader import LoadedFixture
from brainbench.executors.base import HookCall, SeamProcess
from brainbench.memory.image import CommandFault, ImageMemory, RunCommand, run_failure
from brainbench.models import memory as m
from brainbench.models.corpus import Fixture
from brainbench.models.hook_io import HookOutcome
from brainbench.models.result import Fault
from brainbench.models.writeback import WriteBackScore
from brainbench.orchestrator.image_seed import SeededSeam, seed_env
from brainbench.orchestrator.stages import Stages

# The most facts one write-back read asks for (the interface's recall cap).
RECALL_LIMIT = 500


def command_runner(process: SeamProcess, record: Callable[[float], None] | None = None) -> RunCommand:
    """The seam's supervised exec, as the memory layer's :data:`RunCommand` (blocking); ``record``
    hears each command's wall seconds (the run's phase clock)."""
    def run(argv: Sequence[str], stdin: bytes, env: Mapping[str, str], timeout_s: float) -> HookOutcome:
        began = time.monotonic()
        try:
            return process.run_command(list(argv), HookCall(payload=stdin, env=dict(env), timeout_s=timeout_s))
        finally:
            if record is not None:
                record(time.monotonic() - began)

    return run


def seam_fault(fixture_id: str, harness: str, fault: CommandFault) -> Fault:
    return Fault(fixture_id=fixture_id, turn_id=0, harness=harness, fault_class=fault.fault_class,  # type: ignore[arg-type]
                 detail=fault.detail[:1000])


def operations_of(seam: SeededSeam, url: str, fixture: Fixture) -> ImageMemory:
    """The image's memory system in one fixture's clone (its operations command must be declared)."""
    return ImageMemory.of(command_runner(seam.active.process, partial(seam.clock.add, seam.harness, "operations")),
                          seam.contract, seed_env(url, fixture))


async def write_back(seam: SeededSeam, document: Any, url: str, fixture: Fixture) -> CommandFault | None:
    """Run the image's ``write_back`` with one session's document; None, or the fault it was."""
    argv = seam.contract.write_back
    assert argv is not None
    timeout = seam.contract.write_back_timeout_s
    call = HookCall(payload=document.model_dump_json().encode("utf-8"), env=seed_env(url, fixture), timeout_s=timeout)
    with seam.clock.timed(seam.harness, "write_back"):
        outcome = await anyio.to_thread.run_sync(seam.active.process.run_command, list(argv), call,
                                                 abandon_on_cancel=True)
    return run_failure(f"write_back ({' '.join(argv)})", outcome, timeout)


async def graded_write_back(seam: SeededSeam, stages: Stages, item: LoadedFixture,
                            url: str) -> tuple[WriteBackScore, list[Fault]]:
    """Write ``item``'s session back into the image's clone at ``url``, read it back, score it."""
    document = stages.write_back_document(item)
    fault = await write_back(seam, document, url, item.fixture)
    faults = [seam_fault(item.fixture_id, seam.harness, fault)] if fault else []
    items: list[m.ReadItem] = []
    failure = fault.detail if fault else None
    if fault is None:
        ops = operations_of(seam, url, item.fixture)
        read = await anyio.to_thread.run_sync(
            ops.perform, m.Recall(page_slug=document.page_slug, limit=RECALL_LIMIT), abandon_on_cancel=True)
        faults += [seam_fault(item.fixture_id, seam.harness, f) for f in ops.faults]
        if not read.ok:
            failure = f"recall of the written-back facts answered {read.code}: {read.message or ''}".strip()
        else:
            items = list(getattr(read, "items", []))
    return stages.score_image_write_back(item, items, failure), faults


def keyword_probe(seam: SeededSeam, url: str, reader: Fixture, faults: list[Fault]) -> Any:
    """Continuity's fallback (spec §7) through the image's own read: a fact of the reader's source
    holding every keyword, found by ``recall`` with the keywords as its query (None: no operations)."""
    if seam.contract.operations is None:
        return None
    ops = operations_of(seam, url, reader)

    def probe(keywords: Sequence[str]) -> bool:
        read = ops.perform(m.Recall(query=" ".join(keywords), limit=RECALL_LIMIT))
        faults.extend(seam_fault(reader.fixture_id, seam.harness, f) for f in ops.faults)
        ops.faults.clear()
        texts = [i.text.lower() for i in getattr(read, "items", []) if i.source_id == reader.source]
        return read.ok and any(all(k.lower() in t for k in keywords) for t in texts)

    return probe
