"""The ``replica`` process's start-up pause of Python's cyclic garbage collector
(:func:`replica.watched_run.pause_collector`): the imports run with it paused, and it is on again,
with the start-up's objects frozen, before a model file -- the user's code -- runs and before a
command computes."""

from __future__ import annotations

import gc
import re
import subprocess
import sys

from conftest import REPO
from replica.cli import main
from replica.watched_run import pause_collector, resume_collector

#: A model file that reports the collector's state from inside the user's code, as the message
#: of the exception it raises (the command then fails in one line that quotes it).
_REPORTING_FILE = (
    "import gc\n"
    "raise RuntimeError(f'collector enabled={gc.isenabled()} frozen={gc.get_freeze_count()}')\n")


def _state(text: str) -> tuple:
    found = re.search(r"collector enabled=(\w+) frozen=(\d+)", text)
    assert found, text
    return found.group(1), int(found.group(2))


def test_a_model_file_runs_with_the_collector_on_and_the_start_up_frozen(tmp_path):
    """``replica solve --model FILE`` in a fresh process: the file runs with the collector on,
    and the objects of the start-up (SymPy's modules among them: the file is loaded after
    :mod:`replica.modeling`, which imports SymPy) are in the permanent generation -- the pause
    held during the imports."""
    path = tmp_path / "reports_collector.py"
    path.write_text(_REPORTING_FILE)
    proc = subprocess.run([sys.executable, "-m", "replica", "solve", "--model", str(path)],
                          capture_output=True, text=True, cwd=REPO, timeout=300)
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    enabled, frozen = _state(proc.stderr)
    assert enabled == "True"
    assert frozen > 10_000  # (SymPy alone is some 10^5 objects)


def test_a_command_computes_with_the_collector_on():
    """In-process: after :func:`pause_collector`, :func:`replica.cli.main` turns the collector
    on again before the command runs (here a built-in model's solve refusing ``--dps abc``,
    which its run parses), with the objects made before frozen; without a pause, ``main``
    freezes nothing."""
    assert gc.isenabled()
    args = ["solve", "--model", "lowrank", "--alpha", "2", "--tau", "2", "--kappa", "1/2",
            "--rho", "1/100", "--sigma", "1/10", "--dps", "abc"]
    frozen_before = gc.get_freeze_count()
    try:
        assert main(args) == 2  # (no pause: nothing frozen)
        assert gc.isenabled() and gc.get_freeze_count() == frozen_before
        pause_collector()
        assert not gc.isenabled()
        assert main(args) == 2
        assert gc.isenabled()
        assert gc.get_freeze_count() > frozen_before
    finally:
        resume_collector()
        gc.unfreeze()
        gc.enable()


def test_a_collector_disabled_by_the_caller_stays_disabled():
    """A collector already off is not the start-up's to turn on: ``pause_collector`` then
    records no pause, and ``resume_collector`` changes nothing."""
    try:
        gc.disable()
        pause_collector()
        resume_collector()
        assert not gc.isenabled()
    finally:
        gc.enable()
