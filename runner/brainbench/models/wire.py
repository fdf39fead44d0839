"""The hook wire contract (contract version 1), as Claude Code's UserPromptSubmit speaks it.

Inputs tolerate unknown keys (harnesses add fields over time); outputs are
strict, so a seam that invents keys is flagged as a contract violation.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

HookEvent = Literal["UserPromptSubmit", "SessionStart"]
MAX_CONTEXT_CHARS = 10_000


class PriorMessage(BaseModel):
    """One earlier message as OpenClaw's ``before_prompt_build`` hands it over."""

    model_config = ConfigDict(extra="allow")

    role: Literal["user", "assistant", "system"]
    content: str
    # "memory" marks context injected by a memory hook on an earlier turn.
    source: str | None = None


class HookInput(BaseModel):
    model_config = ConfigDict(extra="allow", title="BrainBench hook input (contract version 1)")

    hook_event_name: HookEvent
    session_id: str
    cwd: str
    prompt: str = ""
    transcript_path: str | None = None
    permission_mode: str | None = None
    source: str | None = Field(default=None, description="SessionStart only: startup|resume|clear|compact|fork")
    messages: list[PriorMessage] | None = Field(
        default=None, description="OpenClaw only: earlier turns and injected context, oldest first."
    )


class HookSpecificOutput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    hookEventName: HookEvent
    additionalContext: str = Field(max_length=MAX_CONTEXT_CHARS)


class HookOutput(BaseModel):
    model_config = ConfigDict(extra="forbid", title="BrainBench hook output (contract version 1)")

    hookSpecificOutput: HookSpecificOutput | None = None
    systemMessage: str | None = None
    suppressOutput: bool | None = None
    decision: Literal["block"] | None = None
    reason: str | None = None
    stopReason: str | None = None
    # "continue" is a Python keyword, hence the alias.
    continue_: bool | None = Field(default=None, alias="continue")


class StreamRequest(BaseModel):
    """Stream mode: one request per line; ``env`` is the per-invocation environment."""

    model_config = ConfigDict(extra="forbid")

    id: int
    env: dict[str, str] = Field(default_factory=dict)
    # The working directory a harness would start this call's hook in (the input's
    # ``cwd``): a stream program answers the request from there, as an exec hook would run.
    cwd: str | None = None
    input: dict[str, object]


class StreamResponse(BaseModel):
    """Stream mode: what an exec call would have produced for the same request."""

    model_config = ConfigDict(extra="forbid")

    id: int
    exit_code: int
    stdout: str
    stderr: str = ""
