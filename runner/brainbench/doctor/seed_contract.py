"""Doctor's checks of the seed contract (label ``io.brainbench.brain``): label, init, seed (v2: ``seed_v2.py``).

Run exactly as a run does it (``orchestrator/image_seed.py``): the image's template with
its extensions, ``init`` once, a clone owned by its own role, ``seed`` with doctor's
reference fixture on stdin, all in the seam's own hardened container; doctor's happy
path then asks the hook about a page only that seed could have written.
"""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import AsyncIterator, Mapping
from typing import Any

import anyio

from brainbench.brain.databases import BrainDatabases
from brainbench.brain.guarded import ImageServerError
from brainbench.brain.image_brains import ExtensionMissing, ImageSeededBrains
from brainbench.brain.seed_document import seed_document
from brainbench.brain.server import PostgresServer
from brainbench.models.seed import LABEL_BRAIN, BrainContract, BrainContractError, brain_contract_of
from brainbench.orchestrator.image_seed import brain_server, run_step, seed_env, stderr_tail

from . import sample
from .checks import CheckResult, DoctorReport


def check_label(report: DoctorReport, labels: Mapping[str, str]) -> tuple[BrainContract | None, bool]:
    """(the contract or None, whether doctor can go on)."""
    try:
        contract = brain_contract_of(report.image, dict(labels))
    except BrainContractError as exc:
        report.results.append(CheckResult("seed contract label", "fail", str(exc)))
        return None, False
    if contract is None:
        return None, True
    refusal = contract.extension_refusal()
    if refusal is not None:  # the run would fail every fixture of this seam with this line
        report.results.append(CheckResult("seed contract label", "fail", f"image {report.image}: {refusal}"))
        return None, False
    steps = [f"extensions {', '.join(contract.extensions)}"] if contract.extensions else []
    if contract.init:
        steps.append(f"init {' '.join(contract.init)} ({contract.init_timeout_s:g} s)")
    steps.append(f"seed {' '.join(contract.seed)} ({contract.seed_timeout_s:g} s)")
    if contract.write_back:
        steps.append(f"write_back {' '.join(contract.write_back)} ({contract.write_back_timeout_s:g} s)")
    if contract.operations:
        steps.append(f"operations {' '.join(contract.operations)} ({contract.operations_timeout_s:g} s)")
    steps += [f"{harness} events {', '.join(events)}" for harness, events in contract.events.items()]
    report.results.append(CheckResult("seed contract label", "pass",
                                      f"{LABEL_BRAIN} version {contract.version}: " + "; ".join(steps)))
    return contract, True


@contextlib.asynccontextmanager
async def seeded_brain(report: DoctorReport, proc: Any, server: PostgresServer, contract: BrainContract,
                       mode: str) -> AsyncIterator[str | None]:
    """The hook URL of a brain the image seeded with doctor's reference fixture; None if it could not."""
    dbs = BrainDatabases(server, f"doctor{uuid.uuid4().hex[:8]}", [])
    private = contract.server == "private"
    if private:  # the seam's own server, which its docker provider started with the seam
        dbs = brain_server(dbs, report.harness, report.image, contract, proc)
    try:
        try:
            url = await _seed(report, proc, dbs, contract, mode, private)
        except ImageServerError as exc:  # the image's own server stalled or failed doctor's work there
            report.results.append(CheckResult(f"seed contract private server ({mode})", "fail",
                                              f"its private brain server {exc}"))
            url = None
        yield url
    finally:
        with anyio.CancelScope(shield=True), contextlib.suppress(ImageServerError):
            await anyio.to_thread.run_sync(dbs.close, abandon_on_cancel=private)


async def _seed(report: DoctorReport, proc: Any, dbs: BrainDatabases, contract: BrainContract, mode: str,
                private: bool) -> str | None:
    """Template, ``init`` and a seeded clone, each step a check; the clone's URL, or None after a failure."""
    if not private:
        await anyio.to_thread.run_sync(dbs.prepare)
    brains = ImageSeededBrains(dbs, report.harness, report.image, contract.extensions, superuser=private)
    try:
        url = await anyio.to_thread.run_sync(brains.prepare_template)
    except ExtensionMissing as exc:
        report.results.append(CheckResult(f"seed contract extensions ({mode})", "fail", str(exc)))
        return None
    if contract.init:
        failure, outcome = await run_step(proc, contract.init, b"", {"BRAINBENCH_DATABASE_URL": url},
                                          contract.init_timeout_s)
        if failure:
            report.results.append(CheckResult(f"seed contract init ({mode})", "fail",
                                              f"init {failure}", stderr_tail(outcome.stderr)))
            return None
        report.results.append(CheckResult(f"seed contract init ({mode})", "pass",
                                          f"exit 0, {outcome.duration_ms:.0f} ms"))
    await anyio.to_thread.run_sync(brains.seal_template)
    brain = await anyio.to_thread.run_sync(brains.clone)
    fixture = sample.reference_fixture()
    document = seed_document(fixture).model_dump_json().encode("utf-8")
    failure, outcome = await run_step(proc, contract.seed, document, seed_env(brain.url, fixture),
                                      contract.seed_timeout_s)
    if failure:
        report.results.append(CheckResult(f"seed contract seed ({mode})", "fail", f"seed {failure}",
                                          stderr_tail(outcome.stderr)))
        return None
    report.results.append(CheckResult(
        f"seed contract seed ({mode})", "pass",
        f"exit 0, {outcome.duration_ms:.0f} ms; the hook now reads that brain as "
        + ("its private server's superuser" if private else "its owner role")))
    if contract.version == 2 and (contract.write_back or contract.operations):
        await _v2_on_own_clone(report, proc, brains, dbs, contract, mode, document)
    return brain.url


async def _v2_on_own_clone(report: DoctorReport, proc: Any, brains: ImageSeededBrains, dbs: BrainDatabases,
                           contract: BrainContract, mode: str, document: bytes) -> None:
    """Seed contract v2's commands, on a seeded clone of their own (the hook's stays as seeded)."""
    from .seed_v2 import check_v2

    brain = await anyio.to_thread.run_sync(brains.clone)
    try:
        fixture = sample.reference_fixture()
        failure, _ = await run_step(proc, contract.seed, document, seed_env(brain.url, fixture),
                                    contract.seed_timeout_s)
        if failure is None:
            await check_v2(report, proc, dbs, brain.name, brain.url, contract, mode)
    finally:
        with anyio.CancelScope(shield=True), contextlib.suppress(Exception):
            await anyio.to_thread.run_sync(brains.drop, brain)
