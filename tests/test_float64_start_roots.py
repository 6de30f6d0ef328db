"""A float64 grid point whose declared start has no root (job f64status, session 53).

The isotropic model's start solves the ridge root xi of a monotone equation by safeguarded
Newton (200 steps at most). At lam = 1e-300 and lam = 1e300 that root is not found in 200
steps (its bracket has no finite upper end, and doubling from the start reaches 2^200, about
1e60, far below the root's scale); at lam = 1.7e308 the root's function overflows. Before
this job the whole grid raised ``ConvergenceError`` ("a grid point did not converge in 200
safeguarded Newton steps"), even with ``strict=False``, on both the NumPy path and the fused
kernel: one point cost every other point its answer. Now such a point gets its own status --
``max-iterations`` (out of steps) or ``non-finite`` (the root's function not finite at its
last step), NaN values -- and the other points are solved exactly as without it, on both
paths alike.
"""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

import replica
from replica.errors import ConvergenceError
from replica.numerics.grid import GRID_KEYS

ISO = dict(alpha=2.0, tau=4.0, kappa=2.0, rho=0.01)
LAMS = np.array([1e-300, 1.0, 1e300, 0.1, 1.7e308, 1e-3])
STATUSES = ["max-iterations", "converged", "max-iterations", "converged", "non-finite",
            "converged"]
GOOD = np.array([1, 3, 5])


def _solve(lam, **kw):
    return replica.solve_float64("isotropic", lam=lam, strict=False, **ISO, **kw)


def _check(out, alone):
    assert out["status"].tolist() == STATUSES
    bad = np.setdiff1d(np.arange(LAMS.size), GOOD)
    assert not out["converged"][bad].any()
    for k in out:
        if k in GRID_KEYS and k not in ("residual", "condition", "error_estimate"):
            continue
        v = out[k]
        if k not in GRID_KEYS:
            assert np.isnan(v[bad]).all(), k  # no value where there is no start
        if k != "iterations":
            # the other points as solved without the failing ones, bit for bit
            assert np.array_equal(v[GOOD], alone[k], equal_nan=True), k


@pytest.mark.slow
def test_a_point_without_a_start_root_does_not_sink_the_grid():
    """(20-30 s wall at load 19, about 4 s CPU beyond pytest's start, with a fresh code
    cache: most of it generating the isotropic model's code) NumPy path: each point its own status, the others
    solved as without it; a strict solve names the statuses; a point alone raises as before
    with its status."""
    alone = _solve(LAMS[GOOD])
    assert alone["status"].tolist() == ["converged"] * 3
    _check(_solve(LAMS), alone)
    with pytest.raises(ConvergenceError, match=r"3 of 6 grid points did not converge "
                                                r"\(2 max-iterations, 1 non-finite\)"):
        replica.solve_float64("isotropic", lam=LAMS, **ISO)
    single = _solve(np.array([1e300]))
    assert single["status"].tolist() == ["max-iterations"]


@pytest.mark.slow
@pytest.mark.skipif(importlib.util.find_spec("numba") is None, reason="Numba is not installed")
def test_the_fused_kernel_gives_the_numpy_path_s_statuses(monkeypatch):
    """(about 10-60 s: the kernel's compilation in a fresh cache) The fused kernel leaves a
    point whose start root fails to the NumPy path, which names it: the same statuses as the
    NumPy path, NaN there, and the other points as the kernel solves them without the failing
    ones -- also with the batch split on threads (the continuation goes on past the point)."""
    from tests.conftest import record_kernel_calls

    calls = record_kernel_calls(monkeypatch)
    alone = _solve(LAMS[GOOD])
    assert calls, "no kernel ran"
    _check(_solve(LAMS), alone)
    import numba

    from replica.numerics import kernels

    monkeypatch.setattr(kernels, "PARALLEL_MIN", 2)
    before = numba.get_num_threads()
    try:
        numba.set_num_threads(min(2, numba.config.NUMBA_NUM_THREADS))
        got = _solve(np.concatenate([LAMS, LAMS]))
    finally:
        numba.set_num_threads(before)
    assert got["status"].tolist() == STATUSES * 2
