"""The memory-operations interface is published as JSON Schema, generated from its models."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
from brainbench.models import memory as m
from brainbench.schemas import schema_for

REPO = Path(__file__).resolve().parents[2]


def test_committed_schemas_are_generated_from_the_models() -> None:
    for name in ("memory-request", "memory-outcome"):
        committed = json.loads((REPO / "schema" / f"{name}.schema.json").read_text())
        assert committed == schema_for(name), f"schema/{name}.schema.json is stale: regenerate it"


def test_requests_and_outcomes_validate_and_strangers_do_not() -> None:
    requests = schema_for("memory-request")
    outcomes = schema_for("memory-outcome")
    jsonschema.validate(m.Remember(actor="remote_agent", fact="x", replaces=2).model_dump(mode="json"), requests)
    jsonschema.validate(m.Confirm(actor="owner", ref=m.RowRef(table="facts", id=1), interactive=True)
                        .model_dump(mode="json"), requests)
    jsonschema.validate(m.refusal("confirm", "insufficient_scope").model_dump(mode="json"), outcomes)
    jsonschema.validate(m.refusal("search", "unsupported").model_dump(mode="json"), outcomes)
    for bad in ({"op": "drop_database"}, {"op": "remember", "actor": "owner", "fact": "x"},
                {"op": "remember", "actor": "remote_agent", "fact": "x", "sneaky": 1}):
        assert not jsonschema.Draft202012Validator(requests).is_valid(bad), bad
