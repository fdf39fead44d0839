"""The owner's own store: canonical markdown files the owner edits out of band, imported by a sync.

A file the sync has not seen in this form (by content hash) is imported at the owner's tier
(``operator_curated``, lowered by the page's own frontmatter); its facts fence becomes facts at
that tier.  A claim the owner purged stays gone: a tombstoned fence row is dropped from the
imported page (and so from its chunks) and never becomes a fact again, even when the owner
puts back a stale copy of the file.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from brainbench.brain.markdown import PageParseError
from brainbench.memory.reference import pages
from brainbench.memory.reference.context import Store
from brainbench.memory.reference.facts import project_fence, tombstoned
from brainbench.memory.reference.fence import fence_rows, fingerprint, without_rows
from brainbench.memory.reference.stamping import write_origin, write_tier, writer
from brainbench.models.trust import TrustTier

CHANNEL = "owner_sync"


def file_of(store: Store, slug: str) -> Path:
    path = (store.ns.owner_dir / f"{slug}.md").resolve()
    if store.ns.owner_dir.resolve() not in path.parents:
        raise ValueError(f"invalid_params: slug {slug!r} leaves the owner's store")
    return path


def write_file(store: Store, slug: str, content: str) -> None:
    path = file_of(store, slug)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(content, encoding="utf-8")


def _files(store: Store) -> list[tuple[str, Path]]:
    root = store.ns.owner_dir
    if not root.is_dir():
        return []
    return sorted((str(p.relative_to(root).with_suffix("")), p) for p in root.rglob("*.md") if p.is_file())


def sync(store: Store, request: dict[str, Any]) -> tuple[list[str], list[str]]:
    """Import every changed file; returns (imported slugs, errors)."""
    imported: list[str] = []
    errors: list[str] = []
    for slug, path in _files(store):
        raw = path.read_bytes()
        digest = hashlib.sha256(raw).hexdigest()
        row = store.conn.execute("SELECT sha256 FROM owner_files WHERE source_id = %s AND slug = %s",
                                 (store.ns.source, slug)).fetchone()
        if row is not None and row[0] == digest:
            continue
        try:
            _import(store, slug, raw.decode("utf-8"), digest, request)
        except (PageParseError, UnicodeDecodeError) as exc:
            errors.append(f"{slug}: {exc}")
            continue
        imported.append(slug)
    return imported, errors


def _import(store: Store, slug: str, content: str, digest: str, request: dict[str, Any]) -> None:
    rows = fence_rows(content)
    # What the owner purged does not come back with a stale copy of the file.
    content, _ = without_rows(content, lambda r: tombstoned(store, r.visibility, slug, r.claim))
    page = pages.parse(slug, content)
    tier: TrustTier = write_tier(CHANNEL, front=page.frontmatter)
    with writer(store.conn, tier, write_origin(CHANNEL, "owner")):
        store.journal("owner_sync", "owner", {**request, "slug": slug, "content": content})
        page_id, _ = pages.upsert(store, store.ns.source, page,
                                  {k: v for k, v in page.frontmatter.items() if k != pages.QUARANTINE_KEY})
        pages.rebuild_chunks(store, page_id)
        project_fence(store, slug, [r for r in rows if not tombstoned(store, r.visibility, slug, r.claim)])
        store.conn.execute(
            "INSERT INTO owner_files (source_id, slug, sha256) VALUES (%s, %s, %s)"
            " ON CONFLICT (source_id, slug) DO UPDATE SET sha256 = EXCLUDED.sha256", (store.ns.source, slug, digest))


def rewrite_without(store: Store, payload: dict[str, Any]) -> None:
    """Effect of a purge: the owner's file loses the purged fence rows (by fingerprint: no text kept)."""
    hashes = set(payload["fact_hashes"])
    for slug in payload["slugs"]:
        path = file_of(store, slug)
        if not path.is_file():
            continue
        text = path.read_text(encoding="utf-8")
        kept, removed = without_rows(text, lambda r: fingerprint(r.claim) in hashes)
        if removed:
            path.write_text(kept, encoding="utf-8")
            # The sync already holds this form (the purge rewrote the page the same way).
            store.conn.execute("UPDATE owner_files SET sha256 = %s WHERE source_id = %s AND slug = %s",
                               (hashlib.sha256(kept.encode("utf-8")).hexdigest(), store.ns.source, slug))


def files_containing(store: Store, slugs: list[str], needle: str) -> list[str]:
    found = []
    for slug in dict.fromkeys(slugs):
        try:
            path = file_of(store, slug)
        except ValueError:
            continue
        if path.is_file() and needle.lower() in path.read_text(encoding="utf-8", errors="replace").lower():
            found.append(slug)
    return found


def fence_slugs(store: Store, claim_hash: str) -> list[str]:
    """The owner's files whose fence carries a row with this fingerprint."""
    return [slug for slug, path in _files(store)
            if any(fingerprint(r.claim) == claim_hash for r in fence_rows(path.read_text(encoding="utf-8")))]
