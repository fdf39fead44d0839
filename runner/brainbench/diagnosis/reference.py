"""Why each gold item passed or failed: the wire, plus a reference diagnosis on the same brain.

For a turn that missed a gold page, the runner replays the turn through our own
reflex (candidates → resolve → budget → suppression) against the fixture's brain
while it is still leased, with the budget and suppression rule of the harness the
seam stands for (spec §4).  That says what a conforming seam would have injected
and why a page did not make it.  A production image is only ever compared with
that reference: its reasons read "reference would …", never a claim about how
the image works inside.  The reference follows the run's ``--behaviour``: under
gbrain 0.60 it applies the trust gate, and openclaw also volunteers from its user window.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import psycopg

from brainbench.brain import store
from brainbench.corpus.loader import LoadedFixture
from brainbench.models.behaviour import Behaviour
from brainbench.models.trace import ItemVerdict, ReferencePick, TurnTrace
from brainbench.reflex.candidates import Candidate, extract_candidates, extract_candidates_from_window
from brainbench.reflex.render import Pointer
from brainbench.reflex.resolve import Suppression, resolve_pointers
from brainbench.reflex.trust_gate import TrustGate
from brainbench.reflex.volunteer import volunteer

# Resolve "everything" before the budget: the budget is applied here, so ranks are visible.
_UNBOUNDED = 64
_ARM_WORDS = {"alias": "alias", "title": "exact title", "title-surname": "surname", "cjk-title": "CJK title",
              "slug-suffix": "slug"}


@dataclass(frozen=True)
class ReferencePolicy:
    """How the reference reflex behaves for one harness (spec §4.1–§4.3)."""

    budget: int
    suppression: Suppression
    window_turns: int | None = None  # claude-code reads the last N transcript turns plus the prompt
    volunteer_pool: int = 0  # claude-code volunteers confident extras from a wider resolution
    slugs_only_prior: bool = False  # claude-code suppresses by slug against its own earlier blocks
    # gbrain 0.60's openclaw: pointers from the prompt alone, volunteers from the last N user turns.
    user_window: int | None = None
    labeled: bool = False  # gbrain 0.60: the trust gate decides what may be injected

    def describe(self) -> str:
        extra = f" + up to 3 volunteered from the top {self.volunteer_pool}" if self.volunteer_pool else ""
        return f"{self.budget} pointer{'s' if self.budget != 1 else ''}{extra}"


POLICIES: dict[str, ReferencePolicy] = {
    "openclaw": ReferencePolicy(3, "slug-and-title"),
    "codex": ReferencePolicy(1, "slug-and-title"),
    "claude-code": ReferencePolicy(3, "slug-only", window_turns=4, volunteer_pool=10, slugs_only_prior=True),
}
POLICIES_0_60: dict[str, ReferencePolicy] = {
    "openclaw": ReferencePolicy(3, "slug-and-title", volunteer_pool=10, user_window=4, labeled=True),
    "codex": ReferencePolicy(1, "slug-and-title", labeled=True),
    "claude-code": ReferencePolicy(3, "slug-only", window_turns=4, volunteer_pool=10, slugs_only_prior=True,
                                   labeled=True),
}


def policies(behaviour: Behaviour) -> dict[str, ReferencePolicy]:
    return POLICIES if behaviour == "0.46" else POLICIES_0_60


@dataclass
class _Reference:
    picks: list[ReferencePick]
    candidates: list[Candidate]

    def pick(self, slug: str) -> ReferencePick | None:
        return next((p for p in self.picks if p.slug == slug), None)

    @property
    def unsuppressed(self) -> int:
        return sum(1 for p in self.picks if p.fate != "suppressed")


def _reference(conn: psycopg.Connection, source: str, policy: ReferencePolicy, prompt: str,
               window: list[tuple[str, str]], prior: str) -> _Reference:
    if policy.window_turns is not None:
        turns = window[-policy.window_turns:] + ([("user", prompt)] if prompt.strip() else [])
        candidates = extract_candidates_from_window(turns)
    else:
        candidates = extract_candidates(prompt)
    user_turns: list[tuple[str, str]] = []
    pool_candidates = candidates
    if policy.user_window is not None:
        user_turns = ([t for t in window if t[0] == "user"] + [("user", prompt)])[-policy.user_window:]
        pool_candidates = extract_candidates_from_window(user_turns)
    if not candidates and not pool_candidates:
        return _Reference([], [])
    gate = TrustGate.read(conn) if policy.labeled else None
    every = resolve_pointers(conn, source, candidates, max_pointers=_UNBOUNDED, suppression=policy.suppression,
                             gate=gate) if candidates else []
    kept = resolve_pointers(conn, source, candidates, max_pointers=_UNBOUNDED, prior_context=prior or None,
                            suppression=policy.suppression, gate=gate) if candidates else []
    chosen = {p.slug for p in kept[: policy.budget]}
    extras = []
    if policy.volunteer_pool:
        if policy.user_window is not None:  # its own resolution of the user window, by slug only
            pool = resolve_pointers(conn, source, pool_candidates, max_pointers=policy.volunteer_pool,
                                    prior_context=prior or None, suppression="slug-only", gate=gate)
            extras = volunteer(pool_candidates, pool, [p.slug for p in kept[: policy.budget]], len(user_turns),
                               fold_display=policy.labeled)
        else:
            window_len = len(window[-(policy.window_turns or 0):]) + (1 if prompt.strip() else 0)
            extras = volunteer(candidates, kept[: policy.volunteer_pool], [p.slug for p in kept[: policy.budget]],
                               window_len, fold_display=policy.labeled)
        chosen |= {v.pointer.slug for v in extras}
    rank = {p.slug: i for i, p in enumerate(kept, start=1)}
    picks = []
    for p in every:
        if p.slug not in rank:
            fate = "suppressed"
        else:
            fate = "injected" if p.slug in chosen else "over_budget"
        picks.append(_pick(p, fate, rank.get(p.slug)))
    listed = {p.slug for p in every}
    picks += [_pick(v.pointer, "injected", None) for v in extras if v.pointer.slug not in listed]
    return _Reference(picks, candidates or pool_candidates)


def _pick(p: Pointer, fate: str, rank: int | None) -> ReferencePick:
    return ReferencePick(slug=p.slug, rule=p.arm, matched=p.matched_norm, fate=fate, rank=rank)  # type: ignore[arg-type]


def _rule(p: ReferencePick) -> str:
    return f'{_ARM_WORDS.get(p.rule, p.rule)} match on "{p.matched}"'


def _needs_reference(t: TurnTrace) -> bool:
    gold = t.gold
    if gold is None or not gold.should_retrieve:
        return False
    return any(s not in t.injected_slugs for s in _gold_slugs(t))


def diagnose_replay(conn: psycopg.Connection, item: LoadedFixture, traces: Sequence[TurnTrace],
                    contexts: Mapping[int, str | None], slug_sources: Mapping[str, set[str]],
                    behaviour: Behaviour = "0.60") -> list[TurnTrace]:
    """The seam's traces of one fixture with prior-context summaries, verdicts and reasons filled in."""
    source = item.fixture.source
    by_turn = {t.turn_id: t for t in traces}
    window: list[tuple[str, str]] = []
    prior_parts: list[str] = []
    blocks: list[str] = []
    first_injected: dict[str, int] = {}
    out: list[TurnTrace] = []
    for turn in item.public_turns():
        trace = by_turn.get(turn.turn_id) if turn.role == "user" else None
        if trace is not None:
            policy = policies(behaviour).get(trace.harness)
            reference = None
            present: set[str] = set()
            broken = ""
            if policy is not None and _needs_reference(trace):
                prior = "\n\n".join(blocks) if policy.slugs_only_prior else "".join(prior_parts)
                try:
                    reference = _reference(conn, source, policy, turn.text, window, prior)
                    present = set(store.pages_by_slug(conn, source, _gold_slugs(trace)))
                except psycopg.Error as exc:
                    # The explanation is ours, not the seam's: losing it must not lose the run.
                    reference, broken = None, str(exc).strip().splitlines()[0] if str(exc).strip() else "error"
            verdicts = verdicts_for(trace, reference, policy, first_injected, slug_sources, source, present,
                                    broken)
            out.append(trace.model_copy(update={
                "prior_messages": len(window), "prior_injections": len(blocks), "verdicts": verdicts,
                "budget": policy.budget if policy else None,
                "reference": reference.picks if reference is not None else None,
            }))
        window.append((turn.role, turn.text))
        prior_parts.append("\n" + turn.text)
        context = contexts.get(turn.turn_id) if turn.role == "user" else None
        if context:
            prior_parts.append("\n" + context)
            blocks.append(context)
            for slug in trace.injected_slugs if trace else []:
                first_injected.setdefault(slug, turn.turn_id)
    return out


def _gold_slugs(t: TurnTrace) -> list[str]:
    """The pages to explain: the gold pages, or the acceptable ones when gold names none."""
    gold = t.gold
    if gold is None:
        return []
    return list(dict.fromkeys(gold.gold_slugs or gold.acceptable_slugs or []))


def verdicts_for(t: TurnTrace, reference: _Reference | None, policy: ReferencePolicy | None,
                 first_injected: Mapping[str, int], slug_sources: Mapping[str, set[str]], source: str,
                 present: set[str], broken: str = "") -> list[ItemVerdict]:
    gold = t.gold
    if gold is None:
        return []
    out: list[ItemVerdict] = []
    injected = list(dict.fromkeys(t.injected_slugs))
    wanted = _gold_slugs(t)
    right = set(wanted) | set(gold.acceptable_slugs or [])
    # know-to-ask alone needs one right page; push scores every gold page.
    one_suffices = "push" not in t.suites and bool(set(injected) & right)
    fault = f"the seam faulted ({t.fault_class}: {t.fault_detail}); the turn was scored as silence" \
        if t.fault_class and not injected else ""
    if gold.should_retrieve:
        for slug in wanted:
            if slug in injected:
                out.append(ItemVerdict(slug=slug, verdict="injected", reason="injected"))
                continue
            verdict, reason = _missing(slug, t, reference, policy, first_injected, source, present, broken)
            if fault:
                verdict, reason = "fault", f"{fault}; {reason}"
            out.append(ItemVerdict(slug=slug, verdict=verdict, reason=reason,  # type: ignore[arg-type]
                                   scored=not one_suffices))
    elif not injected:
        out.append(ItemVerdict(slug=None, verdict="quiet", reason="stayed quiet, as gold requires"))
    for slug in injected:
        if slug in right:
            if slug not in wanted:
                out.append(ItemVerdict(slug=slug, verdict="injected", reason="injected (an acceptable page)"))
            continue
        seeded = slug_sources.get(slug)
        if seeded is not None and source not in seeded:
            out.append(ItemVerdict(slug=slug, verdict="other_source", reason=(
                f"injected from another source: `{slug}` is seeded only in {', '.join(sorted(seeded))}, "
                f"the active source is {source}")))
        elif not gold.should_retrieve:
            out.append(ItemVerdict(slug=slug, verdict="false_fire",
                                   reason=f"injected `{slug}` on a turn that should stay quiet"))
        else:
            out.append(ItemVerdict(slug=slug, verdict="wrong_page",
                                   reason=f"injected `{slug}`, which is neither a gold nor an acceptable page"))
    return out


def _missing(slug: str, t: TurnTrace, reference: _Reference | None, policy: ReferencePolicy | None,
             first_injected: Mapping[str, int], source: str, present: set[str], broken: str = "") -> tuple[str, str]:
    if broken:
        return "not_injected", f"not injected (the reference diagnosis failed: {broken})"
    if reference is None or policy is None:
        return "not_injected", "not injected (no reference diagnosis for this seam)"
    pick = reference.pick(slug)
    image = t.image is not None
    if pick is None:
        if slug not in present:
            return "unresolvable", f"not resolvable in this brain: no page `{slug}` in source {source}"
        names = ", ".join(f'"{c.display}"' for c in reference.candidates[:6]) or "none"
        return "unresolvable", (f"not resolvable in this brain: no alias, title, slug or surname match for "
                                f"`{slug}` among the turn's candidates ({names})")
    if pick.fate == "suppressed":
        earlier = first_injected.get(slug)
        if earlier is not None:
            why = f"already injected at turn {earlier}"
        else:
            why = "present in prior context (its slug or title was already in the conversation)"
        lead = "the reference would also suppress it" if image else "suppressed"
        return "suppressed", f"{lead}: {why}"
    if pick.fate == "over_budget":
        where = f"rank {pick.rank} of {reference.unsuppressed}, budget {policy.describe()}"
        if image:
            return "budget", f"not injected; the reference would also drop it: {_rule(pick)}, {where}"
        return "budget", f"not injected — resolvable but dropped by the pointer budget ({where}; {_rule(pick)})"
    where = f"rank {pick.rank}" if pick.rank is not None else "volunteered"
    return "not_injected", f"not injected; reference would have injected `{slug}` ({_rule(pick)}, {where})"
