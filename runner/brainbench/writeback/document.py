"""The write-back document an image's ``write_back`` command reads (seed contract v2), and its grading.

Built by the very steps our own write-back takes (``pipeline.py``): the same rendered page,
parsed as the importer parses it, split into the same segments, each handed to the same
extractor.  Only where the facts are stored differs: in the image's own store.  Grading reads
them back through the image's ``recall`` (``page_slug`` set) and applies our scoring rules to
what came back (``score.py``).
"""

from __future__ import annotations

from collections.abc import Sequence

from brainbench.brain.markdown import PageParseError, parse_page
from brainbench.brain.store import FactRow
from brainbench.corpus.loader import LoadedFixture
from brainbench.models.corpus import Fixture
from brainbench.models.memory import ReadItem
from brainbench.models.write_back_doc import TranscriptMessage, WriteBackDocument, WriteBackSegment
from brainbench.models.writeback import WriteBackScore
from brainbench.writeback.extractors import Extractor
from brainbench.writeback.page import MissingTimestampError, conversation_slug, page_title, render_conversation_page
from brainbench.writeback.parse import parse_messages
from brainbench.writeback.pipeline import WriteBackError
from brainbench.writeback.score import EXTRACT_SOURCE, score_rows
from brainbench.writeback.segment import segment_input, session_id, split_into_segments


def write_back_document(loaded: LoadedFixture, extractor: Extractor | None) -> WriteBackDocument:
    """One fixture's session for an image; ``extractor`` None: --llm, the image extracts itself."""
    return document_for(loaded.fixture, extractor)


def document_for(fixture: Fixture, extractor: Extractor | None) -> WriteBackDocument:
    """The write-back document of ``fixture``'s session, rendered as a run renders it (doctor's sample too)."""
    slug = conversation_slug(fixture.fixture_id)
    try:
        content = render_conversation_page(fixture)
        parsed = parse_page(slug, content)
    except (MissingTimestampError, PageParseError) as exc:
        raise WriteBackError(f"write-back failed for fixture {fixture.fixture_id} at {slug}: {exc}") from exc
    title = parsed.title or slug
    body = "\n\n".join(part for part in (parsed.compiled_truth, parsed.timeline) if part)
    segments = []
    for segment in split_into_segments(parse_messages(body)):
        given = segment_input(segment, page_slug=slug, page_title=title, source=fixture.source)
        facts = extractor.extract(given) if extractor is not None else []
        segments.append(WriteBackSegment(**given.model_dump(), facts=facts))
    return WriteBackDocument(
        fixture_id=fixture.fixture_id, source=fixture.source, session_id=session_id(slug), page_slug=slug,
        page_title=page_title(fixture.fixture_id), provenance=EXTRACT_SOURCE, llm=extractor is None, page=content,
        transcript=[TranscriptMessage(role=t.role, text=t.text, ts=t.ts) for t in fixture.turns],
        segments=segments)


def rows_from_reads(items: Sequence[ReadItem]) -> list[FactRow]:
    """The facts an image's recall returned, as the rows our scorer reads (its provenance as it said)."""
    return [FactRow(id=i, source_id=item.source_id, entity_slug=item.entity_slug, fact=item.text, kind="fact",
                    source=item.provenance or "", source_session=item.session_id,
                    source_markdown_slug=item.page_slug, row_num=None, expired_at=item.expired_at)
            for i, item in enumerate(items) if item.kind == "fact"]


def score_image_write_back(loaded: LoadedFixture, items: Sequence[ReadItem], failure: str | None) -> WriteBackScore:
    """Grade an image's write-back by what its recall returned; ``failure`` (the command or the read
    failed) grades every gold fact lost, with the reason."""
    score = score_rows(loaded, rows_from_reads(items) if failure is None else [])
    if failure is None:
        return score
    return score.model_copy(update={"failed_items": [f"{loaded.fixture_id}: {failure}", *score.failed_items]})
