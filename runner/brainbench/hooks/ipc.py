"""What the hook client (``hooks/__main__.py``) and the warm hook server (``hooks/serve.py``) share.

Kept to the standard library's built-ins: it is on the start-up path of every exec-mode call.
"""

from __future__ import annotations

SEAM_MODULES = {"openclaw": "brainbench.hooks.openclaw", "claude-code": "brainbench.hooks.claude_code",
                "codex": "brainbench.hooks.codex"}

# The server's answer to a stream session's header (an exec request with no stdin): it has
# taken the session, and from here on the connection carries the stream's lines both ways.
STREAM_READY = b"+"


def frame(payload: bytes) -> bytes:
    """Length-prefixed, so a reader knows a message is whole (a server that died mid-reply is not)."""
    return len(payload).to_bytes(8, "big") + payload


def unframe(data: bytes) -> bytes | None:
    if len(data) < 8 or len(data) != 8 + int.from_bytes(data[:8], "big"):
        return None
    return data[8:]
