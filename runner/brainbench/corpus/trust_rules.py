"""The memory-trust rules of gbrain 0.60's loader that a JSON Schema cannot express (trust spec §1.4).

``trust_step_rules`` is gbrain's ``validateTrustSteps`` and ``trust_gold_rules`` its
``validateTrustGold``: each yields (JSON path, rule) for every problem, so a file with three bad
steps gets three lines.  What the loader leaves alone stays alone: the ``kind`` and
``content_origin`` enums (the operations judge them), ``claim``'s type, and canary uniqueness
(a corpus property, checked by the generator's tests, not per file).
"""

from __future__ import annotations

from collections.abc import Iterator

from brainbench.corpus.errors import json_path
from brainbench.models.corpus import Fixture, Gold
from brainbench.models.trust import ACTOR_OPS, OP_REQUIRED_FIELDS, SUITE_CHECKS, TRUST_SUITES, TrustSuite

_WRITE_ONLY_THROUGH_STEPS = ("seed_pages", "seed_facts", "continuity")
_TIER_CHECKS = frozenset({"tier", "max_tier"})
_POISON_CHECKS = frozenset({"poison", "benign"})


def trust_suite_of(fixture: Fixture) -> TrustSuite | None:
    """The fixture's memory-trust suite (the first one it names), or None for a classic fixture."""
    for suite in fixture.suites:
        if suite in TRUST_SUITES:
            return suite  # type: ignore[return-value]
    return None


def is_trust_fixture(fixture: Fixture) -> bool:
    return trust_suite_of(fixture) is not None


def trust_step_rules(fixture: Fixture) -> Iterator[tuple[str, str]]:
    """Yield (json path, rule) for every memory-trust problem of one fixture."""
    if not is_trust_fixture(fixture):
        if fixture.trust_steps is not None:
            yield "$.trust_steps", "trust_steps belong to memory-trust suite fixtures only"
        return
    if len(fixture.suites) != 1:
        yield "$.suites", (f"a memory-trust fixture declares exactly one suite "
                           f"(got {len(fixture.suites)}: {', '.join(fixture.suites)})")
    for key in _WRITE_ONLY_THROUGH_STEPS:
        if getattr(fixture, key) is not None:
            yield f"$.{key}", "memory-trust fixtures write through trust_steps, never seed_pages/seed_facts/continuity"
    if fixture.trust_steps is None:
        yield "$.trust_steps", "a memory-trust fixture needs trust_steps (a non-empty array of steps)"
        return
    seen: dict[str, int] = {}
    for i, step in enumerate(fixture.trust_steps):
        at = ("trust_steps", i)
        if not step.step_id:
            yield json_path((*at, "step_id")), "step_id must be a non-empty string"
        elif step.step_id in seen:
            yield (json_path((*at, "step_id")),
                   f"duplicate step_id {step.step_id!r} (also $.trust_steps[{seen[step.step_id]}])")
        allowed = ACTOR_OPS[step.actor]
        if step.op not in allowed:
            yield (json_path((*at, "op")),
                   f"actor {step.actor} cannot perform op {step.op} ({step.actor} may: {', '.join(allowed)})")
        if step.target is not None and step.target not in seen:
            yield (json_path((*at, "target")),
                   f"target {step.target!r} names no earlier step{_what(step.target, i, fixture)}")
        for name in OP_REQUIRED_FIELDS[step.op]:
            if not getattr(step, name):
                yield json_path((*at, name)), f"op {step.op} needs a non-empty {name}"
        if step.step_id and step.step_id not in seen:
            seen[step.step_id] = i


def _what(target: str, index: int, fixture: Fixture) -> str:
    steps = fixture.trust_steps or []
    if steps[index].step_id == target:
        return " (it names this step)"
    if any(s.step_id == target for s in steps[index + 1:]):
        return " (it names a later step)"
    return ""


def trust_gold_rules(gold: Gold, fixture: Fixture) -> Iterator[tuple[str, str]]:
    """Yield (json path, rule) for gold trust items that do not fit their fixture."""
    suite = trust_suite_of(fixture)
    if suite is None:
        if gold.trust is not None:
            yield "$.trust", "gold.trust belongs to memory-trust suite fixtures only"
        return
    if gold.trust is None:
        yield "$.trust", "a memory-trust fixture needs gold.trust.items (a non-empty array of items)"
        return
    steps = {s.step_id for s in fixture.trust_steps or []}
    allowed = SUITE_CHECKS[suite]
    seen: dict[str, int] = {}
    for i, item in enumerate(gold.trust.items):
        at = ("trust", "items", i)
        if not item.item_id:
            yield json_path((*at, "item_id")), "item_id must be a non-empty string"
        elif item.item_id in seen:
            yield (json_path((*at, "item_id")),
                   f"duplicate item_id {item.item_id!r} (also $.trust.items[{seen[item.item_id]}])")
        else:
            seen[item.item_id] = i
        if item.check not in allowed:
            yield (json_path((*at, "check")),
                   f"check {item.check} does not belong to suite {suite} (allowed: {', '.join(allowed)})")
        if item.step not in steps:
            yield json_path((*at, "step")), f"step {item.step!r} names no step of fixture {fixture.fixture_id}"
        if item.check in _TIER_CHECKS and item.tier is None:
            yield json_path((*at, "tier")), f"a {item.check} item needs tier (a tier name)"
        if item.check in _POISON_CHECKS:
            if item.arm is None:
                yield json_path((*at, "arm")), f"a {item.check} item needs arm (external or agent_relayed)"
            if item.canary is None:
                yield json_path((*at, "canary")), f"a {item.check} item needs canary (a string of 8 or more characters)"
        if item.check == "purged" and not item.probe:
            yield json_path((*at, "probe")), "a purged item needs a non-empty probe (the purged claim)"
