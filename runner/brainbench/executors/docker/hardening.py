"""Container create options from the run's hardening and limits: the hardened defaults in one place."""

from __future__ import annotations

from typing import Any

from .config import HardeningConfig, ResourceLimits
from .users import Accounts, parse_fallback, resolve_ids


def user_spec(config: HardeningConfig, image_user: str | None) -> str:
    """The spec to resolve: the configured user, else the image's own USER."""
    return (config.user if config.user is not None else image_user or "").strip()


def resolve_user(config: HardeningConfig, image_user: str | None, accounts: Accounts | None = None) -> str:
    """Canonical numeric ``uid:gid``; uid or gid 0 in any spelling maps to the fallback user."""
    uid, gid = resolve_ids(user_spec(config, image_user), accounts, parse_fallback(config.fallback_user))
    return f"{uid}:{gid}"


def create_kwargs(config: HardeningConfig, limits: ResourceLimits, image_user: str | None,
                  accounts: Accounts | None = None) -> dict[str, Any]:
    kwargs: dict[str, Any] = {
        "read_only": config.read_only_rootfs,
        "tmpfs": dict(config.tmpfs),
        "cap_drop": list(config.cap_drop),
        "pids_limit": limits.pids_limit,
        "mem_limit": limits.memory,
        # Equal to mem_limit: no swap on top, so the limit is the limit.
        "memswap_limit": limits.memory,
        "user": resolve_user(config, image_user, accounts),
        "init": config.init,
        "tty": False,
        "stdin_open": False,
    }
    if config.no_new_privileges:
        kwargs["security_opt"] = ["no-new-privileges:true"]
    if limits.cpus:
        kwargs["nano_cpus"] = int(limits.cpus * 1e9)
    return kwargs
