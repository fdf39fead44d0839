"""Each seam's share of the shared brain server: what the runner enforces whatever a hook sets."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class BrainShare(BaseModel):
    """Per-seam bounds on the shared server (docs/SECURITY-BRAIN.md, "Each seam's share").

    The connection cap comes from the run's budget (``ConnectionBudget.per_hook_role``);
    these are the rest.  Every figure is far above what our adapters or a real memory
    system need on a brain of corpus size, and low enough that every seam at its cap at
    once still fits the scratch space the run chose (``worst_case_bytes``).
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    temp_file_limit_kb: int = Field(65_536, ge=1, description="temp_file_limit of every hook role, per backend: a "
                                    "superuser-only setting, so a role cannot raise it.")
    seam_temp_bytes: int = Field(256 << 20, ge=1, description="Temporary files of one seam's backends together; "
                                 "past it the watchdog ends them.")
    statement_s: float = Field(30.0, gt=0, description="The documented statement timeout (the roles' "
                               "statement_timeout); a role may lower or lift its own, the watchdog still ends "
                               "what runs past it.")
    grace_s: float = Field(5.0, ge=0, description="How far past statement_s the watchdog lets a statement run "
                           "before it ends it (the server's own timeout fires first when the role kept it).")
    clone_bytes: int = Field(256 << 20, ge=1, description="Size of one image-seeded database (seed and hook "
                             "write there as its owner); past it the owner role loses its logins.")
    poll_s: float = Field(0.5, gt=0, description="How often the watchdog looks.")

    def worst_case_bytes(self, seams: int, clones: int) -> int:
        """What hooks can make the brain grow by at most before the watchdog acts (plus one poll of
        writing at RAM speed, counted as the same again)."""
        return 2 * (seams * self.seam_temp_bytes + clones * self.clone_bytes)


SHARE_ENV = "BRAINBENCH_BRAIN_SHARE"


def share_from_env(environ: dict[str, str] | None = None) -> BrainShare:
    """The defaults, or the JSON object in ``BRAINBENCH_BRAIN_SHARE`` (tests shrink the bounds to
    meet them in seconds); ValueError with one line naming the variable and the field."""
    import os

    from pydantic import ValidationError

    text = (os.environ if environ is None else environ).get(SHARE_ENV)
    if not text:
        return BrainShare()
    try:
        return BrainShare.model_validate_json(text)
    except ValidationError as exc:
        error = exc.errors()[0]
        where = ".".join(str(p) for p in error["loc"]) or "value"
        raise ValueError(f"{SHARE_ENV}: {where}: {error['msg']}") from None
