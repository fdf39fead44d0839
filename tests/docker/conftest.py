"""Shared helpers for tests that need a real Docker engine.

They skip (with the reason) when no engine answers: start one with
``eval "$(scripts/start-dockerd)"`` and build the base with
``scripts/build-images --offline``.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from image_build import build_image  # type: ignore[import-not-found]

HOOKS = Path(__file__).parent / "hooks"
TEST_IMAGE = "brainbench-test/hooks:latest"
PRODUCTION_IMAGE = "brainbench-test/production:latest"
# Local bases only: nothing may be pulled from a registry in tests.
BASE_CANDIDATES = ("brainbench/base:bookworm", "python:3.11-slim")
REPO = Path(__file__).resolve().parents[2]
# The Kubernetes pods' orchestrator: built from this checkout by scripts/build-images --offline
# (as .ci/run does); another tag for a dev build.
ORCHESTRATOR = os.environ.get("BRAINBENCH_TEST_ORCHESTRATOR_IMAGE", "brainbench/brainbench:latest")
# Its own tag for a dev build, so two checkouts testing at once never share one corpus image.
CORPUS_IMAGE = os.environ.get("BRAINBENCH_TEST_CORPUS_IMAGE", "bbtest-k8s/brainbench-corpus:latest")


def _docker_status() -> tuple[object | None, str]:
    try:
        import docker
    except ImportError:
        return None, "docker SDK not installed (pip install '.[docker]')"
    try:
        client = docker.from_env(version="auto")
        client.ping()
    except docker.errors.DockerException as exc:
        return None, f"no Docker engine reachable ({exc.__class__.__name__}); run: eval \"$(scripts/start-dockerd)\""
    return client, ""


_CLIENT, _REASON = _docker_status()
skip_if_no_docker = pytest.mark.skipif(_CLIENT is None, reason=_REASON)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    # Applied here so test modules need no import from this conftest: tests/ is not a
    # package, and a tests/docker package would shadow the docker SDK.
    here = Path(__file__).parent
    for item in items:
        if here in Path(str(item.fspath)).parents:
            item.add_marker(skip_if_no_docker)


def base_image() -> str:
    from docker.errors import ImageNotFound

    assert _CLIENT is not None
    for ref in BASE_CANDIDATES:
        try:
            _CLIENT.images.get(ref)  # type: ignore[attr-defined]
            return ref
        except ImageNotFound:
            continue
    pytest.skip("no local Python base image; run: scripts/build-images --offline")


def _build(dockerfile: str, files: dict[str, Path], tag: str) -> str:
    return build_image(_CLIENT, tag, {"Dockerfile": dockerfile, **files})


@pytest.fixture(scope="session")
def docker_client() -> object:
    if _CLIENT is None:
        pytest.skip(_REASON)
    return _CLIENT


@pytest.fixture(scope="session")
def hook_image(docker_client: object) -> str:
    base = base_image()
    return _build(
        f"FROM {base}\n"
        "COPY echo_hook.py /hooks/echo_hook.py\n"
        "RUN (useradd --system --uid 10001 --user-group bb || true)\n"
        "USER 10001:10001\n"
        'ENTRYPOINT ["python3", "/hooks/echo_hook.py"]\n',
        {"echo_hook.py": HOOKS / "echo_hook.py"},
        TEST_IMAGE,
    )


@pytest.fixture(scope="session")
def production_image(docker_client: object) -> str:
    # Any image with /bin/sh and `timeout` follows the contract; a shell script is enough.
    base = base_image()
    return _build(
        f"FROM {base}\n"
        "COPY fixed_context.sh /usr/local/bin/memory-hook\n"
        'LABEL io.brainbench.kind="production"\n'
        "USER 65534:65534\n"
        'ENTRYPOINT ["/usr/local/bin/memory-hook"]\n',
        {"fixed_context.sh": HOOKS / "fixed_context.sh"},
        PRODUCTION_IMAGE,
    )


@pytest.fixture
def run_id() -> Iterator[str]:
    rid = f"bbtest-{uuid.uuid4().hex[:10]}"
    yield rid
    # Whatever a test leaves behind is removed, so one failure cannot poison the next.
    if _CLIENT is not None:
        from brainbench.executors.docker.cleanup import remove_labelled
        from brainbench.executors.docker.client import DockerApi

        api = DockerApi()
        remove_labelled(api, run_id=rid)
        api.close()


def labelled(client: object, run_id: str) -> tuple[list[object], list[object]]:
    flt = {"label": [f"brainbench.run_id={run_id}"]}
    return (client.containers.list(all=True, ignore_removed=True, filters=flt),  # type: ignore[attr-defined]
            client.networks.list(filters=flt))  # type: ignore[attr-defined]


@pytest.fixture
def labelled_objects(docker_client: object) -> object:
    """``labelled_objects(run_id) -> (containers, networks)`` carrying that run id."""
    return lambda rid: labelled(docker_client, rid)


@pytest.fixture(scope="session")
def corpus_image(docker_client: object) -> str:
    """deploy/kubernetes/Dockerfile.corpus on ORCHESTRATOR: the image the Kubernetes pods run."""
    docker_client.images.get(ORCHESTRATOR)  # type: ignore[attr-defined]
    docker_client.images.build(path=str(REPO), dockerfile="deploy/kubernetes/Dockerfile.corpus",  # type: ignore[attr-defined]
                               tag=CORPUS_IMAGE, buildargs={"BRAINBENCH_IMAGE": ORCHESTRATOR}, pull=False, rm=True)
    return CORPUS_IMAGE
