"""Seed contract v2's write-back input: one session of a fixture, as the image's ``write_back`` reads it.

BrainBench's deterministic write-back (spec §6) renders a fixture's conversation as a page,
splits it into segments and hands each segment to an extractor.  An image's ``write_back``
command gets the same thing in one document: the page, and per segment what the gold
extractor returned for it.  So the image's own store, rendering, dedup and provenance are
graded, not an extraction model.  Under ``--llm`` (``llm: true``) every segment's ``facts``
is empty and the image extracts by itself from ``transcript``.

After the command, the runner reads the facts back with the ``recall`` operation
(``page_slug`` set) and grades fidelity (each gold fact found) and provenance (each found
fact carries ``provenance``, ``session_id`` and ``page_slug`` as given here).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from brainbench.models.writeback import ExtractedFact, SegmentInput


class WriteBackSegment(SegmentInput):
    """One segment as an extractor sees it, with the facts the extractor returned for it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    facts: list[ExtractedFact] = Field(description="The extractor's output for this segment, in order "
                                       "(empty under --llm: the image extracts itself).")


class TranscriptMessage(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    role: Literal["user", "assistant"]
    text: str
    ts: str | None = None


class WriteBackDocument(BaseModel):
    """One session to write back (stdin of the image's ``write_back`` command)."""

    model_config = ConfigDict(extra="forbid", frozen=True,
                              title="BrainBench write-back document (seed contract v2, schema_version 1)")

    schema_version: Literal[1] = 1
    fixture_id: str
    source: str = Field(description="The source the facts belong to (BRAINBENCH_SOURCE).")
    session_id: str = Field(description="The session's id: each stored fact's provenance carries it.")
    page_slug: str = Field(description="The conversation page: each stored fact's provenance carries it, and "
                           "the runner's recall asks for the facts of this page.")
    page_title: str
    provenance: str = Field(description="The provenance source each stored fact must carry "
                            "(what BrainBench's own pipeline stamps).")
    llm: bool = Field(description="true under --llm: no facts are given, the image extracts them itself.")
    page: str = Field(description="The conversation page as BrainBench's write-back renders it (markdown).")
    transcript: list[TranscriptMessage] = Field(description="The session's turns in order.")
    segments: list[WriteBackSegment]
