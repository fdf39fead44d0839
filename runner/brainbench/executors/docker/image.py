"""What the runner needs to know about a seam image before it starts a container from it."""

from __future__ import annotations

import contextlib
import io
import tarfile
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from .config import LABEL_MODES
from .failures import ImageNotFound
from .users import Accounts

if TYPE_CHECKING:
    from .client import DockerApi

# /etc/passwd of a hostile image is data we parse: read no more than this of it.
MAX_ACCOUNTS_FILE = 1024 * 1024


@dataclass(frozen=True)
class ImageFacts:
    ref: str
    id: str
    # RepoDigests when the image came from a registry, else the local image id.
    digest: str
    user: str | None
    command: tuple[str, ...]  # ENTRYPOINT + CMD
    labels: dict[str, str] = field(default_factory=dict)

    @property
    def modes(self) -> frozenset[str]:
        """Invocation modes the image declares (``io.brainbench.modes``); exec when absent.

        Our own contract images built before the label existed all speak stream too.
        """
        raw = self.labels.get(LABEL_MODES)
        if raw is None and self.labels.get("io.brainbench.kind") == "contract":
            return frozenset({"exec", "stream"})
        declared = {m.strip() for m in (raw or "").split(",") if m.strip()}
        return frozenset(declared or {"exec"})


def inspect_image(api: DockerApi, ref: str) -> ImageFacts:
    import docker.errors

    try:
        image = api.retry(api.client.images.get, ref)
    except docker.errors.ImageNotFound as exc:
        raise ImageNotFound(ref) from exc
    digests = image.attrs.get("RepoDigests") or []
    cfg = image.attrs.get("Config") or {}
    return ImageFacts(ref=ref, id=image.id, digest=digests[0].split("@", 1)[-1] if digests else image.id,
                      user=cfg.get("User"), command=(*(cfg.get("Entrypoint") or []), *(cfg.get("Cmd") or [])),
                      labels=dict(cfg.get("Labels") or {}))


def read_accounts(api: DockerApi, ref: str, labels: dict[str, str]) -> Accounts:
    """The image's /etc/passwd and /etc/group, read from a container that never starts."""
    created = api.retry(api.api.create_container, ref, command=["/nonexistent"], entrypoint=[],
                        network_disabled=True, labels=labels)
    try:
        texts = [_read_file(api, created["Id"], path) for path in ("/etc/passwd", "/etc/group")]
    finally:
        with contextlib.suppress(Exception):
            api.api.remove_container(created["Id"], force=True)
    return Accounts.parse(*texts)


def _read_file(api: DockerApi, container_id: str, path: str) -> str:
    import docker.errors

    try:
        stream, _ = api.api.get_archive(container_id, path)
    except docker.errors.NotFound:
        return ""
    raw = io.BytesIO()
    for chunk in stream:
        raw.write(chunk)
        if raw.tell() > MAX_ACCOUNTS_FILE + 65536:
            break
    raw.seek(0)
    with contextlib.suppress(tarfile.TarError), tarfile.open(fileobj=raw) as tar:
        for member in tar:
            # A symlinked /etc/passwd arrives as a link member: no file, no accounts.
            if member.isfile() and member.size <= MAX_ACCOUNTS_FILE:
                handle = tar.extractfile(member)
                if handle is not None:
                    return handle.read().decode("utf-8", "replace")
    return ""
