"""harness_images/gbrain/bb-gbrain, our wrapper around gbrain's CLI, with a stand-in ``gbrain``.

The real thing is tested against gbrain's reference turns in tests/docker/test_gbrain_image.py
(needs GBRAIN_SRC).  Here a small shell program plays gbrain's part with the behaviours the
wrapper must cope with (docs/GBRAIN.md): serve opens its socket late, stops when its stdin
ends; the hook reads stdin and reports what it was given.  Everything runs as real processes.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

WRAPPER = Path(__file__).resolve().parents[2] / "harness_images" / "gbrain" / "bb-gbrain"

# serve: socket + secret after a delay, one line in serves.log, then stays up exactly as long as its
# stdin does (gbrain's serve stops on stdin EOF).  hook: echoes its stdin and the env it was given.
FAKE_GBRAIN = r"""#!/bin/sh
set -eu
case "$1" in
  serve)
    echo "$$ ${GBRAIN_SOURCE:-} ${GBRAIN_SWEEP:-} $GBRAIN_HOME" >>"$FAKE_LOG"
    [ "${FAKE_SERVE_NEVER:-0}" = 1 ] && { echo "serve: cannot reach the brain" >&2; exec cat >/dev/null; }
    sleep "${FAKE_SERVE_DELAY:-0.3}"
    mkdir -p "$GBRAIN_HOME/.gbrain/run"
    : >"$GBRAIN_HOME/.gbrain/run/secret-0123456789ab"
    : >"$GBRAIN_HOME/.gbrain/run/resolve-0123456789ab.sock"
    exec cat >/dev/null
    ;;
  hook)
    stdin="$(cat)"
    sleep "${FAKE_HOOK_SLEEP:-0}"
    printf '%s\n' "$stdin" >"$GBRAIN_HOME/last-stdin"
    printf '{"args":"%s","source":"%s","claude":"%s","home":"%s","grace":"%s"}\n' "$*" "$GBRAIN_SOURCE" \
      "${CLAUDE_CONFIG_DIR:-}" "$GBRAIN_HOME" "${GBRAIN_FLUSH_GRACE_MS:-}"
    ;;
  init)
    shift
    printf '%s\n' "$*" >"$FAKE_LOG.init"
    ;;
esac
"""


# bun: says which of our scripts it was asked to run, with the stdin and GBRAIN_HOME it got.
FAKE_BUN = r"""#!/bin/sh
stdin="$(cat)"
printf '{"script":"%s","source":"%s","home":"%s","stdin_bytes":%s}\n' "$(basename "$1")" \
  "${GBRAIN_SOURCE:-}" "${GBRAIN_HOME:-}" "$(printf '%s' "$stdin" | wc -c)"
"""


# bun for the warm worker (harness_images/gbrain/worker.ts and client.ts speak this protocol): worker.ts
# serves one JSON line {tool, env, stdin} per connection with one line {status, stdout, stderr}, saying
# which process answered; client.ts sends a call and exits 111 when nothing answers.  Other scripts: as
# FAKE_BUN, run alone.
FAKE_BUN_WITH_WORKER = r"""#!/usr/bin/env python3
import json, os, socket, sys
script = os.path.basename(sys.argv[1])
if script == "worker.ts":
    if os.environ.get("FAKE_WORKER_BROKEN") == "1":
        sys.exit(1)
    server = socket.socket(socket.AF_UNIX)
    server.bind(sys.argv[2])
    server.listen()
    with open(os.environ["FAKE_LOG"] + ".workers", "a") as log:
        log.write(f"{os.getpid()}\n")
    while True:
        conn, _ = server.accept()
        data = b""
        while not data.endswith(b"\n"):
            data += conn.recv(65536)
        req = json.loads(data)
        out = {"via": "worker", "pid": os.getpid(), "tool": req["tool"], "home": req["env"].get("GBRAIN_HOME"),
               "source": req["env"].get("BRAINBENCH_SOURCE"), "stdin_bytes": len(req["stdin"])}
        status = 3 if req["stdin"] == "fail" else 0
        conn.sendall((json.dumps({"status": status, "stdout": json.dumps(out) + "\n", "stderr": "worker ran\n"})
                      + "\n").encode())
        conn.close()
elif script == "client.ts":
    call = {"tool": sys.argv[3], "env": {k: os.environ[k] for k in ("GBRAIN_HOME", "BRAINBENCH_SOURCE")},
            "stdin": sys.stdin.read()}
    conn = socket.socket(socket.AF_UNIX)
    try:
        conn.connect(sys.argv[2])
    except OSError:
        sys.exit(111)
    conn.sendall((json.dumps(call) + "\n").encode())
    reply = b""
    while chunk := conn.recv(65536):
        reply += chunk
    answer = json.loads(reply)
    sys.stdout.write(answer["stdout"])
    sys.stderr.write(answer["stderr"])
    sys.exit(answer["status"])
else:
    stdin = sys.stdin.read()
    print(json.dumps({"via": "alone", "script": script, "home": os.environ.get("GBRAIN_HOME"),
                      "stdin_bytes": len(stdin)}))
"""


@pytest.fixture
def sandbox(tmp_path: Path) -> Iterator[dict[str, str]]:
    fake = tmp_path / "gbrain"
    fake.write_text(FAKE_GBRAIN)
    fake.chmod(0o755)
    bun = tmp_path / "bun"
    bun.write_text(FAKE_BUN)
    bun.chmod(0o755)
    env = {"PATH": os.environ["PATH"], "BB_GBRAIN_BIN": str(fake), "BB_GBRAIN_BUN": str(bun),
           "BB_GBRAIN_SEED": str(tmp_path / "ours" / "seed.ts"), "BB_GBRAIN_STATE": str(tmp_path / "state"),
           "FAKE_LOG": str(tmp_path / "serves.log"), "TMPDIR": str(tmp_path),
           "BRAINBENCH_DATABASE_URL": 'postgresql://o:p"w@db/brain_1', "BRAINBENCH_SOURCE": "teambrain",
           "CLAUDE_CONFIG_DIR": str(tmp_path / "claude"),
           # No hook executable of its own: gbrain's hooks through the stand-in CLI (its test is below).
           "BB_GBRAIN_HOOK_BIN": str(tmp_path / "no-gbrain-hook"),
           # Our tools run alone here; the warm worker has tests of its own below.
           "BB_GBRAIN_WORKER": "0"}
    yield env
    for line in _serves(env):  # leave no serve behind
        _kill(int(line.split()[0]))
    for line in _workers(env):
        _kill(int(line))


def _workers(env: dict[str, str]) -> list[str]:
    log = Path(env["FAKE_LOG"] + ".workers")
    return log.read_text().splitlines() if log.exists() else []


@pytest.fixture
def warm(sandbox: dict[str, str], tmp_path: Path) -> dict[str, str]:
    bun = tmp_path / "bun-with-worker"
    bun.write_text(FAKE_BUN_WITH_WORKER)
    bun.chmod(0o755)
    return {**sandbox, "BB_GBRAIN_BUN": str(bun), "BB_GBRAIN_WORKER": "1", "BB_GBRAIN_WORKER_WAIT_S": "5"}


def _tool(env: dict[str, str], verb: str, stdin: bytes = b'{"x": 1}',
          **extra: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(["sh", str(WRAPPER), verb], input=stdin, env={**env, **extra}, capture_output=True,
                          timeout=60, check=False)


def _serves(env: dict[str, str]) -> list[str]:
    log = Path(env["FAKE_LOG"])
    return log.read_text().splitlines() if log.exists() else []


def _kill(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie is dead to us (it only waits for its parent to reap it).
    return Path(f"/proc/{pid}/stat").read_text().split(") ")[-1][0] != "Z"


def _hook(env: dict[str, str], stdin: bytes = b'{"prompt": "hi"}', **extra: str) -> subprocess.CompletedProcess[bytes]:
    # Its own session and process group, killed after the call as the call server does.
    proc = subprocess.Popen(["sh", str(WRAPPER), "hook"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env={**env, **extra}, start_new_session=True)
    out, err = proc.communicate(stdin, timeout=60)
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


def test_hook_starts_one_serve_per_database_and_source_and_execs_the_hook(sandbox: dict[str, str]) -> None:
    stdin = b'{"prompt": "What did Alice say?", "transcript_path": "/x/projects/s.jsonl"}'
    with ThreadPoolExecutor(4) as pool:  # four first calls at once: one serve
        done = list(pool.map(lambda _: _hook(sandbox, stdin), range(4)))
    assert all(d.returncode == 0 for d in done), [d.stderr for d in done]
    answers = [json.loads(d.stdout) for d in done]
    assert {a["args"] for a in answers} == {"hook user-prompt"}
    assert {a["source"] for a in answers} == {"teambrain"}
    assert {a["claude"] for a in answers} == {sandbox["CLAUDE_CONFIG_DIR"]}  # passed through, untouched
    home = Path(answers[0]["home"])
    assert (home / "last-stdin").read_bytes() == stdin + b"\n"  # the hook got the caller's stdin
    config = json.loads((home / ".gbrain" / "config.json").read_text())  # valid JSON despite the quote
    assert config == {"engine": "postgres", "database_url": sandbox["BRAINBENCH_DATABASE_URL"],
                      "embedding_disabled": True, "embedding_dimensions": 1024}
    serves = _serves(sandbox)
    assert len(serves) == 1, serves
    pid, source, sweep, serve_home = serves[0].split()
    assert (source, sweep, serve_home) == ("teambrain", "0", str(home))
    # The callers' process groups are gone; serve, detached and with an open stdin, is not.
    time.sleep(0.3)
    assert _alive(int(pid))
    assert _hook(sandbox).returncode == 0 and len(_serves(sandbox)) == 1  # later calls reuse it
    # gbrain's exit grace after its work: 10 ms, unless the image's environment says otherwise.
    assert {a["grace"] for a in answers} == {"10"}
    assert json.loads(_hook(sandbox, GBRAIN_FLUSH_GRACE_MS="250").stdout)["grace"] == "250"
    # Another source of the same database is another serve (serve is bound to one source).
    assert _hook(sandbox, BRAINBENCH_SOURCE="default").returncode == 0
    assert len(_serves(sandbox)) == 2


def test_dead_serve_is_restarted_and_old_serves_are_stopped(sandbox: dict[str, str]) -> None:
    assert _hook(sandbox).returncode == 0
    first = int(_serves(sandbox)[0].split()[0])
    _kill(first)
    time.sleep(0.2)
    assert _hook(sandbox).returncode == 0
    assert len(_serves(sandbox)) == 2 and _alive(int(_serves(sandbox)[1].split()[0]))
    for n in range(2, 6):  # one database per fixture: at most 3 serves stay up
        time.sleep(0.05)  # distinct last-use times
        assert _hook(sandbox, BRAINBENCH_DATABASE_URL=f"postgresql://o@db/brain_{n}").returncode == 0
    time.sleep(0.3)
    alive = [line for line in _serves(sandbox) if _alive(int(line.split()[0]))]
    assert len(alive) == 3, alive
    assert not _alive(int(_serves(sandbox)[1].split()[0]))  # the least recently used went first


def test_a_serve_in_the_middle_of_a_call_is_never_stopped(sandbox: dict[str, str]) -> None:
    """More fixtures at once than BB_GBRAIN_MAX_SERVES (here 1): another database's serve start passes
    over a serve whose call is still running (stopping it made that call's hook fail open, a silent
    turn at --jobs 4) and stops it once the call is over."""
    env = {**sandbox, "BB_GBRAIN_MAX_SERVES": "1"}
    with ThreadPoolExecutor(1) as pool:
        slow = pool.submit(_hook, env, b'{"prompt": "hi"}', BRAINBENCH_DATABASE_URL="postgresql://o@db/brain_a",
                           FAKE_HOOK_SLEEP="3")
        deadline = time.monotonic() + 10
        while not _serves(env) and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(0.8)  # its serve is up and its hook is running
        assert _hook(env, BRAINBENCH_DATABASE_URL="postgresql://o@db/brain_b").returncode == 0
        serve_a = int(_serves(env)[0].split()[0])
        assert _alive(serve_a) and not slow.done()
        assert slow.result().returncode == 0
    assert _hook(env, BRAINBENCH_DATABASE_URL="postgresql://o@db/brain_c").returncode == 0
    time.sleep(0.3)
    assert not _alive(serve_a)  # over, so the next serve start stopped it
    assert [line for line in _serves(env) if _alive(int(line.split()[0]))] == [_serves(env)[-1]]


def test_a_serve_start_costs_the_same_after_a_thousand_databases(sandbox: dict[str, str], tmp_path: Path) -> None:
    """The homes of databases long dropped (one per fixture and source) are passed over, not visited
    with a process each: a large corpus would make every serve start slower than the last."""
    state = Path(sandbox["BB_GBRAIN_STATE"])
    for n in range(1000):  # what a 10× corpus leaves behind: homes whose serve was stopped
        (state / f"{n:016x}").mkdir(parents=True)
        (state / f"{n:016x}" / "last-use").touch()
    logged = tmp_path / "logged"
    logged.mkdir()
    for tool in ("cat", "rm", "dirname"):  # every spawn of these is written down, then done
        real = subprocess.run(["sh", "-c", f"command -v {tool}"], capture_output=True, text=True).stdout.strip()
        (logged / tool).write_text(f'#!/bin/sh\necho {tool} >>"{tmp_path}/spawns"\nexec {real} "$@"\n')
        (logged / tool).chmod(0o755)
    spawned = tmp_path / "spawns"
    assert _hook(sandbox, PATH=f"{logged}:{sandbox['PATH']}").returncode == 0
    assert len(_serves(sandbox)) == 1
    assert len(spawned.read_text().splitlines()) < 30, spawned.read_text()[-500:]


def test_serve_that_never_listens_is_brain_unavailable(sandbox: dict[str, str]) -> None:
    done = _hook(sandbox, FAKE_SERVE_NEVER="1", BB_GBRAIN_SERVE_WAIT_S="1")
    assert done.returncode == 75 and done.stdout == b""
    assert b"did not open its socket within 1s" in done.stderr


def test_no_database_url_is_brain_unavailable_and_init_runs_gbrain_init(sandbox: dict[str, str]) -> None:
    env = {k: v for k, v in sandbox.items() if k != "BRAINBENCH_DATABASE_URL"}
    done = _hook(env)
    assert done.returncode == 75 and b"BRAINBENCH_DATABASE_URL is not set" in done.stderr
    init = subprocess.run(["sh", str(WRAPPER), "init"], env=sandbox, capture_output=True, timeout=30, check=False)
    assert init.returncode == 0, init.stderr
    assert Path(sandbox["FAKE_LOG"] + ".init").read_text().split() == [
        "--url", sandbox["BRAINBENCH_DATABASE_URL"], "--non-interactive", "--no-embedding", "--skip-embed-check"]


def test_events_and_seams_go_to_gbrain_s_own_commands(sandbox: dict[str, str]) -> None:
    """Seed contract v2: Stop and SessionEnd are gbrain's own hooks (no serve needed); an OpenClaw
    message (``messages``, no ``transcript_path``) goes to the context engine wrapper after serve."""
    stop = b'{"hook_event_name":"Stop","session_id":"s","transcript_path":"/x/p/s.jsonl","stop_hook_active":false}'
    done = _hook(sandbox, stop)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["args"] == "hook stop"
    home = Path(json.loads(done.stdout)["home"])
    assert (home / "last-stdin").read_bytes() == stop + b"\n"  # untouched
    end = b'{"hook_event_name":"SessionEnd","session_id":"s","transcript_path":"/x/projects/s.jsonl","reason":"other"}'
    assert json.loads(_hook(sandbox, end).stdout)["args"] == "hook session-end"
    assert _serves(sandbox) == []  # neither event asks serve anything
    # "messages":[ inside a prompt is escaped, so it does not make a Claude Code message OpenClaw's.
    prompt = b'{"hook_event_name":"UserPromptSubmit","prompt":"say \\"messages\\":[","transcript_path":"/x/s.jsonl"}'
    assert json.loads(_hook(sandbox, prompt).stdout)["args"] == "hook user-prompt"
    openclaw = b'{"hook_event_name":"UserPromptSubmit","session_id":"s","prompt":"Alice?","messages":[]}'
    done = _hook(sandbox, openclaw)
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout)
    assert (answer["script"], answer["source"], answer["stdin_bytes"]) == ("openclaw.ts", "teambrain", len(openclaw))
    assert len(_serves(sandbox)) == 1  # the engine's reflex resolves through serve


def test_hooks_run_in_the_hook_executable_unless_asked_for_gbrain_s_whole_cli(sandbox: dict[str, str],
                                                                              tmp_path: Path) -> None:
    """The image's gbrain-hook (hook-entry.ts) gets every ``gbrain hook <event>`` with the caller's stdin;
    serve stays gbrain's CLI; BB_GBRAIN_HOOK_ENTRY=cli sends the hooks to gbrain's CLI again."""
    entry = tmp_path / "gbrain-hook"
    entry.write_text(FAKE_GBRAIN.replace('printf \'{"args"', 'printf \'{"entry":"hook-entry","args"'))
    entry.chmod(0o755)
    env = {**sandbox, "BB_GBRAIN_HOOK_BIN": str(entry)}
    prompt = b'{"hook_event_name":"UserPromptSubmit","prompt":"Alice?","transcript_path":"/x/s.jsonl"}'
    stop = b'{"hook_event_name":"Stop","session_id":"s","transcript_path":"/x/p/s.jsonl"}'
    end = b'{"hook_event_name":"SessionEnd","session_id":"s","transcript_path":"/x/p/s.jsonl"}'
    for stdin, args in ((prompt, "hook user-prompt"), (stop, "hook stop"), (end, "hook session-end")):
        done = _hook(env, stdin)
        assert done.returncode == 0, done.stderr
        answer = json.loads(done.stdout)
        assert (answer.get("entry"), answer["args"]) == ("hook-entry", args)
        assert (Path(answer["home"]) / "last-stdin").read_bytes() == stdin + b"\n"
    assert len(_serves(env)) == 1  # serve is gbrain's CLI's, started for the prompt
    whole = json.loads(_hook({**env, "BB_GBRAIN_HOOK_ENTRY": "cli"}, prompt).stdout)
    assert ("entry" not in whole, whole["args"]) == (True, "hook user-prompt")


def test_write_back_and_operations_run_our_scripts_on_the_brain_s_home(sandbox: dict[str, str]) -> None:
    for verb, script in (("write-back", "write-back.ts"), ("operations", "operations.ts")):
        done = subprocess.run(["sh", str(WRAPPER), verb], input=b'{"op": "recall"}', env=sandbox,
                              capture_output=True, timeout=30, check=False)
        assert done.returncode == 0, done.stderr
        answer = json.loads(done.stdout)
        assert (answer["script"], answer["stdin_bytes"]) == (script, 16)
        config = json.loads((Path(answer["home"]) / ".gbrain" / "config.json").read_text())
        assert config["database_url"] == sandbox["BRAINBENCH_DATABASE_URL"]
    unknown = subprocess.run(["sh", str(WRAPPER), "compact"], env=sandbox, capture_output=True, timeout=30, check=False)
    assert unknown.returncode == 2 and b"write-back or operations" in unknown.stderr


def test_our_tools_run_in_one_warm_worker_across_databases_and_sources(warm: dict[str, str]) -> None:
    seeded = _tool(warm, "seed")
    assert seeded.returncode == 0, seeded.stderr
    first = json.loads(seeded.stdout)
    assert (first["via"], first["tool"], first["source"], first["stdin_bytes"]) == ("worker", "seed", "teambrain", 8)
    assert b"worker ran" in seeded.stderr  # the tool's stderr, as if it had run alone
    # Another fixture's database and source, other tools: the same worker, each call with its own brain.
    wrote = json.loads(_tool(warm, "write-back", BRAINBENCH_DATABASE_URL="postgresql://o@db/brain_2",
                             BRAINBENCH_SOURCE="default").stdout)
    read = json.loads(_tool(warm, "operations", b'{"op": "recall"}').stdout)
    assert (wrote["tool"], read["tool"]) == ("write-back", "operations")
    assert first["pid"] == wrote["pid"] == read["pid"] and len(_workers(warm)) == 1
    assert wrote["source"] == "default" and wrote["home"] != first["home"] == read["home"]
    config = json.loads((Path(wrote["home"]) / ".gbrain" / "config.json").read_text())
    assert config["database_url"] == "postgresql://o@db/brain_2"
    # The tool's failure is the call's exit status.
    failed = _tool(warm, "seed", b"fail")
    assert failed.returncode == 3 and b"worker ran" in failed.stderr
    # A worker that died is started again on the next call.
    _kill(first["pid"])
    time.sleep(0.2)
    again = json.loads(_tool(warm, "seed").stdout)
    assert again["via"] == "worker" and again["pid"] != first["pid"] and len(_workers(warm)) == 2


def test_a_busy_or_missing_worker_leaves_the_call_to_a_process_of_its_own(warm: dict[str, str]) -> None:
    import fcntl

    state = Path(warm["BB_GBRAIN_STATE"])
    state.mkdir(parents=True, exist_ok=True)
    with open(state / "worker.lock", "w") as lock:  # another call holds the worker
        fcntl.flock(lock, fcntl.LOCK_EX)
        began = time.monotonic()
        busy = _tool(warm, "seed")
        assert time.monotonic() - began < 5  # it did not wait for the worker
    assert busy.returncode == 0, busy.stderr
    answer = json.loads(busy.stdout)
    assert (answer["via"], answer["script"], answer["stdin_bytes"]) == ("alone", "seed.ts", 8)
    assert _workers(warm) == []
    # A worker that never comes up: the call runs alone once the wait is over, with its stdin whole.
    broken = _tool(warm, "write-back", b'{"op": "recall"}', FAKE_WORKER_BROKEN="1", BB_GBRAIN_WORKER_WAIT_S="1")
    assert broken.returncode == 0, broken.stderr
    answer = json.loads(broken.stdout)
    assert (answer["via"], answer["script"], answer["stdin_bytes"]) == ("alone", "write-back.ts", 16)
    assert not list(Path(warm["TMPDIR"]).glob("bb-gbrain-in.*"))  # the stdin copy is gone either way


def test_homes_idle_for_minutes_with_no_serve_are_forgotten_at_a_serve_start(sandbox: dict[str, str]) -> None:
    """A run leaves a home per database and source in the seam's 64 MiB /tmp: those of databases long
    dropped (idle for BB_GBRAIN_STALE_MIN minutes, their serve stopped) go when a serve starts; a home
    with a serve, or used lately, stays."""
    state = Path(sandbox["BB_GBRAIN_STATE"])
    old = time.time() - 11 * 60
    homes = {name: state / name for name in ("stale-a", "stale-b", "serving", "recent")}
    for name, home in homes.items():
        home.mkdir(parents=True)
        (home / "last-use").touch()
        (home / "kept.txt").write_text(name)
        if name != "recent":
            os.utime(home / "last-use", (old, old))
    (homes["serving"] / "serve.pid").write_text("999999\n")  # a serve the wrapper still counts as its own
    assert _hook(sandbox).returncode == 0
    assert len(_serves(sandbox)) == 1
    assert not homes["stale-a"].exists() and not homes["stale-b"].exists()
    assert homes["serving"].exists() and homes["recent"].exists()
    ours = Path(json.loads(_hook(sandbox).stdout)["home"])
    assert ours.is_dir() and (ours / ".gbrain" / "config.json").is_file()
