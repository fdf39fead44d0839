"""Which fixtures run, and how (spec §5.1): regular fixtures and continuity pairs."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from fnmatch import fnmatchcase

from brainbench.corpus.loader import ContinuityPair, Corpus, LoadedFixture
from brainbench.models.config import RunConfig

RETRIEVAL = ("know-to-ask", "push")
TRUST_SUITES = ("trust", "state-resolution", "poisoning", "deletion")


@dataclass(frozen=True)
class Plan:
    regular: list[LoadedFixture]
    pairs: list[ContinuityPair]
    # Memory-trust fixtures: run after everything else, in corpus order (trust spec §4.6).
    trust: list[LoadedFixture] = field(default_factory=list)

    @property
    def is_empty(self) -> bool:
        return not self.regular and not self.pairs and not self.trust

    @property
    def units(self) -> int:
        """Work units: a regular fixture, a continuity pair, a memory-trust fixture."""
        return len(self.regular) + len(self.pairs) + len(self.trust)


def selected(fixture_id: str, patterns: Sequence[str]) -> bool:
    """``--fixture`` matching: exact ids or shell globs; no patterns selects everything."""
    return not patterns or any(fnmatchcase(fixture_id, p) for p in patterns)


def unmatched_patterns(corpus: Corpus, patterns: Sequence[str]) -> list[str]:
    ids = [item.fixture_id for item in corpus.fixtures]
    return [p for p in patterns if not any(fnmatchcase(i, p) for i in ids)]


def plan_run(corpus: Corpus, config: RunConfig) -> Plan:
    """What runs.  Selecting either half of a continuity pair runs the whole pair
    (the reader is scored on what the writer's write-back stored); the other half's
    own retrieval suites run only if it is selected too."""
    requested = set(config.suites)
    patterns = config.fixture_ids
    chosen_pairs = {pid for pid, pair in corpus.pairs.items()
                    if selected(pair.writer.fixture_id, patterns) or selected(pair.reader.fixture_id, patterns)}
    regular: list[LoadedFixture] = []
    trust: list[LoadedFixture] = []
    pair_order: list[str] = []
    for item in corpus.fixtures:
        fx = item.fixture
        if fx.is_holdout and not config.include_holdout:
            continue
        if not requested.intersection(fx.suites):
            continue
        if any(s in TRUST_SUITES for s in fx.suites):
            if selected(item.fixture_id, patterns):
                trust.append(item)
            continue
        if fx.continuity is not None and "continuity" in requested:
            if fx.continuity.pair_id not in pair_order and fx.continuity.pair_id in chosen_pairs:
                pair_order.append(fx.continuity.pair_id)
            others = set(fx.suites) - {"continuity", "write-back"}
            if not requested.intersection(others):
                continue
        if not selected(item.fixture_id, patterns):
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
    return Plan(regular, pairs, trust)


def retrieval_suites(item: LoadedFixture, config: RunConfig) -> list[str]:
    return [s for s in item.fixture.suites if s in RETRIEVAL and s in config.suites]


def wants_write_back(item: LoadedFixture, config: RunConfig) -> bool:
    fx = item.fixture
    in_pair = fx.continuity is not None and "continuity" in config.suites
    return "write-back" in fx.suites and "write-back" in config.suites and not in_pair
