"""Container labels: the runner sets all of its containers' labels, and believes no label an image set.

Docker merges an image's ``LABEL``s into every container made from it, under the labels its
creator gives.  So a seam image could hand its container ``brainbench.role=brain`` or
``com.docker.compose.service=postgres`` and be taken for a run's Postgres, or carry a dead
owner's ``brainbench.owner`` into someone else's container for a sweep to remove.  Hence:

* every container the runner creates gets :func:`runner_labels`: its own labels, and each
  label its image would have passed on, blanked;
* discovery (the run's Postgres, sweeps, owner judgement) reads a container's labels through
  :class:`ImageLabels`, which drops any label whose value is its image's: one the image may
  have set.  A label its creator set differs from the image's, and the labels that decide
  ownership (owner, run id) are unique to one runner process, so the runner's own always do.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .client import DockerApi


def runner_labels(image_labels: Mapping[str, str] | None, own: Mapping[str, str]) -> dict[str, str]:
    """A new container's labels: ``own``, and every other label of its image overridden with ''."""
    return {**dict.fromkeys(image_labels or {}, ""), **own}


def set_at_creation(labels: Mapping[str, str] | None, image_labels: Mapping[str, str] | None) -> dict[str, str]:
    """The labels of a container that its image did not give it (``image_labels`` None: unknown, so none)."""
    if image_labels is None:
        return {}
    return {key: value for key, value in (labels or {}).items() if image_labels.get(key) != value}


class ImageLabels:
    """Images' labels by image id, each inspected once per discovery."""

    def __init__(self, api: DockerApi) -> None:
        self.api = api
        self._seen: dict[str, dict[str, str] | None] = {}

    def of(self, image_id: str | None) -> dict[str, str] | None:
        """The image's labels; None when it cannot be inspected (then nothing of its containers is believed)."""
        if not image_id:
            return None
        if image_id not in self._seen:
            try:
                config = self.api.api.inspect_image(image_id).get("Config") or {}
                self._seen[image_id] = dict(config.get("Labels") or {})
            except Exception:  # gone, or the engine failed: believe nothing rather than guess
                self._seen[image_id] = None
        return self._seen[image_id]

    def believed(self, container: Any) -> dict[str, str]:
        """What a container's creator set: an SDK ``Container`` or an entry of the low-level list."""
        if isinstance(container, Mapping):
            labels, image = container.get("Labels"), container.get("ImageID")
        else:
            labels, image = container.labels, (container.attrs or {}).get("Image")
        return set_at_creation(labels, self.of(image))
