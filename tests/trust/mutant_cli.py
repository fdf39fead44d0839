"""``brainbench`` with the reference memory system deliberately broken: the mutation tests' entry point.

    python mutant_cli.py MUTATION[,MUTATION…] run …

The mutation switch (``brainbench.memory.reference.mutations``) and the scenario runner's
``BEFORE_STEP`` hook are module state that no option of the CLI reaches: only this test driver
sets them, in its own process, before handing its arguments to the real CLI.
"""

from __future__ import annotations

import sys

import psycopg
from brainbench import cli
from brainbench.memory.reference import mutations
from brainbench.models.corpus import Fixture, TrustStep
from brainbench.orchestrator import trust_scenario

# Breakages of the brain that are not the memory system's own code (gbrain's beforeStep probes).
HOOKS = ("claim_into_config",)


def claim_into_config(conn: psycopg.Connection, fixture: Fixture, step: TrustStep) -> None:
    """Before an owner purge, a copy of the claim lands where no purge looks: the ``config`` table."""
    if step.op != "purge" or step.actor != "owner":
        return
    steps = {s.step_id: s for s in fixture.trust_steps or []}
    claim = step.target_claim or (steps[step.target].fact if step.target in steps else None)
    if claim:
        conn.execute("INSERT INTO config (key, value) VALUES ('note.copied', %s)"
                     " ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value", (claim,))


def main() -> None:
    names = [n for n in sys.argv[1].split(",") if n]
    hooks = [n for n in names if n in HOOKS]
    if "claim_into_config" in hooks:
        trust_scenario.BEFORE_STEP = claim_into_config
    sys.argv = ["brainbench", *sys.argv[2:]]
    with mutations.mutated(*(n for n in names if n not in HOOKS)):
        cli.main()


if __name__ == "__main__":
    main()
