"""Which uid:gid a hook runs as: never 0, in any spelling.

An image's ``USER`` can name root in many ways: ``0``, ``0000``, ``+0``, ``0:0``,
``root:root``, ``10001:0`` (root's group), a name that maps to uid 0 in the image's own
``/etc/passwd``, or a number that wraps to 0 when the runtime truncates it to 32 bits.
We resolve the spec to numbers ourselves, with the image's passwd and group files, and
hand Docker the canonical ``uid:gid``, so what we checked is exactly what runs.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# Go's strconv.Atoi, which the runtime uses to decide "number or name".
_NUMERIC = re.compile(r"[+-]?[0-9]+")
# Above this the runtime's 32-bit uid_t may wrap (2**32 → 0) or mean "no id" (-1).
MAX_ID = 2**31 - 2


class UserSpecError(ValueError):
    """The image names a user or group its own /etc/passwd or /etc/group does not define."""


@dataclass(frozen=True)
class Accounts:
    """The image's /etc/passwd and /etc/group, by name."""

    users: dict[str, tuple[int, int]]  # name → (uid, primary gid)
    groups: dict[str, int]

    @classmethod
    def parse(cls, passwd: str, group: str) -> Accounts:
        users: dict[str, tuple[int, int]] = {}
        for line in passwd.splitlines():
            parts = line.split(":")
            if len(parts) >= 4 and parts[0] and not parts[0].startswith("#"):
                try:
                    users.setdefault(parts[0], (int(parts[2]), int(parts[3])))
                except ValueError:
                    continue
        groups: dict[str, int] = {}
        for line in group.splitlines():
            parts = line.split(":")
            if len(parts) >= 3 and parts[0] and not parts[0].startswith("#"):
                try:
                    groups.setdefault(parts[0], int(parts[2]))
                except ValueError:
                    continue
        return cls(users, groups)

    def primary_gid(self, uid: int) -> int | None:
        return next((gid for u, gid in self.users.values() if u == uid), None)


def needs_accounts(spec: str) -> bool:
    """True when ``spec`` cannot be resolved without the image's passwd/group files."""
    user, _, group = spec.strip().partition(":")
    return not _NUMERIC.fullmatch(user) or not (group and _NUMERIC.fullmatch(group))


def _safe(value: int) -> bool:
    return 0 < value <= MAX_ID


def resolve_ids(spec: str | None, accounts: Accounts | None, fallback: tuple[int, int]) -> tuple[int, int]:
    """Numeric (uid, gid) for a ``USER`` spec; root (user or group) maps to ``fallback``.

    An empty spec is the image's default, root: also the fallback.  A name the image does
    not define raises :class:`UserSpecError` (Docker would refuse to start it anyway).
    """
    user, _, group = (spec or "").strip().partition(":")
    if not user:
        return fallback
    if _NUMERIC.fullmatch(user):
        uid: int = int(user)
        primary = accounts.primary_gid(uid) if accounts else None
    else:
        if accounts is None or user not in accounts.users:
            raise UserSpecError(f"USER {spec!r}: no user {user!r} in the image's /etc/passwd")
        uid, primary = accounts.users[user]
    if not _safe(uid):
        return fallback
    if not group:
        # Docker's default for a uid without a passwd entry is gid 0: never that.
        gid = primary if primary is not None and _safe(primary) else fallback[1]
        return uid, gid
    if _NUMERIC.fullmatch(group):
        gid = int(group)
    else:
        if accounts is None or group not in accounts.groups:
            raise UserSpecError(f"USER {spec!r}: no group {group!r} in the image's /etc/group")
        gid = accounts.groups[group]
    return (uid, gid) if _safe(gid) else (uid, fallback[1])


def parse_fallback(spec: str) -> tuple[int, int]:
    """The configured unprivileged ``uid:gid`` (numbers only: it must not depend on an image)."""
    user, _, group = spec.partition(":")
    if not (_NUMERIC.fullmatch(user) and _NUMERIC.fullmatch(group or user)):
        raise UserSpecError(f"fallback user {spec!r} must be numeric uid:gid")
    uid, gid = int(user), int(group or user)
    if not (_safe(uid) and _safe(gid)):
        raise UserSpecError(f"fallback user {spec!r} must not be root (uid/gid 0) or out of range")
    return uid, gid
