"""The embedded cluster made ahead on a thread (``prepare_ahead``) while the runner imports.

``open_server`` must take it when it asks for the same place, make its own when it asks for
another (deleting the one made ahead), and a cluster nobody takes must not outlive the process.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import psycopg
from brainbench.brain import server
from brainbench.brain.server import EMBEDDED_PREFIX, EmbeddedPostgres, open_server, prepare_ahead


def _clusters(scratch: Path) -> list[Path]:
    return sorted(scratch.glob(f"{EMBEDDED_PREFIX}*"))


def test_open_server_takes_the_cluster_made_ahead_and_sizes_it_then(short_scratch: Path,
                                                                    monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("BRAINBENCH_SCRATCH_DIR", str(short_scratch))
    prepare_ahead(ram_needed=1)
    made = server._ahead[1].result(timeout=60)  # type: ignore[index]
    assert not made._started, "made ahead means prepared, not running"
    assert _clusters(short_scratch) == [made.root]
    opened = open_server(None, max_connections=37, ram_needed=1)
    try:
        assert opened is made
        with psycopg.connect(opened.admin_url, autocommit=True) as conn:
            assert conn.execute("SHOW max_connections").fetchone() == ("37",)
        assert _clusters(short_scratch) == [made.root], "no second cluster"
    finally:
        opened.close()
    assert server._ahead is None
    assert _clusters(short_scratch) == []


def test_a_cluster_made_for_another_place_is_deleted_and_the_run_gets_its_own(short_scratch: Path,
                                                                              monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("BRAINBENCH_SCRATCH_DIR", str(short_scratch))
    prepare_ahead(ram_needed=0)  # no parent: the default place, which is not what open_server asks for below
    made = server._ahead[1].result(timeout=60)  # type: ignore[index]
    opened = open_server(None, max_connections=20, ram_needed=1)
    try:
        assert isinstance(opened, EmbeddedPostgres) and opened is not made
        assert not made.root.exists()
        assert _clusters(short_scratch) == [opened.root]
    finally:
        opened.close()


_UNTAKEN = """
import json, sys
from brainbench.brain import server
server.prepare_ahead(ram_needed=1)
print(json.dumps(str(server._ahead[1].result(timeout=60).root)), flush=True)
"""


def test_a_cluster_nobody_takes_is_deleted_when_the_process_exits(short_scratch: Path) -> None:
    env = {**os.environ, "BRAINBENCH_SCRATCH_DIR": str(short_scratch)}
    proc = subprocess.run([sys.executable, "-c", _UNTAKEN], env=env, capture_output=True, text=True, timeout=120,
                          check=False)
    assert proc.returncode == 0, proc.stderr
    root = Path(json.loads(proc.stdout))
    assert root.parent == short_scratch and root.name.startswith(EMBEDDED_PREFIX)
    assert not root.exists()
    assert _clusters(short_scratch) == []
