import os
import subprocess
import sys

import mpmath
import pytest

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.fixture(autouse=True)
def reset_mpmath_precision():
    """Every test starts and ends at mpmath's default precision (as mpmath's own suite does)."""
    mpmath.mp.dps = 15
    yield
    assert mpmath.mp.dps == 15, "a test left the global precision changed"
    mpmath.mp.dps = 15


def run_cli(*args, timeout=300):
    """Run ``python -m replica.cli ARGS``; return (returncode, stdout, stderr)."""
    proc = subprocess.run([sys.executable, "-m", "replica.cli", *map(str, args)],
                          capture_output=True, text=True, timeout=timeout, cwd=REPO)
    return proc.returncode, proc.stdout, proc.stderr


@pytest.fixture
def cli():
    return run_cli
