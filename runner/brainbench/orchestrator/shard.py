"""Split a run's work into N shards: deterministic, balanced by work, stable as the corpus grows.

A work unit is what one runner task does: a regular fixture, or a continuity pair
(writer and reader always together — the reader's brain is the writer's write-back).
Its weight is the hook calls it makes: replayed user turns × selected harnesses, plus
one for the fixed cost of seeding (and write-back).

Assignment is consistent hashing with bounded loads: units are visited in the order
of a hash of their key, and each goes to the first shard of its own rendezvous
(highest-random-weight) ranking that still has room under (1 + ε) × the mean load.
Only a unit's own key decides its ranking, so adding a fixture moves few others
(unlike sorting by weight and packing greedily, where one insertion reshuffles
everything after it), and the bound keeps every shard within ε of the mean.
"""

from __future__ import annotations

import functools
import hashlib
import math
from collections.abc import Sequence
from typing import Any

from brainbench.corpus.loader import LoadedFixture
from brainbench.models.config import RunConfig
from brainbench.orchestrator.selection import Plan, retrieval_suites
from brainbench.version import source_revision

SLACK = 0.15


def pair_key(pair_id: str) -> str:
    return f"pair:{pair_id}"


def plan_keys(plan: Plan) -> list[str]:
    """Every unit of a plan, in the order results are assembled."""
    return ([i.fixture_id for i in plan.regular] + [pair_key(p.pair_id) for p in plan.pairs]
            + [i.fixture_id for i in plan.trust])


def _user_turns(item: LoadedFixture) -> int:
    return sum(1 for t in item.fixture.turns if t.role == "user")


def unit_weights(plan: Plan, config: RunConfig) -> dict[str, int]:
    harnesses = len(dict.fromkeys(config.harnesses))
    weights: dict[str, int] = {}
    for item in plan.regular:
        calls = _user_turns(item) * harnesses if retrieval_suites(item, config) else 0
        weights[item.fixture_id] = 1 + calls
    for pair in plan.pairs:
        weights[pair_key(pair.pair_id)] = 1 + _user_turns(pair.reader) * harnesses
    for item in plan.trust:
        steps = len(item.fixture.trust_steps or [])
        replays = 2 * _user_turns(item) * harnesses if "poisoning" in item.fixture.suites else 0
        weights[item.fixture_id] = 1 + steps + replays
    return weights


def _score(*parts: object) -> int:
    digest = hashlib.sha256("\x1f".join(str(p) for p in parts).encode()).digest()
    return int.from_bytes(digest[:8], "big")


def _rank_scores(key: str, total: int) -> dict[int, int]:
    """``_score("rank", key, s)`` for every shard s: the key's prefix hashed once, not N times."""
    prefix = hashlib.sha256(f"rank\x1f{key}\x1f".encode())
    scores = {}
    for shard in range(1, total + 1):
        digest = prefix.copy()
        digest.update(str(shard).encode())
        scores[shard] = int.from_bytes(digest.digest()[:8], "big")
    return scores


def assign(weights: dict[str, int], total: int) -> dict[str, int]:
    """Shard number (1-based) of every unit."""
    if total < 1:
        raise ValueError("total must be at least 1")
    # A run asks twice (its plan, then its result's shard identity); N=200 costs N hashes a unit.
    return dict(_assign(tuple(weights.items()), total))


@functools.lru_cache(maxsize=8)
def _assign(items: tuple[tuple[str, int], ...], total: int) -> tuple[tuple[str, int], ...]:
    weights = dict(items)
    if not weights:
        return ()
    mean = sum(weights.values()) / total
    capacity = max(math.ceil(mean * (1 + SLACK)), max(weights.values()))
    load = [0] * (total + 1)
    out: dict[str, int] = {}
    for key in sorted(weights, key=lambda k: (_score("order", k), k)):
        weight = weights[key]
        scores = _rank_scores(key, total)
        # The top of the ranking nearly always has room: sort the rest only when it does not.
        first = max(scores, key=lambda s: (scores[s], -s))
        if load[first] + weight <= capacity:
            shard: int | None = first
            ranking = [first]
        else:
            ranking = sorted(scores, key=lambda s: (-scores[s], s))
            shard = next((s for s in ranking if load[s] + weight <= capacity), None)
        if shard is None:  # only when the bound cannot hold anywhere: least loaded, then ranking
            shard = min(ranking, key=lambda s: load[s])
        load[shard] += weight
        out[key] = shard
    return tuple(out.items())


def shard_plan(plan: Plan, config: RunConfig, index: int, total: int) -> Plan:
    """The part of ``plan`` that shard ``index`` of ``total`` runs, in plan order."""
    mine = {k for k, s in assign(unit_weights(plan, config), total).items() if s == index}
    return Plan([i for i in plan.regular if i.fixture_id in mine],
                [p for p in plan.pairs if pair_key(p.pair_id) in mine],
                [i for i in plan.trust if i.fixture_id in mine])


def shard_loads(plan: Plan, config: RunConfig, total: int) -> Sequence[int]:
    """Work per shard (index 0 is shard 1): for tests and the benchmark report."""
    weights = unit_weights(plan, config)
    loads = [0] * total
    for key, shard in assign(weights, total).items():
        loads[shard - 1] += weights[key]
    return loads


def config_fingerprint(config: RunConfig) -> dict[str, Any]:
    """What must be equal for two results to be parts of one run (``brainbench merge`` checks it).

    Only configuration: an empty shard starts no seam, so what the seams reported
    (image digests) is compared separately among the shards that ran some.
    """
    from brainbench import __version__

    return {
        "brainbench_version": __version__, "harness_sha": source_revision(),
        "harnesses": list(config.harnesses), "suites": list(config.suites),
        "include_holdout": config.include_holdout, "llm": config.llm, "seed": config.seed,
        "behaviour": config.behaviour,
        "mode": config.mode, "seams": {h: o.model_dump(mode="json") for h, o in sorted(config.seams.items())},
    }
