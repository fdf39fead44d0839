"""What the explicit read surfaces say about a row (trust spec §4.1), read through the memory operations.

A surface that did not return the row is absent; a read that failed reads as "no result".
"""

from __future__ import annotations

from dataclasses import dataclass, field

from brainbench.memory.operations import MemoryOperations
from brainbench.models import memory as m
from brainbench.models.trust import TIER_RANK, TrustTier

SEARCH_LIMIT = 20
RECALL_LIMIT = 50
CURRENT_LIMIT = 100


@dataclass
class SurfaceRead:
    surfaces: dict[str, TrustTier] = field(default_factory=dict)
    unconfirmed: bool = False


def _items(out: object) -> list[m.ReadItem]:
    return list(getattr(out, "items", []) or []) if getattr(out, "ok", False) else []


def page_read(ops: MemoryOperations, slug: str, source: str | None) -> SurfaceRead:
    read = SurfaceRead()
    pages = [i for i in _items(ops.perform(m.GetPage(slug=slug, source=source))) if i.slug == slug]
    title = None
    if pages:
        read.surfaces["get_page"] = pages[0].trust_tier
        read.unconfirmed |= pages[0].unconfirmed
        title = pages[0].title
    query = title or slug.rsplit("/", 1)[-1].replace("-", " ")
    hits = [i for i in _items(ops.perform(m.Search(query=query, limit=SEARCH_LIMIT)))
            if i.slug == slug and (source is None or i.source_id == source)]
    if hits:
        # A page's label is its best hit: no hit may claim more than the page.
        read.surfaces["search"] = max((h.trust_tier for h in hits), key=lambda t: TIER_RANK[t])
        read.unconfirmed |= any(h.unconfirmed for h in hits)
    return read


def fact_read(ops: MemoryOperations, fact_id: int) -> SurfaceRead:
    read = SurfaceRead()
    state = ops.perform(m.FactState(fact_id=fact_id)).fact  # type: ignore[union-attr]
    if state is None:
        return read
    ask = m.Recall(entity=state.entity_slug, limit=RECALL_LIMIT) if state.entity_slug else \
        m.Recall(query=state.fact, limit=RECALL_LIMIT)
    for item in _items(ops.perform(ask)):
        if item.id == fact_id:
            read.surfaces["recall"] = item.trust_tier
            read.unconfirmed |= item.unconfirmed
            break
    return read


def row_read(ops: MemoryOperations, ref: m.RowRef | None, slug: str | None = None,
             source: str | None = None) -> SurfaceRead:
    """The surfaces of a facts row (recall) or a page (get_page, search)."""
    if ref is not None and ref.table == "facts":
        return fact_read(ops, ref.id)
    if slug is None:
        return SurfaceRead()
    return page_read(ops, slug, source)


def current_fact_ids(ops: MemoryOperations, entity: str) -> set[int]:
    return {i.id for i in _items(ops.perform(m.Recall(entity=entity, limit=CURRENT_LIMIT)))
            if not i.expired_at and not i.superseded_by}
