"""Container create options from HardeningConfig: the hardened defaults in one place."""

from __future__ import annotations

from typing import Any

from .config import HardeningConfig


def resolve_user(config: HardeningConfig, image_user: str | None) -> str:
    """Never run a hook as root unless the config explicitly asks for it."""
    if config.user is not None:
        return config.user
    user = (image_user or "").strip()
    if user and user.split(":", 1)[0] not in ("0", "root"):
        return user
    return config.fallback_user


def create_kwargs(config: HardeningConfig, image_user: str | None) -> dict[str, Any]:
    kwargs: dict[str, Any] = {
        "read_only": config.read_only_rootfs,
        "tmpfs": dict(config.tmpfs),
        "cap_drop": list(config.cap_drop),
        "pids_limit": config.pids_limit,
        "mem_limit": config.memory,
        # Equal to mem_limit: no swap on top, so the limit is the limit.
        "memswap_limit": config.memory,
        "user": resolve_user(config, image_user),
        "init": config.init,
        "tty": False,
        "stdin_open": False,
    }
    if config.no_new_privileges:
        kwargs["security_opt"] = ["no-new-privileges:true"]
    if config.cpus:
        kwargs["nano_cpus"] = int(config.cpus * 1e9)
    return kwargs
