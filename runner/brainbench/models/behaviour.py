"""Which gbrain release our reference seams behave like: the run option ``--behaviour``.

gbrain's BrainBench changed between two releases in ways its old suites can see
(trust spec §5): gbrain 0.60 labels every page and fact it injects with its trust tier,
wraps external text as data, withholds flagged agent-written rows on request, and gives
openclaw a volunteer arm; gbrain v0.46 does none of that.  Our seams reproduce either,
so a run says which, and numbers of one are never gated against the other.

Plain constants (no pydantic): the hook programs read them on every call's start-up path.
"""

from __future__ import annotations

from typing import Literal

Behaviour = Literal["0.60", "0.46"]
BEHAVIOURS: tuple[Behaviour, ...] = ("0.60", "0.46")
# The newest release: what a run follows unless told otherwise, and what a baseline that
# records no behaviour was made with (gbrain 0.60 writes none in its own).
NEWEST: Behaviour = "0.60"
# How a seam learns it, per call, like BRAINBENCH_SOURCE; absent: the newest.
BEHAVIOUR_ENV = "BRAINBENCH_BEHAVIOUR"


def seam_behaviour(value: str | None) -> Behaviour:
    """The behaviour a seam follows for an env value (unset or unknown: the newest)."""
    return "0.46" if value == "0.46" else NEWEST
