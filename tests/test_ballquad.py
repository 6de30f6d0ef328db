"""The rigorous Gauss--Legendre rule of :mod:`replica.symbolic.ballquad` (issue 29): its
enclosure of a Gaussian integral through the logistic proximal root contains a value computed
here by mpmath at 70 digits (the root by ``findroot`` of the equation written by hand, the
integral by ``mpmath.quad``); with the ellipse's bound taken on the real segment only (a wrong
``M``: the function is not analytic in the ellipse it claims) the enclosure of Runge's
:math:`1/(1 + 25x^2)` misses :math:`\\tfrac25\\arctan 5`, while the honest bound contains it;
and the sigmoid form of the root's equation in complex balls (``implicit._in_sigmoid``) is
the same function and makes the Krawczyk test pass on complex boxes at :math:`p \\ll 0`."""

from __future__ import annotations

import mpmath
import pytest
import sympy

flint = pytest.importorskip("flint")

from replica.symbolic import ballquad  # noqa: E402
from logistic_prox import declared_prox  # noqa: E402
from replica.symbolic.implicit import _in_sigmoid  # noqa: E402

arb, acb = flint.arb, flint.acb
# the proximal map of the logistic loss, declared as examples/logistic_regression.py does
PROX, (p_, w_, V_) = declared_prox()
Q, V = 4, 4  # q and V of the integrand (near the solution of the logistic example: 4.15, 3.98)


def _prox_mp(w):
    """The root of p - w - V/(1 + e^p) = 0 on [w, w + V] (mpmath, the working precision)."""
    return mpmath.findroot(lambda p: p - w - V / (1 + mpmath.exp(p)), (w, w + V),
                           solver="anderson")


def _logistic_integrand(s, analytic):
    """phi(z) log(1 + e^(-p)), p = prox(sqrt(q) z, V), in acb balls."""
    z = acb(s)
    p = PROX._imp_.ball(acb(arb(Q).sqrt()) * z, acb(V))
    return acb.exp(-z * z / 2) / acb.pi().sqrt() / acb(2).sqrt() * acb.log(1 + acb.exp(-p),
                                                                           True)


def test_logistic_integral_contains_mpmath_value():
    a, b = -6, 6
    with mpmath.workdps(75):
        f = lambda z: (mpmath.npdf(z) * mpmath.log(1 + mpmath.exp(-_prox_mp(2 * z))))  # noqa
        truth = mpmath.nstr(mpmath.quad(f, mpmath.linspace(a, b, 13)), 72)
    flint.ctx.prec, old = 240, flint.ctx.prec
    try:
        out = ballquad.enclose(_logistic_integrand, arb(a), arb(b), 2.0 ** -220, 6)
        assert out is not None
        assert out.contains(arb(truth))  # (the string at 240 bits: a ball of ~1e-70)
        assert out.rad() < arb("1e-60")  # (the rule's bound is not vacuous)
    finally:
        flint.ctx.prec = old


def _runge(s, analytic):
    return 1 / (1 + 25 * s * s)


def _real_only(f, c, h, r, strips):
    """A wrong bound: |f| on the real segment of the ellipse only (no analyticity checked)."""
    A = h * (r + 1 / r) / 2
    return arb(max(abs(f(acb(c + A * k / 16), True)).upper() for k in range(-16, 17)))


def test_runge_honest_bound_contains_and_planted_bound_misses(monkeypatch):
    flint.ctx.prec, old = 200, flint.ctx.prec
    try:
        truth = 2 * arb(5).atan() / 5
        honest = ballquad.enclose(_runge, arb(-1), arb(1), 1e-40)
        assert honest is not None and honest.contains(truth) and honest.rad() < 1e-35
        # the poles +-i/5 lie inside the first ellipses tried: the honest bound refuses them
        assert ballquad.ellipse_bound(_runge, arb(0), arb(1), arb(1.618), 4) is None
        monkeypatch.setattr(ballquad, "ellipse_bound", _real_only)
        planted = ballquad.enclose(_runge, arb(-1), arb(1), 1e-12)
        assert planted is not None and not planted.contains(truth)
    finally:
        flint.ctx.prec = old


def test_sigmoid_form_same_function_and_contracts_far_left():
    for k in range(4):
        e = sympy.diff(PROX.equation, PROX.unknown, k)
        s = _in_sigmoid(e, PROX.unknown)
        assert not s.has(sympy.exp(-PROX.unknown))
        for pv in (mpmath.mpc(-7, 0.3), mpmath.mpc(0.5, -1.1), mpmath.mpc(9, 2)):
            at = {PROX.unknown: pv, PROX.variables[0]: 0.25, PROX.variables[1]: 3}
            with mpmath.workdps(50):
                x = sympy.lambdify(list(at), e, "mpmath")(*at.values())
                y = sympy.lambdify(list(at), s, "mpmath")(*at.values())
                assert abs(x - y) <= mpmath.mpf(10) ** -40 * max(1, abs(x))
    flint.ctx.prec, old = 56, flint.ctx.prec
    try:  # omega = -10 +- 0.05 + [-0.2, 0.2]i: the form written failed here (not finite)
        out = PROX._imp_.ball(acb(arb(-10, 0.05), arb(0, 0.2)), acb(V))
        assert out.is_finite()
        with mpmath.workdps(30):
            assert out.contains(acb(arb(mpmath.nstr(_prox_mp(mpmath.mpf(-10)), 30))))
    finally:
        flint.ctx.prec = old
