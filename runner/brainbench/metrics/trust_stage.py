"""The memory-trust scoring stage of a run, as the orchestrator calls it (``orchestrator.stages.Stages``)."""

from __future__ import annotations

from collections.abc import Sequence

from brainbench.corpus.loader import LoadedFixture
from brainbench.metrics import poisoning
from brainbench.metrics.trust_suites import SCORERS
from brainbench.models.corpus import TrustItem
from brainbench.models.trust_run import Arm, SuiteScore
from brainbench.orchestrator.trust_scenario import Scenario


def _items(item: LoadedFixture) -> list[TrustItem]:
    return list(item.gold.trust.items) if item.gold.trust is not None else []


class TrustStage:
    def score_trust_fixture(self, scenario: Scenario, item: LoadedFixture) -> SuiteScore:
        suite = next(s for s in item.fixture.suites if s in SCORERS)
        return SCORERS[suite](scenario, _items(item))

    def observe_poison(self, scenario: Scenario, item: LoadedFixture, arm: Arm) -> poisoning.Observation:
        return poisoning.observe(scenario, _items(item), arm)

    def score_poison(self, item: LoadedFixture, observation: poisoning.Observation, texts: Sequence[str],
                     harness: str) -> SuiteScore:
        score = poisoning.score_protections if observation.arm == "protections" else poisoning.score_default
        return score(item.fixture_id, _items(item), observation, texts, harness)
