"""Progress on stderr: plain lines without carriage returns when stderr is not a terminal, a
tqdm bar with ETA on a terminal, nothing for short runs or with --quiet / REPLICA_QUIET."""

import io
import os
import subprocess
import sys
import time

import pytest

from replica.progress import Progress, callback, tick

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SIMULATE = ["simulate", "isotropic", "--alpha", "2", "--tau", "3", "--kappa", "1",
            "--rho", "0.01", "--d", "6", "--seeds", "3", "--no-theory"]


class _Terminal(io.StringIO):
    def isatty(self):
        return True


def _run(args, **env):
    full = {**os.environ, **env}
    return subprocess.run([sys.executable, "-m", "replica", *args], capture_output=True,
                          text=True, timeout=300, cwd=REPO, env=full)


def test_a_command_without_terminal_writes_plain_lines():
    # stderr is a pipe; a zero threshold makes this short run count as long
    proc = _run(SIMULATE, REPLICA_PROGRESS_AFTER="0", REPLICA_PROGRESS_EVERY="0")
    assert proc.returncode == 0, proc.stderr
    assert "\r" not in proc.stderr
    lines = proc.stderr.splitlines()
    assert lines and all(line.startswith("simulate isotropic d=6: ") for line in lines)
    assert "3/3 seeds (100%)" in lines[-1] and "elapsed" in lines[-1]
    assert "simulate isotropic" in proc.stdout  # the result itself is untouched


def test_short_runs_and_quiet_print_nothing(capsys, monkeypatch):
    from replica.cli import main
    from replica.progress import quiet

    monkeypatch.setenv("REPLICA_PROGRESS_EVERY", "0")
    monkeypatch.setenv("REPLICA_PROGRESS_AFTER", "60")
    assert main(SIMULATE) == 0 and capsys.readouterr().err == ""   # under the threshold
    monkeypatch.setenv("REPLICA_PROGRESS_AFTER", "0")
    assert main(SIMULATE + ["--quiet"]) == 0 and capsys.readouterr().err == ""
    assert not quiet()                             # --quiet holds for that command only
    monkeypatch.setenv("REPLICA_QUIET", "1")
    assert main(SIMULATE) == 0 and capsys.readouterr().err == ""
    monkeypatch.delenv("REPLICA_QUIET")
    assert main(SIMULATE) == 0 and "3/3 seeds" in capsys.readouterr().err


def test_plain_lines_are_spaced_and_carry_an_eta(monkeypatch):
    monkeypatch.setenv("REPLICA_PROGRESS_AFTER", "0")
    monkeypatch.setenv("REPLICA_PROGRESS_EVERY", "0.2")
    buf = io.StringIO()
    with Progress("work", 8, "item", stream=buf) as bar:
        for i in range(8):
            time.sleep(0.05)
            bar.update(note=f"item {i}")
    lines = buf.getvalue().splitlines()
    # 0.4 s of work at most one line per 0.2 s, plus the final line
    assert 2 <= len(lines) <= 5, lines
    assert "about" in lines[0] and "left" in lines[0]
    assert lines[-1].startswith("work: 8/8 items (100%)")


def test_heartbeat_while_one_step_runs_long(monkeypatch):
    monkeypatch.setenv("REPLICA_PROGRESS_AFTER", "0")
    monkeypatch.setenv("REPLICA_PROGRESS_EVERY", "0.1")
    buf = io.StringIO()
    with Progress("long step", 2, stream=buf):
        time.sleep(0.5)
        tick(note="first")
    lines = buf.getvalue().splitlines()
    assert sum(line.startswith("long step: 0/2 steps") for line in lines) >= 3
    assert "1/2 steps" in lines[-1] and "(first)" in lines[-1]


def test_terminal_gets_a_tqdm_bar_with_eta(monkeypatch):
    monkeypatch.setenv("REPLICA_PROGRESS_AFTER", "0")
    term = _Terminal()
    report = callback("grid", "row", stream=term)
    for i in range(1, 5):
        time.sleep(0.02)
        report(i, 4)
    out = term.getvalue()
    assert "\r" in out and "4/4" in out and "100%" in out
    assert "<" in out  # tqdm's [elapsed<remaining] field


@pytest.mark.parametrize("tty", [False, True])
def test_below_the_threshold_nothing_is_shown(monkeypatch, tty):
    monkeypatch.setenv("REPLICA_PROGRESS_AFTER", "30")
    stream = _Terminal() if tty else io.StringIO()
    with Progress("fast", 3, stream=stream) as bar:
        bar.update(3)
    assert stream.getvalue() == ""
