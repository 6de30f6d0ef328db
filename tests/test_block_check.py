"""The compiled check with the reported values evaluated several points at a time
(:func:`replica.numerics.fused_check.block_evaluator`, the low-rank model: no spectral
averages): every point keeps its own condition, estimate and status -- the same, bit for bit,
as the point checked alone (a block of one point) -- a planted wrong value is caught at its
point and only there, a point whose Newton correction is too large or which is not checked
stays so inside a block, and the statuses are those of the independent ``longdouble`` check
(``Machine.assess``)."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

import replica
from conftest import record_kernel_calls
from replica.numerics import fused_check
from replica.numerics.float64_checks import point_status

pytestmark = pytest.mark.skipif(importlib.util.find_spec("numba") is None,
                                reason="Numba is not installed")

N = 37  # four full blocks of 8 and a partial one (fused_check.BLOCK = 8)


@pytest.fixture(scope="module")
def lowrank_call():
    """The low-rank kernel's call on N points (alpha from 0.3 to 1e5, rho from 0.05 to 1, lam =
    1e-3): the kernel, its arguments and its outputs with the compiled check."""
    from replica.numerics import kernels

    mp = pytest.MonkeyPatch()
    calls = record_kernel_calls(mp)
    try:
        replica.solve_float64("lowrank", alpha=np.logspace(-0.5, 5, N),
                              rho=np.linspace(0.05, 1.0, N), tau=2.25, kappa=0.5,
                              sigma=0.3, lam=1e-3, strict=False)
    finally:
        mp.undo()
    # (where no kernel ran, the reason is named: in stop 42's CI a worker that loaded the
    # generated code another worker had cached could not compile it -- tests/
    # test_cached_module_source.py)
    assert calls, ("no kernel ran: enabled=%s, reasons=%s"
                   % (kernels.enabled(), kernels.FALLBACK_REASONS))
    (k, P, spec, shape, got), = calls
    assert len(got) == 8  # the compiled check ran
    return k, [np.broadcast_to(np.asarray(v, float), shape).ravel() for v in P], spec, got


def _check(k, P, spec, X, rep, do):
    return k.check(P, spec, np.ascontiguousarray(X), np.ascontiguousarray(rep), do)


def _report_outer_staged_afresh(k, x, P, rep):
    """The reported values of ``report_outer`` at each point's unknowns ``x[:, i]``, with the
    aliases and inputs staged there afresh (one point at a time, the kernel's own module)."""
    mod, none = k.module, np.zeros(0)
    st = np.empty(k.n_al + k.n_in)
    one = np.empty_like(rep)
    for i in range(N):
        xi, pi = np.ascontiguousarray(x[:, i]), np.array([p[i] for p in P])
        mod.stage(xi, pi, none, none, none, np.empty(0), st)
        one[:, i] = mod.report_outer(*xi, *pi, *st)
    return one


def test_the_low_rank_check_is_blocked():
    assert fused_check.BLOCK == 8
    import inspect

    assert "blocked" in inspect.getsource(fused_check.check_source)


def test_each_point_of_a_block_is_the_point_checked_alone(lowrank_call):
    k, P, spec, got = lowrank_call
    x, _it, _rel, iterated, rep, adm, _left, (cond, err, code) = got
    do = iterated & adm & np.isfinite(rep).all(axis=0)
    assert do.all()
    c_all, e_all = _check(k, P, spec, x, rep, do)
    np.testing.assert_array_equal(c_all, cond)
    np.testing.assert_array_equal(e_all, err)
    assert np.all(e_all > 0) and np.all(e_all < 1e-12)
    for i in range(N):  # one point, in a block of its own (the other lanes unused)
        c1, e1 = _check(k, [p[i:i + 1] for p in P], spec, x[:, i:i + 1], rep[:, i:i + 1],
                        np.ones(1, dtype=bool))
        assert c1[0] == c_all[i] and e1[0] == e_all[i], i
    # and the points in reverse order: each lands in another lane of another block
    rev = slice(None, None, -1)
    c_r, e_r = _check(k, [p[rev] for p in P], spec, x[:, rev], rep[:, rev], do[rev])
    np.testing.assert_array_equal(c_r[rev], c_all)
    np.testing.assert_array_equal(e_r[rev], e_all)


def test_a_planted_wrong_value_is_caught_at_its_point_only(lowrank_call):
    k, P, spec, got = lowrank_call
    x, _it, _rel, _iterated, rep, _adm, _left, (cond, err, _code) = got
    do = np.ones(N, dtype=bool)
    for i0, j in ((11, 5), (32, 20), (36, 35)):  # a lane inside a block; the partial block
        bad = rep.copy()
        bad[j, i0] *= 1 + 1e-6
        c, e = _check(k, P, spec, x, bad, do)
        assert e[i0] == pytest.approx(1e-6, rel=1e-3), (i0, e[i0])
        others = np.arange(N) != i0
        np.testing.assert_array_equal(e[others], err[others])
        np.testing.assert_array_equal(c, cond)


def test_an_unverifiable_point_and_an_unchecked_one_inside_a_block(lowrank_call):
    k, P, spec, got = lowrank_call
    x, _it, _rel, _iterated, rep, _adm, _left, (cond, err, _code) = got
    moved = x.copy()
    moved[:, 9] *= 1.01  # its Newton correction exceeds STEP_MAX: no estimate
    do = np.ones(N, dtype=bool)
    do[12] = False  # not a result: not checked
    c, e = _check(k, P, spec, moved, rep, do)
    assert e[9] == np.inf and np.isfinite(c[9])
    assert np.isnan(e[12]) and np.isnan(c[12])
    rest = ~np.isin(np.arange(N), (9, 12))
    np.testing.assert_array_equal(e[rest], err[rest])
    np.testing.assert_array_equal(c[rest], cond[rest])


def test_statuses_are_the_longdouble_checks(lowrank_call):
    """Against the independent ``longdouble`` check, with every fifth point's value planted
    wrong by 1e-6 (above CLAIM_RTOL's 1e-8: not-verified) or by 1e-10 (below it: converged)."""
    k, P, spec, got = lowrank_call
    x, _it, _rel, iterated, rep, adm, _left, _ = got
    m = k.machine
    bad = rep.copy()
    bad[3, ::5] *= 1 + 1e-6
    bad[7, 2::5] *= 1 + 1e-10
    do = np.ones(N, dtype=bool)
    c, e = _check(k, P, spec, x, bad, do)
    report = dict(zip(m.report_names, bad))
    cond_ld, err_ld = m.assess(x, P, spec, (N,), report)
    s_dd = point_status(m.problem, report, c, e, iterated, adm, do)
    s_ld = point_status(m.problem, report, cond_ld, err_ld, iterated, adm, do)
    np.testing.assert_array_equal(s_dd, s_ld)
    assert set(s_dd[::5]) == {"not-verified"} and "converged" in set(s_dd)
    np.testing.assert_allclose(c, cond_ld, rtol=1e-6)
    big = err_ld > 1e-13
    assert big.sum() >= N // 5 * 2
    np.testing.assert_allclose(e[big], err_ld[big], rtol=1e-2)


def _matrices(rng, n, count):
    """Square matrices of order n with prescribed singular values (condition 1 to 1e12), a
    diagonal one (no rotation: its Jacobi ends in the first sweep) and one with two equal
    columns (singular: condition inf) among them."""
    out = []
    for c in range(count):
        u, _ = np.linalg.qr(rng.standard_normal((n, n)))
        v, _ = np.linalg.qr(rng.standard_normal((n, n)))
        s = 10 ** np.sort(rng.uniform(0, rng.uniform(0, 12), n))
        out.append((u * s) @ v.T)
    out[1] = np.diag(rng.uniform(0.5, 2.0, n))
    if n > 1:
        out[5][:, 1] = out[5][:, 0]
    return out


@pytest.fixture(scope="module")
def scalar_cond2():
    return fused_check.compiled_primitives()["cond2"]


@pytest.fixture(scope="module")
def cond_blocks():
    """``compiled_cond_block(n)`` compiled once per order n in this module (seconds to tens of
    seconds each): the bit-for-bit comparison and the vector-width test read the same
    function."""
    compiled = {}

    def get(n):
        if n not in compiled:
            compiled[n] = fused_check.compiled_cond_block(n)
        return compiled[n]

    return get


@pytest.mark.parametrize("n", [1, 2, 3, 5, 6])
def test_block_conditions_are_cond2s_bit_for_bit(n, scalar_cond2, cond_blocks):
    """``cond2_block`` against the scalar ``cond2`` on the same matrices, each lane of each
    block: equal bit for bit (matrices whose rotations end in different sweeps share a block,
    the lanes in two orders), and against LAPACK's ``numpy.linalg.cond``."""
    cond2 = scalar_cond2
    block = cond_blocks(n)
    B = fused_check.BLOCK
    rng = np.random.default_rng(n)
    mats = _matrices(rng, n, 6 * B)
    want = np.array([cond2(np.ascontiguousarray(a), np.empty((n, n))) for a in mats])
    for order in (np.arange(len(mats)), rng.permutation(len(mats))):
        got = np.empty(len(mats))
        for b0 in range(0, len(mats), B):
            CW = np.empty((n * n + 1) * B)  # (the last row: cond2_block's scratch)
            for q in range(B):
                CW[q:n * n * B:B] = mats[order[b0 + q]].ravel()  # entry (r, j) at (r*n + j)*B + q
            C = np.empty(B)
            block(CW, C)
            got[order[b0:b0 + B]] = C
        np.testing.assert_array_equal(got, want)
    if n > 1:
        assert want[5] == np.inf or want[5] > 1e15
    lapack = np.array([np.linalg.cond(a) for a in mats])
    for a, b in zip(want[want < 1e13], lapack[want < 1e13]):  # (as test_fused_check's)
        assert a == pytest.approx(b, rel=1e-13 * b + 1e-13), (a, b)


def test_the_blocked_check_is_the_one_point_check(lowrank_call):
    """Every point's condition and estimate from the blocked check (residuals, conditions and
    reported values BLOCK at a time) against ``check_point``, the same check written for one
    point (its residual by ``dd_eval_equations``, its condition by ``cond2``, its values by
    ``dd_eval_report``), bit for bit -- with a wrong value planted at some points."""
    k, P, spec, got = lowrank_call
    x, _it, _rel, _iterated, rep, _adm, _left, _ = got
    bad = rep.copy()
    bad[3, ::7] *= 1 + 1e-9
    do = np.ones(N, dtype=bool)
    c, e = _check(k, P, spec, x, bad, do)
    mod = k.module
    lam = mu = w = np.zeros(0)
    S = mod.check_scratch(0)
    mod.check_constants(lam, mu, w, S)
    ns = k.n_al + k.n_in
    for i in range(N):
        p = np.array([q[i] for q in P])
        c1, e1 = mod.check_point(np.ascontiguousarray(x[:, i]), p, np.ascontiguousarray(bad[:, i]),
                                 lam, mu, w, np.empty(0), np.empty(max(ns, 1)),
                                 np.empty(k.n + k.n_p + ns), S)
        assert (c1, e1) == (c[i], e[i]), (i, c1, c[i], e1, e[i])


def test_a_point_without_a_finite_residual_inside_a_block(lowrank_call):
    """A point whose residual or Jacobian is not finite (an unknown planted NaN or inf) has no
    condition and no estimate (both inf), inside a block and at a block's last lane; every
    other point of its blocks keeps its own condition and estimate."""
    k, P, spec, got = lowrank_call
    x, _it, _rel, _iterated, rep, _adm, _left, (cond, err, _code) = got
    moved = x.copy()
    moved[2, 13] = np.nan
    moved[0, 23] = np.inf  # the last lane of the third block
    moved[4, 33] = np.nan  # in the partial block
    do = np.ones(N, dtype=bool)
    c, e = _check(k, P, spec, moved, rep, do)
    for i in (13, 23, 33):
        assert c[i] == np.inf and e[i] == np.inf, (i, c[i], e[i])
    rest = ~np.isin(np.arange(N), (13, 23, 33))
    np.testing.assert_array_equal(c[rest], cond[rest])
    np.testing.assert_array_equal(e[rest], err[rest])


def test_the_blocked_matrices_are_check_matrix_lane_by_lane(lowrank_call):
    """``check_matrix_block`` (the float64 Jacobian and its equilibrated matrix of BLOCK points
    at once) against ``check_matrix``, the same step written for one point: every lane's
    Jacobian, equilibrated matrix and finiteness bit for bit -- with an unknown planted NaN in
    one lane and inf in another, and a partial last block whose unused lanes hold the previous
    block's points (their results are not read)."""
    k, P, spec, got = lowrank_call
    x = got[0].copy()
    x[1, 5] = np.nan
    x[3, 14] = np.inf
    mod, n, n_p, B = k.module, k.n, k.n_p, fused_check.BLOCK
    ns = k.n_al + k.n_in
    Pm = np.array(P)
    IE = np.zeros((4 * n + n_p) * B)
    JW, CW = np.empty(n * n * B), np.empty(n * n * B)
    OK = np.zeros(B, dtype=np.bool_)
    lam = np.zeros(0)
    seen_bad = 0
    for b0 in range(0, N, B):
        me = min(B, N - b0)
        for q in range(me):
            IE[np.arange(n) * B + q] = x[:, b0 + q]
            IE[(2 * n + np.arange(n_p)) * B + q] = Pm[:, b0 + q]
        mod.check_matrix_block(IE, JW, CW, OK)
        for q in range(me):
            i = b0 + q
            J, A = np.empty((n, n)), np.empty((n, n))
            ok = mod.check_matrix(np.ascontiguousarray(x[:, i]), np.ascontiguousarray(Pm[:, i]),
                                  lam, lam, lam, lam, np.empty(max(ns, 1)),
                                  np.empty(n + n_p + ns), np.zeros(n), np.zeros(n), J, A)
            assert bool(OK[q]) == ok, i
            seen_bad += not ok
            if ok:
                np.testing.assert_array_equal(JW[q::B], J.ravel(), err_msg=str(i))
                np.testing.assert_array_equal(CW[q::B], A.ravel(), err_msg=str(i))
    assert seen_bad == 2 and N % B  # (the two planted lanes; a partial last block)


def test_the_blocked_loops_ask_for_the_widest_vectors(cond_blocks):
    """The eight-point loops carry LLVM's ``prefer-vector-width=512`` (``_wide_vectors``), and
    on a processor with 512-bit vectors (AVX-512) the compiled loop uses them; the values are
    those of the scalar code (the tests above)."""
    import llvmlite.binding as llvm

    block = cond_blocks(5)  # (the function test_block_conditions_are_cond2s_bit_for_bit ran)
    sig = block.signatures[0] if block.signatures else None
    if sig is None:
        block(np.zeros(26 * fused_check.BLOCK), np.empty(fused_check.BLOCK))
        sig = block.signatures[0]
    assert '"prefer-vector-width"="512"' in block.inspect_llvm(sig)
    llvm.initialize_native_target()
    if "+avx512f" in llvm.get_host_cpu_features().flatten().split(","):
        assert "zmm" in block.inspect_asm(sig)


def test_the_blocked_correction_is_check_correct_lane_by_lane(lowrank_call):
    """``check_correct_block`` (the Newton correction of BLOCK points at once: Gaussian
    elimination with partial pivoting as selections) against ``check_correct``, the same step
    written for one point: every lane's error, verdict and corrected point (both halves) bit for
    bit. The matrices are the model's Jacobians at its points, and lanes planted to take every
    way out: rows permuted (pivots in other rows), a zero column (a zero pivot), a NaN entry, a
    condition at 1/eps, a correction above STEP_MAX; the corrected point is also checked
    against x - delta from NumPy's solve (an independent computation)."""
    k, P, spec, got = lowrank_call
    x = got[0]
    mod, n, n_p, B = k.module, k.n, k.n_p, fused_check.BLOCK
    Pm = np.array(P)
    rng = np.random.default_rng(3)
    IE = np.zeros((4 * n + n_p) * B)
    JW, CW = np.empty(n * n * B), np.empty(n * n * B)
    OK = np.zeros(B, dtype=np.bool_)
    RW, XW, ERRB = np.empty(2 * n * B), np.empty(2 * n * B), np.empty(B)
    GO = np.zeros(B, dtype=np.bool_)
    outcomes = set()
    for b0 in range(0, N - B + 1, B):
        for q in range(B):
            IE[np.arange(n) * B + q] = x[:, b0 + q]
            IE[(2 * n + np.arange(n_p)) * B + q] = Pm[:, b0 + q]
        mod.check_matrix_block(IE, JW, CW, OK)
        assert OK.all()
        J = JW.reshape(n, n, B).copy()
        R = np.abs(x[:, b0:b0 + B]) * rng.uniform(-1e-12, 1e-12, (n, B))
        RL = R * rng.uniform(-1e-17, 1e-17, (n, B))
        CB = rng.uniform(1.0, 1e6, B)
        J[:, :, 1] = J[rng.permutation(n), :, 1]  # the pivots in other rows
        J[:, :, 2] = J[::-1, :, 2]
        if b0 == 0:
            J[:, 2, 3] = 0.0       # a zero pivot
            J[1, 3, 4] = np.nan    # a pivot not finite
            CB[5] = 1.0 / 2.220446049250313e-16  # no estimate at that condition
            R[:, 6] = J[:, :, 6] @ (0.5 * x[:, b0 + 6])  # a correction x/2: above STEP_MAX
        JW[:] = J.ravel()
        RW[:] = np.concatenate([R, RL]).ravel()
        mod.check_correct_block(IE, JW, RW, CB, ERRB, GO, XW)
        for q in range(B):
            xq = np.ascontiguousarray(x[:, b0 + q])
            xh, xl = np.zeros(n), np.zeros(n)
            err, go = mod.check_correct(xq, CB[q], np.ascontiguousarray(R[:, q]),
                                        np.ascontiguousarray(RL[:, q]),
                                        np.ascontiguousarray(J[:, :, q]), np.empty((n, n)),
                                        np.empty(n), xh, xl)
            assert (ERRB[q], bool(GO[q])) == (err, go), (b0, q)
            outcomes.add(go)
            if go:
                np.testing.assert_array_equal(XW[q:n * B:B], xh, err_msg=f"{b0} {q}")
                np.testing.assert_array_equal(XW[n * B + q::B], xl, err_msg=f"{b0} {q}")
                delta = np.linalg.solve(J[:, :, q], R[:, q] + RL[:, q])
                np.testing.assert_allclose(xh, xq - delta, rtol=1e-15, atol=0)
        if b0 == 0:
            assert not GO[3:7].any() and np.all(ERRB[3:7] == np.inf)
    assert outcomes == {True, False}


def test_the_solves_reported_values_are_the_one_point_function_bit_for_bit(lowrank_call):
    """The solve's float64 reported values, evaluated ``REPORT_BLOCK`` points at a time
    (``kernels.report_block_source``: the N = 37 points fill four blocks of 8 and part of a
    fifth), are at every point those of the one-point function ``report_outer`` at the point's
    unknowns, parameters and staged aliases and inputs, bit for bit (as the solve computed
    them point by point before); and within 1e-12 of the machine's NumPy evaluator (the
    generated NumPy code, an independent compilation of the same formulas)."""
    from replica.numerics import kernels

    k, P, spec, got = lowrank_call
    assert kernels.REPORT_BLOCK == 8 and "def report_block(RB):" in k.source
    x, _it, _rel, iterated, rep, adm, _left, _ = got
    assert iterated.all() and adm.all()
    one = _report_outer_staged_afresh(k, x, P, rep)
    assert np.isfinite(one).all()
    np.testing.assert_array_equal(rep.view(np.int64), one.view(np.int64))
    m = k.machine
    ref = np.array(m.evaluate("report", "np", x, P, spec), dtype=float)
    np.testing.assert_allclose(rep, ref, rtol=1e-12, atol=0)


def test_a_point_ending_at_a_rejected_newton_step_is_staged_at_its_solution(lowrank_call):
    """``newton_point`` leaves the staged aliases and inputs at the solution, which the solve's
    reported values and admissibility conditions then read without staging again: where the
    last map evaluation was at a trial point whose step was rejected (the rounding floor:
    converged below ``100 rtol``), it stages again. With ``rtol = 1e-16`` no nonzero relative
    change falls below ``rtol`` (the smallest is 2^-53, 1.1e-16),
    so every point that converges with a nonzero change ends there (its floor, ``100 rtol``, 45
    ulps: at 1e-17 the floor was 4.5 ulps, and point 24's rounding noise, 7.6 ulps since the
    canonical code order, left it to the NumPy path -- its rounding floor, not a defect); its
    reported values are those of ``report_outer`` at its unknowns with the aliases and inputs
    staged there afresh, bit for bit (and within 1e-12 of the NumPy evaluator)."""
    k, P, spec, _got = lowrank_call
    x, _it, rel, iterated, rep, adm, left, _ = k(P, spec, (N,), rtol=1e-16, check=True)
    assert iterated.all() and adm.all() and not left.any()
    assert np.count_nonzero(rel > 0) >= 10  # (ended at a rejected step: at the floor)
    one = _report_outer_staged_afresh(k, x, P, rep)
    np.testing.assert_array_equal(rep.view(np.int64), one.view(np.int64))
    ref = np.array(k.machine.evaluate("report", "np", x, P, spec), dtype=float)
    np.testing.assert_allclose(rep, ref, rtol=1e-12, atol=0)


def _newton_point_one_by_one(k, P, rtol):
    """The unknowns and relative changes of the kernel's single-thread solve recomputed point by
    point with its one-point functions, as the solve called them before the first Newton sweep
    was taken eight points at a time: the scalar root (continued from point to point, along
    the solve's two chains where it has at least ``PAIR_MIN`` points: ``Kernel._root_pair``),
    the start, and ``newton_point`` from it (every sweep, one point at a time)."""
    from replica.numerics import kernels

    mod, none = k.module, np.zeros(0)
    N = P[0].size
    mid = (N + 1) // 2 if N >= kernels.PAIR_MIN else N
    Pm = np.empty((k.n_p, N))
    for j, v in enumerate(P):
        Pm[j] = v
    W = np.empty((mod.WS_ROWS, mod.WS_WIDTH))
    NA = np.empty((k.n, k.n))
    known, warm = np.empty(1), np.full(k.warm_size, np.nan)
    st, t = np.empty(k.n_al + k.n_in), np.empty(0)
    X, rel, sweeps = np.empty((k.n, N)), np.empty(N), np.empty(N, dtype=np.int64)
    for i in range(N):
        p = Pm[:, i]
        if i == mid:  # (the second chain: from no root before)
            warm = np.full(k.warm_size, np.nan)
        assert mod.root_0_0(p, known, warm, none, none, none, t, W) >= 0
        mod.start_staged(p, known, none, none, none, t, st)
        X[:, i] = mod.s_values_outer(*p, known[0], *st)
        sw, rel[i], state = mod.newton_point(X[:, i], p, none, none, none, t, st, rtol, W, NA)
        sweeps[i] = sw if state > 0 else -1
    return X, rel, sweeps


def test_the_first_newton_sweep_in_blocks_is_newton_point_bit_for_bit(lowrank_call):
    """The solve takes the first Newton sweep of ``NEWTON_BLOCK`` points together
    (``Kernel._newton_block_source``: the N = 37 points fill four blocks of 8 and part of a
    fifth); a point that converges in that sweep takes the block's unknowns and relative change,
    every other one is solved by ``newton_point`` from its start. Either way every point's
    unknowns and relative change are those of ``newton_point`` called point by point, bit for bit
    -- with rtol = 1e-13, where nearly every point converges in the block's sweep, and with
    rtol = 1e-16, where none does (every point then through ``newton_point``, and iterated to
    its rounding floor, ``100 rtol``: see the test above for why not 1e-17)."""
    from replica.numerics import kernels

    k, P, spec, got = lowrank_call
    assert kernels.NEWTON_BLOCK == 8 and "def newton_block(NB, rtol):" in k.source
    for rtol, out in ((1e-13, got), (1e-16, k(P, spec, (N,), rtol=1e-16, check=True))):
        x, it, rel, iterated, _rep, adm, left, _ = out
        assert iterated.all() and adm.all() and not left.any()
        X, rel1, sweeps = _newton_point_one_by_one(k, P, rtol)
        assert (sweeps > 0).all()
        if rtol == 1e-13:
            assert np.count_nonzero(sweeps == 1) >= 30  # (converged in the block's sweep)
        else:
            assert np.count_nonzero(sweeps > 1) >= 30
        np.testing.assert_array_equal(x.view(np.int64), X.view(np.int64))
        np.testing.assert_array_equal(rel.view(np.int64), rel1.view(np.int64))
        np.testing.assert_array_equal(it - it.min(), sweeps - sweeps.min())
