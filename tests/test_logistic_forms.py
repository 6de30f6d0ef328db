"""The overflow-free logistic forms of float64 code (gaussian.logistic_forms) and the float64 root
of the logistic proximal map where e^{-p} overflows, against mpmath (independent of the engine)."""

import mpmath
import numpy as np
import sympy

from replica.modeling import implicit_root
from replica.symbolic.codegen import _log_space_np
from replica.symbolic.gaussian import (logistic_base, logistic_forms, sigmoid, sigmoid_rational,
                                      softplus)

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


# The one core of both logistic rewrites (gaussian.logistic_base, gaussian.sigmoid_rational):
# expressions rational in e^{ku} for several integers k, their base u written out by hand.
u_ = sympy.Symbol("u", real=True)
CORE = [(sympy.exp(-2 * u_) / (1 + sympy.exp(-u_)) ** 3, -u_),
        ((sympy.exp(3 * u_) - 2 * sympy.exp(u_)) / (1 + sympy.exp(2 * u_)) ** 2, u_),
        (sympy.exp(4 * u_) / (3 + sympy.exp(2 * u_) + sympy.exp(6 * u_)), 2 * u_),
        (1 + V_ * sympy.exp(-u_) / (1 + sympy.exp(-u_))
         - V_ * sympy.exp(-2 * u_) / (1 + sympy.exp(-u_)) ** 2, -u_)]


def test_sigmoid_rational_core():
    rng = np.random.default_rng(29)
    S = sympy.Dummy("S")
    for expr, base in CORE:
        exps = sorted(expr.atoms(sympy.exp), key=sympy.default_sort_key)
        u, members = logistic_base(exps[0], exps)
        assert sympy.simplify(u - base) == 0, (expr, u)
        assert all(sympy.simplify(e.args[0] - k * u) == 0 for e, k in members.items())
        rational = sigmoid_rational(expr, members, S)
        assert not rational.atoms(sympy.exp), rational
        # against the expression as written, in mpmath (S = 1/(1 + e^{-u}); 400 digits, as
        # 1 - S at u = 800 cancels 348 of them)
        f = sympy.lambdify([u_, V_, S], rational, modules="mpmath")
        g = sympy.lambdify([u_, V_], expr, modules="mpmath")
        with mpmath.workdps(400):
            points = list(rng.uniform(-40, 40, 6)) + [800.0, -800.0]
            for t in points:
                t, v = mpmath.mpf(float(t)), mpmath.mpf(3.9765)
                s = 1 / (1 + mpmath.exp(-u.subs(u_, 1) * t))
                want, got = g(t, v), f(t, v, s)
                assert abs(got - want) <= mpmath.mpf(10) ** -50 * max(abs(want), 1e-300), \
                    (expr, t, got, want)
        # in float64, S -> sigmoid(u), 1 - S -> sigmoid(-u): finite and right at u = +-800,
        # where the expression as written is not finite at one of them at least
        safe = sympy.factor(rational).xreplace({S - 1: -sigmoid(-u), 1 - S: sigmoid(-u)})
        safe = safe.xreplace({S: sigmoid(u)})
        assert not safe.has(S), safe
        ns = dict(_log_space_np(None, None))
        ns = {"sigmoid": ns["sigmoid"], "exp": np.exp}
        f64 = sympy.lambdify([u_, V_], safe, modules=[ns, "numpy"])
        plain = sympy.lambdify([u_, V_], expr, modules="numpy")
        with np.errstate(all="ignore"):
            assert not all(np.isfinite(plain(np.float64(t), 3.9765)) for t in (800.0, -800.0))
        for t in (800.0, -800.0):
            with mpmath.workdps(60):
                want = g(mpmath.mpf(t), mpmath.mpf(3.9765))
            got = float(f64(np.float64(t), 3.9765))
            assert np.isfinite(got)
            assert abs(got - want) <= 1e-14 * max(abs(want), 1e-300), (expr, t, got, want)
