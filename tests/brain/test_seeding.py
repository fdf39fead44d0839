"""Seeding reproduces gbrain's stored pages and aliases exactly; brains are isolated."""

from __future__ import annotations

import json
from pathlib import Path

import psycopg
import pytest
from brainbench.brain.databases import BrainDatabases, list_brainbench_databases
from brainbench.brain.roles import list_brainbench_roles
from brainbench.brain.seeding import SeedError, seed_fixture
from brainbench.brain.store import connect, import_page
from brainbench.corpus.loader import load_corpus
from brainbench.models.corpus import Fixture


def _reference_brains(reference: Path) -> list[dict[str, object]]:
    return json.loads((reference / "turns" / "gbrain-seeded-brains-handauthored.json").read_text())


@pytest.mark.parametrize("index", range(7))
def test_seeded_pages_match_gbrain(reference: Path, brain: tuple[psycopg.Connection, str], index: int) -> None:
    conn, _ = brain
    expected = _reference_brains(reference)[index]
    corpus = load_corpus(reference / "corpus" / "fixtures", reference / "corpus" / "gold").by_id()
    seed_fixture(conn, corpus[str(expected["fixture_id"])].fixture)
    rows = conn.execute(
        "SELECT source_id, slug, type, title, frontmatter::text, compiled_truth, content_hash FROM pages"
        " ORDER BY source_id, slug").fetchall()
    got = [{"source_id": r[0], "slug": r[1], "type": r[2], "title": r[3], "frontmatter": json.loads(r[4]),
            "compiled_truth": r[5], "content_hash": r[6]} for r in rows]
    want = sorted(({k: p[k] for k in ("source_id", "slug", "type", "title", "frontmatter", "compiled_truth",
                                      "content_hash")} for p in expected["pages"]),  # type: ignore[attr-defined]
                  key=lambda p: (p["source_id"], p["slug"]))
    assert got == want
    for row in rows:  # YAML key order survives storage: it is part of the hash
        ref = next(p for p in expected["pages"] if p["slug"] == row[1] and p["source_id"] == row[0])  # type: ignore
        assert list(json.loads(row[4])) == list(ref["frontmatter"])
    aliases = sorted(conn.execute("SELECT source_id, alias_norm, slug FROM page_aliases").fetchall())
    want_aliases = sorted((a["source_id"], a["alias_norm"], a["slug"]) for a in expected["page_aliases"])  # type: ignore
    assert aliases == want_aliases


def _fixture(**pages: str) -> Fixture:
    return Fixture.model_validate({
        "schema_version": 1, "fixture_id": "iso", "suites": ["know-to-ask"],
        "seed_pages": [{"slug": slug.replace("__", "/"), "content": content} for slug, content in pages.items()],
        "turns": [{"turn_id": 1, "role": "user", "text": "hi"}],
    })


def test_a_sentinel_in_one_brain_is_invisible_to_another(brain_dbs: BrainDatabases) -> None:
    name_a, url_a = brain_dbs.create()
    name_b, url_b = brain_dbs.create()
    try:
        with connect(url_a) as a:
            seed_fixture(a, _fixture(people__sentinel_zed="---\ntitle: Sentinel Zed\ntype: person\n---\nbody\n"))
            assert a.execute("SELECT count(*) FROM pages").fetchone() == (1,)
        with connect(url_b) as b:
            assert b.execute("SELECT count(*) FROM pages").fetchone() == (0,)
            assert b.execute("SELECT count(*) FROM page_aliases").fetchone() == (0,)
    finally:
        brain_dbs.drop(name_a)
        brain_dbs.drop(name_b)


def test_title_is_not_an_alias_and_identical_reseed_fails(brain: tuple[psycopg.Connection, str]) -> None:
    conn, _ = brain
    content = "---\ntitle: Alice Example\ntype: person\naliases: [alice, 'Ally ']\n---\n\nAlice.\n"
    assert import_page(conn, "people/alice-example", content, "default")[0] == "imported"
    aliases = [r[0] for r in conn.execute("SELECT alias_norm FROM page_aliases ORDER BY alias_norm")]
    assert aliases == ["alice", "ally"]
    assert import_page(conn, "people/alice-example", content, "default")[0] == "skipped"


def test_seed_failures_are_reported_per_fixture(brain: tuple[psycopg.Connection, str]) -> None:
    conn, _ = brain
    huge = "---\ntitle: Big\ntype: concept\n---\n" + "x" * 5_000_001
    with pytest.raises(SeedError, match="seed failed for fixture iso at concepts/big"):
        seed_fixture(conn, _fixture(concepts__big=huge))
    with pytest.raises(SeedError, match="unparsable YAML"):
        seed_fixture(conn, _fixture(concepts__bad="---\ntitle: [unclosed\n---\nbody\n"))


def test_run_databases_are_dropped_on_close(pg_server: object) -> None:
    dbs = BrainDatabases(pg_server, "closetest", ["claude-code"])  # type: ignore[arg-type]
    dbs.prepare()
    dbs.create()
    dbs.create()
    assert any(rid == "closetest" for _, rid, _ in list_brainbench_databases(pg_server))
    with psycopg.connect(pg_server.admin_url, autocommit=True) as admin:  # type: ignore[attr-defined]
        assert [r for _, r, _ in list_brainbench_roles(admin)].count("closetest") == 2
    dbs.close()
    assert not any(rid == "closetest" for _, rid, _ in list_brainbench_databases(pg_server))
    with psycopg.connect(pg_server.admin_url, autocommit=True) as admin:  # type: ignore[attr-defined]
        assert "closetest" not in [r for _, r, _ in list_brainbench_roles(admin)], "the hook roles go with the run"


def test_leased_brains_are_distinct_while_held_and_empty_when_reused(brain_dbs: BrainDatabases) -> None:
    with brain_dbs.lease() as a, brain_dbs.lease() as b:
        assert a.name != b.name
        seed_fixture(a.conn, _fixture(people__sentinel_zed="---\ntitle: Sentinel Zed\ntype: person\n---\nbody\n"))
        a.conn.execute("INSERT INTO sources (id, name) VALUES ('teambrain', 'x')")
        # A trust fixture's settings and flags must not reach the next fixture's seams.
        a.conn.execute("INSERT INTO config (key, value) VALUES ('trust.agent_activation', 'suppress')")
        a.conn.execute("INSERT INTO write_gate_receipts (target_table, target_id, source_id, content_hash, tier,"
                       " detector_version, verdict) VALUES ('pages', '1', 'default', 'h', 'agent_written', 2, 'flag')")
        with connect(b.url) as other:
            assert other.execute("SELECT count(*) FROM pages").fetchone() == (0,)
    with brain_dbs.lease() as c:
        assert c.name in (a.name, b.name)
        with connect(c.url) as fresh:
            assert fresh.execute("SELECT count(*) FROM pages").fetchone() == (0,)
            assert fresh.execute("SELECT array_agg(id) FROM sources").fetchone() == (["default"],)
            assert fresh.execute("SELECT nextval('facts_id_seq')").fetchone() == (1,)
            assert fresh.execute("SELECT (SELECT count(*) FROM config) + (SELECT count(*) FROM write_gate_receipts)"
                                 ).fetchone() == (0,)
            assert fresh.execute("SELECT nextval('write_gate_receipts_id_seq')").fetchone() == (1,)


def test_parse_ahead_leaves_each_seed_only_its_writes_and_no_error_of_its_own(reference: Path) -> None:
    from brainbench.brain.markdown import parse_page
    from brainbench.brain.seeding import parse_ahead
    from brainbench.corpus.slugs import validate_slug

    corpus = load_corpus(reference / "corpus" / "fixtures", reference / "corpus" / "gold")
    fixtures = [item.fixture for item in corpus.fixtures]
    broken = Fixture.model_validate({**fixtures[0].model_dump(mode="json", exclude_none=True),
                                     "fixture_id": "broken-page",
                                     "seed_pages": [{"slug": "Not A Slug!", "content": "x"},
                                                    {"slug": "ok/page", "content": "---\nbad: [\n---\nbody"}]})
    parse_page.cache_clear()
    parse_ahead([broken, *fixtures])  # the bad slug and the bad frontmatter are left to their seed
    pages = [(validate_slug(p.slug), p.content) for f in fixtures for p in f.seed_pages or []]
    before = parse_page.cache_info()
    for slug, content in pages:
        parse_page(slug, content)
    after = parse_page.cache_info()
    assert pages and after.hits - before.hits == len(pages) and after.misses == before.misses
