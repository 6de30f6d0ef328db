"""The Gardner volume's float64 path near capacity (examples/perceptron_gardner.py at kappa = 0,
alpha -> alpha_c = 2, q -> 1): the float64 solve against the stationarity condition G'(q) = 0
written out here in plain mpmath (none of the engine's code) up to alpha = 1.99, statuses
honest; the model's rewritten equation (log space, the factor (1 - q)^2 inside the integral,
the integrands split at the breakpoints) equals 2(1 - q)^2 times the derivative of the stated
log-volume, and its log H equals the log of the Gaussian tail."""

from __future__ import annotations

import os
import runpy

import mpmath
import numpy as np
import pytest
import sympy

import replica
from replica.symbolic.codegen import Evaluator

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GARDNER = os.path.join(REPO, "examples", "perceptron_gardner.py")
G = runpy.run_path(GARDNER)


def gardner_q(alpha, kappa=0, dps=30):
    r"""The root q of G'(q) = q/(2(1 - q)^2) - alpha int Dt R(u) du/dq, u = (kappa + sqrt(q) t)/
    sqrt(1 - q), R = phi/H the inverse Mills ratio (the derivative of the stated log-volume
    G(q) = log(1 - q)/2 + q/(2(1 - q)) + alpha int Dt log H(u)); mpmath.quad with breakpoints
    at t = -kappa/sqrt(q) and a few widths sqrt(1 - q) around it, findroot in the logit of q."""
    with mpmath.workdps(dps):
        a, k = mpmath.mpf(alpha), mpmath.mpf(kappa)

        def dG(q):
            s, w = mpmath.sqrt(q), mpmath.sqrt(1 - q)
            t0 = -k / s
            pts = sorted({t0 + c * w for c in (-8, -2, -1, 0, 1, 2, 8, 32)} | {-12, 12})

            def f(t):
                u = (k + s * t) / w
                du = t / (2 * s * w) + (k + s * t) / (2 * w**3)
                return mpmath.npdf(t) * mpmath.npdf(u) / mpmath.ncdf(-u) * du

            return q / (2 * (1 - q)**2) - a * mpmath.quad(f, [-mpmath.inf] + pts + [mpmath.inf])

        def q_of(y):  # q = 1/(1 + e^-y) in (0, 1) for every real y
            return 1 / (1 + mpmath.exp(-y))

        one_minus = (2 - a) / 4  # (a start: 1 - q ~ (2 - alpha)/4 near capacity)
        y = mpmath.findroot(lambda y: dG(q_of(y)), mpmath.log((1 - one_minus) / one_minus))
        return q_of(y)


def _check_float64(alphas):
    """The float64 solve at kappa = 0: every point converged, q within 1e-12 (relative) of the
    plain-mpmath root (measured about 1e-16; before the rewrite: NaN Jacobians and
    max-iterations from alpha = 1.7)."""
    model = replica.load_model(GARDNER)
    values = np.array([float(sympy.Rational(a)) for a in alphas])
    r = replica.solve_float64(model, alpha=values, kappa=0.0, strict=False)
    assert list(r["status"]) == ["converged"] * len(alphas), r["status"]
    for j, a in enumerate(alphas):
        ref = gardner_q(sympy.Rational(a).p / mpmath.mpf(sympy.Rational(a).q), dps=20)
        assert abs(r["q"][j] / float(ref) - 1) < 1e-12, (a, r["q"][j], ref)
    return r


@pytest.mark.slow
def test_float64_equals_mpmath_up_to_alpha_199():
    r = _check_float64(["3/2", "17/10", "9/5", "19/10", "39/20", "199/100"])
    assert r["q"][-1] > 0.997


@pytest.mark.slow
def test_rewritten_stationarity_is_the_derivative_of_the_log_volume():
    """Near q = 1 with kappa < 0, in 30-digit mpmath: the model's residual equals 2(1 - q)^2
    dG/dq of the stated log-volume (differentiated here, with the factor expanded)."""
    q, alpha, kappa = G["q"], G["alpha"], G["kappa"]
    direct = sympy.expand(2 * (1 - q)**2 * sympy.diff(G["LOG_VOLUME"], q))
    ev = Evaluator([G["STATIONARITY"], direct], [q, alpha, kappa])
    with mpmath.workdps(30):
        x = [mpmath.mpf(997) / 1000, mpmath.mpf(199) / 100, -mpmath.mpf(3) / 10]
        a, b = ev.mp(x)
        assert abs(a - b) < mpmath.mpf(10)**-25, (a, b)


def test_log_h_is_the_log_of_the_gaussian_tail_and_split_is_the_identity():
    """log H(u) in log space equals log(erfc(u/sqrt 2)/2) (30 digits; absolute: the plain form
    loses digits where H -> 1), and the split integrand equals the unsplit one."""
    q, kappa, t = G["q"], G["kappa"], G["t"]
    plain = sympy.log(sympy.erfc(G["U"] / sympy.sqrt(2)) / 2)
    ev = Evaluator([G["LOG_H"], plain, G["split"](G["LOG_H"])], [q, kappa, t])
    with mpmath.workdps(30):
        for qv, kv in (("997/1000", "-3/10"), ("1/2", "1")):
            x = [mpmath.mpf(sympy.Rational(v).p) / sympy.Rational(v).q for v in (qv, kv)]
            for tv in ("-2", "0.1", "3", "-40", "40"):
                h = ev.mp(x + [mpmath.mpf(tv)])
                assert abs(h[0] - h[1]) < mpmath.mpf(10)**-25 * max(1, abs(h[1])), (qv, tv, h)
                assert h[0] == h[2]
