"""Float64 Gaussian integrals whose integrands hold e^{ku} of a logistic pattern at large u
(issue 26): where the integrand as written is not finite, _gauss_np evaluates its logistic
forms (codegen._logistic_safe, built on gaussian.logistic_forms), then, for what those leave,
longdouble. Checked against mpmath quadratures of the functions written here (sigma, softplus
by their definitions), and the float64 point of examples/logistic_regression.py at lam = 1e-4
against the hand-written replica-symmetric fixed point of tests/test_logistic.py."""

import os

import mpmath
import numpy as np
import pytest
import sympy

from replica.symbolic.codegen import Evaluator
from replica.symbolic.gaussian import gauss

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LOGISTIC = os.path.join(REPO, "examples", "logistic_regression.py")

z = sympy.Symbol("z", real=True)
b, c = sympy.symbols("b c", positive=True)
E = sympy.exp(z + b)
INTEGRANDS = [c * E**2 / (1 + E) ** 2 + z**2 * E / (1 + E), sympy.log(1 + E) - b,
              sympy.exp(3 * (z + b)) / (1 + E) ** 3 * c / (c + E / (1 + E) ** 2)]
"""c sigma(u)^2 + z^2 sigma(u), softplus(u) - b, sigma(u)^3 c/(c + sigma(u) sigma(-u)) at
u = z + b, as SymPy writes them (powers of e^u over powers of 1 + e^u)."""


def _sigma(x):
    return 1 / (1 + mpmath.exp(-x))


REFERENCES = [lambda x, B, C: C * _sigma(x + B) ** 2 + x**2 * _sigma(x + B),
              lambda x, B, C: x + mpmath.log1p(mpmath.exp(-(x + B))),
              lambda x, B, C: _sigma(x + B) ** 3 * C / (C + _sigma(x + B) * _sigma(-x - B))]


def _reference(k, B, C):
    f = REFERENCES[k]
    with mpmath.workdps(30):
        B, C = mpmath.mpf(B), mpmath.mpf(C)
        return mpmath.quad(lambda x: f(x, B, C) * mpmath.npdf(x), [-mpmath.inf, 0, mpmath.inf])


@pytest.mark.parametrize("k", range(len(INTEGRANDS)))
@pytest.mark.parametrize("shift", [340.0, 6000.0])
def test_logistic_integrands_where_the_exponentials_overflow(k, shift):
    """u = z + b: at b = 340, e^{2u} overflows float64 on z > 14.5 of the rule's [-16, 16]; at
    b = 6000 everywhere, and longdouble's range too (e^{2u} > e^{11356}), so only the logistic
    forms give a value there. Finite, and within 1e-14 of mpmath's quadrature of the functions
    written above (not the engine's forms)."""
    ev = Evaluator([gauss(INTEGRANDS[k], z)], [b, c])
    (got,) = ev.f64([shift, 0.5])
    want = float(_reference(k, shift, 0.5))
    assert np.isfinite(got), got
    assert abs(float(got) - want) <= 1e-14 * max(1.0, abs(want)), (got, want)


def test_values_where_the_plain_form_is_finite_are_unchanged():
    """At b = 1 nothing overflows: the integral is that of the plain integrand bit for bit (the
    forms are never made: the evaluator's logistic functions stay unbuilt)."""
    ev = Evaluator([gauss(INTEGRANDS[0], z)], [b, c])
    (got,) = ev.f64([1.0, 0.5])
    assert ev._logistic is None
    want = float(_reference(0, 1, 0.5))
    assert abs(float(got) - want) <= 1e-14
    g = ev._gauss["np"][0]
    g.logistic = None  # the path without the fallback
    (plain,) = ev.f64([1.0, 0.5])
    assert float(got) == float(plain)


@pytest.mark.slow
def test_float64_point_at_small_ridge_converges_to_the_fixed_point():
    """examples/logistic_regression.py at alpha = 3, eta = 9/10, lam = 1e-4 (V = 677.6, so the
    proximal map reaches |p| ~ 1100 on the rule's [-16, 16] and e^{2p} overflows): the float64
    solve started near the solution (21, 700, 680) is ``converged`` (its honest check passes:
    it was max-iterations, with NaN values) and within 1e-8 of the hand-written fixed point
    (tests/test_logistic.py ``rs_fixed_point``, mpmath throughout)."""
    import replica
    from test_logistic import rs_fixed_point

    problem = replica.load_model(LOGISTIC)
    out = replica.solve_float64(problem, alpha=np.array([3.0]), lam=np.array([1e-4]),
                                eta=np.array([0.9]), strict=False,
                                start=[np.array([v]) for v in (21.0, 700.0, 680.0)])
    assert list(out["status"]) == ["converged"], (out["status"], out["error_estimate"])
    ref = rs_fixed_point(3, "0.0001", "0.9", start=(21, 700, 680), dps=12)
    for key, want in zip(("m", "q", "V"), ref):
        got = float(out[key][0])
        assert abs(got - float(want)) <= 1e-8 * float(want), (key, got, want)
