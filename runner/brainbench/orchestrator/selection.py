"""Which fixtures run, and how (spec §5.1): regular fixtures and continuity pairs."""

from __future__ import annotations

from dataclasses import dataclass

from brainbench.corpus.loader import ContinuityPair, Corpus, LoadedFixture
from brainbench.models.config import RunConfig

RETRIEVAL = ("know-to-ask", "push")


@dataclass(frozen=True)
class Plan:
    regular: list[LoadedFixture]
    pairs: list[ContinuityPair]

    @property
    def is_empty(self) -> bool:
        return not self.regular and not self.pairs


def plan_run(corpus: Corpus, config: RunConfig) -> Plan:
    requested = set(config.suites)
    regular: list[LoadedFixture] = []
    pair_order: list[str] = []
    for item in corpus.fixtures:
        fx = item.fixture
        if fx.is_holdout and not config.include_holdout:
            continue
        if not requested.intersection(fx.suites):
            continue
        if fx.continuity is not None and "continuity" in requested:
            if fx.continuity.pair_id not in pair_order:
                pair_order.append(fx.continuity.pair_id)
            others = set(fx.suites) - {"continuity", "write-back"}
            if not requested.intersection(others):
                continue
        regular.append(item)
    pairs = []
    for pair_id in pair_order:
        pair = corpus.pairs.get(pair_id)
        if pair is None:
            continue
        held_out = pair.writer.fixture.is_holdout or pair.reader.fixture.is_holdout
        if held_out and not config.include_holdout:
            continue
        if pair.reader.gold.continuity is None or not pair.reader.gold.continuity.decisions:
            continue
        pairs.append(pair)
    return Plan(regular, pairs)


def retrieval_suites(item: LoadedFixture, config: RunConfig) -> list[str]:
    return [s for s in item.fixture.suites if s in RETRIEVAL and s in config.suites]


def wants_write_back(item: LoadedFixture, config: RunConfig) -> bool:
    fx = item.fixture
    in_pair = fx.continuity is not None and "continuity" in config.suites
    return "write-back" in fx.suites and "write-back" in config.suites and not in_pair
