"""Fixture and gold documents (schema_version 1), as gbrain publishes them.

Unknown keys are rejected everywhere; the semantic rules that JSON Schema cannot
express (sealed gold, ts requirements, pairing) live in ``brainbench.corpus.rules``.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, get_args

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, WithJsonSchema

from brainbench.models.trust import ContentOrigin, PoisonArm, TrustActor, TrustCheck, TrustFactKind, TrustOp, TrustTier

Suite = Literal["know-to-ask", "push", "write-back", "continuity", "trust", "state-resolution", "poisoning",
                "deletion"]
# The four suites of gbrain v0.46, graded through the seams' retrieval and write-back.
SUITES: tuple[Suite, ...] = ("know-to-ask", "push", "write-back", "continuity")
# gbrain 0.60's order: the four above, then the memory-trust suites.
ALL_SUITES: tuple[Suite, ...] = (*SUITES, "trust", "state-resolution", "poisoning", "deletion")
Role = Literal["user", "assistant"]
FactKind = Literal["event", "preference", "commitment", "belief", "fact"]


def _integral_number(value: object) -> object:
    # JSON has one number type: gbrain accepts any value for which JS
    # Number.isInteger holds, so 3.0 is a valid turn id but 3.5 and true are not.
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


TurnId = Annotated[int, BeforeValidator(_integral_number)]
NonEmptyStr = Annotated[str, Field(min_length=1)]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


# An optional key may be absent but never null (as in gbrain's validator and
# schemas): the field's type stays non-null and only the default is None, which
# pydantic does not validate.  Read such fields as "X or None".
ABSENT: Any = None


class SeedPage(_Strict):
    slug: NonEmptyStr
    content: NonEmptyStr
    source_id: str = ABSENT


class SeedFact(_Strict):
    fact: NonEmptyStr
    entity_slug: str | None = None
    source: str = ABSENT
    source_session: str | None = None
    source_id: str = ABSENT


class Turn(_Strict):
    turn_id: TurnId
    role: Role
    text: NonEmptyStr
    ts: str = Field(
        default=ABSENT,
        description="Required on every turn of write-back fixtures and continuity writers.",
        json_schema_extra={"format": "date-time"},
    )


class ContinuityRole(_Strict):
    pair_id: NonEmptyStr
    pair_role: Literal["writer", "reader"]


class TrustStep(_Strict):
    """One write or owner act of a memory-trust fixture, performed through the memory system's operations.

    As in gbrain 0.60, the published schema enumerates ``kind`` and ``content_origin`` but the
    loader only requires strings: the operations judge them (an unknown origin is that
    operation's ``invalid_params``).  ``step_id`` is any string to the schema; the loader's rules
    (``brainbench.corpus.trust_rules``) require it non-empty and unique, and every other
    cross-field rule (actor x op, required fields, earlier targets).
    """

    step_id: str
    actor: TrustActor
    op: TrustOp
    slug: str = ABSENT
    content: str = ABSENT
    fact: str = ABSENT
    entity: str = ABSENT
    kind: str = Field(default=ABSENT, json_schema_extra={"enum": list(get_args(TrustFactKind))})
    content_origin: str = Field(default=ABSENT, json_schema_extra={"enum": list(get_args(ContentOrigin))})
    target: str = Field(default=ABSENT, description="An earlier step_id whose row this step acts on.")
    target_claim: str = Field(default=ABSENT, description="Picks one fact of a page step by its claim text.")


class Fixture(_Strict):
    """An adapter-visible conversation. Gold is sealed in a separate file."""

    model_config = ConfigDict(
        extra="forbid",
        strict=True,
        frozen=True,
        title="BrainBench fixture (schema_version 1)",
    )

    schema_version: Literal[1]
    fixture_id: Annotated[str, Field(pattern=r"^[a-z0-9][a-z0-9-]*$")]
    suites: Annotated[list[Suite], Field(min_length=1)]
    category: str = ABSENT
    holdout: bool = Field(default=ABSENT, description="Excluded from the gate unless --include-holdout.")
    sources: list[str] = ABSENT
    active_source: str = ABSENT
    seed_pages: list[SeedPage] = ABSENT
    seed_facts: list[SeedFact] = ABSENT
    turns: Annotated[list[Turn], Field(min_length=1)]
    continuity: ContinuityRole = ABSENT
    trust_steps: Annotated[list[TrustStep], Field(min_length=1)] = ABSENT

    @property
    def source(self) -> str:
        return self.active_source or "default"

    @property
    def is_holdout(self) -> bool:
        return bool(self.holdout)


class GoldFact(_Strict):
    gist: NonEmptyStr
    fact: NonEmptyStr
    entity_slug: str | None
    match_keywords: Annotated[list[str], Field(min_length=1)]
    kind: FactKind = ABSENT


class TurnGold(_Strict):
    should_retrieve: bool
    gold_slugs: list[str] = ABSENT
    acceptable_slugs: list[str] = ABSENT
    gold_facts: list[GoldFact] = ABSENT


class Decision(_Strict):
    decision_id: str
    expected_slugs: list[str]
    match_keywords: list[str]


class GoldContinuity(_Strict):
    pair_id: str
    decisions: Annotated[list[Decision], Field(min_length=1)]


class TrustItem(_Strict):
    """One scored expectation of a memory-trust fixture (which fields it needs depends on ``check``:
    ``brainbench.corpus.trust_rules``).

    ``claim`` is not type-checked by gbrain's loader (its schema says string): any JSON value loads,
    and only a string can select a fact row.
    """

    item_id: str
    check: TrustCheck
    step: str
    claim: Annotated[Any, WithJsonSchema({"type": "string"})] = ABSENT
    tier: TrustTier = ABSENT
    arm: PoisonArm = ABSENT
    canary: Annotated[str, Field(min_length=8)] = ABSENT
    preference: bool = ABSENT
    probe: str = ABSENT


class TrustGold(_Strict):
    items: Annotated[list[TrustItem], Field(min_length=1)]


class Gold(_Strict):
    """Sealed gold for one fixture, joined by ``fixture_id``; never shown to seams."""

    model_config = ConfigDict(
        extra="forbid",
        strict=True,
        frozen=True,
        title="BrainBench sealed gold (schema_version 1)",
    )

    fixture_id: str
    turns: dict[str, TurnGold]
    continuity: GoldContinuity = ABSENT
    trust: TrustGold = ABSENT


class PublicTurn(_Strict):
    """The only view of a turn that may cross into a seam."""

    turn_id: int
    role: Role
    text: str
    ts: str | None = None

    @classmethod
    def of(cls, turn: Turn) -> PublicTurn:
        return cls(turn_id=turn.turn_id, role=turn.role, text=turn.text, ts=turn.ts)
