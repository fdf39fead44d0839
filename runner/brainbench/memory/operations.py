"""The memory-operations interface: what the memory-trust suites need from any memory system.

Shaped like the executor interface (``executors/base.py``): a few verbs, each a typed request
(``models/memory.py``) answered by a typed outcome.  One provider serves one fixture's
namespace: ``open_namespace`` first, then the fixture's writes, owner acts, explicit reads and
the introspection the scorer compares reads against, then ``close``.

Refusals and ``unsupported`` are outcomes (``ok: false`` with a ``code``); an exception never
crosses the interface for anything the memory system decided.  Only infrastructure failing
under the provider (its database server gone) raises, and stops the run rather than scoring it.

Providers: our reference memory system (``memory/reference``), and — through the same JSON —
an image's operations command (seed contract v2).
"""

from __future__ import annotations

import abc
import re
from typing import Any, ClassVar

from pydantic import TypeAdapter

from brainbench.models.memory import MemoryOutcome, MemoryRequest, refusal

_REQUEST = TypeAdapter(MemoryRequest)
_CODE_PREFIX = re.compile(r"^([a-z_]+):")
MESSAGE_CAP = 500


class InfrastructureError(RuntimeError):
    """The provider could not reach its own machinery (database, process): not a graded answer."""


def parse_request(data: Any) -> MemoryRequest:
    """A request from JSON-shaped data (what an operations command receives)."""
    return _REQUEST.validate_python(data)  # type: ignore[no-any-return]


def error_code(exc: BaseException) -> str:
    """How gbrain's scenario runner names a failure: the error's own code when it is a string,
    else the ``word:`` prefix of its message, else ``error``."""
    code = getattr(exc, "code", None)
    if isinstance(code, str) and code:
        return code
    return code_from_message(str(exc))


def code_from_message(message: str) -> str:
    m = _CODE_PREFIX.match(message)
    return m.group(1) if m else "error"


class MemoryOperations(abc.ABC):
    """One memory system serving one fixture's isolated namespace."""

    name: ClassVar[str]

    @abc.abstractmethod
    def call(self, request: MemoryRequest) -> MemoryOutcome:
        """Answer one request.  Implementations return refusals as outcomes."""

    def perform(self, request: MemoryRequest) -> MemoryOutcome:
        """``call``, with anything unexpected turned into a failed outcome (steps never throw)."""
        try:
            return self.call(request)
        except InfrastructureError:
            raise
        except Exception as exc:
            return refusal(request.op, error_code(exc), str(exc)[:MESSAGE_CAP] or type(exc).__name__)  # type: ignore[no-any-return]

    def close(self) -> None:  # noqa: B027 - optional for providers
        """Release what the namespace holds outside its database (scratch files)."""
