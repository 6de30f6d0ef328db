"""Failures of the GLM models' implicit roots and float64 path on points users hit (issue 26).

1. Ridge logistic regression at ``--alpha 3 --lam 1/1000 --eta 9/10`` ended in an internal
   ``ImplicitRootError``: the proximal map's equation :math:`F(p) = p - \\omega - V/(1 + e^p)` is
   S-shaped at large :math:`V` (inflection at :math:`p = 0`), and the bracketed Newton iteration,
   which took every Newton step that stayed inside the bracket, went back and forth across the
   root in steps of the same size (:math:`\\omega = -18.7`, :math:`V = 21.9`: 400 steps of
   10.8). The root is checked here against a hand-written bisection, and the solved point
   against the stationarity conditions of a hand-written free energy (mpmath quadrature,
   bisection for the proximal map, central differences), not the engine's equations.
"""

import runpy
from pathlib import Path

import mpmath
import numpy as np
import pytest
from logistic_prox import prox_bisection

ROOT = Path(__file__).resolve().parents[1]
LOGISTIC = str(ROOT / "examples" / "logistic_regression.py")

# (omega, V) at which the iteration cycled: a node of the solve at alpha = 3, lam = 1/1000,
# eta = 9/10
CYCLING = [("-18.678685398701879646", "21.851263610693729703"),
           ("-2.6989758860570988751", "72.84821279169827335")]


def _prox_bisection(w, V):
    """The root of p - w - V/(1 + e^p) on [w, w + V] (the equation increases in p: slope
    1 + V e^p/(1 + e^p)^2 >= 1) by bisection alone, to the working precision."""
    return +prox_bisection(w, V, mpmath.mp.prec)


@pytest.fixture(scope="module")
def prox():
    return runpy.run_path(LOGISTIC)["PROX"]._imp_


@pytest.mark.parametrize("w, V", CYCLING)
def test_logistic_prox_converges_where_newton_cycled(prox, w, V, monkeypatch):
    """The working-precision iteration (:meth:`mp` from the bracket, the path a failed float64
    start falls back to), the float64 iteration and the vectorised NumPy solve all give the
    root of the bisection."""
    with mpmath.workprec(196):
        w, V = mpmath.mpf(w), mpmath.mpf(V)
        want = _prox_bisection(w, V)
        start = prox._float_root((w, V))
        assert start is not None, "the float64 iteration gave up"
        assert abs(start[0] - float(want)) <= 4e-16 * max(1.0, abs(float(want)))
        # the full bracketed iteration at the working precision (no float64 start)
        monkeypatch.setattr(prox, "_float_root", lambda args: None)
        got = prox.mp(w, V)
        assert abs(got - want) <= mpmath.mpf(2) ** -180 * max(1, abs(want))


def test_logistic_prox_vectorised_float64(prox):
    """The vectorised float64 solve (NumPy arrays: the float64 path's integrands) at the
    cycling points and two with larger V: each root that of the bisection to a few units in
    the last place (it returned 9.58 for the root 2.55 at omega = -2.70, V = 72.8, its
    equation's residual 12, after its 400 iterations)."""
    w = np.array([float(a) for a, _ in CYCLING] + [-100.0, -500.0])
    V = np.array([float(b) for _, b in CYCLING] + [200.0, 1000.0])
    got = prox._np_solve([w, V], np.float64)
    with mpmath.workprec(80):
        want = np.array([float(_prox_bisection(mpmath.mpf(a), mpmath.mpf(b)))
                         for a, b in zip(w, V)])
    assert np.all(np.abs(got - want) <= 8e-16 * np.maximum(1.0, np.abs(want))), (got, want)


def test_vectorised_solve_not_done_within_its_steps_is_nan(prox, monkeypatch):
    """An element the vectorised solve has not finished within ``MAX_ITER`` steps is NaN (the
    float64 check then rejects its point), not its last iterate; the elements that finished
    are their roots: three steps finish the element at w = V = 0 (its bracket [w, w + V] is
    the root 0 itself), not the two points where Newton cycled."""
    w = np.array([float(a) for a, _ in CYCLING] + [0.0])
    V = np.array([float(b) for _, b in CYCLING] + [0.0])
    monkeypatch.setattr(prox, "MAX_ITER", 3)
    got = prox._np_solve([w, V], np.float64)
    assert np.all(np.isnan(got[:2])), got
    assert got[2] == 0.0, got


def _psi(m, q, V, eta):
    r""":math:`2\int\mathcal D\xi\,\Phi(\eta m\xi/\sqrt{q - \eta^2m^2})\,\mathcal M_V(1, \sqrt q\xi)`
    with :math:`\mathcal M_V(1, \omega) = \min_p[(p - \omega)^2/(2V) + \log(1 + e^{-p})]`,
    written from the model's docstring: the minimiser by bisection, the integral by mpmath."""
    s = mpmath.sqrt(q - eta**2 * m**2)

    def f(x):
        w = mpmath.sqrt(q) * x
        p = _prox_bisection(w, V)
        env = (p - w) ** 2 / (2 * V) + mpmath.log1p(mpmath.exp(-p))
        return mpmath.ncdf(eta * m * x / s) * env * mpmath.npdf(x)

    return 2 * mpmath.quad(f, [-mpmath.inf, -4, 0, 4, mpmath.inf])


@pytest.mark.slow
def test_logistic_small_lam_noisy_point_solves_and_is_stationary():
    r"""``replica.solve`` at the point of issue 26 converges, and its values make the
    hand-written free energy :math:`\Phi = -m\hat m + q\hat V/2 - V\hat q/2 + (\hat m^2 +
    \hat q)/(2(\lambda + \hat V)) - \alpha\Psi(m, q, V)` stationary: the three conjugate
    conditions in closed form, the three others by central differences of :math:`\Psi`."""
    import replica

    alpha, lam, eta = 3, mpmath.mpf(1) / 1000, mpmath.mpf(9) / 10
    res = replica.solve(LOGISTIC, dps=30, alpha="3", lam="1/1000", eta="9/10")
    assert str(getattr(res.status, "value", res.status)) == "converged"
    v = {k: mpmath.mpf(str(x)) for k, x in res.values().items()
         if k in ("m", "q", "V", "mhat", "qhat", "Vhat")}
    m, q, V, mh, qh, Vh = (v[k] for k in ("m", "q", "V", "mhat", "qhat", "Vhat"))
    rel = mpmath.mpf(10) ** -9
    assert abs(m - mh / (lam + Vh)) <= rel * m
    assert abs(V - 1 / (lam + Vh)) <= rel * V
    assert abs(q - (mh**2 + qh) / (lam + Vh) ** 2) <= rel * q
    with mpmath.workdps(20):
        h = mpmath.mpf(10) ** -6
        d_m = (_psi(m + h, q, V, eta) - _psi(m - h, q, V, eta)) / (2 * h)
        d_q = (_psi(m, q + h, V, eta) - _psi(m, q - h, V, eta)) / (2 * h)
        d_V = (_psi(m, q, V + h, eta) - _psi(m, q, V - h, eta)) / (2 * h)
    assert abs(mh + alpha * d_m) <= 1e-7 * abs(mh)  # d Phi/dm = 0: mhat = -alpha dPsi/dm
    assert abs(Vh - 2 * alpha * d_q) <= 1e-7 * abs(Vh)
    assert abs(qh + 2 * alpha * d_V) <= 1e-7 * abs(qh)


@pytest.mark.slow
def test_rademacher_teacher_float64_names_the_admissible_boundary():
    """2. The Rademacher teacher above alpha_alg (about 1.49) in float64: the iteration runs to
    m = 1, the boundary of the declared admissible region m < 1 (the mp solve says so and names
    the closed-form branch m = 1). The strict float64 error names that region, not only
    ``max-iterations``: since session 53 (f64div2, damped_mp's second rule on the float64 path)
    the point's status is the mp path's, ``inadmissible``; the point below alpha_alg converges,
    and no value is reported at the point that did not."""
    import replica
    from replica.errors import ConvergenceError

    teacher = str(ROOT / "examples" / "perceptron_teacher.py")
    with pytest.raises(ConvergenceError) as info:
        replica.solve_float64(teacher, alpha=np.array([2.0, 0.5]), prior="rademacher")
    message = str(info.value)
    assert "1 of 2 grid points did not converge (1 inadmissible)" in message
    assert "runs towards the boundary of the domain m < 1" in message
    assert "no solution with m < 1 was reached" in message
    out = replica.solve_float64(teacher, alpha=np.array([2.0, 0.5]), prior="rademacher",
                                strict=False)
    assert list(out["status"]) == ["inadmissible", "converged"]
    assert np.isnan(out["m"][0]) and 0 < out["m"][1] < 1
    assert not any(k.startswith("_") for k in out)
