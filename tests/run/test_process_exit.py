"""brainbench.process_exit: the CLI ends without the interpreter's teardown, yet as an exit would."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

PROGRAM = textwrap.dedent("""
    import atexit, sys, threading, time
    from pathlib import Path
    from brainbench.process_exit import run_then_exit

    out = Path(sys.argv[1])
    code = eval(sys.argv[2])

    class Kept:
        def __del__(self):  # the interpreter's teardown would run this; run_then_exit skips it
            (out / "teardown").write_text("ran")

    kept = Kept()

    def late_thread():
        time.sleep(0.3)
        (out / "thread").write_text("done")

    def program():
        threading.Thread(target=late_thread).start()  # not a daemon: waited for, as at exit
        atexit.register(lambda: (out / "atexit").write_text("ran"))
        sys.stdout.write("x" * 100_000)  # buffered: must reach the pipe
        raise SystemExit(code)

    run_then_exit(program)
    (out / "after").write_text("never")
""")


def _run(tmp_path: Path, code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", PROGRAM, str(tmp_path), code], capture_output=True, text=True,
                          cwd=REPO, timeout=60, check=False)


@pytest.mark.parametrize(("code", "status", "stderr"), [("None", 0, ""), ("0", 0, ""), ("1", 1, ""), ("2", 2, ""),
                                                          ("'gate: no baseline'", 1, "gate: no baseline\n")])
def test_status_streams_threads_and_atexit_as_an_interpreter_exit(tmp_path: Path, code: str, status: int,
                                                                    stderr: str) -> None:
    proc = _run(tmp_path, code)
    assert proc.returncode == status
    assert proc.stderr == stderr
    assert proc.stdout == "x" * 100_000
    assert (tmp_path / "thread").read_text() == "done"
    assert (tmp_path / "atexit").read_text() == "ran"
    assert not (tmp_path / "after").exists()
    assert not (tmp_path / "teardown").exists()  # the teardown was skipped: the point of it


def test_the_cli_program_exits_through_it(tmp_path: Path) -> None:
    """``python -m brainbench.cli`` and the console script end with run_then_exit, with main's status."""
    proc = subprocess.run([sys.executable, "-m", "brainbench.cli", "nosuch-command"], capture_output=True, text=True,
                          cwd=tmp_path, timeout=120, check=False)
    assert proc.returncode == 2
    assert "No such command 'nosuch-command'" in proc.stderr
    script = Path(sys.executable).parent / "brainbench"
    assert "from brainbench.cli import entry" in script.read_text()
