"""Seed contract v1 and v2: how an image declares that it seeds its own brain, and what its commands read.

An image labelled ``io.brainbench.brain`` (a :class:`BrainContract`) keeps its memory in a
database of its own schema: the runner creates a template database per run (extensions
first, then the image's ``init``), clones it per fixture, and runs the image's ``seed``
with one :class:`SeedDocument` on stdin.  docs/HOOK_AUTHORS.md ("Seed contract v1")
is the prose; the published schemas are generated from these models.

Version 2 (the memory lifecycle contract, docs/HOOK_AUTHORS.md "Seed contract v2") adds what
a memory system needs to be graded on write-back, continuity and the memory-trust suites:
the harness lifecycle events its hook handles (``events``), a ``write_back`` command (one
:class:`WriteBackDocument` on stdin, ``models/write_back_doc.py``) and an ``operations``
command (one memory-operations request on stdin, its answer on stdout, ``models/memory.py``).
A v1 label parses exactly as before.
"""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from brainbench.models import bounded_json
from brainbench.models.memory import OUTCOME_OF

LABEL_BRAIN = "io.brainbench.brain"
SEED_CONTRACT_VERSION = 2
# Why write-back and continuity rows of an image-seeded seam are not scored (contract v1).
NOT_APPLICABLE_REASON = "image-seeded brain: no write-back command in seed contract v1"
TRUST_NOT_APPLICABLE_REASON = "image-seeded brain: no operations command in seed contract v1"
# The same, for a v2 image that declares no such command.
V2_NO_WRITE_BACK_REASON = "image-seeded brain: the image declares no write_back command (seed contract v2)"
V2_NO_OPERATIONS_REASON = "image-seeded brain: the image declares no operations command (seed contract v2)"

TRUST_SUITE_NAMES = ("trust", "state-resolution", "poisoning", "deletion")

# The lifecycle events a real harness calls its hooks with, per harness (wire-contracts.md §1–§3).
# The first of each list that the runner already calls for every seam is the prompt event; the
# others are called only for an image that declares them (seed contract v2).
LIFECYCLE_EVENTS: dict[str, tuple[str, ...]] = {
    "claude-code": ("SessionStart", "UserPromptSubmit", "Stop", "SessionEnd"),
    "codex": ("SessionStart", "UserPromptSubmit", "Stop"),
    # OpenClaw plugin hooks: before_prompt_build is the prompt call the bridge already makes.
    "openclaw": ("before_prompt_build", "agent_end", "session_end"),
}
# Per harness: the event called once at the start, after each assistant turn, and at the end.
SESSION_START = {"claude-code": "SessionStart", "codex": "SessionStart"}
AFTER_ASSISTANT = {"claude-code": "Stop", "codex": "Stop", "openclaw": "agent_end"}
SESSION_END = {"claude-code": "SessionEnd", "openclaw": "session_end"}

Argv = Annotated[list[Annotated[str, Field(min_length=1)]], Field(min_length=1)]
# An extension name as CREATE EXTENSION takes it (quoted identifier: uuid-ossp has a dash).
ExtensionName = Annotated[str, Field(pattern=r"^[A-Za-z0-9_][A-Za-z0-9_-]{0,62}$")]
# Every verb a memory request can carry (models/memory.py).
OperationVerb = Literal[tuple(OUTCOME_OF)]  # type: ignore[valid-type]


# What an image may have the runner create (as superuser) in a template on the *shared* brain
# server: what real memory systems use for vectors, fuzzy and full-text matching, ids, hashes
# and key/value or tree columns.  Each works inside its database only.  Anything else — dblink
# and postgres_fdw (connect anywhere the server can reach, its loopback included), file_fdw and
# adminpack (server files), untrusted languages (plpython3u, plperlu: programs as the server) —
# only on a sealed private server of the image's own (``"server": "private"``).
SHARED_EXTENSIONS = ("vector", "pg_trgm", "pgcrypto", "uuid-ossp", "btree_gin", "btree_gist", "citext",
                     "fuzzystrmatch", "hstore", "ltree", "unaccent", "intarray")


def refused_on_shared(extensions: list[str] | tuple[str, ...]) -> list[str]:
    """The declared extensions a shared server does not create, in the order declared."""
    return [name for name in extensions if name not in SHARED_EXTENSIONS]


def shared_refusal(extensions: list[str] | tuple[str, ...]) -> str:
    refused = refused_on_shared(extensions)
    return (f"declares extension{'s' if len(refused) > 1 else ''} {', '.join(map(repr, refused))}, which the "
            f"shared brain server does not create (allowed there: {', '.join(SHARED_EXTENSIONS)}); "
            'an image that needs it declares "server": "private" (a sealed server of its own, docker executor)')


class BrainContractError(ValueError):
    """A label that does not parse: one line naming the image and the field."""


class BrainContract(BaseModel):
    """The value of the ``io.brainbench.brain`` image label (seed contract version 1 or 2)."""

    model_config = ConfigDict(extra="forbid", frozen=True,
                              title="BrainBench seed contract (io.brainbench.brain label, version 1 or 2)")

    version: Literal[1, 2] = Field(description="Seed contract version: 1 (init, seed) or 2 (adds events, "
                                   "write_back, operations).")
    seed: Argv = Field(description="Exec-form argv run once per fixture with a SeedDocument on stdin.")
    init: Argv | None = Field(default=None, description="Exec-form argv run once per run against the template "
                              "database (stdin closed), e.g. to create the schema.")
    extensions: list[ExtensionName] = Field(
        default_factory=list, description="Created by the runner as superuser in the template before init. On the "
        "shared server only: " + ", ".join(SHARED_EXTENSIONS) + "; any other only with server=private.")
    server: Literal["shared", "private"] = Field(
        default="shared",
        description="shared: the seam's databases live on the run's brain server, owned by least-privilege roles. "
        "private: on a Postgres server of the seam's own (a throw-away container on a network only that seam "
        "reaches; Docker executor), whose superuser URL init, seed and hook get: for systems whose schema "
        "needs superuser (event triggers, BYPASSRLS).")
    init_timeout_s: float = Field(default=120.0, gt=0, le=3600)
    seed_timeout_s: float = Field(default=60.0, gt=0, le=3600)
    # --- version 2 -------------------------------------------------------------------------
    events: dict[str, list[str]] = Field(
        default_factory=dict,
        description="Version 2: per harness (claude-code, codex, openclaw), the lifecycle events the image's hook "
        "handles; the runner calls each during replay as that harness would (claude-code: SessionStart, "
        "UserPromptSubmit, Stop, SessionEnd; codex: SessionStart, UserPromptSubmit, Stop; openclaw: "
        "before_prompt_build, agent_end, session_end).")
    write_back: Argv | None = Field(
        default=None, description="Version 2: exec-form argv run once per session to write back, with a "
        "WriteBackDocument on stdin (write-back-document.schema.json).")
    operations: Argv | None = Field(
        default=None, description="Version 2: exec-form argv run once per memory operation, with one request "
        "on stdin (memory-request.schema.json) and its answer on stdout (memory-outcome.schema.json).")
    operations_verbs: list[OperationVerb] | None = Field(
        default=None, description="Version 2, with operations: the verbs (a request's op) the operations command "
        "answers. The runner answers every other verb unsupported itself, without a call, as an honest command "
        "would; absent, every request goes to the command. A run sends ~1,000 operations, most of them verbs a "
        "young memory system does not have: each undeclared one is a process start saved.")
    write_back_timeout_s: float = Field(default=60.0, gt=0, le=3600)
    operations_timeout_s: float = Field(default=30.0, gt=0, le=3600)

    @model_validator(mode="after")
    def _v2_fields(self) -> BrainContract:
        if self.version == 1:
            for name in ("events", "write_back", "operations", "operations_verbs"):
                if getattr(self, name):
                    raise ValueError(f"{name} needs \"version\": 2")
        if self.operations_verbs is not None and self.operations is None:
            raise ValueError("operations_verbs needs an operations command")
        for harness, events in self.events.items():
            known = LIFECYCLE_EVENTS.get(harness)
            if known is None:
                raise ValueError(f"events: unknown harness {harness!r} (one of {', '.join(LIFECYCLE_EVENTS)})")
            unknown = [e for e in events if e not in known]
            if unknown:
                raise ValueError(f"events.{harness}: unknown event {unknown[0]!r} (one of {', '.join(known)})")
        return self

    def no_path(self, suite: str) -> str | None:
        """Why ``suite`` cannot be graded for this image (the n/a reason), or None when it can.

        write-back needs ``write_back`` and ``operations`` (the facts are read back through
        ``recall``); continuity needs ``write_back`` (the reader's hook reads what it wrote);
        the memory-trust suites need ``operations``."""
        if self.version == 1:
            if suite in ("write-back", "continuity"):
                return NOT_APPLICABLE_REASON
            return TRUST_NOT_APPLICABLE_REASON if suite in TRUST_SUITE_NAMES else None
        if suite in ("write-back", "continuity") and self.write_back is None:
            return V2_NO_WRITE_BACK_REASON
        if suite == "write-back" and self.operations is None:
            return V2_NO_OPERATIONS_REASON + ": its written-back facts cannot be read back"
        if suite in TRUST_SUITE_NAMES and self.operations is None:
            return V2_NO_OPERATIONS_REASON
        return None

    def not_applicable(self) -> dict[str, str]:
        """Suite → the n/a reason, for every suite the image has no path to."""
        return {suite: why for suite in ("write-back", "continuity", *TRUST_SUITE_NAMES)
                if (why := self.no_path(suite)) is not None}

    def handles(self, harness: str, event: str) -> bool:
        """Whether the image's hook asks to be called with ``event`` under ``harness`` (v2 only)."""
        return event in self.events.get(harness, ())

    @classmethod
    def from_label(cls, image: str, text: str) -> BrainContract:
        """Parse the label of ``image``; any fault is a :class:`BrainContractError` of one line."""
        where = f"image {image}: label {LABEL_BRAIN}"
        try:
            doc = bounded_json.loads(text)
        except json.JSONDecodeError as exc:
            raise BrainContractError(f"{where}: not JSON ({exc.msg} at column {exc.colno})") from exc
        if not isinstance(doc, dict):
            raise BrainContractError(f"{where}: must be a JSON object, got {type(doc).__name__}")
        try:
            contract = cls.model_validate(doc)
        except ValidationError as exc:
            err = exc.errors()[0]
            field = ".".join(str(p) for p in err["loc"]) or "(top level)"
            raise BrainContractError(f"{where}: field {field!r}: {err['msg']}") from exc
        return contract

    def extension_refusal(self) -> str | None:
        """One line when the label declares an extension the shared server does not create; else None.

        Not a label error: the run goes on and that seam's fixtures are its seed failures
        (``orchestrator/image_seed.py``), so one image's declaration costs only its own grade.
        """
        if self.server != "shared" or not refused_on_shared(self.extensions):
            return None
        return f"label {LABEL_BRAIN}: field 'extensions': {shared_refusal(self.extensions)}"


def brain_contract_of(image: str, labels: dict[str, str]) -> BrainContract | None:
    """The image's seed contract, or None when it uses our schema and our seeding."""
    text = labels.get(LABEL_BRAIN)
    return None if text is None else BrainContract.from_label(image, text)


class _Doc(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class SeedDocumentPage(_Doc):
    slug: str
    source: str = Field(description="The source the page lives in (the fixture's source_id, else default).")
    content: str = Field(description="The raw markdown exactly as in the fixture, frontmatter included.")
    frontmatter: dict[str, Any] = Field(description="The parsed YAML frontmatter ({} when there is none); "
                                        "timestamps as ISO-8601 UTC strings.")
    title: str = Field(description="Derived exactly as BrainBench's own seeding derives it.")
    type: str = Field(description="Derived exactly as BrainBench's own seeding derives it.")
    body: str = Field(description="The markdown after the frontmatter.")


class SeedDocumentAlias(_Doc):
    slug: str
    source: str
    alias: str = Field(description="Normalised as BrainBench stores it (NFKC, lower case, spaces folded).")


class SeedDocumentFact(_Doc):
    source: str = Field(description="The source the fact lives in (the fixture's source_id, else default).")
    fact: str
    entity_slug: str | None
    provenance: str = Field(description="The fixture's fact `source` (e.g. bench:seed), else bench:seed.")
    source_session: str | None = None


class SeedDocument(_Doc):
    """One fixture's seed data, on the stdin of the image's ``seed`` command.  Everything is in
    fixture order: a slug may repeat (a later page replaces the earlier one in its source)."""

    model_config = ConfigDict(extra="forbid", frozen=True, title="BrainBench seed document (schema_version 1)")

    schema_version: Literal[1] = 1
    fixture_id: str
    active_source: str = Field(description="The source the fixture's hook calls read (BRAINBENCH_SOURCE).")
    sources: list[str] = Field(description="Every source the fixture uses, first-seen order, default first.")
    pages: list[SeedDocumentPage]
    aliases: list[SeedDocumentAlias]
    facts: list[SeedDocumentFact]
