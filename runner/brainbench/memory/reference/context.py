"""One namespace of the reference memory system: its sources, its settings, its journal and effects."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psycopg

# The settings a brain starts with (gbrain's shipped defaults), and what the protections arm sets.
DEFAULTS = {"write_gate.external_mode": "flag", "write_gate.agent_mode": "flag",
            "trust.agent_activation": "allow", "trust.read_policy": "label"}
PROTECTIONS = {"write_gate.external_mode": "quarantine", "trust.agent_activation": "suppress"}
# settle() is a bounded check: it drains what is queued, it never waits on a clock.
SETTLE_MAX_EFFECTS = 200
SETTLE_MAX_SECONDS = 15.0


@dataclass
class Namespace:
    source: str  # the owner's source: everything but the connector feed writes here
    owner_dir: Path  # the owner's own store (canonical markdown files)
    connector: str | None = None
    connector_feed: str | None = None
    connector_items: int = 0

    @property
    def sources(self) -> list[str]:
        return [self.source, *([self.connector] if self.connector else [])]


@dataclass
class Store:
    """The database connection and namespace every handler works on."""

    conn: psycopg.Connection
    ns: Namespace
    effect_runners: dict[str, Callable[[Store, dict[str, Any]], None]] = field(default_factory=dict)

    def setting(self, key: str) -> str:
        row = self.conn.execute("SELECT value FROM config WHERE key = %s", (key,)).fetchone()
        return row[0] if row else DEFAULTS[key]

    def set_settings(self, values: Mapping[str, str]) -> None:
        with self.conn.cursor() as cur:
            cur.executemany(
                "INSERT INTO config (key, value) VALUES (%s, %s)"
                " ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value",
                list(values.items()))

    def journal(self, op: str, actor: str | None, request: Mapping[str, Any]) -> int:
        """Record the request as asked (inside the operation's transaction)."""
        row = self.conn.execute(
            "INSERT INTO memory_requests (source_id, op, actor, request) VALUES (%s, %s, %s, %s) RETURNING id",
            (self.ns.source, op, actor, json.dumps(dict(request), ensure_ascii=False))).fetchone()
        assert row is not None
        return int(row[0])

    def queue_effect(self, request_id: int, kind: str, payload: Mapping[str, Any]) -> None:
        self.conn.execute("INSERT INTO memory_effects (request_id, source_id, kind, payload) VALUES (%s, %s, %s, %s)",
                          (request_id, self.ns.source, kind, json.dumps(dict(payload))))

    def run_effects(self, limit: int = SETTLE_MAX_EFFECTS, seconds: float = SETTLE_MAX_SECONDS) -> int:
        """Run queued effects, oldest first, within the bounds; returns how many are still pending."""
        deadline = time.monotonic() + seconds
        for _ in range(limit):
            if time.monotonic() > deadline:
                break
            row = self.conn.execute(
                "UPDATE memory_effects SET state = 'running', attempts = attempts + 1 WHERE id = ("
                " SELECT id FROM memory_effects WHERE source_id = ANY(%s) AND state = 'queued' ORDER BY id LIMIT 1)"
                " RETURNING id, kind, payload", (self.ns.sources,)).fetchone()
            if row is None:
                break
            effect_id, kind, payload = row
            try:
                self.effect_runners[kind](self, payload)
            except Exception as exc:
                self.conn.execute("UPDATE memory_effects SET state = 'failed', error = %s WHERE id = %s",
                                  (str(exc)[:500], effect_id))
            else:
                self.conn.execute("UPDATE memory_effects SET state = 'done' WHERE id = %s", (effect_id,))
        return self.pending_effects()

    def pending_effects(self) -> int:
        row = self.conn.execute("SELECT count(*) FROM memory_effects WHERE source_id = ANY(%s)"
                                " AND state IN ('queued', 'running')", (self.ns.sources,)).fetchone()
        return int(row[0]) if row else 0
