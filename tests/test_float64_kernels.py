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
    (its extended-precision check fails), max-iterations or stalled (it does not converge) -- and, where
    converged, its values to within what ``converged`` claims (twice CLAIM_RTOL: both are
    float64 solutions of an ill-conditioned system at some points), 1e-12 on a benign grid."""
    from replica.numerics.float64_checks import CLAIM_RTOL

    monkeypatch.setenv("REPLICA_NUMBA", "1")
    m = machine(replica.models.get("lowrank"), "finite")
    k = kernels.kernel(m)
    assert k is not None and k.iterated  # compiled, with its Newton sweeps
    plain, fused = _lowrank_both(monkeypatch, **_lowrank_random_points())
    # (stalled: float64 Newton steps without a correct digit, f64div2's stop -- before session
    # 53 those points ran to max-iterations)
    got = set(plain["status"])
    assert {"converged", "not-verified"} <= got <= {"converged", "not-verified",
                                                    "max-iterations", "stalled"}, got
    assert got & {"max-iterations", "stalled"}, got
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


def _chain_starts(bounds) -> list:
    """The first points of the continuation chains of ``solve_points`` calls on the points
    ``bounds[k] <= i < bounds[k + 1]``: each call's first point, and the middle of a call of at
    least ``PAIR_MIN`` points (its second chain, ``Kernel._root_pair``)."""
    out = []
    for lo, hi in zip(bounds[:-1], bounds[1:]):
        out.append(lo)
        if hi - lo >= kernels.PAIR_MIN:
            out.append(lo + (hi - lo + 1) // 2)
    return out


def _replayed_steps(k, P, shape, bounds):
    """The steps of the low-rank kernel's ``root_0_0`` called point by point along the chains
    of ``solve_points`` calls on the points ``bounds[k] <= i < bounds[k + 1]`` (``P``: the
    parameters as ``Kernel.__call__`` gets them), each chain from no root before."""
    N = int(np.prod(shape))
    Pm = np.empty((k.n_p, N))
    for j, v in enumerate(P):
        Pm[j].reshape(shape)[...] = v
    mod, z = k.module, np.zeros(0)
    W = np.empty((mod.WS_ROWS, mod.WS_WIDTH))
    starts = _chain_starts(bounds) + [N]
    out = np.zeros(N, np.int64)
    for lo, hi in zip(starts[:-1], starts[1:]):
        warm = np.full(k.warm_size, np.nan)
        for i in range(lo, hi):
            out[i] = mod.root_0_0(np.ascontiguousarray(Pm[:, i]), np.empty(1), warm, z, z, z,
                                  z, W)
    return out


@numba_missing
@pytest.mark.slow
def test_split_solve_on_threads_is_the_sequential_solve_to_its_estimates(monkeypatch):
    """From ``PARALLEL_MIN`` points on, with several threads, a checked batch is solved and
    checked in chunks of consecutive points (``kernels.chunk_points``) that the threads take in
    turn (``Kernel._solve_parts_on_threads``), each chunk's continuation started afresh at its
    first point (below, a chunk is a "part"). Against the sequential solve
    (one thread: the kernel's single loop), on the three benchmark grids (10^4 points), 600
    random low-rank points (converged, not-verified and unconverged ones) and a 600-point curve
    in alpha, in 2, 3 and 7 parts:

    * every status identical;
    * every reported value within the sum of the two points' error estimates (relative): each
      float64 value is within its own estimate of the double-double value at its corrected
      point (``fused_check``), and the two corrected points agree far below float64's
      resolution, so two solutions of the same point can be apart by the two estimates
      together (the larger one alone is exceeded: 9.0e-15 apart against estimates of 4.2e-15
      and 6.9e-15 at one point of the tau = 1/2 grid in 3 parts);
    * each part carries its continuation, and its chains are where ``_chain_starts`` puts
      them: the scalar root's safeguarded Newton steps at every point (``ITERS``), of the
      sequential solve and of the split one, are those of ``root_0_0`` called point by point
      along the chains of that solve (each chain from no root before: a ``solve_points`` call
      of at least ``PAIR_MIN`` points solves its roots as two chains, the second from its
      middle point), replayed here (``_replayed_steps``). (Before, the steps were asserted
      equal to the sequential solve's at all but the first 32 points of each chain: a part's
      first roots start from their brackets and may end a few units in the last place from
      the sequential ones, and the predictor ``2 u_1 - u_2`` carries such a difference along
      the chain -- with the chunks of the dynamic split, 33 points after a chunk's start on
      the tau = 1/2 grid in 7 threads.)
    * each point's estimate is the serial check's (``Kernel.check``) at its own solution (where
      the kernel leaves no point to the NumPy path), and with one thread the parts are not used
      (the single loop, bit for bit)."""
    calls, steps = [], []
    orig = kernels.Kernel.__call__

    def spy(self, P, spec, shape, rtol=1e-13, check=False, iterated=True):
        if not hasattr(self, "_steps_spied"):
            solve = self.solve

            def counting(*args):  # (every part writes its points' steps into one array)
                steps.append(args[5])
                return solve(*args)
            self.solve = counting
            self._steps_spied = solve
        got = orig(self, P, spec, shape, rtol=rtol, check=check, iterated=iterated)
        if np.prod(shape) >= kernels.PARALLEL_MIN:
            calls.append((self, P, spec, shape, rtol))
        return got

    monkeypatch.setenv("REPLICA_NUMBA", "1")
    monkeypatch.setattr(kernels.Kernel, "__call__", spy)
    monkeypatch.setattr(kernels, "_threads", lambda: 1)
    A, R = np.meshgrid(np.logspace(-0.5, 3, 100), np.linspace(0.05, 1.0, 100))
    cases = [dict(alpha=A, rho=R, tau=2.25, kappa=0.5, sigma=0.3, lam=0.0),
             dict(alpha=A, rho=R, tau=2.25, kappa=0.5, sigma=0.3, lam=0.1),
             dict(alpha=A, rho=R, tau=0.5, kappa=0.5, sigma=0.5, lam=0.1),
             _lowrank_random_points(600, seed=12),
             dict(alpha=np.logspace(-0.5, 3, 600), tau=2.25, kappa=0.5, rho=0.3, sigma=0.3,
                  lam=0.1)]
    used = []
    parts = kernels.Kernel._solve_parts_on_threads

    def counted(self, threads, *args):
        used.append(threads)
        return parts(self, threads, *args)

    monkeypatch.setattr(kernels.Kernel, "_solve_parts_on_threads", counted)
    statuses = set()
    for kw in cases:
        monkeypatch.setattr(kernels, "_threads", lambda: 1)
        del calls[:], steps[:], used[:]
        seq = replica.solve_float64("lowrank", **kw)
        assert used == [] and calls  # one thread: the single loop
        # (a batch with points left to the NumPy path calls the kernel twice: the last call's)
        seq_steps, left = steps[-1].copy(), len(calls) > 1
        statuses |= set(np.asarray(seq["status"]).ravel())
        k, P, spec, shape, rtol = calls[-1]
        seq_want = _replayed_steps(k, P, shape, [0, int(np.prod(shape))])
        for threads in (2, 3, 7):
            monkeypatch.setattr(kernels, "_threads", lambda: threads)
            del used[:], steps[:]
            par = replica.solve_float64("lowrank", **kw)
            assert used and set(used) == {threads}
            np.testing.assert_array_equal(par["status"], seq["status"])
            ea = np.asarray(seq["error_estimate"], dtype=float)
            eb = np.asarray(par["error_estimate"], dtype=float)
            assert np.array_equal(np.isfinite(ea), np.isfinite(eb))
            est = np.isfinite(ea)
            assert est.sum() > 100
            for key in k.machine.report_names:
                a, b = np.asarray(seq[key], dtype=float), np.asarray(par[key], dtype=float)
                same = (a == b) | (np.isnan(a) & np.isnan(b))
                apart = np.abs(a - b) / np.maximum(np.abs(a), np.abs(b))
                bad = est & ~same & ~(apart <= ea + eb)
                assert not bad.any(), (key, threads, np.flatnonzero(bad)[:5])
            # the continuation within each chain: the root's steps are root_0_0's along them
            N = int(np.prod(shape))
            split = kernels.chunk_points(N, threads) if N >= kernels.PARALLEL_MIN else [0, N]
            for want, got in ((seq_want, seq_steps), (_replayed_steps(k, P, shape, split),
                                                      steps[-1])):
                ok = want >= 0  # (a root not found: the point is left, its ITERS not written)
                assert np.array_equal(got[ok], want[ok]), (threads, len(split))
            if left:
                continue
            # each point's check is the serial check at its own solution
            x = np.stack([np.asarray(par[n], dtype=float).reshape(-1)
                          for n in k.machine.outline.unknowns])
            rep = np.stack([np.asarray(par[n], dtype=float).reshape(-1)
                            for n in k.machine.report_names])
            c_serial, e_serial = k.check(P, spec, x, rep, est.reshape(-1))
            np.testing.assert_array_equal(eb.reshape(-1)[est.reshape(-1)],
                                          e_serial[est.reshape(-1)])
    assert {"converged", "not-verified", "max-iterations"} <= statuses


def test_chunk_points_covers_the_batch_large_chunks_first():
    """``chunk_points``: consecutive chunks, every point in exactly one; each chunk
    ``ceil(r / (2 threads))`` of the ``r`` points left, but at least ``smallest`` (the last
    one possibly shorter), so the sizes never grow and the threads' last chunks are small."""
    for N, threads, smallest in ((10000, 2, 64), (10000, 7, 64), (600, 3, 64), (513, 2, 64),
                                 (5, 8, 64), (1, 2, 64), (0, 3, 64), (1000, 2, 1)):
        b = kernels.chunk_points(N, threads, smallest)
        assert b[0] == 0 and b[-1] == N and (len(b) > 1) == (N > 0)
        sizes = np.diff(b)
        assert np.all(sizes >= 1) and sizes.sum() == N
        assert np.all(np.diff(sizes) <= 0)  # (never larger than the one before)
        for lo, size in zip(b[:-1], sizes):
            r = N - lo
            assert size == min(r, max(smallest, -(-r // (2 * threads))))
    assert np.diff(kernels.chunk_points(10000, 2))[0] == 2500
    assert np.diff(kernels.chunk_points(10000, 2))[-2] == kernels.CHUNK_MIN


@numba_missing
@pytest.mark.slow
def test_a_held_up_thread_takes_fewer_chunks_and_changes_no_value(monkeypatch):
    """The dynamic split (``Kernel._solve_parts_on_threads``): the threads take the chunks of
    ``chunk_points`` from a shared counter, so a thread held up -- here the calling thread,
    before solving its first chunk, until the other thread has solved four (at most 10 s) --
    takes fewer of them, and every output of every point is bit for bit that of the same call
    without the hold-up: each chunk's continuation starts afresh, whichever thread takes it
    (600 points of a curve in alpha, two threads, seven chunks, each taken exactly once)."""
    import threading

    taken, hold = [], []
    done = threading.Event()
    monkeypatch.setenv("REPLICA_NUMBA", "1")
    k = kernels.kernel(machine(replica.models.get("lowrank"), "finite"))
    assert k is not None, kernels.FALLBACK_REASONS
    solve = k.solve

    def recording(*args):
        main = threading.current_thread() is threading.main_thread()
        if main and hold:
            hold.pop()
            done.wait(10.0)
        got = solve(*args)
        taken.append((main, args[-2], args[-1]))
        if sum(1 for m, _, _ in taken if not m) >= 4:
            done.set()
        return got

    monkeypatch.setattr(k, "solve", recording)
    monkeypatch.setattr(kernels, "_threads", lambda: 2)
    kw = dict(alpha=np.logspace(-0.5, 3, 600), tau=0.5, kappa=0.5, rho=0.3, sigma=0.5, lam=0.1)
    runs = []
    for held in (False, True):
        del taken[:]
        hold[:] = [True] if held else []
        done.clear()
        runs.append((replica.solve_float64("lowrank", **kw), list(taken)))
    bounds = kernels.chunk_points(600, 2)
    assert len(bounds) == 8
    for _, t in runs:
        assert sorted((lo, hi) for _, lo, hi in t) == list(zip(bounds[:-1], bounds[1:]))
    mine = sum(1 for main, _, _ in runs[1][1] if main)
    assert mine <= 3 and len(runs[1][1]) - mine >= 4, runs[1][1]
    (a, _), (b, _) = runs
    assert a.keys() == b.keys()
    for key in a:
        x, y = np.asarray(a[key]), np.asarray(b[key])
        if x.dtype.kind in "fc":
            assert np.array_equal(x.view(np.uint8), y.view(np.uint8)), key
        else:
            assert np.array_equal(x, y), key


def test_select_is_unrolled_into_the_first_true_value():
    """``select([c1, ...], [v1, ...], default=d)`` (the NumPy printer's ``Piecewise``) becomes
    nested conditional expressions (no lists in the compiled code) with numpy.select's value:
    checked against ``numpy.select`` itself at every combination of the conditions, nested
    selects included."""
    src = ("    return [select([x > 1, y < 0], [x*select([y > 2, True], [y, 3], default=nan), 2], "
           "default=x + y), select([True], [1], default=nan)]")
    out = kernels.unroll_select(src)
    assert "select(" not in out and "[" in out  # (the returned list itself stays)
    nan = np.nan
    for x in (0.5, 1.5):
        for y in (-1.0, 1.0, 2.5):
            env = dict(x=x, y=y, nan=nan)
            inner = np.select([y > 2, True], [y, 3], default=nan)
            want = [np.select([x > 1, y < 0], [x * inner, 2], default=x + y),
                    np.select([True], [1], default=nan)]
            got = eval(out.strip()[len("return "):], env)
            np.testing.assert_array_equal(np.array(got, dtype=float),
                                          np.array(want, dtype=float))


@numba_missing
@pytest.mark.parametrize("model, variant", [("lowrank", "finite"),
                                            ("alignment", "interpolating"),
                                            ("isotropic", "ridgeless_above")])
def test_the_point_loop_allocates_nothing(monkeypatch, model, variant):
    """The functions a point runs through (the scalar roots, the staging, Newton, the loop body)
    allocate no array: their local arrays are rows of the workspace ``W`` of one
    ``solve_points`` call, each row one array of one function (``Kernel._row``: two arrays in
    one row would overwrite each other), and the generated groups are called with their
    arguments one by one (``_Group.call``; a group with spectral averages through its
    ``at_<name>``). Read from the kernel's source (built, not compiled)."""
    import re

    monkeypatch.setenv("REPLICA_NUMBA", "1")
    monkeypatch.setattr(kernels, "_load", lambda m, source: type("M", (), {"solve_points": 0}))
    m = machine(replica.models.get(model), variant)
    k = kernels.Kernel(m)
    src = k.source
    funcs = dict(re.findall(r"\ndef (\w+)\(.*?\):\n(.*?)(?=\n\n|\n@|\Z)", src, re.S))
    per_point = [f for f in funcs if re.match(r"root_\d+_\d+(_h)?$", f)]
    per_point += [f for f in ("start_stage_values", "start_staged", "stage", "phi_at",
                              "newton_point") if f in funcs]
    assert len(per_point) >= 2
    for f in per_point:
        assert "_np.empty" not in funcs[f] and "_np.full" not in funcs[f], f
        assert not re.search(r"\bev_\w+\(", funcs[f]), f  # (no argument array)
    body = funcs["solve_points"].split("for i in range(LO, HI):", 1)[1]
    assert "_np.empty" not in body and not re.search(r"\bev_\w+\(", body)
    rows = re.findall(r"\bW\[(\d+), :(\d+)\]", src)
    index = [int(r) for r, _ in rows]
    assert sorted(index) == list(range(len(index)))  # each row once, every row used
    assert f"WS_ROWS = {max(len(index), 1)}" in src  # (one unused row where none is used)
    width = int(re.search(r"WS_WIDTH = (\d+)", src).group(1))
    assert width == max((int(n) for _, n in rows), default=1)
    assert "select([" not in src  # (Piecewise without lists)
    if any(g.n_inner for g in k.groups.values()):
        assert "at_" in src


@numba_missing
def test_the_start_root_stops_at_its_rounding_floor_and_predicts_along_rows(monkeypatch):
    """The low-rank start's scalar root (the effective ridge u) in the compiled kernel
    (``Kernel._root_solver``), called point by point along two rows of each lam = 0.1
    benchmark grid (alpha over 100 log-spaced values; rho = 0.05 and 0.2419), the
    continuation carried in ``warm`` as ``solve_points`` carries it:

    * a Newton step below the stopping tolerance that the bracket's end rounds off stops the
      root there (before, it bisected away to the bracket's middle and back: up to 50 steps a
      point on the tau = 2.25 grid): at most 6 steps at every point after a row's first three;
    * the first-order predictor ``2 u_1 - u_2`` (trusted where it was at least as near as the
      previous root at the previous point): at most 3.9 / 4.6 steps a point on average on the
      tau = 2.25 / tau = 1/2 rows (4.06 / 5.0 with the previous root as the start);
    * every tenth root within 8 units in the last place of the root solved at 30 digits by
      the mp start (``_solve_chain_mp``: mpmath, bracketed Newton at 8 eps), an independent
      computation (measured: at most 2.3 / 4.4 units)."""
    import mpmath

    monkeypatch.setenv("REPLICA_NUMBA", "1")
    m = machine(replica.models.get("lowrank"), "finite")
    k = kernels.kernel(m)
    assert k is not None and k.n_roots == 1, kernels.FALLBACK_REASONS
    mod, start = k.module, m.start_machine
    seen = []
    call = kernels.Kernel.__call__
    monkeypatch.setattr(kernels.Kernel, "__call__",
                        lambda self, *a, **kw: seen.append(a) or call(self, *a, **kw))
    A, R = np.meshgrid(np.logspace(-0.5, 3, 100), np.linspace(0.05, 1.0, 100)[[0, 20]])
    z = np.zeros(0)
    for tau, sigma, mean_max in ((2.25, 0.3, 3.9), (0.5, 0.5, 4.6)):
        del seen[:]
        replica.solve_float64("lowrank", alpha=A, rho=R, tau=tau, kappa=0.5, sigma=sigma,
                              lam=0.1)
        P, _, shape = seen[-1][:3]
        Pm = np.empty((k.n_p, A.size))
        for j, v in enumerate(P):
            Pm[j].reshape(shape)[...] = v
        W = np.empty((mod.WS_ROWS, mod.WS_WIDTH))
        steps, ulps = [], []
        with mpmath.workdps(30):
            for row in range(2):
                warm = np.full(k.warm_size, np.nan)
                for c in range(100):
                    p = np.ascontiguousarray(Pm[:, row * 100 + c])
                    known = np.empty(1)
                    it = mod.root_0_0(p, known, warm, z, z, z, z, W)
                    assert it > 0
                    steps.append(it)
                    if c > 2:
                        assert it <= 6, (tau, row, c, it)
                    if c % 10 == 5:
                        u = start._solve_chain_mp(0, start.roots[0], 0,
                                                  [mpmath.mpf(float(v)) for v in p], None, [])[0][0]
                        ulps.append(float(abs(mpmath.mpf(known[0]) - u)) / np.spacing(known[0]))
        assert np.mean(steps) <= mean_max, (tau, np.mean(steps))
        assert max(ulps) <= 8, (tau, max(ulps))


@numba_missing
@pytest.mark.slow
def test_the_roots_in_lock_step_are_root_0_0s_bit_for_bit(monkeypatch):
    """``root_0_0_pair`` (``Kernel._root_pair``: two continuation chains of the low-rank
    start's scalar root in one loop) against ``root_0_0`` called point by point along each
    chain with its own ``warm``: on every fifth row of the tau = 1/2, lam = 0.1 benchmark grid
    (2000 points; chain a the first 1000, chain b the rest: the two lanes of a step end at
    different steps at hundreds of pairs), 600 random points (scattered: bisections, starts
    from brackets) and a 601-point curve in alpha, the same steps, the same root and the same
    continuation state left, bit for bit, at every point. And ``solve_points`` on the whole
    batch (at least ``PAIR_MIN`` points) solves its roots as those two chains: its steps
    (``ITERS``) are those of ``root_0_0`` along its first half and along the rest, each chain
    from no root before -- on the curve not those of one chain through its middle."""
    monkeypatch.setenv("REPLICA_NUMBA", "1")
    m = machine(replica.models.get("lowrank"), "finite")
    k = kernels.kernel(m)
    assert k is not None and k._pair, kernels.FALLBACK_REASONS
    mod = k.module
    seen = []
    call = kernels.Kernel.__call__
    monkeypatch.setattr(kernels.Kernel, "__call__",
                        lambda self, *a, **kw: seen.append(a) or call(self, *a, **kw))
    A, R = np.meshgrid(np.logspace(-0.5, 3, 100), np.linspace(0.05, 1.0, 100)[::5])
    z = np.zeros(0)
    W = np.empty((mod.WS_ROWS, mod.WS_WIDTH))
    uneven = 0
    curve = dict(alpha=np.logspace(-0.5, 3, 601), rho=0.3, tau=0.5, kappa=0.5, sigma=0.5,
                 lam=0.1)
    for kw in (dict(alpha=A, rho=R, tau=0.5, kappa=0.5, sigma=0.5, lam=0.1),
               _lowrank_random_points(600, seed=5), curve):
        del seen[:]
        replica.solve_float64("lowrank", **kw)
        P, _, shape = seen[0][:3]
        N = int(np.prod(shape))
        Pm = np.empty((k.n_p, N))
        for j, v in enumerate(P):
            Pm[j].reshape(shape)[...] = v
        mid = (N + 1) // 2
        # one chain at a time, root_0_0 point by point
        steps, roots, states = np.zeros(N, np.int64), np.full(N, np.nan), np.zeros((N, 3))
        for lo, hi in ((0, mid), (mid, N)):
            warm = np.full(k.warm_size, np.nan)
            for i in range(lo, hi):
                known = np.full(1, np.nan)
                steps[i] = mod.root_0_0(np.ascontiguousarray(Pm[:, i]), known, warm, z, z, z, z, W)
                roots[i] = known[0]
                states[i] = warm
        # the two chains in lock step
        wa, wb = np.full(3, np.nan), np.full(3, np.nan)
        for q in range(N - mid):
            a, b = q, mid + q
            ka, kb = np.full(1, np.nan), np.full(1, np.nan)
            ia, ib = mod.root_0_0_pair(np.ascontiguousarray(Pm[:, a]),
                                       np.ascontiguousarray(Pm[:, b]), ka, kb, wa, wb,
                                       z, z, z, z, W)
            assert (ia, ib) == (steps[a], steps[b]), (a, b)
            uneven += ia != ib
            for i, ki, wi in ((a, ka, wa), (b, kb, wb)):
                if steps[i] >= 0:
                    assert ki[0].tobytes() == roots[i].tobytes(), i
                assert wi.tobytes() == states[i].tobytes(), i
        # solve_points' own steps: the two chains
        its = np.zeros(N, np.int64)
        k.solve(Pm, z, z, z, np.empty((k.n, N)), its, np.empty(N), np.empty((k.n_report, N)),
                np.empty(N, np.bool_), np.zeros(N, np.int64), 1e-13, np.empty(N), np.empty(N),
                np.empty(N, np.int8), False, np.zeros(N, np.bool_), False,
                np.full(k.warm_size, np.nan), 0, N)
        assert np.array_equal(its[steps >= 0], steps[steps >= 0])
        if kw is curve:  # (one chain through the middle of a smooth curve: other steps there)
            warm, one = np.full(k.warm_size, np.nan), np.zeros(N, np.int64)
            for i in range(N):
                one[i] = mod.root_0_0(np.ascontiguousarray(Pm[:, i]), np.empty(1), warm,
                                      z, z, z, z, W)
            assert np.array_equal(one[:mid], its[:mid])
            assert not np.array_equal(one[mid:mid + 3], its[mid:mid + 3])
    assert uneven > 100
