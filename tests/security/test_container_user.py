"""A hostile image's USER never makes the hook root: every spelling of uid/gid 0 is mapped.

Unit cases pin the resolver; the container cases prove that what runs is what we
resolved (``id`` inside the container), for the spellings Docker itself would honour.
"""

from __future__ import annotations

import pytest
from brainbench.executors.base import HookCall
from brainbench.executors.docker.config import HardeningConfig
from brainbench.executors.docker.hardening import resolve_user
from brainbench.executors.docker.users import Accounts, UserSpecError, needs_accounts, parse_fallback
from container_kit import build, needs_docker, payload, run_id, with_seam  # noqa: F401

PASSWD = "root:x:0:0::/root:/bin/sh\ntoor:x:0:0::/:/bin/sh\nbb:x:10001:10001::/:/bin/sh\n" \
         "wheel:x:10002:0::/:/bin/sh\nbig:x:4294967296:10001::/:/bin/sh\n"
GROUP = "root:x:0:\nbb:x:10001:\nzero:x:0:\n"
ACCOUNTS = Accounts.parse(PASSWD, GROUP)
FALLBACK = "65534:65534"


@pytest.mark.parametrize("spec", ["0", "0000", "+0", "-0", "0:0", "00:00", "root", "root:root", "toor",
                                  "toor:bb", "0:10001", "4294967296", "big", "", " ", "-1"])
def test_every_spelling_of_root_maps_to_the_fallback_uid(spec: str) -> None:
    assert resolve_user(HardeningConfig(), spec, ACCOUNTS).split(":")[0] == "65534"


@pytest.mark.parametrize(("spec", "expected"), [
    ("10001", "10001:10001"),        # primary group from the image's passwd
    ("bb", "10001:10001"),
    ("10001:0", "10001:65534"),      # root's group is never handed out
    ("10001:root", "10001:65534"),
    ("10001:zero", "10001:65534"),
    ("wheel", "10002:65534"),        # a user whose primary group is 0
    ("12345", "12345:65534"),        # no passwd entry: Docker would pick gid 0
    ("10001:10001", "10001:10001"),
])
def test_unprivileged_users_keep_their_uid_without_group_zero(spec: str, expected: str) -> None:
    assert resolve_user(HardeningConfig(), spec, ACCOUNTS) == expected


def test_an_explicit_root_config_is_mapped_too_and_names_need_the_image() -> None:
    assert resolve_user(HardeningConfig(user="0:0"), "10001:10001", ACCOUNTS) == FALLBACK
    assert needs_accounts("root") and needs_accounts("10001") and not needs_accounts("10001:10001")
    with pytest.raises(UserSpecError, match="no user 'ghost'"):
        resolve_user(HardeningConfig(), "ghost", ACCOUNTS)
    with pytest.raises(UserSpecError, match="must not be root"):
        parse_fallback("0:0")


# USER lines a hostile image might ship; the first field is what the Dockerfile says.
HOSTILE = {
    "zeros": "USER 0000",
    "pair": "USER 00:00",
    "names": "USER root:root",
    "alias": "RUN echo 'toor:x:0:0::/:/bin/sh' >> /etc/passwd\nUSER toor",
    "rootgroup": "RUN echo 'wheel:x:10002:0::/:/bin/sh' >> /etc/passwd\nUSER wheel",
    "bare": "USER 12345",
    "wrap": "USER 4294967296",
}
HOOK = "#!/bin/sh\ncat >/dev/null\necho \"$(id -u):$(id -g):$(id -G)\"\n"


@needs_docker
@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_user_lines_never_run_as_root(name: str, run_id: str) -> None:  # noqa: F811
    image = build(f"user-{name}", f"COPY hook.sh /hook.sh\n{HOSTILE[name]}\nENTRYPOINT [\"/hook.sh\"]\n",
                  {"hook.sh": HOOK})

    async def body(proc: object) -> bytes:
        outcome = await proc.call(HookCall(payload("who"), {}, 20))  # type: ignore[attr-defined]
        assert outcome.exit_code == 0, outcome
        return outcome.stdout

    uid, gid, groups = with_seam(image, run_id, "exec", body).decode().strip().split(":")
    assert uid != "0" and gid != "0" and "0" not in groups.split(), (uid, gid, groups)
    if name == "bare":
        assert (uid, gid) == ("12345", "65534")
