"""The shard partition: every unit exactly once, pairs whole, balanced by work, stable as the corpus grows."""

from __future__ import annotations

from pathlib import Path

import pytest
from brainbench.corpus.loader import load_corpus
from brainbench.models.config import RunConfig
from brainbench.models.shard import ShardSpec
from brainbench.orchestrator.selection import Plan, plan_run
from brainbench.orchestrator.shard import SLACK, assign, plan_keys, shard_loads, shard_plan, unit_weights

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module", params=[False, True], ids=["gate", "holdout"])
def planned(request: pytest.FixtureRequest) -> tuple[Plan, RunConfig]:
    config = RunConfig(fixtures_dir=REPO / "fixtures", gold_dir=REPO / "gold", include_holdout=request.param)
    return plan_run(load_corpus(config.fixtures_dir, config.gold_dir), config), config


@pytest.mark.parametrize("total", [1, 2, 3, 7])
def test_every_unit_runs_in_exactly_one_shard(planned: tuple[Plan, RunConfig], total: int) -> None:
    plan, config = planned
    parts = [shard_plan(plan, config, i, total) for i in range(1, total + 1)]
    keys = [k for part in parts for k in plan_keys(part)]
    assert sorted(keys) == sorted(plan_keys(plan))
    assert len(keys) == len(set(keys))
    for part in parts:  # each shard keeps the whole selection's order
        order = plan_keys(part)
        assert order == [k for k in plan_keys(plan) if k in set(order)]


def test_continuity_writer_and_reader_stay_together(planned: tuple[Plan, RunConfig]) -> None:
    plan, config = planned
    assert plan.pairs, "the committed corpus has continuity pairs"
    for total in (2, 7):
        for index in range(1, total + 1):
            for pair in shard_plan(plan, config, index, total).pairs:
                # a pair is one unit: the reader's brain is the writer's write-back
                assert pair.writer.fixture.continuity is not None
                assert pair.reader.fixture.continuity is not None
                assert pair.writer.fixture.continuity.pair_id == pair.reader.fixture.continuity.pair_id


@pytest.mark.parametrize("total", [2, 3, 7])
def test_shards_are_balanced_by_hook_calls(planned: tuple[Plan, RunConfig], total: int) -> None:
    plan, config = planned
    weights = unit_weights(plan, config)
    loads = shard_loads(plan, config, total)
    mean = sum(weights.values()) / total
    assert max(loads) <= max(mean * (1 + SLACK) + 1, max(weights.values()))
    # the bound is on the heaviest shard; the lightest cannot then be far below the mean either
    assert min(loads) >= mean - (max(loads) - mean) * (total - 1)


def test_weights_count_replayed_user_turns_times_harnesses(planned: tuple[Plan, RunConfig]) -> None:
    plan, config = planned
    one = config.model_copy(update={"harnesses": ["codex"]})
    three, single = unit_weights(plan, config), unit_weights(plan, one)
    replaying = [k for k in three if three[k] > 1]
    assert replaying
    # A trust fixture's steps run once whatever the harnesses; only its replays scale with them.
    steps = {item.fixture_id: len(item.fixture.trust_steps or []) for item in plan.trust}
    assert all(three[k] - 1 - steps.get(k, 0) == 3 * (single[k] - 1 - steps.get(k, 0)) for k in three)


def test_the_partition_is_deterministic(planned: tuple[Plan, RunConfig]) -> None:
    plan, config = planned
    weights = unit_weights(plan, config)
    assert assign(weights, 7) == assign(dict(reversed(list(weights.items()))), 7)


@pytest.mark.parametrize("total", [3, 7])
def test_adding_a_fixture_moves_few_others(planned: tuple[Plan, RunConfig], total: int) -> None:
    plan, config = planned
    weights = unit_weights(plan, config)
    before = assign(weights, total)
    moved_counts = []
    for extra in ("new-fixture-a", "new-fixture-b", "new-fixture-c"):
        after = assign({**weights, extra: 7}, total)
        moved_counts.append(sum(1 for k in before if before[k] != after[k]))
    # greedy packing by weight would reshuffle most units; bounded-load hashing moves a handful
    assert max(moved_counts) <= max(3, len(weights) // 10), moved_counts


def test_more_shards_than_units_leaves_valid_empty_shards(planned: tuple[Plan, RunConfig]) -> None:
    plan, config = planned
    owners = assign(unit_weights(plan, config), 200)
    assert sorted(owners) == sorted(plan_keys(plan))
    used = set(owners.values())
    assert used <= set(range(1, 201))
    assert 200 - len(plan_keys(plan)) <= 200 - len(used) < 200
    empty = next(i for i in range(1, 201) if i not in used)
    assert shard_plan(plan, config, empty, 200).is_empty


@pytest.mark.parametrize("text", ["0/3", "4/3", "1/0", "a/b", "1-3", ""])
def test_bad_shard_specs_are_refused(text: str) -> None:
    with pytest.raises(ValueError):
        ShardSpec.parse(text)


@pytest.mark.parametrize("key", ["kta-001-deal-recall", "pair:cont-001", "ü-unicode"])
def test_a_units_shard_ranking_is_the_published_hash(key: str) -> None:
    """Rank of shard s for a unit: the first 8 bytes (big-endian) of sha256("rank␟KEY␟s").
    Part of a shard's identity across releases: a cheaper computation must give the same numbers."""
    import hashlib

    from brainbench.orchestrator.shard import _rank_scores

    expected = {s: int.from_bytes(hashlib.sha256(f"rank\x1f{key}\x1f{s}".encode()).digest()[:8], "big")
                for s in range(1, 201)}
    assert _rank_scores(key, 200) == expected
