"""The three seams: what each is, how to launch it, and which harness dialect grades it.

A seam's identity (name, dialect, how prior context travels) is fixed; what runs
behind it (our contract adapter or a production image) is configuration.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Literal

from brainbench.models.result import Harness, SeamKind

Dialect = Literal["claude", "codex", "openclaw"]
PriorChannel = Literal["transcript", "rollout", "messages"]


@dataclass(frozen=True)
class SeamSpec:
    harness: Harness
    kind: SeamKind
    module: str
    dialect: Dialect
    prior: PriorChannel
    session_start: bool

    def command(self, stream: bool) -> tuple[str, ...]:
        # The package entry point, not ``-m self.module``: its exec path is the lean one.
        base = (sys.executable, "-m", "brainbench.hooks", self.harness)
        return (*base, "--stream") if stream else base


SEAMS: dict[str, SeamSpec] = {
    "openclaw": SeamSpec("openclaw", "production", "brainbench.hooks.openclaw", "openclaw", "messages", False),
    "claude-code": SeamSpec("claude-code", "production", "brainbench.hooks.claude_code", "claude", "transcript", False),
    "codex": SeamSpec("codex", "contract", "brainbench.hooks.codex", "codex", "rollout", True),
}
DEFAULT_HARNESSES: tuple[str, ...] = ("openclaw", "claude-code", "codex")
