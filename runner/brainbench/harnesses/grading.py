"""Grade what came back on the wire: context, silence, or a fault (with its class).

Semantics follow the harness each seam stands for (wire-contracts §1–§2):
Claude Code injects plain stdout and ``{``-prefixed invalid JSON as text and
honours valid JSON on a non-zero, non-2 exit; Codex is strict (invalid JSON,
unknown keys or a failing exit inject nothing); the OpenClaw bridge takes only a
clean exit-0 JSON answer.  A timeout always discards the output; exit 2 blocks.
Every deviation from the clean contract is recorded as a fault, even when the
harness would still have used the context.

Output over the capture cap (``executors.limits``, 1 MiB per channel) is ``oversize``:
the hook was killed and its output discarded, in every dialect.  stdout that is not
UTF-8 is a ``contract_violation`` in every dialect; only Claude Code still uses it
(Node decodes stdout with U+FFFD replacements and applies the text), so the claude
dialect keeps the replaced text as context while recording the fault; Codex and the
OpenClaw bridge inject nothing.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from pydantic import ValidationError

from brainbench.harnesses.registry import Dialect
from brainbench.hooks.program import EXIT_BACKEND_UNAVAILABLE
from brainbench.jsstring import without_lone_surrogates
from brainbench.models import bounded_json
from brainbench.models.hook_io import HookOutcome
from brainbench.models.result import FaultClass
from brainbench.models.wire import MAX_CONTEXT_CHARS, HookOutput


@dataclass(frozen=True)
class Graded:
    context: str | None
    fault: FaultClass | None = None
    detail: str = ""


def _first_line(data: bytes, limit: int = 200) -> str:
    text = data.decode("utf-8", errors="replace").strip()
    return (text.splitlines() or [""])[0][:limit]


def grade(outcome: HookOutcome, dialect: Dialect, event: str = "UserPromptSubmit") -> Graded:
    if outcome.infra_error is not None:
        return Graded(None, "infra_error", outcome.infra_error)
    if outcome.timed_out:
        return Graded(None, "adapter_timeout", f"no answer within the timeout ({outcome.duration_ms:.0f} ms)")
    if outcome.oversize is not None:
        return Graded(None, "oversize", f"{outcome.oversize}: the hook was killed and its output discarded")
    code = outcome.exit_code
    if code == 2:
        return Graded(None, "blocked", _first_line(outcome.stderr) or "exit 2 with empty stderr")
    if code == EXIT_BACKEND_UNAVAILABLE:
        return Graded(None, "infra_error", _first_line(outcome.stderr) or "backend unavailable")
    if code != 0:
        stripped = outcome.stdout.decode("utf-8", errors="replace").strip()
        crash = f"exit {code}: {_first_line(outcome.stderr) or 'no stderr'}"
        if dialect == "claude" and stripped.startswith("{"):
            parsed = _parse_json_output(stripped, event, strict=False)
            if parsed.fault is None:
                return Graded(parsed.context, "adapter_crash", crash)
        return Graded(None, "adapter_crash", crash)
    try:
        stripped = outcome.stdout.decode("utf-8").strip()
    except UnicodeDecodeError as exc:
        return _not_utf8(outcome, dialect, event, exc)
    if not stripped:
        return Graded(None)
    if len(stripped) > MAX_CONTEXT_CHARS:
        return Graded(None, "oversize", f"stdout is {len(stripped)} characters; the cap is {MAX_CONTEXT_CHARS}")
    if not stripped.startswith(("{", "[")):
        if dialect == "openclaw":
            return Graded(None, "contract_violation", "plain-text stdout; the OpenClaw bridge takes JSON only")
        return Graded(stripped)  # plain stdout is context for UserPromptSubmit/SessionStart
    parsed = _parse_json_output(stripped, event, strict=dialect != "claude")
    if parsed.fault == "contract_violation" and parsed.detail.startswith("invalid JSON") and dialect == "claude":
        # Claude Code treats {-prefixed text that is not JSON as plain context.
        return Graded(stripped, "contract_violation", parsed.detail)
    return parsed


def _not_utf8(outcome: HookOutcome, dialect: Dialect, event: str, exc: UnicodeDecodeError) -> Graded:
    detail = f"stdout is not UTF-8 (byte {exc.start}: {exc.reason})"
    if dialect != "claude":
        return Graded(None, "contract_violation", detail)
    # What Claude Code would apply: the replaced text, graded by the same rules.
    lenient = grade(HookOutcome(0, outcome.stdout.decode("utf-8", errors="replace").encode(), outcome.stderr,
                                False, outcome.duration_ms), dialect, event)
    return Graded(lenient.context, lenient.fault or "contract_violation", lenient.detail or detail)


def _parse_json_output(text: str, event: str, strict: bool) -> Graded:
    try:
        doc = bounded_json.loads(text)
    except bounded_json.JSONTooDeep as exc:
        # Refused before parsing (a parser would recurse per level): the seam's own fault, no context.
        return Graded(None, "contract_violation", f"stdout {exc.msg}")
    except json.JSONDecodeError as exc:
        return Graded(None, "contract_violation", f"invalid JSON on stdout: {exc.msg}")
    if not isinstance(doc, dict):
        return Graded(None, "contract_violation", "stdout JSON is not an object")
    known = set(HookOutput.model_fields) | {"continue"}
    unknown = sorted(set(doc) - known)
    inner = doc.get("hookSpecificOutput")
    inner_unknown = sorted(set(inner) - {"hookEventName", "additionalContext"}) if isinstance(inner, dict) else []
    if unknown or inner_unknown:
        detail = f"unknown output keys: {', '.join(unknown + inner_unknown)}"
        if strict:
            return Graded(None, "contract_violation", detail)
        doc = {k: v for k, v in doc.items() if k in known}
        if isinstance(inner, dict):
            doc["hookSpecificOutput"] = {k: v for k, v in inner.items() if k in ("hookEventName", "additionalContext")}
        lenient = _parse_json_output(json.dumps(doc), event, strict=True)
        return Graded(lenient.context, lenient.fault or "contract_violation", lenient.detail or detail)
    try:
        # JSON may carry a lone "\udXXX" half (gbrain's clip can cut a pair and
        # JSON.stringify escapes it); pydantic validates a masked copy.
        out = HookOutput.model_validate(without_lone_surrogates(doc))
    except ValidationError as exc:
        first = exc.errors()[0]
        if first["type"] == "string_too_long":
            return Graded(None, "oversize", f"additionalContext over {MAX_CONTEXT_CHARS} characters")
        loc = ".".join(str(p) for p in first["loc"])
        return Graded(None, "contract_violation", f"output fails the contract at {loc}: {first['msg']}")
    if out.decision == "block":
        return Graded(None, "blocked", out.reason or "decision: block")
    spec = out.hookSpecificOutput
    if spec is None:
        return Graded(None)
    if spec.hookEventName != event:
        return Graded(None, "contract_violation", f"hookEventName {spec.hookEventName!r} answers a {event} call")
    # The context as sent, lone surrogates included (validation saw a masked copy).
    return Graded(doc["hookSpecificOutput"]["additionalContext"] or None)
