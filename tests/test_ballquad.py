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


# --- job cert (issue 29): intervals bounded by the growth envelope, the whole range first ------
C_SIGN = 1.25  # c of the sign channel's ratio e^(-c^2 z^2) z^2 / erfc(c z / sqrt 2)
LO, WIDTH = -10, 20  # z = LO + WIDTH s on s in [0, 1]


def _ratio_envelope():
    """The growth envelope of the ratio (replica.symbolic.gaussian.growth_envelope), as balls."""
    from replica.symbolic.gaussian import growth_envelope

    z, c = sympy.Symbol("z", real=True), sympy.Symbol("c", positive=True)
    F = sympy.exp(-c**2 * z**2) * z**2 / sympy.erfc(c * z / sympy.sqrt(2))
    C, B, P, Q, conditions = growth_envelope(F, z)
    assert conditions == []
    at = {c: sympy.Rational(5, 4)}
    ball = lambda e: arb(mpmath.nstr(sympy.N(e.subs(at), 60), 55))  # noqa: E731
    return ball(C), ball(B), sympy.Rational(P), ball(Q)


def _ratio_mp(z):
    """|F(z)| phi(z) of the ratio, mpmath (written here, not from the engine)."""
    c = mpmath.mpf(C_SIGN)
    return (mpmath.exp(-c**2 * z**2) * z**2 / mpmath.erfc(c * z / mpmath.sqrt(2))
            * mpmath.npdf(z))


def _ratio_acb(s, analytic):
    z = acb(LO) + acb(WIDTH) * s
    c = acb(arb(C_SIGN))
    return (acb.exp(-c * c * z * z) * z * z / acb.erfc(c * z / acb(2).sqrt())
            * acb.exp(-z * z / 2) / (2 * acb.pi()).sqrt() * WIDTH)


def _envelope_bound(P=None, scale=1):
    from replica.symbolic.codegen import _envelope_integral

    C, B, P0, Q = _ratio_envelope()
    return _envelope_integral(C / scale, B, Q, P0 if P is None else P, arb(LO), arb(WIDTH))


def test_envelope_integral_bounds_mpmath_integral_and_dropped_power_does_not():
    """The envelope's bound of the integral of |F| phi over an interval (codegen
    ``_envelope_integral``) is at least mpmath's integral on every interval beyond |z| = 1 and
    refuses an interval that meets |z| < 1; with the power |z|^P dropped (planted) it is below
    the integral somewhere."""
    honest, planted = _envelope_bound(), _envelope_bound(P=sympy.Integer(0))
    flint.ctx.prec, old = 200, flint.ctx.prec
    missed = 0
    try:
        with mpmath.workdps(40):
            for za, zb in ((1.5, 2), (2.5, 3), (4, 6), (7, 10), (-2, -1.5), (-6, -4), (-10, -7)):
                a, b = arb(za - LO) / WIDTH, arb(zb - LO) / WIDTH
                truth = arb(mpmath.nstr(mpmath.quad(_ratio_mp, [za, zb]), 35))
                assert honest(a, b) >= truth
                missed += not planted(a, b) >= truth
            assert honest(arb(0.5), arb(0.52)) is None  # (z in [0, 0.4]: no envelope there)
            # not vacuous: z in [7, 10] is below 2^-60
            assert honest(arb(7 - LO) / WIDTH, arb(1)) < arb(2) ** -60
    finally:
        flint.ctx.prec = old
    assert missed > 0


def test_enclose_with_envelope_contains_mpmath_value_and_a_wrong_bound_misses():
    """``enclose`` with the envelope's bound (negligible intervals taken as [-E, E]) contains
    mpmath's integral over [-10, 10]; a bound that understates (its constant C 10^6 times too
    small, planted) makes it miss."""
    with mpmath.workdps(50):
        truth = mpmath.nstr(mpmath.quad(_ratio_mp, mpmath.linspace(LO, LO + WIDTH, 21)), 45)
    flint.ctx.prec, old = 200, flint.ctx.prec
    truth = arb(truth)  # (at 200 bits)
    tol = 2e-22  # (1e-23 an interval of length 1: z in [7, 10] and [-10, -6] are below it)
    try:
        taken = []

        def honest_bound(a, b, bound=_envelope_bound()):
            out = bound(a, b)
            taken.append(out is not None and out <= tol / 20)
            return out

        out = ballquad.enclose(_ratio_acb, arb(0), arb(1), tol, 20, honest_bound)
        assert out is not None and out.contains(truth) and out.rad() < 1e-20
        assert sum(taken) >= 5  # (these intervals from the bound alone)
        planted = ballquad.enclose(_ratio_acb, arb(0), arb(1), tol, 20,
                                   _envelope_bound(scale=10**6))
        assert planted is not None and not planted.contains(truth)
    finally:
        flint.ctx.prec = old


def _quartic(s, analytic):
    z = 8 * (2 * acb(s) - 1)  # (z in [-8, 8] for s in [0, 1])
    return z ** 4 * acb.exp(-z * z / 2) * 16


def test_whole_range_rule_contains_mpmath_value_and_a_too_small_bound_misses(monkeypatch):
    """An entire integrand (z^4 e^(-z^2/2) over [-8, 8], in 8 pieces) is taken in one rule on
    the whole range (``ballquad.WHOLE``), its enclosure containing mpmath's integral; with the
    ellipse's bound 2^100 times too small (planted: too few nodes, too small an error term) it
    misses."""
    with mpmath.workdps(50):
        truth = mpmath.nstr(mpmath.quad(lambda z: z**4 * mpmath.exp(-z * z / 2),
                                        mpmath.linspace(-8, 8, 9)), 45)
    flint.ctx.prec, old = 160, flint.ctx.prec
    truth = arb(truth)
    calls = []
    real_one = ballquad._one

    def one(*args, **kw):
        calls.append(args[2:6])
        return real_one(*args, **kw)

    try:
        monkeypatch.setattr(ballquad, "_one", one)
        out = ballquad.enclose(_quartic, arb(0), arb(1), 1e-35, 8)
        assert out is not None and out.contains(truth) and out.rad() < 1e-34
        assert len(calls) == 1  # (the whole range: no piece)
        honest_bound = ballquad.ellipse_bound
        monkeypatch.setattr(ballquad, "ellipse_bound",
                            lambda *a: honest_bound(*a) * arb(2) ** -100)
        planted = ballquad.enclose(_quartic, arb(0), arb(1), 1e-35, 8)
        assert planted is not None and not planted.contains(truth)
    finally:
        flint.ctx.prec = old


@pytest.mark.slow
def test_segment_enclosure_contains_mpmath_value_and_a_midpoint_value_misses(monkeypatch):
    """The zero-order enclosure of an interval (``ballquad._segment``: its length times the
    integrand's ball over the real segment, taken where that is within the interval's share of
    the tolerance) in the logistic integral over [-16, 16]: the far intervals are taken by it
    (at least 4), and the enclosure contains mpmath's value; the integrand's value at the
    segment's midpoint instead of its ball over the segment (planted: not an enclosure of the
    integrand's range, so every interval passes) misses."""
    a, b = -16, 16
    with mpmath.workdps(25):
        f = lambda z: (mpmath.npdf(z) * mpmath.log(1 + mpmath.exp(-_prox_mp(2 * z))))  # noqa
        truth = mpmath.nstr(mpmath.quad(f, mpmath.linspace(a, b, 17)), 22)
    flint.ctx.prec, old = 100, flint.ctx.prec
    truth = arb(truth)
    taken = []
    honest = ballquad._segment

    def segment(f, lo, hi, tol):
        out = honest(f, lo, hi, tol)
        taken.append(out is not None)
        return out

    def midpoint(f, lo, hi, tol):
        return f(acb((lo + hi) / 2), False).real * (hi - lo)

    try:
        monkeypatch.setattr(ballquad, "_segment", segment)
        out = ballquad.enclose(_logistic_integrand, arb(a), arb(b), 2.0 ** -60, 16)
        assert out is not None and out.contains(truth) and out.rad() < 2.0 ** -59
        assert sum(taken) >= 4, taken
        monkeypatch.setattr(ballquad, "_segment", midpoint)
        planted = ballquad.enclose(_logistic_integrand, arb(a), arb(b), 2.0 ** -60, 16)
        assert planted is not None and not planted.contains(truth)
    finally:
        flint.ctx.prec = old
