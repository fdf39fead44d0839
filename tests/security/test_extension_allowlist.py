"""Extensions on the shared brain server: an allowlist, and a refusal that costs the declaring image only.

The runner creates an image's declared extensions as superuser in its template.  On the shared
server that used to include anything: ``dblink`` gave a hook with no network a client that
reaches the host's loopback and every Postgres the server can reach.  Now only
``SHARED_EXTENSIONS`` (``models/seed.py``) are created there; any other is refused in one line
naming what the label declared, nothing is created, and every fixture of that seam is its seed
failure while the other seams are graded as in a clean run.  ``doctor`` fails the label check with
the same line.  A private server (sealed, the image's own) may still have any.
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import psycopg
import pytest
from brainbench.brain.databases import BrainDatabases
from brainbench.brain.image_brains import ExtensionRefused, ImageSeededBrains
from brainbench.models.seed import SHARED_EXTENSIONS, BrainContract
from hostile_kit import bench, honest_view, run_result
from reference_corpus import copy_reference_corpus  # type: ignore[import-not-found]

FIXTURES = ("kta-001-deal-recall", "ms-002-nondefault-active")
HONEST = ("claude-code", "openclaw")
FORBIDDEN = ("dblink", "postgres_fdw", "file_fdw", "adminpack", "plpython3u", "plperlu", "lo", "pg_stat_statements")


def _label(extensions: list[str], server: str = "shared") -> str:
    return json.dumps({"version": 1, "server": server, "extensions": extensions, "seed": ["/opt/memo/seed"]})


@pytest.mark.parametrize("name", FORBIDDEN)
def test_an_extension_off_the_list_is_refused_in_one_line_naming_it(name: str) -> None:
    contract = BrainContract.from_label("evil:1", _label(["pg_trgm", name]))
    why = contract.extension_refusal()
    assert why is not None and "\n" not in why
    assert f"'{name}'" in why and "'pg_trgm'" not in why and '"server": "private"' in why, why
    # The same image on a sealed server of its own may have it.
    assert BrainContract.from_label("evil:1", _label([name], "private")).extension_refusal() is None


def test_what_memory_systems_use_is_allowed() -> None:
    for name in ("vector", "pg_trgm", "pgcrypto", "uuid-ossp", "btree_gin", "btree_gist", "citext",
                 "fuzzystrmatch", "hstore", "ltree", "unaccent"):
        assert name in SHARED_EXTENSIONS
    assert BrainContract.from_label("ok:1", _label(list(SHARED_EXTENSIONS))).extension_refusal() is None
    assert not set(FORBIDDEN) & set(SHARED_EXTENSIONS)


def test_no_path_creates_a_refused_extension_on_the_shared_server(pg_server: Any) -> None:
    dbs = BrainDatabases(pg_server, f"x26p{uuid.uuid4().hex[:6]}", [])
    dbs.prepare()
    try:
        brains = ImageSeededBrains(dbs, "codex", "evil:1", ["pg_trgm", "dblink"])
        with pytest.raises(ExtensionRefused, match="'dblink'"):
            brains.prepare_template()
        with psycopg.connect(pg_server.admin_url, autocommit=True) as conn:
            assert not conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (brains.template,)).fetchall()
    finally:
        assert dbs.close() == []


# --- a real image: a run and doctor ---------------------------------------------------------

BASE = "brainbench/example-base:bookworm"  # Debian with psql and jq
SEED = "#!/bin/sh\ncat >/dev/null\n"
# What the hook would do with dblink: reach whatever the server reaches, from a container with no network.
HOOK = """#!/bin/sh
cat >/dev/null
psql "$BRAINBENCH_DATABASE_URL" -X -q -t -A \\
  -c "SELECT * FROM dblink('host=127.0.0.1 dbname=postgres', 'SELECT current_user') AS t(u text)" >&2
"""


@pytest.fixture(scope="module")
def dblink_image() -> str:
    from container_kit import CLIENT, REASON  # type: ignore[import-not-found]
    from image_build import build_image  # type: ignore[import-not-found]

    if CLIENT is None:
        pytest.skip(REASON)
    label = _label(["pg_trgm", "dblink"])
    return build_image(CLIENT, "bbtest-26p-dblink:latest", {
        "Dockerfile": f"FROM {BASE}\nCOPY seed hook /opt/memo/\nLABEL io.brainbench.brain={json.dumps(label)}\n"
                      'LABEL io.brainbench.contract-version="1" io.brainbench.modes="exec"\n'
                      'USER 65534:65534\nENTRYPOINT ["/opt/memo/hook"]\n',
        "seed": SEED, "hook": HOOK})


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory, reference: Path) -> tuple[Path, Path]:
    return copy_reference_corpus(reference, tmp_path_factory.mktemp("ext-corpus"), FIXTURES)


def test_an_image_declaring_dblink_fails_its_own_fixtures_only(corpus: tuple[Path, Path], dblink_image: str,
                                                               tmp_path: Path) -> None:
    _, clean = run_result(corpus, tmp_path / "clean.json")
    seams = tmp_path / "seams.toml"
    seams.write_text(f'[seams.codex]\nimage = "{dblink_image}"\n')
    proc, result = run_result(corpus, tmp_path / "result.json", "--seams", str(seams))
    assert proc.returncode == 2, proc.stderr
    failures = result["seed_failures"]
    assert {f["fixture_id"] for f in failures} == set(FIXTURES), failures
    for failure in failures:
        assert "codex" in failure["error"] and "'dblink'" in failure["error"], failure
        assert "allowed there:" in failure["error"] and "\n" not in failure["error"]
    assert not [f for f in result["_meta"]["faults"] if f["harness"] != "codex"]
    assert honest_view(result, HONEST) == honest_view(clean, HONEST), "an honest seam's grade moved"


def test_doctor_fails_the_label_check_with_the_same_line(dblink_image: str) -> None:
    proc = bench("doctor", "--image", dblink_image)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stdout + proc.stderr
    row = [line for line in proc.stdout.splitlines() if "seed contract label" in line]
    assert row and "FAIL" in row[0] and "'dblink'" in row[0], proc.stdout  # the table wraps the rest
    assert '"server": "private"' in proc.stdout, proc.stdout
