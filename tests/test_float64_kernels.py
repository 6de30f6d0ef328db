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


def _lowrank_random_points(n=240, seed=7):
    """Random low-rank points over many decades: with 300 sweeps at most, some converge, some
    fail the extended-precision check (``not-verified``) and some do not converge at all."""
    rng = np.random.default_rng(seed)
    tau = 10 ** rng.uniform(-2, 1.5, n)
    lam = np.where(rng.uniform(size=n) < 0.3, 0.0, 10 ** rng.uniform(-10, 3, n))
    lam = np.where(tau < 1, np.maximum(lam, 1e-12), lam)
    return dict(alpha=10 ** rng.uniform(-3, 16, n), tau=tau, kappa=10 ** rng.uniform(-4, 4, n),
                rho=10 ** rng.uniform(-8, 0, n), sigma=10 ** rng.uniform(-8, 2, n), lam=lam,
                strict=False, maxiter=300)


def _lowrank_both(monkeypatch, **kw):
    monkeypatch.setenv("REPLICA_NUMBA", "0")
    plain = replica.solve_float64("lowrank", **kw)
    monkeypatch.setenv("REPLICA_NUMBA", "1")
    fused = replica.solve_float64("lowrank", **kw)
    return plain, fused


@numba_missing
@pytest.mark.slow
def test_lowrank_batched_newton_gives_the_numpy_statuses_and_values(monkeypatch):
    """The low-rank model (an iterated fixed-point system) in the kernel: one compiled loop over
    the points, the declared start then Newton sweeps, a point that needs the damped iteration
    left to the NumPy path. Every point has the NumPy path's status -- converged, not-verified
    (its extended-precision check fails) or max-iterations (it does not converge) -- and, where
    converged, its values to within what ``converged`` claims (twice CLAIM_RTOL: both are
    float64 solutions of an ill-conditioned system at some points), 1e-12 on a benign grid."""
    from replica.numerics.float64_checks import CLAIM_RTOL

    monkeypatch.setenv("REPLICA_NUMBA", "1")
    m = machine(replica.models.get("lowrank"), "finite")
    k = kernels.kernel(m)
    assert k is not None and k.iterated  # compiled, with its Newton sweeps
    plain, fused = _lowrank_both(monkeypatch, **_lowrank_random_points())
    assert set(plain["status"]) == {"converged", "not-verified", "max-iterations"}
    np.testing.assert_array_equal(plain["status"], fused["status"])
    conv = plain["status"] == "converged"
    for key in plain:
        if key in GRID_KEYS:
            continue
        np.testing.assert_allclose(fused[key][conv], plain[key][conv], rtol=2 * CLAIM_RTOL,
                                   atol=0, err_msg=key)
    A, R = np.meshgrid(np.logspace(-0.5, 3, 12), np.linspace(0.05, 1.0, 12))
    for lam, tau in ((0.0, 2.25), (0.1, 2.25), (0.1, 0.5)):
        plain, fused = _lowrank_both(monkeypatch, alpha=A, rho=R, tau=tau, kappa=0.5, sigma=0.3,
                                     lam=lam)
        assert np.all(plain["status"] == "converged")
        np.testing.assert_array_equal(plain["status"], fused["status"])
        for key in plain:
            if key not in GRID_KEYS:
                np.testing.assert_allclose(fused[key], plain[key], rtol=1e-12, atol=0,
                                           err_msg=key)
        # the batch (continuation along it) and the points one at a time
        for i in (0, 37, 143):
            one = replica.solve_float64("lowrank", alpha=A.flat[i], rho=R.flat[i], tau=tau,
                                        kappa=0.5, sigma=0.3, lam=lam)
            assert one["status"] == fused["status"].flat[i]
            for key in ("q", "m", "chi", "qbar", "chibar", "tm", "idg", "odg"):
                np.testing.assert_allclose(one[key], fused[key].flat[i], rtol=1e-12, atol=0)


@numba_missing
@pytest.mark.slow
def test_a_user_model_with_numba_gives_the_numpy_values(monkeypatch):
    """A declared model (examples/ridge_regression.py) on the Numba path: the kernel compiles
    at construction (its compiled check, where Numba cannot type it, is dropped for the
    longdouble one) and the values and statuses are the NumPy path's. (The demo's float64
    solve of this model failed with a Numba typing error at the first call before.)"""
    args = dict(alpha=np.linspace(0.5, 3, 5), lam=0.1, sigma=0.5)
    monkeypatch.setenv("REPLICA_NUMBA", "0")
    plain = replica.solve_float64("examples/ridge_regression.py", **args)
    monkeypatch.setenv("REPLICA_NUMBA", "1")
    fused = replica.solve_float64("examples/ridge_regression.py", **args)
    assert list(fused["status"]) == list(plain["status"]) == ["converged"] * 5
    for key in ("m", "q", "V", "test", "train"):
        np.testing.assert_allclose(fused[key], plain[key], rtol=1e-12, err_msg=key)
    # its double-double check compiles now (the hoisted values of a spectral term passed as
    # one tuple: 30 separate ones were a call Numba could not inline) and runs in the kernel
    ks = [k for k in kernels._KERNELS.values() if "ridge_regression" in k.machine.problem.name]
    assert ks and all(k.checked for k in ks)


@numba_missing
@pytest.mark.slow
def test_a_compiled_check_numba_cannot_type_falls_back(monkeypatch):
    """Where compiling the kernel with its check fails, kernel() builds it without the check;
    where that fails too, there is no kernel (the NumPy path)."""
    monkeypatch.setenv("REPLICA_NUMBA", "1")
    m = machine(replica.models.get("alignment"), "interpolating")
    good = kernels.Kernel.compile_now
    monkeypatch.setattr(kernels, "_KERNELS", {})
    monkeypatch.setattr(kernels, "_FAILED", set())

    def failing_when_checked(self):
        if self.checked:
            raise TypeError("planted: Numba cannot type the check")
        good(self)
    monkeypatch.setattr(kernels.Kernel, "compile_now", failing_when_checked)
    k = kernels.kernel(m)
    assert k is not None and not k.checked

    def failing(self):
        raise TypeError("planted: Numba cannot type the kernel")
    monkeypatch.setattr(kernels, "_KERNELS", {})
    monkeypatch.setattr(kernels.Kernel, "compile_now", failing)
    assert kernels.kernel(m) is None


@numba_missing
@pytest.mark.slow
def test_parallel_check_is_the_serial_check(monkeypatch):
    """A batch of at least ``PARALLEL_MIN`` points is solved in chunks while other threads check
    the chunks already solved (``Kernel._solve_and_check_on_threads``): every output -- the
    unknowns, iterations, reported values, admissibility, and every point's condition, estimate
    and status code -- is that of one thread's single loop bit for bit, and the checks those of
    the serial check (``Kernel.check``, one point after the other); on 600 random low-rank points
    (converged, not-verified and unconverged ones) and on a 600-point curve in alpha whose
    scalar root starts from the previous point's (continuation carried from chunk to chunk),
    in chunks of 64 points (many chunks) and of the default size."""
    calls = []
    orig = kernels.Kernel.__call__

    def spy(self, P, spec, shape, rtol=1e-13, check=False):
        got = orig(self, P, spec, shape, rtol=rtol, check=check)
        # (copies: the caller writes the NumPy path's checks of the points left into them)
        calls.append((self, P, spec, shape, rtol, tuple(np.copy(a) for a in got[:7] + got[7])))
        return got

    monkeypatch.setenv("REPLICA_NUMBA", "1")
    monkeypatch.setattr(kernels.Kernel, "__call__", spy)
    monkeypatch.setattr(kernels, "_threads", lambda: 1)
    pts = _lowrank_random_points(600, seed=12)
    res = replica.solve_float64("lowrank", **pts)
    assert len(set(res["status"])) >= 3
    curve = dict(alpha=np.logspace(-0.5, 3, 600), tau=2.25, kappa=0.5, rho=0.3, sigma=0.3,
                 lam=0.1)
    replica.solve_float64("lowrank", **curve)
    calls = [c for c in calls if np.prod(c[3]) >= kernels.PARALLEL_MIN]
    assert len(calls) >= 2  # (at least) the random points and the curve
    used = []
    pipelined = kernels.Kernel._solve_and_check_on_threads

    def counted(self, n, *args):
        used.append(n)
        return pipelined(self, n, *args)

    monkeypatch.setattr(kernels.Kernel, "_solve_and_check_on_threads", counted)
    for k, P, spec, shape, rtol, got in calls:
        assert k.checked
        x, _it, rel, iterated, rep, adm, left, cond, err, code = got
        # the points that are results (the kernel's criterion, found here from its outputs):
        # the iteration finished, admissible, every unknown and reported value finite
        done = (np.isfinite(rel) & np.isfinite(x).all(axis=0) & adm.astype(bool)
                & np.isfinite(rep).all(axis=0))
        assert 100 < done.sum()
        assert np.all(code[done] <= 2) and np.all(code[~done] >= 3)
        c_serial, e_serial = k.check(P, spec, x.reshape(k.n, -1), rep.reshape(k.n_report, -1),
                                     done.reshape(-1))
        np.testing.assert_array_equal(cond, c_serial)
        np.testing.assert_array_equal(err, e_serial)
        for chunk in (64, kernels.CHUNK):
            monkeypatch.setattr(kernels, "CHUNK", chunk)
            monkeypatch.setattr(kernels, "_threads", lambda: 2)
            del used[:]
            again = orig(k, P, spec, shape, rtol=rtol, check=True)
            assert used == [2]
            flat = again[:7] + again[7]
            # (the reported values and admissibility of a point left to the NumPy path are not
            # written: compared where they are outputs)
            kept = np.ones(shape, bool) if left is None else ~left
            for name, a, b in zip(("x", "iterations", "rel", "iterated", "report", "admissible",
                                   "left", "cond", "err", "code"), flat, got):
                if name in ("report", "admissible"):
                    a, b = a[..., kept], b[..., kept]
                np.testing.assert_array_equal(a, b, err_msg=f"{name}, chunks of {chunk}")
        monkeypatch.setattr(kernels, "_threads", lambda: 1)
        del used[:]
        again = orig(k, P, spec, shape, rtol=rtol, check=True)
        assert used == []  # one thread: the kernel's own loop
        for a, b in zip(again[7], (cond, err, code)):
            np.testing.assert_array_equal(a, b)
