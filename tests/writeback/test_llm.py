"""--llm write-back against a local OpenAI-compatible stub (spec §6.4, §6.5)."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from brainbench.brain.seeding import seed_fixture
from brainbench.writeback.extractors import (
    BudgetExhaustedError,
    BudgetTracker,
    LlmConfig,
    LlmError,
    LlmExtractor,
    LlmNotConfiguredError,
    llm_configured,
)
from brainbench.writeback.pipeline import run_write_back
from brainbench.writeback.score import aggregate_write_back

from ._helpers import page_row


class ChatStub:
    """Answers POST /chat/completions from a queue of (status, body); records every request."""

    def __init__(self) -> None:
        self.replies: list[tuple[int, Any]] = []
        self.requests: list[dict[str, Any]] = []
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                stub.requests.append({"path": self.path, "headers": dict(self.headers),
                                      "body": json.loads(self.rfile.read(length))})
                status, body = stub.replies.pop(0) if stub.replies else (200, completion({"facts": []}))
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: object) -> None:
                return None

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def completion(content: Any, prompt_tokens: int = 400, completion_tokens: int = 60) -> dict[str, Any]:
    return {
        "id": "chatcmpl-stub",
        "object": "chat.completion",
        "choices": [{"index": 0, "finish_reason": "stop",
                     "message": {"role": "assistant", "content": json.dumps(content)}}],
        "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens},
    }


@pytest.fixture()
def chat() -> Iterator[ChatStub]:
    stub = ChatStub()
    try:
        yield stub
    finally:
        stub.close()


def _extractor(chat: ChatStub, budget_usd: float = 5.0) -> LlmExtractor:
    config = LlmConfig(base_url=chat.url, model="stub-haiku", api_key="sk-test")
    return LlmExtractor(config, BudgetTracker(budget_usd), retry_wait_s=0)


PRICING = {"fact": "Alice Example worries the widget-co pricing model hurts gross margin",
           "kind": "belief", "entity_slug": "people/alice-example"}


def test_llm_mode_recall_and_precision(brain, reference_corpus, chat) -> None:
    wb = reference_corpus.by_id()["wb-001-pricing-concern"]
    seed_fixture(brain, wb.fixture)
    chat.replies.append((200, completion({"facts": [PRICING]})))
    extractor = _extractor(chat)
    score = run_write_back(brain, wb, extractor)

    assert (score.gold_total, score.survived, score.gold_failed, score.stored_rows) == (3, 1, 2, 1)
    metrics = aggregate_write_back([score]).metrics(llm=True)
    assert metrics["extraction_recall"] == pytest.approx(1 / 3)
    assert metrics["extraction_precision"] == 1.0
    assert metrics["provenance_accuracy"] == 1.0

    [request] = chat.requests
    assert request["path"] == "/v1/chat/completions"
    assert request["headers"]["Authorization"] == "Bearer sk-test"
    assert request["body"]["model"] == "stub-haiku"
    assert request["body"]["response_format"] == {"type": "json_object"}
    assert "She is worried the widget-co pricing model" in request["body"]["messages"][1]["content"]

    expected_cost = (400 * 1.0 + 60 * 5.0) / 1e6
    assert extractor.budget.spent_usd == pytest.approx(expected_cost)
    assert (extractor.budget.reserved_usd, extractor.budget.calls) == (0.0, 1)
    receipt = page_row(brain, score.receipt_slug)
    assert receipt is not None and receipt["frontmatter"]["cost_usd"] == pytest.approx(expected_cost)


def test_budget_exhaustion_aborts_before_calling(brain, reference_corpus, chat) -> None:
    wb = reference_corpus.by_id()["wb-001-pricing-concern"]
    seed_fixture(brain, wb.fixture)
    with pytest.raises(BudgetExhaustedError, match="budget exhausted"):
        run_write_back(brain, wb, _extractor(chat, budget_usd=0.0001))
    assert chat.requests == []


def test_budget_is_run_scoped(brain, reference_corpus, chat) -> None:
    wb = reference_corpus.by_id()["wb-001-pricing-concern"]
    writer = reference_corpus.by_id()["cont-001-widget-pass-writer"]
    seed_fixture(brain, wb.fixture)
    seed_fixture(brain, writer.fixture)
    # Room for the first call's worst case (~$0.0057) but not a second one after it was paid for.
    extractor = _extractor(chat, budget_usd=0.008)
    chat.replies.append((200, completion({"facts": [PRICING]}, prompt_tokens=2000, completion_tokens=400)))
    run_write_back(brain, wb, extractor)
    with pytest.raises(BudgetExhaustedError):
        run_write_back(brain, writer, extractor)
    assert len(chat.requests) == 1


def test_5xx_is_retried_and_4xx_is_not(brain, reference_corpus, chat) -> None:
    wb = reference_corpus.by_id()["wb-001-pricing-concern"]
    seed_fixture(brain, wb.fixture)
    chat.replies += [(503, {"error": "busy"}), (200, completion({"facts": [PRICING]}))]
    extractor = _extractor(chat)
    assert run_write_back(brain, wb, extractor).survived == 1
    assert len(chat.requests) == 2

    chat.requests.clear()
    chat.replies.append((400, {"error": "bad model"}))
    with pytest.raises(LlmError, match="HTTP 400"):
        run_write_back(brain, reference_corpus.by_id()["cont-001-widget-pass-writer"], extractor)
    assert len(chat.requests) == 1
    assert extractor.budget.reserved_usd == 0.0


def test_unreachable_endpoint_is_an_llm_error(reference_corpus, chat) -> None:
    chat.close()
    extractor = LlmExtractor(LlmConfig(base_url=chat.url, model="m", timeout_s=2), BudgetTracker(1), attempts=2,
                             retry_wait_s=0)
    from brainbench.models.writeback import SegmentInput

    segment = SegmentInput(text="x", source="default", session_id="s", page_slug="p", page_title="t",
                           start_iso="a", end_iso="b", participants=["You"], message_count=2)
    with pytest.raises(LlmError, match="unreachable"):
        extractor.extract(segment)


def test_malformed_replies_yield_no_facts(brain, reference_corpus, chat) -> None:
    wb = reference_corpus.by_id()["wb-001-pricing-concern"]
    seed_fixture(brain, wb.fixture)
    reply = completion({})
    reply["choices"][0]["message"]["content"] = "not json"
    chat.replies.append((200, reply))
    extractor = _extractor(chat)
    score = run_write_back(brain, wb, extractor)
    assert (score.stored_rows, score.gold_failed, extractor.malformed_replies) == (0, 3, 1)
    assert aggregate_write_back([score]).metrics(llm=True)["extraction_precision"] == 1.0


def test_llm_config_from_env(monkeypatch) -> None:
    for name in ("BRAINBENCH_LLM_BASE_URL", "BRAINBENCH_LLM_MODEL", "BRAINBENCH_LLM_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    assert not llm_configured()
    with pytest.raises(LlmNotConfiguredError, match="BRAINBENCH_LLM_BASE_URL"):
        LlmExtractor.from_env(5)
    monkeypatch.setenv("BRAINBENCH_LLM_BASE_URL", "http://127.0.0.1:9/v1/")
    monkeypatch.setenv("BRAINBENCH_LLM_MODEL", "m")
    monkeypatch.setenv("BRAINBENCH_LLM_OUTPUT_USD_PER_MTOK", "15")
    assert llm_configured()
    extractor = LlmExtractor.from_env(5)
    assert (extractor.config.base_url, extractor.config.output_usd_per_mtok, extractor.budget.limit_usd) == (
        "http://127.0.0.1:9/v1", 15.0, 5)
