"""Semantic rules of spec §1.3–1.4 (and trust spec §1.4) that a JSON Schema cannot express."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from brainbench.corpus.errors import json_path
from brainbench.corpus.timestamps import parse_ts
from brainbench.corpus.trust_rules import trust_gold_rules, trust_step_rules
from brainbench.jsjson import js_number
from brainbench.models.corpus import Fixture, Gold

SEALED = "gold is SEALED: it belongs in the gold dir, never inside a fixture"
RETRIEVAL_SUITES = frozenset({"know-to-ask", "push"})


def turn_key(turn_id: int) -> str:
    """The gold key of a turn: ``String(turn_id)`` in JavaScript (``1e+21`` for 10**21)."""
    return js_number(turn_id)


def find_gold_keys(node: Any, path: tuple[object, ...] = ()) -> Iterator[str]:
    """Yield the JSON path of every ``gold`` key anywhere in a fixture document."""
    stack: list[tuple[Any, tuple[object, ...]]] = [(node, path)]
    while stack:  # iterative: adversarial nesting must not blow the Python stack
        current, at = stack.pop()
        if isinstance(current, dict):
            for key, value in current.items():
                if key == "gold":
                    yield json_path((*at, key))
                stack.append((value, (*at, key)))
        elif isinstance(current, list):
            stack.extend((item, (*at, i)) for i, item in enumerate(current))


def fixture_rules(fixture: Fixture) -> Iterator[tuple[str, str]]:
    """Yield (json path, rule) for every semantic violation of one fixture."""
    seen: set[int] = set()
    needs_ts = "write-back" in fixture.suites or (
        fixture.continuity is not None and fixture.continuity.pair_role == "writer"
    )
    for i, turn in enumerate(fixture.turns):
        if turn.turn_id in seen:
            yield json_path(("turns", i, "turn_id")), f"duplicate turn_id {turn.turn_id}"
        seen.add(turn.turn_id)
        if turn.ts is not None and parse_ts(turn.ts) is None:
            yield (json_path(("turns", i, "ts")),
                   f"ts {turn.ts!r} is not a parseable date-time (JavaScript's Date.parse gives NaN)")
        if needs_ts and turn.ts is None:
            why = "write-back fixture" if "write-back" in fixture.suites else "continuity writer"
            yield json_path(("turns", i, "ts")), f"{why} requires ts on every turn"
    yield from trust_step_rules(fixture)


def gold_rules(gold: Gold, fixture: Fixture) -> Iterator[tuple[str, str]]:
    """Yield (json path, rule) for gold that does not fit its fixture."""
    if gold.fixture_id != fixture.fixture_id:
        yield "$.fixture_id", f"gold fixture_id {gold.fixture_id!r} != fixture {fixture.fixture_id!r}"
    roles = {turn_key(t.turn_id): t.role for t in fixture.turns}
    retrieval = bool(RETRIEVAL_SUITES.intersection(fixture.suites))
    for key, turn_gold in gold.turns.items():
        at = ("turns", key)
        role = roles.get(key)
        if role is None:
            yield json_path(at), f"gold for turn {key!r} has no matching fixture turn"
            continue
        has_retrieval_gold = turn_gold.should_retrieve or (
            turn_gold.gold_slugs is not None or turn_gold.acceptable_slugs is not None
        )
        if role == "assistant" and has_retrieval_gold:
            yield json_path(at), "retrieval gold is only allowed on user turns"
        if retrieval and turn_gold.should_retrieve and not turn_gold.gold_slugs:
            yield json_path((*at, "gold_slugs")), "must be non-empty when should_retrieve is true"
    role_block = fixture.continuity
    if role_block is not None and role_block.pair_role == "reader" and gold.continuity is None:
        yield "$.continuity", "a continuity reader requires gold.continuity"
    if gold.continuity is not None:
        if role_block is None:
            yield "$.continuity", "gold.continuity on a fixture without a continuity block"
        elif gold.continuity.pair_id != role_block.pair_id:
            yield (
                "$.continuity.pair_id",
                f"pair_id {gold.continuity.pair_id!r} != fixture pair_id {role_block.pair_id!r}",
            )
    yield from trust_gold_rules(gold, fixture)
