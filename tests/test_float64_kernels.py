"""The fused float64 kernels (:mod:`replica.numerics.kernels`): the whole float64 point of a
variant in one Numba-compiled call, with the NumPy path as the fallback.

* with Numba, the kernel is used for paper A's variants and gives the NumPy path's reported values
  to a relative 1e-12 and the same status at every point (the statuses come from the same
  extended-precision check);
* without Numba (or ``REPLICA_NUMBA=0``) there is no kernel and the NumPy path runs;
* ``reduce(maximum, [...])`` of the generated code is unrolled into calls Numba compiles.

The suite runs with ``REPLICA_NUMBA=0`` (``tests/conftest.py``); the tests here turn it on.
"""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

import replica
from replica.numerics import kernels
from replica.numerics.grid import GRID_KEYS
from replica.numerics.machine import machine

numba_missing = pytest.mark.skipif(importlib.util.find_spec("numba") is None,
                                   reason="Numba is not installed")


def test_reduce_is_unrolled():
    src = "    return [reduce(maximum, [0, x1 + f(a, b)]), reduce(minimum, [x, y, z])]"
    out = kernels.unroll_reduce(src)
    assert out == "    return [maximum(0, x1 + f(a, b)), minimum(minimum(x, y), z)]"


def test_no_kernel_when_turned_off(monkeypatch):
    monkeypatch.setenv("REPLICA_NUMBA", "0")
    m = machine(replica.models.get("alignment"), "interpolating")
    assert not kernels.enabled() and kernels.kernel(m) is None


def _both(monkeypatch, **kw):
    args = dict(d=40, train="piano", alpha=2.0, rho=0.01, strict=False)
    args.update(kw)
    monkeypatch.setenv("REPLICA_NUMBA", "0")
    plain = replica.solve_float64("alignment", **args)
    monkeypatch.setenv("REPLICA_NUMBA", "1")
    fused = replica.solve_float64("alignment", **args)
    return plain, fused


@numba_missing
@pytest.mark.slow
@pytest.mark.parametrize("case", [
    dict(test="piano", tau=4.0, kappa=0.5),
    dict(test="spike:3", tau=0.5, kappa=np.linspace(0.05, 2.15, 12)),
    dict(test="piano", tau=np.array([0.5, 2.0, 3.0]), kappa=np.array([0.2, 1.0, 5.0]),
         lam=np.array([0.1, 0.0, 0.3])),
    dict(test="spike:7", tau=np.logspace(-2, 2, 40), kappa=np.logspace(-3, 3, 40)[::-1],
         lam=1e-3, alpha_test=np.logspace(-1, 1, 40)),
])
def test_kernel_gives_the_numpy_values_and_statuses(monkeypatch, case):
    monkeypatch.setenv("REPLICA_NUMBA", "1")
    for variant in ("interpolating", "ridge"):
        m = machine(replica.models.get("alignment"), variant)
        assert kernels.kernel(m) is not None, variant  # compiled, not the fallback
    plain, fused = _both(monkeypatch, **case)
    assert list(plain) == list(fused)
    np.testing.assert_array_equal(plain["status"], fused["status"])
    assert np.any(plain["converged"])
    for k in plain:
        if k in GRID_KEYS:
            continue
        a, b = plain[k], fused[k]
        np.testing.assert_array_equal(np.isnan(a), np.isnan(b), err_msg=k)
        ok = ~np.isnan(a)
        np.testing.assert_allclose(b[ok], a[ok], rtol=1e-12, atol=0, err_msg=k)
