"""N=200: more shards than work units; the empty ones are valid and the merge is still the single run.

Its own module, so that on xdist workers (whole modules per worker) it runs beside the other
shard tests rather than after them: it is the suite's longest test.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from forked_cli import ForkedCli  # type: ignore[import-not-found]
from test_merge_cli import merge_and_check, run_shards, single_run  # type: ignore[import-not-found]


@pytest.mark.timeout(1200)
def test_two_hundred_shards_merge_into_the_single_run(tmp_path_factory: pytest.TempPathFactory, tmp_path: Path,
                                                      pg_server: Any, forked: list[ForkedCli]) -> None:
    # N=200 runs on the gate selection only: 200 CLI runs cost minutes on 2 cores.  One server serves all
    # 200 processes (in a cluster each shard has its own; this only saves 200 server start-ups); every
    # run still works in databases and roles of its own.
    single = single_run((), tmp_path_factory)
    outs = run_shards(forked, 200, tmp_path, "--database-url", pg_server.admin_url)
    empty = [p for p in outs if not json.loads(p.read_text())["_meta"]["shard"]["keys"]]
    assert empty, "N above the number of units leaves empty shards, which are valid"
    merge_and_check(single, outs, tmp_path, forked[0])
