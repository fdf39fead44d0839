"""The shard tests' forked-CLI servers (tests/forked_cli.py), one per shard run at a time."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
from forked_cli import ForkedCli  # type: ignore[import-not-found]

PARALLEL = 2  # shard runs at once


@pytest.fixture(scope="session")
def forked() -> Iterator[list[ForkedCli]]:
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    servers = [ForkedCli(env) for _ in range(PARALLEL)]
    try:
        yield servers
    finally:
        for server in servers:
            server.close()
