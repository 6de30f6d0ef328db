r"""The float64 grid iteration stops a point whose damped iteration diverges towards the boundary
of the admissible domain, by the rule of the mpmath start iteration
(:func:`replica.numerics.newton.damped_mp`): a margin falling at every one of
``BOUNDARY_RUN_SWEEPS`` sweeps at the floor damping 1/64 while the relative change grows. The
point gets status ``inadmissible`` and the mpmath path's reason; the other points of the grid go
on, with the values, iterations and statuses they have without the stop.

Found: ``examples/lasso.py`` at alpha 1/2, eps 1/10, sigma 0, lam 1e-5 ran its 20,000 float64
sweeps (~225 s CPU) to ``max-iterations``, while ``replica solve`` stopped its mpmath damped
iteration at sweep 78 (margin of V > 0 from 9.37e6 to 9.34e6) and exited 3, ``inadmissible``.

The toy maps are written here; the model tests compare the float64 damped iteration with the
mpmath one (a separate implementation at 30 digits) on the same point.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

import replica
from replica.errors import ConvergenceError
from replica.numerics import newton
from replica.numerics.newton import BOUNDARY_RUN_SWEEPS, GridDrift, iterate_grid

LASSO = str(Path(__file__).resolve().parents[1] / "examples" / "lasso.py")
DIVERGES = np.array([True, False, True, False])  # the toy grid's points that diverge


def _toy(slope):
    """phi(x) = x + x^2/1000 at the diverging points (no fixed point in (0, 1): the relative
    change x/1000 grows while the margin 1 - x falls), phi(x) = 0.99 - (0.99 - x)/slope at the
    others (the fixed point 0.99 approached with the margin falling, the change shrinking);
    with its derivative."""
    def phi(xa, idx):
        x = xa[0]
        return [np.where(DIVERGES[idx], x + x * x / 1000, 0.99 - (0.99 - x) / slope)]

    def jac(xa, idx):
        return [np.where(DIVERGES[idx], 1 + xa[0] / 500, 1 / slope)]

    return phi, jac


def _below_one(xa, idx):
    return [1 - xa[0]]


@pytest.mark.parametrize("slope, damping", [(2, 0.5), (8, 1 / 64)])
def test_grid_stops_the_diverging_points_and_no_other(slope, damping):
    """Damped steps only (``newton_from = 0``, as ``method="damped"``), from x = 1/2: the
    diverging points stop once the damping is at its floor (5 halvings) and the drift has lasted
    BOUNDARY_RUN_SWEEPS sweeps, as in damped_mp; the converging ones -- also with the damping at
    its floor from the start, where only the growth of the change tells the two apart -- end
    exactly as without the stop, and without it the diverging ones run to ``maxiter``."""
    kw = dict(fixed_point=True, positive=True, damping=damping, rtol=1e-13, maxiter=1000,
              newton_from=0.0)
    phi, jac = _toy(slope)
    x, done, iters, rel, drift = iterate_grid(phi, jac, np.full((1, 4), 0.5),
                                              margins=_below_one, **kw)
    assert isinstance(drift, GridDrift)
    assert drift.stopped.tolist() == DIVERGES.tolist()
    assert not done[DIVERGES].any()
    assert (drift.sweep[DIVERGES] <= 6 + BOUNDARY_RUN_SWEEPS + 1).all(), drift.sweep
    assert (iters[DIVERGES] == drift.sweep[DIVERGES]).all()
    assert (drift.label[DIVERGES] == 0).all()
    assert (drift.first[DIVERGES] > drift.last[DIVERGES]).all()  # the margin fell
    assert (drift.last[DIVERGES] > 0).all()  # (far from the boundary still)
    assert done[~DIVERGES].all() and np.allclose(x[0, ~DIVERGES], 0.99, rtol=1e-12)
    x0, done0, iters0, rel0 = iterate_grid(phi, jac, np.full((1, 4), 0.5), **kw)
    for a, b in ((x, x0), (done, done0), (iters, iters0), (rel, rel0)):
        assert np.array_equal(a[..., ~DIVERGES], b[..., ~DIVERGES])
    assert (iters0[DIVERGES] == 1000).all() and not done0[DIVERGES].any()


@pytest.mark.slow
def test_lasso_damped_float64_stops_where_the_mpmath_iteration_does():
    """The LASSO point of the finding, iterated in float64 by the damped iteration alone from
    the declared start (``method="damped"``, the iteration of damped_mp): stopped at sweep
    78 with the margin of V > 0 falling from 9.37e6 to 9.34e6 -- the sweep and margins at which
    the mpmath iteration at 30 digits stops (``replica solve``, measured; compared live in
    the slow test below) -- status ``inadmissible``, NaN values, and ``strict`` raises the
    convergence error with the mpmath path's reason. (~0.6 s CPU with the model's code
    generated; ~60 s wall with a fresh code cache at load 11; without the stop, 20,000
    sweeps.)"""
    kw = dict(alpha=np.array([0.5]), eps=0.1, sigma=0.0, lam=1e-5, method="damped",
              start=[np.array([0.05]), np.array([0.05]), np.array([0.5])])
    r = replica.solve_float64(LASSO, strict=False, **kw)
    assert r["status"].tolist() == ["inadmissible"]
    assert r["iterations"].tolist() == [78]
    assert np.isnan(r["risk"]).all() and not r["converged"].any()
    with pytest.raises(ConvergenceError, match=r"1 inadmissible\); the damped iteration diverges "
                       r"\(each of its last 12 changes larger than the one before at the floor "
                       r"damping 1/64, at sweep 78\) and runs towards the boundary of the domain "
                       r"V > 0 \(its margin fell from 9.37e\+06 to 9.34e\+06\)") as err:
        replica.solve_float64(LASSO, **kw)
    assert err.value.status == "inadmissible"
    assert "stopped where its damped iteration diverged" in err.value.tried


TEACHER = str(Path(LASSO).parent / "perceptron_teacher.py")


@pytest.mark.slow
def test_a_slow_damped_approach_to_the_boundary_is_not_stopped():
    """The Rademacher teacher just below alpha_alg = 1.4926 by the damped iteration alone from
    m = 1/2: m rises to its fixed point with the margin 1 - m falling at every sweep and the
    damping low, for ~870 sweeps -- and converges, to the value of the Newton-accelerated
    default path. (A looser rule -- two falls of the margin at any damped sweep -- stopped it
    at sweep 3, ``inadmissible``.) (~0.7 s CPU once the model's code is generated; 17-35 s
    wall at load 13 in a fresh session.)"""
    a = np.array([1.49])
    r = replica.solve_float64(TEACHER, strict=False, alpha=a, prior="rademacher",
                              method="damped", start=[np.full(1, 0.5)])
    ref = replica.solve_float64(TEACHER, strict=False, alpha=a, prior="rademacher")
    assert r["status"].tolist() == ["converged"] == ref["status"].tolist()
    assert r["iterations"][0] > 500 > ref["iterations"][0]
    assert abs(r["m"][0] - ref["m"][0]) <= 1e-9 * ref["m"][0]


def _margins_of(message: str):
    m = re.search(r"at sweep (\d+)\) and runs towards the boundary of the domain (.+?) \(its "
                  r"margin fell from (\S+) to (\S+?)\)", message)
    assert m, message
    return int(m.group(1)), m.group(2), float(m.group(3)), float(m.group(4))


@pytest.mark.slow
def test_lasso_damped_float64_and_mpmath_stop_alike():
    """The same point through the mpmath start iteration (damped_mp at 30 digits, the path of
    ``replica solve`` without a float64 start): the same sweep, condition and margins to the
    three digits the messages print. (~50 s wall at load 13.)"""
    from replica.numerics.driver import solve_params

    p = replica.load_model(LASSO)
    params = p.schema.parse({"alpha": "1/2", "eps": "1/10", "sigma": "0", "lam": "1e-5"})
    with pytest.raises(ConvergenceError) as mp_err:
        solve_params(p, params, dps=30, force_mp_start=True)
    assert mp_err.value.status == "inadmissible"
    with pytest.raises(ConvergenceError) as f64_err:
        replica.solve_float64(LASSO, alpha=np.array([0.5]), eps=0.1, sigma=0.0, lam=1e-5,
                              method="damped", start=[np.array([0.05]), np.array([0.05]),
                                                      np.array([0.5])])
    assert _margins_of(str(f64_err.value)) == _margins_of(str(mp_err.value))


def _without_the_stop(monkeypatch):
    """``iterate_grid`` with its ``margins`` and ``precise`` dropped: the iteration as it was
    before the stops."""
    real = newton.iterate_grid

    def plain(*args, margins=None, precise=None, **kwargs):
        out = real(*args, **kwargs)
        return out if margins is None else out + (GridDrift.none(np.shape(out[1])),)

    import replica.numerics.machine as machine_module

    monkeypatch.setattr(machine_module, "iterate_grid", plain)


@pytest.mark.slow
def test_slow_converging_points_are_not_stopped(monkeypatch):
    """Points whose float64 iteration takes many sweeps with the damping low -- logistic
    regression near separability (alpha 3, lam 1e-4, eta 9/10: 143 sweeps, where the mpmath
    start iteration diverges), the Rademacher teacher just below alpha_alg = 1.4926 and the
    Gardner volume near capacity -- end bit for bit as without the stop. (~160 s wall with a
    fresh code cache at load 13, most of it generating the three models' code.)"""
    grids = [("logistic_regression.py", dict(alpha=np.array([3.0]), lam=1e-4, eta=0.9)),
             ("perceptron_teacher.py", dict(alpha=np.array([1.48, 1.49]), prior="rademacher")),
             ("perceptron_gardner.py", dict(alpha=np.array([1.99]), kappa=0.0))]
    root = Path(LASSO).parent
    # one untimed solve of each grid first: in a full suite run (this module after others on
    # the same xdist worker) the logistic point's first solve and the next differed in the last
    # bits of m (stop 52's fresh clone; alone, fresh or warm cache, they are identical), so the
    # two solves compared below both follow a solve of the same grid (the process's remembered
    # state, whatever it is, the same before each); the cause is not established
    for f, kw in grids:
        replica.solve_float64(str(root / f), strict=False, **kw)
    got = [replica.solve_float64(str(root / f), strict=False, **kw) for f, kw in grids]
    _without_the_stop(monkeypatch)
    ref = [replica.solve_float64(str(root / f), strict=False, **kw) for f, kw in grids]
    for (f, _), a, b in zip(grids, got, ref):
        assert set(a) == set(b)
        for k in a:
            assert np.array_equal(a[k], b[k], equal_nan=a[k].dtype.kind == "f"), (f, k)
        assert "inadmissible" not in a["status"].tolist(), (f, a["status"])


def test_the_note_tells_the_margins_apart():
    """The error's words: the margins with 3 digits as the mpmath path prints them, more where
    3 would print the same number twice (the Rademacher teacher at alpha 3/2: 0.1038 to
    0.1036), and the count where several points stopped. (< 1 ms.)"""
    from replica.numerics.grid import drift_note

    assert "(its margin fell from 9.37e+06 to 9.34e+06)" in drift_note(
        {("V > 0", "diverges"): (1, 9.37e6, 9.34e6, 78, 0)})
    note = drift_note({("m < 1", "diverges"): (3, 0.10381, 0.10362, 28, 0)})
    assert note.startswith("at 3 points the damped iteration diverges")
    assert "at sweep 28 at the first of them" in note
    assert "(its margin fell from 0.1038 to 0.1036)" in note


def test_a_continued_grid_stops_the_same_points_and_reports_their_last_solve():
    """:func:`~replica.numerics.newton.iterate_grid_continued` (a grid of a model that declares
    its fixed point unique) with ``margins``: the toy's diverging points, every third of 20, are
    stopped whether they were seeds or started from their neighbours' solution; the latter are
    solved again from the declared start, so each one's :class:`GridDrift` entry and its sweep
    are those of ``iterate_grid`` from the declared start, and the converging points reach 0.99."""
    diverges = np.arange(20) % 3 == 1

    def phi(xa, idx):
        x = xa[0]
        return [np.where(diverges[idx], x + x * x / 1000, 0.99 - (0.99 - x) / 2)]

    def jac(xa, idx):
        return [np.where(diverges[idx], 1 + xa[0] / 500, 0.5)]

    kw = dict(fixed_point=True, positive=True, damping=0.5, rtol=1e-13, maxiter=1000,
              newton_from=0.0)
    x, done, iters, rel, drift = newton.iterate_grid_continued(
        phi, jac, np.full((1, 20), 0.5), margins=_below_one, **kw)
    plain = iterate_grid(phi, jac, np.full((1, 20), 0.5), margins=_below_one, **kw)[4]
    assert drift.stopped.tolist() == diverges.tolist()
    assert not done[diverges].any() and done[~diverges].all()
    assert np.allclose(x[0, ~diverges], 0.99, rtol=1e-12)
    for a, b in zip(drift._arrays(), plain._arrays()):
        assert np.array_equal(a[diverges], b[diverges])
    assert (iters[diverges] >= drift.sweep[diverges]).all()


def _toy_unevaluable():
    """phi(x) = 1 - (1 - x)/4 at the points of DIVERGES (their fixed point is the boundary
    x = 1: the margin 1 - x falls at every sweep), NaN once 1 - x < 1e-3 (the map cannot be
    evaluated there, as the teacher's integrals near m = 1); phi(x) = 0.99 - (0.99 - x)/2 at
    the others (they converge to 0.99)."""
    def phi(xa, idx):
        x = xa[0]
        far = np.where(1 - x < 1e-3, np.nan, 1 - (1 - x) / 4)
        return [np.where(DIVERGES[idx], far, 0.99 - (0.99 - x) / 2)]

    def jac(xa, idx):
        return [np.where(DIVERGES[idx], 0.25, 0.5)]

    return phi, jac


@pytest.mark.parametrize("newton_from", [0.0, np.inf])
def test_grid_stops_where_the_map_fails_after_the_margin_fell(newton_from):
    """damped_mp's second rule in float64: the map not finite at a point's iterate after the
    margin fell at each of the last BOUNDARY_RUN_SWEEPS // 2 sweeps -- the point is recorded
    as stopped at the boundary (``falls``: the sweeps of the fall, up to 12), by damped steps
    alone (``newton_from = 0``) and with Newton steps (rejected where they leave the domain);
    the converging points end as without ``margins``. (< 10 ms.)"""
    kw = dict(fixed_point=True, positive=True, damping=0.5, rtol=1e-13, maxiter=1000,
              newton_from=newton_from)
    phi, jac = _toy_unevaluable()
    x, done, iters, rel, drift = iterate_grid(phi, jac, np.full((1, 4), 0.5),
                                              margins=_below_one, **kw)
    assert drift.stopped.tolist() == DIVERGES.tolist()
    assert not done[DIVERGES].any() and done[~DIVERGES].all()
    assert (drift.falls[DIVERGES] >= BOUNDARY_RUN_SWEEPS // 2).all(), drift.falls
    assert (drift.falls[DIVERGES] <= BOUNDARY_RUN_SWEEPS).all()
    assert (drift.falls[~DIVERGES] == 0).all()
    assert (drift.sweep[DIVERGES] == iters[DIVERGES]).all()
    assert (drift.first[DIVERGES] > drift.last[DIVERGES]).all()
    assert (drift.last[DIVERGES] < 1e-3).all() and (drift.last[DIVERGES] > 0).all()
    assert np.array_equal(drift.last[DIVERGES], 1 - x[0, DIVERGES])  # (its last iterate)
    x0, done0, iters0, rel0 = iterate_grid(phi, jac, np.full((1, 4), 0.5), **kw)
    for a, b in ((x, x0), (done, done0), (iters, iters0), (rel, rel0)):
        assert np.array_equal(a, b)  # (the stopped points too: they stopped there before)


def test_a_map_that_fails_without_a_falling_margin_is_not_recorded():
    """The map not finite after fewer than BOUNDARY_RUN_SWEEPS // 2 falls of the margin (NaN
    from x > 0.55 on, reached at the second sweep from 1/2): the point stops, not converged, as
    before -- not recorded as stopped at the boundary. (< 5 ms.)"""
    def phi(xa, idx):
        x = xa[0]
        return [np.where(x > 0.55, np.nan, 1 - (1 - x) / 4)]

    def jac(xa, idx):
        return [np.full(idx.size, 0.25)]

    x, done, iters, rel, drift = iterate_grid(
        phi, jac, np.full((1, 2), 0.5), fixed_point=True, positive=True, damping=0.5,
        rtol=1e-13, maxiter=1000, newton_from=0.0, margins=_below_one)
    assert not done.any() and (iters < 5).all()
    assert not drift.stopped.any()


@pytest.mark.slow
@pytest.mark.parametrize("alpha", ["1.8", "2"])
def test_teacher_above_alpha_alg_stops_as_the_mpmath_iteration_does(alpha):
    """The Rademacher teacher above alpha_alg = 1.4926 on the default float64 path: the
    iteration runs to m = 1 (Newton steps past it rejected) and the teacher's integrals are not
    finite at m ~ 1 - 1e-5 at sweep 14 -- before, status ``max-iterations`` after those 14
    sweeps; now ``inadmissible`` with the reason of the mpmath start iteration (damped_mp at
    30 digits, live: its iteration stops so at sweep 19 / 15, the margin 1 - m at 5e-21 /
    1e-33, where float64 stops at the first iterate whose map is not finite). (~6 s CPU for
    the mpmath solve; the float64 one 0.1 s once the model's code is generated.)"""
    from replica.numerics.driver import solve_params

    r = replica.solve_float64(TEACHER, strict=False, alpha=np.array([float(alpha)]),
                              prior="rademacher")
    assert r["status"].tolist() == ["inadmissible"]
    assert np.isnan(r["m"]).all() and not r["converged"].any()
    with pytest.raises(ConvergenceError) as f64_err:
        replica.solve_float64(TEACHER, alpha=np.array([float(alpha)]), prior="rademacher")
    p = replica.load_model(TEACHER)
    with pytest.raises(ConvergenceError) as mp_err:
        solve_params(p, p.schema.parse({"alpha": alpha, "prior": "rademacher"}), dps=30,
                     force_mp_start=True)
    words = (r"the iteration runs towards the boundary of the domain m < 1 \(its margin fell "
             r"from (\S+) to (\S+) in the last (\d+) sweeps\), where (?:the equations could not "
             r"be evaluated|the map's value lies on the boundary) at sweep (\d+): no solution "
             r"with m < 1 was reached")
    for err in (f64_err, mp_err):
        assert err.value.status == "inadmissible"
        got = re.search(words, str(err.value))
        assert got, str(err.value)
        assert int(got.group(3)) >= BOUNDARY_RUN_SWEEPS // 2
        assert float(got.group(1)) > 0.1 > 1e-4 > float(got.group(2))
    assert "could not be evaluated after a margin fell" in f64_err.value.tried


def test_grid_stops_a_point_whose_float64_newton_steps_have_no_digit():
    """``precise``: phi(x) = 1 + 3 (x - 1) at both points (its fixed point 1 repels the damped
    iteration, eigenvalue 3: the damping falls to its floor), the float64 Jacobian wrong at the
    first point (-5 instead of 3: its Newton step (x - 1)/3 is rejected, the exact one is
    1 - x, 4/3 of it off), exact at the second (Newton converges at once); the extended-precision
    map and Jacobian exact at both. The first point stops after BOUNDARY_RUN_SWEEPS checked
    sweeps in a row (``unresolved``, its step error 4/3), the second converges as without
    ``precise``; without ``precise`` the first runs to ``maxiter``. (< 20 ms.)"""
    wrong = np.array([True, False])

    def phi(xa, idx):
        return [1 + 3 * (xa[0] - 1)]

    def jac(xa, idx):
        return [np.where(wrong[idx], -5.0, 3.0)]

    precise = (lambda xa, idx: [1 + 3 * (xa[0] - 1)],
               lambda xa, idx: [np.full(idx.size, 3, dtype=np.longdouble)])
    kw = dict(fixed_point=True, positive=False, damping=0.5, rtol=1e-13, maxiter=200)
    x, done, iters, rel, drift = iterate_grid(phi, jac, np.full((1, 2), 1.2), precise=precise,
                                              **kw)
    assert drift.unresolved.tolist() == [True, False] == drift.stopped.tolist()
    assert done.tolist() == [False, True] and x[0, 1] == 1.0
    assert drift.sweep[0] == iters[0] <= 5 + BOUNDARY_RUN_SWEEPS + 1, drift.sweep
    assert abs(drift.first[0] - 4 / 3) < 1e-6 and abs(drift.last[0] - 4 / 3) < 1e-6
    x0, done0, iters0, rel0 = iterate_grid(phi, jac, np.full((1, 2), 1.2), **kw)
    assert iters0[0] == 200 and not done0[0]
    for a, b in ((x, x0), (done, done0), (iters, iters0), (rel, rel0)):
        assert np.array_equal(a[..., 1], b[..., 1])


@pytest.mark.slow
def test_lasso_default_float64_path_says_float64_cannot_resolve_the_point():
    """The LASSO point of the finding on the default float64 path (declared start, Newton +
    damped): the solution exists (V = 0.4037, risk 1.01e-10; the state evolution in closed form
    at 50 digits, and the engine's mpmath Newton from there at 30 digits, condition 3.8e18 --
    benchmarks/README.md, f64div2) but repels the damped iteration, and the float64 Newton steps
    near it have no correct digit (risk = eps - 2m + q cancels 9 digits): before, the float64
    iteration wandered to sweep 10906 (146-189 s CPU) and stopped ``inadmissible``; now it stops
    ``stalled`` within 2000 sweeps (1181), saying that float64 cannot resolve it. (~35 s CPU
    at load 13-17 with the model's code generated; 144 s wall with a fresh code cache at load
    11-14, most of it generating the model's code.)"""
    kw = dict(alpha=np.array([0.5]), eps=0.1, sigma=0.0, lam=1e-5)
    with pytest.raises(ConvergenceError, match=r"\(1 stalled\); not resolvable in float64: the "
                       r"float64 Newton step had no correct digit at each of 12 checked sweeps "
                       r"in a row \(the damping low\), at sweep (\d+) ") as err:
        replica.solve_float64(LASSO, **kw)
    assert err.value.status == "stalled"
    assert int(re.search(r"at sweep (\d+) ", str(err.value)).group(1)) < 2000
    assert "no correct digit (compared with extended precision)" in err.value.tried


@pytest.mark.slow
def test_a_slow_approach_the_first_rule_stopped_converges_on_the_second_look():
    """glm_ridge at lam = 1e-3, sigma = 1/2 and small alpha: V grows from 1 to ~800 while the
    margin rho + sigma^2 - 2m + q falls steadily from ~27 to its value 1.11 at the solution, each
    damped change larger than the one before -- the first rule's pattern, far from the boundary.
    Found by fuzz s53 (session 52's rule stopped these points, the mp solve then refused them
    with exit 3). The iteration without the rule (``newton._second_look``) converges; V is
    checked against the ridge closed form written here: V (lam + alpha/(1 + V)) = 1, i.e.
    lam V^2 + (lam + alpha - 1) V - 1 = 0. (~10-30 s wall with a fresh code cache.)"""
    alpha, lam = np.array([0.2, 0.25, 0.3]), 1e-3
    got = replica.solve_float64(str(Path(LASSO).parent / "glm_ridge.py"), strict=False,
                                alpha=alpha, lam=lam, sigma=0.5)
    assert got["status"].tolist() == ["converged"] * 3, got["status"]
    b = lam + alpha - 1
    V = (-b + np.sqrt(b * b + 4 * lam)) / (2 * lam)
    np.testing.assert_allclose(got["V"], V, rtol=1e-10)


@pytest.mark.slow
def test_a_curve_past_the_spinodal_keeps_its_statuses_with_the_ghost_rule(monkeypatch):
    """The Rademacher teacher across its algorithmic threshold alpha_alg ~ 1.4925 (the end of
    the m < 1 branch): 1.48 converges; above, there is no m < 1 fixed point and every point is
    inadmissible (the 100-point curve's statuses) -- 1.5010 is the one the first rule stops
    (at sweep 24) at the saddle-node's ghost (Phi(m) - m keeps a minimum ~1.3e-3 near m = 0.9)
    on the 100-point curve, which the second look used to iterate for 152 sweeps until m
    reached 1 and the map failed. With the ghost rule (``iterate_grid(ghost=)``) the second
    look stops it after 34 sweeps; every status, value and iteration count is that without the
    rule (``GHOST_SWEEPS`` set beyond the second look's cap). Phi's evaluations, both points,
    the whole solve: 348 (the second look on in place from the first rule's stop at sweep 24;
    565 when it began again from the start, session 55), 1565 without the rule. (~22-28 s wall
    at load 10-12 in a session with its fresh code cache: the model's code generated, then the
    run without the rule.)"""
    from replica.numerics import machine

    path = str(Path(LASSO).parent / "perceptron_teacher.py")
    kw = dict(alpha=np.array([1.48, 0.2 + 46 * 2.8 / 99]), prior="rademacher", strict=False)
    evaluations = []
    grid = machine.iterate_grid

    def counted(phi, jac, x, **kwargs):  # (Phi's evaluations, the second look's included)
        def phi_counted(xv, ix):
            evaluations[-1] += np.size(ix)
            return phi(xv, ix)
        evaluations.append(0)
        return grid(phi_counted, jac, x, **kwargs)

    monkeypatch.setattr(machine, "iterate_grid", counted)
    monkeypatch.setattr(newton, "iterate_grid", counted)  # (a second look by a call of its own)
    got = replica.solve_float64(path, **kw)
    assert [str(s) for s in got["status"]] == ["converged", "inadmissible"]
    assert sum(evaluations) < 450, evaluations
    evaluations.clear()
    monkeypatch.setattr(newton, "GHOST_SWEEPS", 10 ** 6)
    off = replica.solve_float64(path, **kw)
    assert sum(evaluations) > 1000, evaluations
    assert [str(s) for s in off["status"]] == [str(s) for s in got["status"]]
    for name in ("m", "mhat", "generalisation", "iterations", "residual"):
        np.testing.assert_array_equal(got[name], off[name], err_msg=name)


@pytest.mark.slow
def test_the_check_reevaluates_only_the_points_whose_iteration_converged(monkeypatch):
    """``Machine.assess`` (the extended-precision re-evaluation behind a float64 point's
    ``condition`` and ``error_estimate``) runs at the points whose iteration converged only:
    the Rademacher teacher at alpha = 1.8 and 2 (above alpha_alg ~ 1.4925: no m < 1 fixed
    point, the iteration runs to m = 1 and stops, inadmissible) is not re-evaluated -- on the
    100-point curve 54 such points, most of the check's CPU (the narrow integrands near m = 1
    made the whole batch's quadrature finer). Against the check of every point (the rule
    before): every output is the same, bit for bit, but the error estimate, which agrees to
    a relative 0.25 -- its float64 part, the rule cut finer (``_evaluate_finer``), rounds
    differently in a batch of other points (its pieces padded to theirs); the estimate's own
    accuracy is 1-20 % (``Machine.assess``). The points not converged have NaN there, as
    before (the output masks a point not done)."""
    from replica.numerics.machine import Machine

    sizes = []
    assess = Machine.assess

    def spy(self, x, P, spec, shape, report):
        sizes.append(int(np.prod(shape)))
        return assess(self, x, P, spec, shape, report)

    monkeypatch.setattr(Machine, "assess", spy)
    kw = dict(alpha=np.array([1.0, 1.8, 1.3, 2.0]), prior="rademacher", strict=False)
    got = replica.solve_float64(TEACHER, **kw)
    assert [str(s) for s in got["status"]] == ["converged", "inadmissible", "converged",
                                               "inadmissible"]
    assert sizes == [2], sizes
    monkeypatch.setattr(Machine, "_assess_iterated",
                        lambda self, x, P, spec, shape, report, it:
                        self.assess(x, P, spec, shape, report))
    every = replica.solve_float64(TEACHER, **kw)
    assert sizes == [2, 4], sizes
    assert sorted(got) == sorted(every)
    for name in got:
        if name != "error_estimate":
            np.testing.assert_array_equal(got[name], every[name], err_msg=name)
    np.testing.assert_allclose(got["error_estimate"], every["error_estimate"], rtol=0.25)
    assert (got["error_estimate"][[0, 2]] < 1e-12).all()
    assert np.isnan(got["condition"][[1, 3]]).all()
    assert np.isnan(got["error_estimate"][[1, 3]]).all()
