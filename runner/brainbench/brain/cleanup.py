"""``brainbench cleanup`` for the brain side: databases, hook roles and scratch directories.

Only what is provably dead by default (see ``ownership.py``); ``include_live`` takes live
runs' objects too, and every removed object is named so the user sees what went.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass, field

import psycopg

from brainbench.brain.databases import sweep_databases
from brainbench.brain.server import ExternalPostgres, first_line, sweep_embedded
from brainbench.ownership import sweep_lock_files
from brainbench.scratch import scratch_candidates
from brainbench.scratch_owner import RUN_PREFIX, scratch_dirs, sweep_run_dirs


@dataclass
class BrainCleanup:
    removed: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


def clean_brains(database_url: str | None = None, run_id: str | None = None, *,
                 include_live: bool = False) -> BrainCleanup:
    report = BrainCleanup()
    if run_id is not None:
        # One run: its transcripts carry its id in the name; embedded servers do not.
        for root in scratch_dirs(f"{RUN_PREFIX}{run_id}-"):
            shutil.rmtree(root, ignore_errors=True)
            if not root.exists():
                report.removed.append(f"scratch {root}")
    else:
        report.removed += [f"embedded server {p}" for p in sweep_embedded(include_live=include_live)]
        report.removed += [f"scratch {p}" for p in sweep_run_dirs(include_live=include_live)]
    if database_url:
        try:
            swept = sweep_databases(ExternalPostgres(database_url), run_id, include_live=include_live)
        except psycopg.Error as exc:
            report.errors.append(f"database server: {first_line(exc)}")
        else:
            report.removed += [f"database {n}" for n in swept.databases] + [f"role {n}" for n in swept.roles]
            report.errors += swept.errors
    if run_id is None:
        # Last: a dead owner's lock file is what proves its other leftovers dead.
        report.removed += [f"lock file {p}" for base in scratch_candidates() for p in sweep_lock_files(base)]
    return report
