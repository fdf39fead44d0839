"""The one retry policy for infrastructure faults (tenacity), and the rule for where it applies.

Infrastructure is retried; graded behaviour never is.  Each operation is retried by exactly
one layer, so attempts never multiply:

* **Setting a run up** (outside any graded call): the Docker API operations that start
  nothing graded -- create/start a seam container, create an exec, create/connect the run
  network -- are retried on transient engine faults (``DockerApi.retry``).
* **A hook call**: only the orchestrator retries it (``Conversation``), and only when its
  outcome is an infrastructure fault: the provider could not run the call (``infra_error``:
  engine hiccup, container gone, call server died) or the hook itself reported its backend
  unavailable (exit 75).  Below it nothing retries inside a call: a provider that finds its
  container dead brings it back once and returns ``infra_error``; the next attempt finds
  it running.  A hook that answered, failed, blocked or timed out is graded as it came.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from typing import Any, TypeVar

from tenacity import (
    AsyncRetrying,
    RetryCallState,
    Retrying,
    retry_if_exception,
    retry_if_result,
    stop_after_attempt,
    wait_exponential,
)

log = logging.getLogger(__name__)
T = TypeVar("T")


def _log_retry(state: RetryCallState) -> None:
    log.warning("infrastructure fault; retrying %s (attempt %d)",
                getattr(state.fn, "__name__", state.fn), state.attempt_number + 1)


@dataclass(frozen=True)
class InfraRetry:
    """How often and how patiently an infrastructure operation is tried."""

    attempts: int = 3
    # Exponential back-off: 0.2 s, 0.4 s, ... capped here.
    multiplier_s: float = 0.2
    max_wait_s: float = 2.0

    def once(self) -> InfraRetry:
        """The same policy without retries (probes that must answer at once: doctor, skips)."""
        return replace(self, attempts=1)

    def _common(self) -> dict[str, Any]:
        return {"stop": stop_after_attempt(max(1, self.attempts)),
                "wait": wait_exponential(multiplier=self.multiplier_s, max=self.max_wait_s),
                "before_sleep": _log_retry}

    def call(self, fn: Callable[..., T], *args: Any, transient: Callable[[BaseException], bool],
             **kwargs: Any) -> T:
        """``fn(*args, **kwargs)``, tried again while it raises an exception ``transient`` accepts;
        the last exception is re-raised."""
        retrying = Retrying(retry=retry_if_exception(transient), reraise=True, **self._common())
        return retrying(fn, *args, **kwargs)

    async def call_async(self, fn: Callable[..., Awaitable[T]], *args: Any, faulty: Callable[[T], bool],
                         **kwargs: Any) -> T:
        """``await fn(...)``, tried again while its *result* is an infrastructure fault
        (``faulty``); the last result is returned as it came, fault and all.

        The first attempt runs before any retry machinery: nearly every hook call answers at once,
        and tenacity's per-call state cost the embedded gate run about a tenth of its main
        process's CPU.  A fault hands that first result to tenacity as its attempt 1, so the
        back-off, the attempt count and the log lines are the same as if tenacity had made it."""
        first = await fn(*args, **kwargs)
        if not faulty(first) or self.attempts <= 1:
            return first
        made = [first]

        async def attempt() -> T:
            return made.pop() if made else await fn(*args, **kwargs)

        attempt.__name__ = getattr(fn, "__name__", repr(fn))  # what the retry log line names
        retrying = AsyncRetrying(retry=retry_if_result(faulty),
                                 retry_error_callback=lambda state: state.outcome.result() if state.outcome else None,
                                 **self._common())
        return await retrying(attempt)


# The run's policy.  Three attempts: one engine hiccup or brain blip is absorbed, a dead
# brain is reported within a couple of seconds (tests/faults counts the attempts).
INFRA_RETRY = InfraRetry()
