"""Every parse of bytes from outside is bounded: a nested answer is its sender's fault, never a crash.

The parse sites one by one (the end-to-end runs are in test_untrusted_output.py): the
grader, the stream protocol both ways, the call server's answers, the seed contract's
label, the hook program's stdin.  Each gets 5,000 levels of nesting in a few KB and
must answer with the error its site already turns into a fault, never ``RecursionError``.
"""

from __future__ import annotations

import json

import pytest
from brainbench.executors.base import HookCall
from brainbench.executors.call_protocol import CallChannel, CallServerError
from brainbench.harnesses.grading import grade
from brainbench.hooks.program import HookResult, invoke
from brainbench.models import bounded_json
from brainbench.models.hook_io import HookOutcome
from brainbench.models.seed import BrainContract, BrainContractError
from brainbench.models.stream_codec import StreamProtocolError, decode_request, decode_response

DEEP = "[" * 5000
DEEP_OBJECT = '{"a":' * 1200  # 6 KB: under the context cap


@pytest.mark.parametrize("text", [DEEP, DEEP + "]" * 5000, DEEP_OBJECT, '{"k": ' + DEEP + "}"])
def test_too_deep_is_a_decode_error_before_any_parser_recursed(text: str) -> None:
    with pytest.raises(json.JSONDecodeError, match="nested deeper than 64 levels"):
        bounded_json.loads(text)


def test_brackets_inside_strings_do_not_nest_and_honest_json_parses() -> None:
    doc = {"s": "[" * 5000 + '\\"{' * 100, "deep": [[[[{"a": [1]}]]]]}
    assert bounded_json.loads(json.dumps(doc)) == doc
    assert bounded_json.loads(json.dumps(doc).encode()) == doc
    at_bound = "[" * 64 + "]" * 64
    assert bounded_json.loads(at_bound) is not None
    with pytest.raises(bounded_json.JSONTooDeep):
        bounded_json.loads("[" + at_bound + "]")


def test_too_large_is_refused_before_parsing() -> None:
    with pytest.raises(bounded_json.JSONTooLarge):
        bounded_json.loads('"' + "x" * 100 + '"', max_chars=50)


@pytest.mark.parametrize("dialect", ["claude", "codex", "openclaw"])
@pytest.mark.parametrize("stdout", [DEEP, DEEP_OBJECT, '{"hookSpecificOutput": ' + DEEP + "}"])
def test_the_grader_calls_nested_stdout_a_contract_violation(dialect: str, stdout: str) -> None:
    graded = grade(HookOutcome(0, stdout.encode(), b"", False, 1.0), dialect)  # type: ignore[arg-type]
    assert (graded.context, graded.fault) == (None, "contract_violation")
    assert graded.detail == "stdout JSON nested deeper than 64 levels"
    # A crashing hook's {-prefixed stdout (claude reads it) goes the same way.
    crashed = grade(HookOutcome(1, stdout.encode(), b"boom", False, 1.0), dialect)  # type: ignore[arg-type]
    assert (crashed.context, crashed.fault) == (None, "adapter_crash")


def test_the_stream_protocol_refuses_nested_lines_both_ways() -> None:
    with pytest.raises(StreamProtocolError, match="nested deeper"):
        decode_response('{"id": 1, "exit_code": 0, "x": ' + DEEP, 1)
    with pytest.raises(StreamProtocolError, match="not a JSON object"):
        decode_response("[1]", 1)
    with pytest.raises(StreamProtocolError, match="nested deeper"):
        decode_request('{"id": 1, "input": ' + DEEP + "}")


def test_a_hook_program_stays_silent_on_nested_stdin() -> None:
    result = invoke(lambda message, env: HookResult(0, "answered"), DEEP, {})
    assert (result.exit_code, result.stdout) == (0, "")
    assert "not JSON" in result.stderr


def test_a_seed_label_nested_deep_is_one_line() -> None:
    with pytest.raises(BrainContractError) as caught:
        BrainContract.from_label("evil:1", DEEP)
    message = str(caught.value)
    assert "\n" not in message and "image evil:1" in message and "nested deeper than 64 levels" in message


class _Scripted(CallChannel):
    """A call server that answers every request with one fixed line (as a replaced server could)."""

    def __init__(self, answer: bytes) -> None:
        super().__init__()
        self.alive = True
        self.answer = answer

    def send_line(self, line: bytes) -> None:
        rid = json.loads(line).get("id")
        if rid is not None:
            # The reader thread's delivery: a nested line is dropped there, so the call times out
            # as a dead server's would; a nested field under a good id reaches the parser of run().
            self.deliver(self.answer.replace(b"@ID@", str(rid).encode()))


@pytest.mark.parametrize("answer", [b'{"id": @ID@, "exit_code": 0, "stdout": "", "x": ' + DEEP.encode() + b"]}",
                                    b'{"id": @ID@, "exit_code": 0, "x": ' + DEEP.encode()])
def test_a_nested_call_server_answer_is_a_call_server_error(answer: bytes) -> None:
    channel = _Scripted(answer)
    with pytest.raises(CallServerError):
        channel.run(HookCall(b"{}", {}, 0.2), {}, 0.1, "claude-code")
    assert channel.ask({"hello": True}, 0.2) == {}
