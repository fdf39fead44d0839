"""Build a test image from an in-memory context: no registry, so every base must be local."""

from __future__ import annotations

import io
import tarfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any


def build_image(client: Any, tag: str, files: Mapping[str, str | bytes | Path]) -> str:
    """``files`` holds the ``Dockerfile`` and what it copies: text and bytes land executable, a Path keeps its mode."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for name, content in files.items():
            if isinstance(content, Path):
                tar.add(str(content), arcname=name)
                continue
            data = content.encode() if isinstance(content, str) else content
            info = tarfile.TarInfo(name)
            info.size = len(data)
            info.mode = 0o755
            tar.addfile(info, io.BytesIO(data))
    buf.seek(0)
    client.images.build(fileobj=buf, custom_context=True, tag=tag, rm=True, pull=False)
    return tag
