"""The memory-operations interface as data: one request model per verb, one outcome model per answer.

A memory system is driven through these and nothing else (``brainbench.memory.operations``):
our reference memory system answers them in-process, and an image's operations command
(seed contract v2) answers the same JSON on stdin/stdout.  So every shape here serialises
to plain JSON and back, carries its verb in ``op`` (the discriminator), and rejects
unknown keys.

Refusals are answers, not errors: an outcome with ``ok: false`` and a ``code`` spelled as
gbrain 0.60 records it (trust spec §2.3, §3): ``insufficient_scope``,
``confirmation_required``, ``forget_requires_owner``, ``write_held``, ``trust_raise_refused``,
``claim_purged``, ``invalid_params``, ``not_found``, … and ``unsupported`` for a verb the
system does not have (scored as a step that could not run).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, RootModel

from brainbench.models.trust import TrustTier

Table = Literal["pages", "facts"]
AgentActor = Literal["local_agent", "remote_agent"]
# The two ways an agent reaches memory: a local process with a shell (CLI), or a remote
# connection (MCP) whose grant has no confirmation scope.
Actor = Literal["owner", "local_agent", "remote_agent", "connector", "raw"]


class _Shape(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class RowRef(_Shape):
    """One stored row: what confirm, raise and the introspection verbs point at."""

    table: Table
    id: int

    def __str__(self) -> str:
        return f"{'f' if self.table == 'facts' else 'p'}{self.id}"


# --- requests --------------------------------------------------------------------------------


class OpenNamespace(_Shape):
    """Start a fixture's isolated namespace: the owner's source, and a connector's when asked.

    ``protections``: the opt-in protections of gbrain's memory-trust cells (external writes
    that trip the gate are quarantined or held, flagged agent rows are withheld from
    proactive context); off, the shipped defaults (flag, allow).
    """

    op: Literal["open_namespace"] = "open_namespace"
    namespace: str = Field(min_length=1, max_length=60)
    protections: bool = False
    connector: bool = False
    # What the connector feed is called (the repository of a GitHub-like issue feed).
    connector_feed: str | None = None


class OwnerWrite(_Shape):
    """The owner edits a file of their own store out of band (imported by the next ``owner_sync``)."""

    op: Literal["owner_write"] = "owner_write"
    slug: str = Field(min_length=1)
    content: str


class OwnerSync(_Shape):
    """Import the owner's store: changed files become pages at the owner tier, fence rows facts."""

    op: Literal["owner_sync"] = "owner_sync"


class PutPage(_Shape):
    op: Literal["put_page"] = "put_page"
    actor: AgentActor
    slug: str = Field(min_length=1)
    content: str
    content_origin: str | None = None


class Capture(_Shape):
    """An agent captures a note (a page it names)."""

    op: Literal["capture"] = "capture"
    actor: AgentActor
    slug: str = Field(min_length=1)
    content: str
    content_origin: str | None = None


class ConnectorIngest(_Shape):
    """A third-party feed delivers one item (an issue: title and body) into the connector's namespace."""

    op: Literal["connector_ingest"] = "connector_ingest"
    title: str
    body: str


class Remember(_Shape):
    op: Literal["remember"] = "remember"
    actor: AgentActor
    fact: str = Field(min_length=1)
    entity: str | None = None
    kind: str | None = None
    content_origin: str | None = None
    # The fact this one corrects: ordinary supersession, or a contest when the writer is less trusted.
    replaces: int | None = None


class Forget(_Shape):
    op: Literal["forget"] = "forget"
    actor: AgentActor
    fact_id: int


class Confirm(_Shape):
    """Owner confirmation: only an owner at an interactive terminal raises a row to ``user_confirmed``."""

    op: Literal["confirm"] = "confirm"
    actor: Literal["owner", "local_agent", "remote_agent"]
    ref: RowRef
    interactive: bool = False


class Purge(_Shape):
    """Remove a claim from every store, in two phases: a dry run returns a token and a revision,
    and only the real run that hands both back deletes."""

    op: Literal["purge"] = "purge"
    actor: Literal["owner", "remote_agent"]
    fact_id: int
    dry_run: bool = False
    confirm_token: str | None = None
    expected_revision: str | None = None


class RaiseTierRaw(_Shape):
    """A raw write to the stored tier, outside any writer: the database rule must refuse it."""

    op: Literal["raise_tier_raw"] = "raise_tier_raw"
    ref: RowRef
    tier: TrustTier = "user_confirmed"


class Settle(_Shape):
    """Finish the asynchronous effects of the last operation, within a bound; never a sleep."""

    op: Literal["settle"] = "settle"


class GetPage(_Shape):
    op: Literal["get_page"] = "get_page"
    slug: str
    source: str | None = None


class Search(_Shape):
    op: Literal["search"] = "search"
    query: str
    limit: int = Field(default=20, ge=1, le=200)


class Recall(_Shape):
    op: Literal["recall"] = "recall"
    entity: str | None = None
    query: str | None = None
    # Only the facts written back from this conversation page (seed contract v2's write-back read).
    page_slug: str | None = None
    limit: int = Field(default=50, ge=1, le=500)


class ContextPack(_Shape):
    """What the system would hand an agent proactively about these entities (a proactive surface)."""

    op: Literal["context_pack"] = "context_pack"
    entities: list[str]
    budget_tokens: int = Field(default=4000, ge=1)


class RowTier(_Shape):
    op: Literal["row_tier"] = "row_tier"
    ref: RowRef


class FactState(_Shape):
    op: Literal["fact_state"] = "fact_state"
    fact_id: int


class FactIdByClaim(_Shape):
    """The newest fact of the owner's source whose text is exactly ``claim``."""

    op: Literal["fact_id_by_claim"] = "fact_id_by_claim"
    claim: str


class PageId(_Shape):
    op: Literal["page_id"] = "page_id"
    slug: str
    source: str | None = None


class CanaryPersisted(_Shape):
    """Is the text live where memory serves it: a live, non-quarantined page, its chunks, an active fact?"""

    op: Literal["canary_persisted"] = "canary_persisted"
    canary: str


class CanaryHeld(_Shape):
    """Is the text held back by the write gate: a held write, or a quarantined page?"""

    op: Literal["canary_held"] = "canary_held"
    canary: str


class RowFlagged(_Shape):
    op: Literal["row_flagged"] = "row_flagged"
    ref: RowRef


class ClaimActive(_Shape):
    """Did a purged claim come back: an active fact of the owner's source, or a chunk of a live page?"""

    op: Literal["claim_active"] = "claim_active"
    claim: str


class CanonicalFiles(_Shape):
    """Which of these slugs' files in the owner's own store contain ``needle`` (case-insensitive)."""

    op: Literal["canonical_files"] = "canonical_files"
    slugs: list[str]
    needle: str


MemoryRequest = Annotated[
    OpenNamespace | OwnerWrite | OwnerSync | PutPage | Capture | ConnectorIngest | Remember | Forget | Confirm
    | Purge | RaiseTierRaw | Settle | GetPage | Search | Recall | ContextPack | RowTier | FactState
    | FactIdByClaim | PageId | CanaryPersisted | CanaryHeld | RowFlagged | ClaimActive | CanonicalFiles,
    Field(discriminator="op"),
]


# --- outcomes --------------------------------------------------------------------------------


class GateVerdict(_Shape):
    """What the write gate decided about one write (absent: nothing tripped it)."""

    verdict: Literal["allow", "flag", "quarantine", "hold", "reject"]
    reason_families: list[str] = Field(default_factory=list)
    receipt_ref: str | None = None


class Contested(_Shape):
    proposal_ref: str
    role: Literal["incumbent", "challenger"]


class StoreReport(_Shape):
    """One store of a purge receipt: a table of the database or a store outside it (canonical files)."""

    store: str
    status: Literal["deleted", "would_remove", "retained_inactive", "unverified", "out_of_reach", "out_of_scope",
                    "not_present", "incomplete"]
    removed: int = 0
    detail: str | None = None


class PurgeReceipt(_Shape):
    fact_id: int
    fact_hash: str
    source_id: str
    subject: str | None
    visibility: str
    stores: list[StoreReport]
    residuals: list[StoreReport] = Field(default_factory=list)
    # Dry run only: what the real run must hand back.
    confirm_token: str | None = None
    expected_revision: str | None = None


class ReadItem(_Shape):
    """One row as an explicit read or a context pack returns it, with its trust label."""

    kind: Literal["page", "fact"]
    id: int
    source_id: str
    slug: str | None = None
    title: str | None = None
    entity_slug: str | None = None
    text: str
    trust_tier: TrustTier
    origin: str
    label: str
    unconfirmed: bool = False
    contested: Contested | None = None
    expired_at: str | None = None
    superseded_by: int | None = None
    # A written-back fact's provenance (seed contract v2): the stamp, session and page it came from.
    provenance: str | None = None
    session_id: str | None = None
    page_slug: str | None = None


class FactStateInfo(_Shape):
    id: int
    entity_slug: str | None
    fact: str
    expired: bool
    superseded: bool


class _Outcome(_Shape):
    ok: bool = True
    code: str | None = None
    message: str | None = None


class NamespaceOpened(_Outcome):
    op: Literal["open_namespace"] = "open_namespace"
    sources: list[str] = Field(default_factory=list)
    connector_source: str | None = None


class Written(_Outcome):
    """A page or fact write: where it went and how it was stamped."""

    op: Literal["owner_write", "owner_sync", "put_page", "capture", "connector_ingest", "remember", "forget"]
    ref: RowRef | None = None
    slug: str | None = None
    source: str | None = None
    tier: TrustTier | None = None
    gate: GateVerdict | None = None
    status: str | None = None
    contested: Contested | None = None
    imported: list[str] = Field(default_factory=list)


class Confirmed(_Outcome):
    op: Literal["confirm"] = "confirm"
    status: Literal["confirmed", "unchanged"] | None = None
    tier: TrustTier | None = None


class Purged(_Outcome):
    op: Literal["purge"] = "purge"
    receipt: PurgeReceipt | None = None


class Raised(_Outcome):
    op: Literal["raise_tier_raw"] = "raise_tier_raw"


class Settled(_Outcome):
    op: Literal["settle"] = "settle"
    pending: int = 0


class Read(_Outcome):
    op: Literal["get_page", "search", "recall", "context_pack"]
    items: list[ReadItem] = Field(default_factory=list)
    # Proactive surfaces only: how many rows were withheld, never what they said.
    withheld: int = 0


class Introspected(_Outcome):
    """The stored truth the scorer compares reads against."""

    op: Literal["row_tier", "fact_state", "fact_id_by_claim", "page_id", "canary_persisted", "canary_held",
                "row_flagged", "claim_active", "canonical_files"]
    tier: TrustTier | None = None
    # row_tier of a page: where it lives (what its explicit reads are asked for).
    slug: str | None = None
    source: str | None = None
    fact: FactStateInfo | None = None
    ref: RowRef | None = None
    answer: bool | None = None
    slugs: list[str] = Field(default_factory=list)


MemoryOutcome = Annotated[
    NamespaceOpened | Written | Confirmed | Purged | Raised | Settled | Read | Introspected,
    Field(discriminator="op"),
]


OUTCOME_OF: dict[str, type[_Outcome]] = {
    "open_namespace": NamespaceOpened,
    **{op: Written for op in ("owner_write", "owner_sync", "put_page", "capture", "connector_ingest", "remember",
                              "forget")},
    "confirm": Confirmed, "purge": Purged, "raise_tier_raw": Raised, "settle": Settled,
    **{op: Read for op in ("get_page", "search", "recall", "context_pack")},
    **{op: Introspected for op in ("row_tier", "fact_state", "fact_id_by_claim", "page_id", "canary_persisted",
                                   "canary_held", "row_flagged", "claim_active", "canonical_files")},
}


def refusal(op: str, code: str, message: str | None = None, **fields: Any) -> Any:
    """``ok: false`` with ``code``, in the outcome shape of ``op``."""
    return OUTCOME_OF[op](op=op, ok=False, code=code, message=(message or code)[:500], **fields)


def outcome_from_json(op: str, data: Any) -> Any:
    """Parse an answer to a request of verb ``op`` (an image's operations command sends JSON)."""
    return OUTCOME_OF[op].model_validate(data)


class MemoryRequestDocument(RootModel[MemoryRequest]):
    """One request as JSON: what an image's operations command reads (published as memory-request.schema.json)."""

    model_config = ConfigDict(title="BrainBench memory operation request")


class MemoryOutcomeDocument(RootModel[MemoryOutcome]):
    """One answer as JSON: what an operations command writes back (memory-outcome.schema.json)."""

    model_config = ConfigDict(title="BrainBench memory operation outcome")
