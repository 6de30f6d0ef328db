"""The overflow-free logistic forms of float64 code (gaussian.logistic_forms) and the float64 root
of the logistic proximal map where e^{-p} overflows, against mpmath (independent of the engine)."""

import mpmath
import numpy as np
import sympy

from replica.modeling import implicit_root
from replica.symbolic.codegen import _log_space_np
from replica.symbolic.gaussian import logistic_forms, sigmoid, softplus

x = sympy.Symbol("x", real=True)
E = sympy.exp(x)
CASES = [sympy.log(1 + sympy.exp(-x)), E / (1 + E), sympy.exp(-x) / (1 + sympy.exp(-x)) ** 2,
         sympy.exp(2 * x) / (1 + E) ** 2, 1 / (1 + E) ** 2, E / (sympy.exp(2 * x) + 2 * E + 1),
         sympy.diff(sympy.log(1 + sympy.exp(-x)), x, 3)]


def _f64(expr):
    ns = dict(_log_space_np(None, None))
    ns = {"softplus": ns["softplus"], "sigmoid": ns["sigmoid"], "exp": np.exp, "log": np.log}
    return sympy.lambdify([x], expr, modules=[ns, "numpy"])


def test_logistic_forms_finite_and_exact_at_800():
    for expr in CASES:
        safe = logistic_forms(expr)
        assert safe.has(softplus) or safe.has(sigmoid), expr
        assert not any(a.has(x) for a in safe.atoms(sympy.exp)), safe
        f = _f64(safe)
        with mpmath.workdps(40):
            g = sympy.lambdify([x], expr, modules="mpmath")
            for v in (800.0, -800.0, 3.0, -0.5):
                want = g(mpmath.mpf(v))
                got = float(f(np.float64(v)))
                if want == 0 or abs(want) < mpmath.mpf("1e-300"):
                    assert abs(got) < 1e-300, (expr, v, got)
                else:
                    assert abs(got - want) <= 1e-14 * abs(want), (expr, v, got, want)


p_, w_, V_ = sympy.symbols("p omega V_", real=True)
PROX = implicit_root("prox_logistic_forms_test",
                     p_ - w_ + V_ * sympy.diff(sympy.log(1 + sympy.exp(-p_)), p_), p_,
                     (w_, V_), bracket=(w_, w_ + V_))


def _prox_mp(omega, V):
    """The root of p - omega - V/(1 + e^p) by mpmath's bisection-safe solver."""
    with mpmath.workdps(40):
        f = lambda p: p - omega - V / (1 + mpmath.exp(p))  # noqa: E731
        return mpmath.findroot(f, (mpmath.mpf(omega), mpmath.mpf(omega) + V), solver="anderson")


def test_prox_float64_where_exp_overflows():
    omega = np.array([-3000.0, -1500.0, -1000.0, -20.0, 0.0, 800.0, 3000.0])
    V = 677.61
    got = PROX._imp_.np(omega, np.full_like(omega, V))
    for o, g in zip(omega, got):
        want = _prox_mp(o, V)
        assert np.isfinite(g), o
        assert abs(g - want) <= 4e-16 * max(abs(want), 1), (o, g, want)
