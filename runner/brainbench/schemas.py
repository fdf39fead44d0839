"""Published JSON Schemas, generated from the pydantic models (never written by hand)."""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import BaseModel

DRAFT = "https://json-schema.org/draft/2020-12/schema"


def _models() -> dict[str, type[BaseModel]]:
    from brainbench.models.baseline import Baseline
    from brainbench.models.corpus import Fixture, Gold
    from brainbench.models.memory import MemoryOutcomeDocument, MemoryRequestDocument
    from brainbench.models.result import RunResult
    from brainbench.models.seed import BrainContract, SeedDocument
    from brainbench.models.trace import TurnTrace
    from brainbench.models.wire import HookInput, HookOutput, StreamRequest, StreamResponse
    from brainbench.models.write_back_doc import WriteBackDocument

    return {
        "fixture": Fixture, "gold": Gold, "result": RunResult, "baseline": Baseline,
        "hook-input": HookInput, "hook-output": HookOutput,
        "stream-request": StreamRequest, "stream-response": StreamResponse,
        "trace": TurnTrace,  # one line of <result>.trace.jsonl
        "seed-document": SeedDocument, "brain-contract": BrainContract,  # seed contract v1 and v2
        "write-back-document": WriteBackDocument,  # seed contract v2: the write_back command's stdin
        # The memory-operations interface (the memory-trust suites; an image's operations command).
        "memory-request": MemoryRequestDocument, "memory-outcome": MemoryOutcomeDocument,
    }


def schema_for(name: str) -> dict[str, object]:
    model = _models()[name]
    schema = model.model_json_schema(by_alias=True, mode="validation")
    return {"$schema": DRAFT, "$id": f"https://brainbench.dev/schema/{name}.schema.json", **schema}


def export_schemas(directory: Path) -> list[Path]:
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for name in _models():
        path = directory / f"{name}.schema.json"
        path.write_text(json.dumps(schema_for(name), indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        written.append(path)
    return written
