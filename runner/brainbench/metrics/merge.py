"""Put shard results back together so exactly that the merge cannot be told from a single run.

Cells are never averaged across shards: the per-unit outcomes each shard recorded are
laid out in the whole selection's order and handed to the same ``build_result`` a
single run uses, so every metric is recomputed from the merged rows.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path

from brainbench.metrics.result import build_result
from brainbench.models.config import RunConfig
from brainbench.models.result import RunResult
from brainbench.models.shard import ShardInfo
from brainbench.orchestrator.outcome import FixtureOutcome


class MergeError(ValueError):
    """The shards cannot be one run; every problem names the files concerned."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("; ".join(problems))
        self.problems = problems


def _names(paths: Sequence[Path], most: int = 3) -> str:
    shown = ", ".join(str(p) for p in paths[:most])
    return shown + (f" and {len(paths) - most} more" if len(paths) > most else "")


def _check_shards(shards: Sequence[tuple[Path, RunResult]]) -> list[tuple[Path, RunResult, ShardInfo]]:
    problems: list[str] = []
    usable: list[tuple[Path, RunResult, ShardInfo]] = []
    for path, result in shards:
        info = result.meta.shard
        run = result.meta.run
        if run is not None and not run.complete:
            problems.append(f"{path}: an interrupted run, not a finished shard; re-run that shard")
        elif info is None:
            problems.append(f"{path}: not a shard result (produce one with `brainbench run --shard I/N --out FILE`)")
        else:
            usable.append((path, result, info))
    if problems:
        raise MergeError(problems)
    if not usable:
        raise MergeError(["no shard results given"])
    return usable


def _same(shards: Sequence[tuple[Path, RunResult, ShardInfo]], what: str, value: object,
          problems: list[str]) -> None:
    """Refuse unless every shard agrees on ``value`` (a function of the shard); name the odd ones out."""
    groups: dict[str, list[Path]] = {}
    for path, result, info in shards:
        groups.setdefault(repr(value(result, info)), []).append(path)  # type: ignore[operator]
    if len(groups) > 1:
        parts = [f"{_names(paths)} ({text[:80]})" for text, paths in groups.items()]
        problems.append(f"shards differ in {what}: " + " vs ".join(parts))


def _check_identity(shards: list[tuple[Path, RunResult, ShardInfo]]) -> None:
    problems: list[str] = []
    _same(shards, "corpus (fixtures_hash)", lambda r, _i: r.receipt.fixtures_hash, problems)
    _same(shards, "shard count N", lambda _r, i: i.total, problems)
    _same(shards, "selection (plan)", lambda _r, i: hashlib.sha256("\n".join(i.plan).encode()).hexdigest(),
          problems)
    keys = sorted({k for _, _, i in shards for k in i.fingerprint})
    for key in keys:
        _same(shards, f"config {key}", lambda _r, i, k=key: i.fingerprint.get(k), problems)
    ran = [(p, r, i) for p, r, i in shards if i.keys and r.meta.run is not None]
    _same(ran, "seam images (digests)", lambda r, _i: [(s.harness, s.image_digest) for s in r.meta.run.seams],
          problems)
    if problems:
        raise MergeError(problems)


def _check_coverage(shards: list[tuple[Path, RunResult, ShardInfo]]) -> None:
    problems: list[str] = []
    total = shards[0][2].total
    by_index: dict[int, list[Path]] = {}
    for path, _, info in shards:
        by_index.setdefault(info.index, []).append(path)
    for index, paths in sorted(by_index.items()):
        if len(paths) > 1:
            problems.append(f"overlapping shards: {index}/{total} given {len(paths)} times ({_names(paths)})")
    missing = [f"{i}/{total}" for i in range(1, total + 1) if i not in by_index]
    if missing:
        problems.append(f"missing shard(s): {', '.join(missing)}")
    owner: dict[str, Path] = {}
    for _index, paths in sorted(by_index.items()):
        info = next(i for p, _, i in shards if p == paths[0])
        for key in info.keys:
            if key in owner:
                problems.append(f"overlapping shards: {key} is in both {owner[key]} and {paths[0]}")
            owner.setdefault(key, paths[0])
    plan = shards[0][2].plan
    strays = sorted(set(owner) - set(plan))
    if strays:
        problems.append(f"units outside the selection: {', '.join(strays[:10])}")
    if not missing:
        lost = [k for k in plan if k not in owner]
        if lost:
            problems.append(f"units no shard ran: {', '.join(lost[:10])}" + (" …" if len(lost) > 10 else ""))
    if problems:
        raise MergeError(problems)


def merge_results(shards: Sequence[tuple[Path, RunResult]], cmd_args: list[str]) -> RunResult:
    """One result from the shard results of one selection; raises MergeError naming every refusal."""
    checked = _check_shards(shards)
    _check_identity(checked)
    _check_coverage(checked)
    first_result, first = checked[0][1], checked[0][2]
    outcomes: dict[str, FixtureOutcome] = {}
    for _, result, info in checked:
        for key in info.keys:
            outcomes[key] = FixtureOutcome.from_record(info.outcomes[key], result.turn_rows, result.meta.faults,
                                                       result.trace)
    fp = first.fingerprint
    runs = [r.meta.run for _, r, _ in checked if r.meta.run is not None]
    # Shards written before --behaviour existed ran gbrain 0.46's seams.
    behaviour = fp.get("behaviour") or next((r.behaviour for r in runs if r.behaviour), None) or "0.46"
    config = RunConfig(fixtures_dir=Path(), gold_dir=Path(), harnesses=fp["harnesses"], suites=fp["suites"],
                       include_holdout=fp["include_holdout"], llm=fp["llm"], seed=fp["seed"], cmd_args=cmd_args,
                       behaviour=behaviour)
    run_ids = sorted(r.run_id for r in runs)
    # Seams are described by a shard that started them (an empty shard started none).
    first_run = next((r.meta.run for _, r, i in checked if i.keys and r.meta.run), runs[0] if runs else None)
    merged = build_result(
        config, fixtures_hash=first_result.receipt.fixtures_hash, harness_sha=first_result.receipt.harness_sha,
        seams=first_run.seams if first_run else [], keyed=[(k, outcomes[k]) for k in first.plan],
        receipt_ts=min(r.receipt.ts for _, r, _ in checked),
        run={"run_id": "merge-" + hashlib.sha256(" ".join(run_ids).encode()).hexdigest()[:10],
             "executor": first_run.executor if first_run else "local",
             "jobs": max((r.jobs for r in runs), default=1),
             "started_at": min((r.started_at for r in runs), default=first_result.receipt.ts),
             "finished_at": max((r.finished_at or r.started_at for r in runs), default=None),
             "complete": True, "behaviour": behaviour},
    )
    # The evidence travels with the rows: a merged result explains its failures like a single run's.
    merged.trace.extend(t for key in first.plan for t in outcomes[key].traces)
    return merged
