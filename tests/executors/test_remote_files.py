"""What a call copies into a remote seam container: its own transcript and cwd, nothing else.

The payload is the hook's input, built by the runner, but the rule must hold for any payload:
a path outside the seam's subtree (another seam's transcripts, the gold) is never read.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from brainbench.executors.call_server import write_files
from brainbench.executors.docker.remote import is_remote
from brainbench.executors.docker.remote_files import files_for


def _payload(**fields: object) -> bytes:
    return json.dumps({"hook_event_name": "UserPromptSubmit", "prompt": "hi", **fields}).encode()


def test_the_seams_own_transcript_and_cwd_are_copied(tmp_path: Path) -> None:
    seam = tmp_path / "claude-code"
    transcript = seam / "fx-1" / "claude" / "t.jsonl"
    transcript.parent.mkdir(parents=True)
    transcript.write_bytes(b'{"type":"user"}\n\xff')
    files = files_for(_payload(cwd=str(seam / "fx-1"), transcript_path=str(transcript)), [str(seam)])
    assert files.dirs == [str(seam / "fx-1")]
    assert files.files == {str(transcript): b'{"type":"user"}\n\xff'}


def test_paths_outside_the_seams_subtree_are_never_read(tmp_path: Path) -> None:
    seam, other = tmp_path / "codex", tmp_path / "claude-code"
    seam.mkdir()
    other.mkdir()
    secret = other / "t.jsonl"
    secret.write_text("other seam's transcript")
    (seam / "link.jsonl").symlink_to(secret)
    for path in (secret, seam / "link.jsonl", seam / ".." / "claude-code" / "t.jsonl", tmp_path / "gold.json"):
        files = files_for(_payload(transcript_path=str(path), cwd=str(other)), [str(seam)])
        assert not files, path
    assert not files_for(b"not json", [str(seam)])
    assert not files_for(b"[1, 2]", [str(seam)])
    assert not files_for(_payload(transcript_path="relative.jsonl"), [str(seam)])


def test_the_call_server_writes_them_in_place_replacing_the_last_turns(tmp_path: Path) -> None:
    target = tmp_path / "seam" / "fx" / "t.jsonl"
    request = {"dirs": [str(tmp_path / "seam" / "cwd")],
               "files": {str(target): b"turn 1\n\xff".decode("utf-8", "surrogateescape")}}
    write_files(request)
    assert target.read_bytes() == b"turn 1\n\xff"
    assert (tmp_path / "seam" / "cwd").is_dir()
    write_files({"files": {str(target): "turn 2\n"}})
    assert target.read_text() == "turn 2\n"
    assert not list(target.parent.glob("*.bb-tmp"))


def test_remote_detection(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("BRAINBENCH_DOCKER_REMOTE", raising=False)
    assert is_remote("tcp://10.0.0.5:2376") and is_remote("ssh://ci@box")
    assert not is_remote("unix:///var/run/docker.sock")
    assert is_remote("unix:///var/run/docker.sock", explicit=True)
    assert not is_remote("tcp://127.0.0.1:2375", explicit=False)
    monkeypatch.setenv("BRAINBENCH_DOCKER_REMOTE", "0")
    assert not is_remote("tcp://10.0.0.5:2376")
