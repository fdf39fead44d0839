"""The extraction seam: a segment goes in, candidate facts come out (spec §6.2, §6.5).

``GoldExtractor`` is gbrain's ``makeGoldExtractor``: gold enters here and only
here, so everything downstream (provenance stamping, row numbering, scoring) is
the real pipeline.  ``LlmExtractor`` calls any OpenAI-compatible chat endpoint
under one run-scoped ``BudgetTracker``.
"""

from __future__ import annotations

import json
import os
import threading
import urllib.error
import urllib.request
from dataclasses import dataclass
from typing import Any, Protocol, get_args

from tenacity import Retrying, retry_if_exception, stop_after_attempt, wait_exponential

from brainbench.corpus.loader import LoadedFixture
from brainbench.corpus.rules import turn_key
from brainbench.models import bounded_json
from brainbench.models.corpus import FactKind
from brainbench.models.writeback import ExtractedFact, SegmentInput

FACT_KINDS: tuple[str, ...] = get_args(FactKind)


class Extractor(Protocol):
    def extract(self, segment_input: SegmentInput) -> list[ExtractedFact]: ...


class GoldExtractor:
    """Emit, in gold order, every gold fact whose source turn text is inside the segment."""

    def __init__(self, loaded: LoadedFixture) -> None:
        self.items: list[tuple[str, Any]] = []
        for turn in loaded.fixture.turns:
            turn_gold = loaded.gold.turns.get(turn_key(turn.turn_id))
            for spec in (turn_gold.gold_facts if turn_gold else None) or []:
                self.items.append((turn.text, spec))
        self.calls = 0

    def extract(self, segment_input: SegmentInput) -> list[ExtractedFact]:
        self.calls += 1
        return [
            ExtractedFact(
                fact=spec.fact,
                kind=spec.kind or "fact",
                entity_slug=spec.entity_slug,
                source=segment_input.source,
            )
            for text, spec in self.items
            if text in segment_input.text
        ]


# --- LLM ----------------------------------------------------------------------------------


class LlmNotConfiguredError(RuntimeError):
    """--llm was asked for but no chat endpoint/model is configured (exit 2 before any run)."""


class BudgetExhaustedError(RuntimeError):
    """The run-scoped LLM spend cap would be exceeded; the whole run aborts (spec §6.2, §6.5)."""


class LlmError(RuntimeError):
    """The chat endpoint failed for good (after retries, or with a non-retryable status)."""


def _env_float(name: str, default: float) -> float:
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        value = float(raw)
    except ValueError as exc:
        raise LlmNotConfiguredError(f"{name}={raw!r} is not a number") from exc
    if value < 0:
        raise LlmNotConfiguredError(f"{name} must be >= 0")
    return value


@dataclass(frozen=True)
class LlmConfig:
    base_url: str
    model: str
    api_key: str | None = None
    # USD per million tokens.  Defaults are Claude Haiku's list prices, the model
    # gbrain's production extractor uses; set them for any other model.
    input_usd_per_mtok: float = 1.0
    output_usd_per_mtok: float = 5.0
    max_tokens: int = 1024
    timeout_s: float = 60.0

    @classmethod
    def from_env(cls) -> LlmConfig:
        base_url = os.environ.get("BRAINBENCH_LLM_BASE_URL", "").strip()
        model = os.environ.get("BRAINBENCH_LLM_MODEL", "").strip()
        if not base_url or not model:
            raise LlmNotConfiguredError(
                "--llm needs a chat model: set BRAINBENCH_LLM_BASE_URL (OpenAI-compatible, e.g. "
                "https://api.openai.com/v1) and BRAINBENCH_LLM_MODEL (BRAINBENCH_LLM_API_KEY if the endpoint needs one)"
            )
        return cls(
            base_url=base_url.rstrip("/"),
            model=model,
            api_key=os.environ.get("BRAINBENCH_LLM_API_KEY") or None,
            input_usd_per_mtok=_env_float("BRAINBENCH_LLM_INPUT_USD_PER_MTOK", 1.0),
            output_usd_per_mtok=_env_float("BRAINBENCH_LLM_OUTPUT_USD_PER_MTOK", 5.0),
            max_tokens=int(_env_float("BRAINBENCH_LLM_MAX_TOKENS", 1024)),
            timeout_s=_env_float("BRAINBENCH_LLM_TIMEOUT_S", 60.0),
        )

    def cost(self, prompt_tokens: int, completion_tokens: int) -> float:
        return (prompt_tokens * self.input_usd_per_mtok + completion_tokens * self.output_usd_per_mtok) / 1e6


class BudgetTracker:
    """One spend cap for the whole run, shared by every extractor call and worker thread.

    A call first reserves its worst case (prompt estimate plus a full max_tokens
    reply) and is refused if that could cross the cap, so concurrent calls can
    never overspend together; afterwards the reservation is settled at the
    actual usage.
    """

    def __init__(self, limit_usd: float) -> None:
        if not limit_usd > 0:
            raise ValueError("budget must be a positive number of USD")
        self.limit_usd = limit_usd
        self.spent_usd = 0.0
        self.reserved_usd = 0.0
        self.calls = 0
        self._lock = threading.Lock()

    def reserve(self, worst_case_usd: float, what: str) -> None:
        with self._lock:
            if self.spent_usd + self.reserved_usd + worst_case_usd > self.limit_usd:
                raise BudgetExhaustedError(
                    f"LLM budget exhausted: spent ${self.spent_usd:.4f} of ${self.limit_usd:.4f} "
                    f"after {self.calls} calls; the next call ({what}) may cost up to ${worst_case_usd:.4f}. "
                    "Raise --budget-usd or run without --llm."
                )
            self.reserved_usd += worst_case_usd

    def settle(self, reserved_usd: float, actual_usd: float | None) -> None:
        """Release a reservation; ``actual_usd`` None means the call failed without usage to pay for."""
        with self._lock:
            self.reserved_usd = max(0.0, self.reserved_usd - reserved_usd)
            if actual_usd is not None:
                self.spent_usd += actual_usd
                self.calls += 1


SYSTEM_PROMPT = """You extract durable facts from a conversation between a user ("You") and an assistant.
Return only facts the user states or commits to: decisions, commitments with deadlines, beliefs and concerns,
preferences, and events or numbers reached. Skip greetings, questions and the assistant's own words.
Write each fact as one standalone sentence that names the people and companies involved.
entity_slug is the brain page the fact is mainly about, written as <kind>/<lowercase-hyphenated-name>
(people/<first>-<last>, companies/<name>, funds/<name>), or null when there is none.
kind is one of: event, preference, commitment, belief, fact.
Answer with a JSON object and nothing else: {"facts": [{"fact": "...", "kind": "...", "entity_slug": "..."}]}"""


def _retryable(exc: BaseException) -> bool:
    # HTTPError is a URLError subclass: only its 5xx form is worth repeating.
    if isinstance(exc, urllib.error.HTTPError):
        return exc.code >= 500
    return isinstance(exc, urllib.error.URLError | ConnectionError | TimeoutError)


def _parse_facts(content: str, source: str) -> tuple[list[ExtractedFact], bool]:
    """(facts, reply was well-formed).  Bad items are skipped, not fatal: a model slip costs recall only."""
    try:
        doc = bounded_json.loads(content)
    except json.JSONDecodeError:
        return [], False
    raw = doc.get("facts") if isinstance(doc, dict) else doc
    if not isinstance(raw, list):
        return [], False
    out = []
    for item in raw:
        if not isinstance(item, dict) or not isinstance(item.get("fact"), str) or not item["fact"].strip():
            continue
        kind = item.get("kind") if item.get("kind") in FACT_KINDS else "fact"
        entity = item.get("entity_slug")
        out.append(
            ExtractedFact(
                fact=item["fact"].strip(),
                kind=kind,
                entity_slug=entity.strip() if isinstance(entity, str) and entity.strip() else None,
                source=source,
            )
        )
    return out, True


def llm_configured() -> bool:
    """True when --llm can run (gbrain: ``isAvailable('chat')``); checked before any fixture runs."""
    try:
        LlmConfig.from_env()
    except LlmNotConfiguredError:
        return False
    return True


class LlmExtractor:
    """Chat-completions extractor in JSON mode; a malformed reply yields no facts (they count as lost).

    One instance serves the whole run from several worker threads; the budget is
    shared, while ``thread_spent_usd`` lets each fixture's receipt report its own cost.
    """

    def __init__(self, config: LlmConfig, budget: BudgetTracker, *, attempts: int = 4, retry_wait_s: float = 1.0):
        self.config = config
        self.budget = budget
        self.malformed_replies = 0
        self._local = threading.local()
        self._lock = threading.Lock()
        self._retrying = Retrying(
            retry=retry_if_exception(_retryable),
            stop=stop_after_attempt(attempts),
            wait=wait_exponential(multiplier=retry_wait_s, max=30 * retry_wait_s),
            reraise=True,
        )

    @classmethod
    def from_env(cls, budget_usd: float) -> LlmExtractor:
        """The run's extractor: endpoint from BRAINBENCH_LLM_* env vars, one budget of ``budget_usd``."""
        return cls(LlmConfig.from_env(), BudgetTracker(budget_usd))

    @property
    def thread_spent_usd(self) -> float:
        return float(getattr(self._local, "spent", 0.0))

    def _post(self, body: bytes) -> dict[str, Any]:
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self.config.api_key:
            headers["Authorization"] = f"Bearer {self.config.api_key}"
        request = urllib.request.Request(
            self.config.base_url + "/chat/completions", data=body, headers=headers, method="POST"
        )
        with urllib.request.urlopen(request, timeout=self.config.timeout_s) as response:
            raw = response.read()
        try:
            reply = bounded_json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise LlmError(f"chat endpoint returned a non-JSON body: {raw[:200]!r}") from exc
        if not isinstance(reply, dict):
            raise LlmError("chat endpoint returned JSON that is not an object")
        return reply

    def extract(self, segment_input: SegmentInput) -> list[ExtractedFact]:
        messages = [
            {"role": "system", "content": SYSTEM_PROMPT},
            {"role": "user", "content": segment_input.text},
        ]
        prompt_estimate = (len(SYSTEM_PROMPT) + len(segment_input.text)) // 4 + 16
        worst_case = self.config.cost(prompt_estimate, self.config.max_tokens)
        self.budget.reserve(worst_case, segment_input.page_slug)
        try:
            facts, cost = self._call(segment_input, messages, prompt_estimate)
        except BaseException:
            self.budget.settle(worst_case, None)
            raise
        self.budget.settle(worst_case, cost)
        self._local.spent = self.thread_spent_usd + cost
        return facts

    def _call(
        self, segment_input: SegmentInput, messages: list[dict[str, str]], prompt_estimate: int
    ) -> tuple[list[ExtractedFact], float]:
        body = json.dumps({
            "model": self.config.model,
            "messages": messages,
            "temperature": 0,
            "max_tokens": self.config.max_tokens,
            "response_format": {"type": "json_object"},
        }).encode("utf-8")
        try:
            reply = self._retrying(self._post, body)
        except urllib.error.HTTPError as exc:
            detail = exc.read().decode("utf-8", "replace")[:500]
            raise LlmError(f"chat endpoint answered HTTP {exc.code}: {detail}") from exc
        except (urllib.error.URLError, ConnectionError, TimeoutError) as exc:
            raise LlmError(f"chat endpoint unreachable at {self.config.base_url}: {exc}") from exc
        usage = reply.get("usage") or {}
        try:
            content = reply["choices"][0]["message"]["content"] or ""
        except (KeyError, IndexError, TypeError):
            content = ""
        # Without reported usage, charge our estimate so the cap still binds.
        prompt_tokens = int(usage.get("prompt_tokens") or prompt_estimate)
        completion_tokens = int(usage.get("completion_tokens") or (len(content) // 4 + 1))
        facts, well_formed = _parse_facts(content, segment_input.source)
        if not well_formed:
            with self._lock:
                self.malformed_replies += 1
        return facts, self.config.cost(prompt_tokens, completion_tokens)

