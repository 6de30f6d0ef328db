import atexit
import math
import os
import shutil
import subprocess
import sys
import tempfile

# A fresh code cache for every test session (inherited by the CLI subprocesses): generated code
# left by another version of the package can never make a test pass. Set before replica is
# imported, since the cache folder is read once per process.
_FRESH_CACHE = tempfile.mkdtemp(prefix="replica-test-cache-")
os.environ["REPLICA_LAMBDIFY_CACHE"] = _FRESH_CACHE
atexit.register(shutil.rmtree, _FRESH_CACHE, ignore_errors=True)
# The float64 path without the fused Numba kernels (compiled per variant, seconds each, in a
# fresh cache): the suite tests the NumPy path, which every installation has;
# tests/test_float64_kernels.py turns the kernels on where Numba is installed.
os.environ.setdefault("REPLICA_NUMBA", "0")

import mpmath
import numpy as np
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


class LazyDerivation:
    """``replica.derivations.get(name)``, built on first use: a module-level derivation would be
    built while pytest collects the tests (seconds each)."""

    def __init__(self, name: str):
        self._name = name

    def __getattr__(self, attr):
        if attr.startswith("_"):  # pytest inspects module objects while collecting
            raise AttributeError(attr)
        from replica.derivations import get

        return getattr(get(self._name), attr)


@pytest.fixture
def cli():
    return run_cli


def converges_like_one_over_d(samples: dict, theory: float, what: str, allowance: float = 6):
    """The protocol of the finite-size checks: ``samples[d]`` are per-seed values at D = 8, 16,
    32. At every D the mean is within 3 SEM + A |theory|/D (the finite-size allowance A); the
    decisive criteria are the next two: the D = 32 deviation is at most half
    the D = 8 one (where that is significant); the quadratic extrapolation in 1/D to D = oo is
    within 3 of its standard errors plus 2 % of |theory|."""
    dev = {}
    for d, values in samples.items():
        mean, sem = np.mean(values), np.std(values, ddof=1) / math.sqrt(len(values))
        assert abs(mean - theory) <= 3 * sem + allowance * abs(theory) / d, (what, d, mean,
                                                                               theory, sem)
        dev[d] = (mean - theory, sem)
    (a8, s8), (a16, s16), (a32, s32) = dev[8], dev[16], dev[32]
    if abs(a8) > 4 * s8:
        assert abs(a32) <= 0.5 * abs(a8) + 2 * math.hypot(s32, 0.5 * s8), (what, dev)
    extrapolated = a8 / 3 - 2 * a16 + 8 / 3 * a32
    sigma = math.sqrt((s8 / 3) ** 2 + (2 * s16) ** 2 + (8 / 3 * s32) ** 2)
    assert abs(extrapolated) <= 3 * sigma + 0.02 * abs(theory), (what, extrapolated, sigma, dev)
