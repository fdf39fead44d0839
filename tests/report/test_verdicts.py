"""Verdict rules that need no brain: what came over the wire, against gold and the reference's picks."""

from __future__ import annotations

from typing import Any

from brainbench.diagnosis.reference import POLICIES, _Reference, policies, verdicts_for
from brainbench.models.corpus import TurnGold
from brainbench.models.trace import ReferencePick, TurnTrace


def trace(gold: dict[str, Any], injected: list[str], **extra: Any) -> TurnTrace:
    return TurnTrace(fixture_id="fx", turn_id=1, harness="codex", suites=["know-to-ask", "push"], prompt="p",
                     prior_messages=0, prior_injections=0, context=None, context_chars=0, injected_slugs=injected,
                     injected_tokens=0, exit_code=0, latency_ms=1.0, gold=TurnGold(**gold), **extra)


def kinds(t: TurnTrace, reference: _Reference | None = None, sources: dict[str, set[str]] | None = None) -> list[
        tuple[str | None, str, str]]:
    out = verdicts_for(t, reference, POLICIES["codex"], {}, sources or {}, "default", {"a", "b"})
    return [(v.slug, v.verdict, v.reason) for v in out]


def test_a_fault_explains_silence_before_the_reference() -> None:
    t = trace({"should_retrieve": True, "gold_slugs": ["a"]}, [], fault_class="adapter_timeout",
              fault_detail="no answer within the timeout (30000 ms)")
    ref = _Reference([ReferencePick(slug="a", rule="alias", matched="a", fate="injected", rank=1)], [])
    [(slug, verdict, reason)] = kinds(t, ref)
    assert (slug, verdict) == ("a", "fault")
    assert reason.startswith("the seam faulted (adapter_timeout: no answer within the timeout (30000 ms))")
    assert reason.endswith("reference would have injected `a` (alias match on \"a\", rank 1)")


def test_quiet_false_fire_wrong_page_and_other_source() -> None:
    assert kinds(trace({"should_retrieve": False}, [])) == [(None, "quiet", "stayed quiet, as gold requires")]
    assert kinds(trace({"should_retrieve": False}, ["x"]))[0][1] == "false_fire"
    wrong = kinds(trace({"should_retrieve": True, "gold_slugs": ["a"]}, ["a", "x"]))
    assert [v[1] for v in wrong] == ["injected", "wrong_page"]
    leak = kinds(trace({"should_retrieve": True, "gold_slugs": ["a"]}, ["a", "w"]), sources={"w": {"work"}})
    assert leak[1][:2] == ("w", "other_source") and "seeded only in work, the active source is default" in leak[1][2]


def test_a_production_image_is_only_compared_with_the_reference() -> None:
    t = trace({"should_retrieve": True, "gold_slugs": ["a", "b"]}, ["b"], image="vendor/hook:1")
    ref = _Reference([ReferencePick(slug="b", rule="title", matched="b", fate="injected", rank=1),
                      ReferencePick(slug="a", rule="title", matched="a", fate="over_budget", rank=2)], [])
    [(_, verdict, reason), _] = kinds(t, ref)
    assert verdict == "budget"
    assert reason.startswith("not injected; the reference would also drop it:")


def test_reference_policies_match_our_seams() -> None:
    """The diagnosis restates each harness's budget (spec §4); our own seam programs must agree."""
    from brainbench.hooks import claude_code, codex, openclaw

    assert POLICIES["openclaw"].budget == openclaw.MAX_POINTERS
    assert POLICIES["codex"].budget == codex.MAX_FRAGMENTS
    cc = POLICIES["claude-code"]
    assert (cc.budget, cc.window_turns, cc.volunteer_pool) == (
        claude_code.MAX_POINTERS, claude_code.WINDOW_TURNS, claude_code.MAX_VOLUNTEER_POOL)
    # gbrain 0.60: openclaw volunteers from its user window, and every seam's reference is labeled.
    newer = policies("0.60")
    oc = newer["openclaw"]
    assert (oc.budget, oc.user_window, oc.volunteer_pool) == (
        openclaw.MAX_POINTERS, openclaw.WINDOW_TURNS, openclaw.VOLUNTEER_POOL)
    assert all(p.labeled for p in newer.values()) and not any(p.labeled for p in policies("0.46").values())
    assert {h: (p.budget, p.window_turns) for h, p in newer.items()} == {
        h: (p.budget, p.window_turns) for h, p in POLICIES.items()}
