"""The infrastructure retry of a hook call: what a fault costs, and what an answer does not.

``InfraRetry.call_async`` makes its first attempt outside tenacity (the common, answered case)
and hands a faulty first result to tenacity as its attempt 1; these pin that the attempts, the
back-off's log lines and the returned result are what tenacity alone would give.
"""

from __future__ import annotations

import logging

import anyio
import pytest
from brainbench.executors.retry import InfraRetry

FAST = InfraRetry(attempts=3, multiplier_s=0.001, max_wait_s=0.002)


def _calls(results: list[str]) -> tuple[list[str], object]:
    made: list[str] = []

    async def call() -> str:
        made.append(results[len(made)])
        return made[-1]

    return made, call


def test_an_answer_is_one_call_and_no_retry_line(caplog: pytest.LogCaptureFixture) -> None:
    made, call = _calls(["ok"])
    with caplog.at_level(logging.WARNING):
        assert anyio.run(lambda: FAST.call_async(call, faulty=lambda r: r == "fault")) == "ok"
    assert made == ["ok"]
    assert "retrying" not in caplog.text


def test_faults_are_retried_up_to_the_attempts_with_one_line_each(caplog: pytest.LogCaptureFixture) -> None:
    made, call = _calls(["fault", "fault", "ok"])
    with caplog.at_level(logging.WARNING):
        assert anyio.run(lambda: FAST.call_async(call, faulty=lambda r: r == "fault")) == "ok"
    assert made == ["fault", "fault", "ok"]
    lines = [r.getMessage() for r in caplog.records if "retrying" in r.getMessage()]
    assert lines == ["infrastructure fault; retrying call (attempt 2)",
                     "infrastructure fault; retrying call (attempt 3)"]


def test_the_last_fault_is_returned_as_it_came_after_the_last_attempt() -> None:
    made, call = _calls(["fault-1", "fault-2", "fault-3", "never"])
    result = anyio.run(lambda: FAST.call_async(call, faulty=lambda r: r.startswith("fault")))
    assert result == "fault-3"
    assert len(made) == 3


def test_once_makes_one_attempt_even_on_a_fault() -> None:
    made, call = _calls(["fault", "ok"])
    assert anyio.run(lambda: FAST.once().call_async(call, faulty=lambda r: r == "fault")) == "fault"
    assert made == ["fault"]
