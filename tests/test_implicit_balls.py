"""Ball arithmetic for functions defined by an equation (``implicit_root``): the Krawczyk
enclosure of the root for real (``arb``) and complex (``acb``) argument balls, checked against
roots computed here by mpmath's ``findroot`` at 50 digits (the equation written by hand, not the
package's), its width against the width the arguments' radii propagate (the derivatives of the
root written by hand from the implicit function theorem), refusals of balls too wide to
contract, and the derivatives of the root (``fdiff``) in the generated ball code."""

from __future__ import annotations

import mpmath
import pytest
import sympy

flint = pytest.importorskip("flint")

from replica.symbolic.codegen import Evaluator, NotEnclosable  # noqa: E402
from logistic_prox import declared_prox  # noqa: E402
from replica.symbolic.implicit import implicit_root  # noqa: E402

arb, acb = flint.arb, flint.acb
# the proximal map of the logistic loss, declared as examples/logistic_regression.py does
PROX, (p_, w_, V_) = declared_prox()
PREC = 180  # bits (the certificate of a 30-digit solve works at 52 digits, about 175 bits)


def _sigma(x):
    return 1 / (1 + mpmath.exp(-x))


def _prox_mp(w, V):
    """The root of p - w - V/(1 + e^p) = 0 (l'(p) = -1/(1 + e^p)) by mpmath at 50 digits (or
    more, where the caller works at more): the real root on [re w, re w + V], then, for complex
    ``w``, Newton's method from it (the analytic continuation of the real root)."""
    with mpmath.workdps(max(mpmath.mp.dps + 10, 60)):
        real = mpmath.findroot(lambda p: p - mpmath.re(w) - V / (1 + mpmath.exp(p)),
                               (mpmath.re(w), mpmath.re(w) + V), solver="anderson")
        if mpmath.im(w) == 0:
            return +mpmath.findroot(lambda p: p - w - V / (1 + mpmath.exp(p)), real)
        return +mpmath.findroot(lambda p: p - w - V / (1 + mpmath.exp(p)), mpmath.mpc(real, 0))


def _dprox(w, V):
    """(dp/dw, dp/dV) by the implicit function theorem, by hand: F_p = 1 + V s(p) s(-p),
    F_w = -1, F_V = -s(-p) (s the logistic sigmoid), dp/da = -F_a/F_p."""
    with mpmath.workdps(max(mpmath.mp.dps + 10, 60)):
        p = _prox_mp(w, V)
        fp = 1 + V * _sigma(p) * _sigma(-p)
        return +(1 / fp), +(_sigma(-p) / fp)


def _ball(x: str, r: float):
    return arb(x, r) if r else arb(x)


def _mid(b):
    """The midpoint of an ``arb`` as an mpmath number (exactly: 70 digits)."""
    with mpmath.workdps(70):
        return +mpmath.mpf(b.mid().str(70, radius=False))


def _inside(value, b) -> bool:
    """Whether the mpmath number ``value`` lies in the ball ``b`` (arb or acb), the number
    read at 250 bits (its 55 digits a ball of about 1e-55)."""
    old = flint.ctx.prec
    flint.ctx.prec = 250
    try:
        if isinstance(b, acb):
            return (b.real.contains(arb(mpmath.nstr(mpmath.re(value), 55)))
                    and b.imag.contains(arb(mpmath.nstr(mpmath.im(value), 55))))
        return b.contains(arb(mpmath.nstr(value, 55)))
    finally:
        flint.ctx.prec = old


@pytest.fixture
def prec():
    old = flint.ctx.prec
    flint.ctx.prec = PREC
    yield PREC
    flint.ctx.prec = old


POINTS = [(w, V) for w in ("-30", "-7.7", "-2.5", "-0.3", "0", "0.77", "3.1", "12", "40")
          for V in ("0.05", "1", "3.97", "20")]


@pytest.mark.parametrize("radius", [0.0, 1e-40, 1e-12, 1e-4])
def test_real_enclosure_contains_the_root_and_is_tight(prec, radius):
    for w, V in POINTS:
        wb, Vb = _ball(w, radius), _ball(V, radius / 2)
        b = PROX._imp_(wb, Vb)
        root = _prox_mp(_mid(wb), _mid(Vb))
        assert _inside(root, b), (w, V, radius, b, root)
        # the root's range over the balls: about |dp/dw| r_w + |dp/dV| r_V (to first order)
        dw, dV = _dprox(_mid(wb), _mid(Vb))
        width = abs(dw) * radius + abs(dV) * radius / 2
        floor = mpmath.ldexp(abs(root) + 1, -PREC + 8)  # the working precision's own width
        rad = mpmath.mpf(float(b.rad()))
        assert rad <= 2 * width + floor, (w, V, radius, rad, width)
        assert rad >= width * (1 - mpmath.mpf(10) ** -3) - floor  # (every point enclosed)


COMPLEX = [(w, im) for w in ("-5", "-2.5", "0", "0.4", "3.1", "20") for im in (1e-8, 1e-3, 0.05)
           if (w, im) != ("-5", 0.05)]  # (there the box of the test below does not contract)


@pytest.mark.parametrize("w,im", COMPLEX)
def test_complex_enclosure_contains_the_analytic_root(prec, w, im):
    """A complex ball around a real point (as ``acb.integral`` evaluates the integrands): the
    enclosure holds the complex root (the analytic continuation of the real one, found from it
    by Newton's method in mpmath) at the ball's corners, its centre and the real points."""
    V = "1.5"
    z = acb(arb(w, im / 4), arb(0, im))
    w = _mid(z.real)
    b = PROX._imp_(z, acb(arb(V)))
    assert b.is_finite(), (w, im, b)
    for dx in (-im / 4, 0, im / 4):
        for dy in (-im, 0, im):
            with mpmath.workdps(60):
                point = mpmath.mpc(w + mpmath.mpf(dx), dy)
                root = _prox_mp(point, mpmath.mpf(V))
            assert _inside(root, b), (w, im, point, root, b)
    dw, _ = _dprox(w, mpmath.mpf(V))
    assert float(max(b.real.rad(), b.imag.rad())) <= 3 * float(dw) * im + 1e-40


TALL = [(w, im) for w in ("-2", "-1", "0", "1", "2", "4") for im in ("0.125", "0.25")]


@pytest.mark.parametrize("w,im", TALL)
def test_tall_complex_boxes_are_enclosed_near_the_roots_range(w, im):
    """The boxes of the Bernstein ellipses at the logistic point (V = 3.9765, omega = w +/- 0.1
    + i[-im, im], at 144 bits: the certificate's working precision): the enclosure holds the
    analytic continuation of the real root (mpmath at 60 digits, Newton's method from the real
    root) at a 7 x 7 grid of the box, and its radius is within 1.5 times the range of those
    roots in each direction (``_Numeric.COMPLEX_START``: a first box of twice the Newton
    image's radius gave 1.5-2.6 times, and the integrand built on it was not finite on taller
    ellipses)."""
    old = flint.ctx.prec
    flint.ctx.prec = 144
    try:
        b = PROX._imp_(acb(arb(w, "0.1"), arb(0, im)), acb(arb("3.9765")))
    finally:
        flint.ctx.prec = old
    assert b.is_finite(), (w, im, b)
    V = mpmath.mpf("3.9765")
    with mpmath.workdps(60):
        W, I = mpmath.mpf(w), mpmath.mpf(im)
        centre = _prox_mp(W, V)
        roots = [_prox_mp(mpmath.mpc(W + mpmath.mpf("0.1") * i / 3, I * j / 3), V)
                 for i in range(-3, 4) for j in range(-3, 4)]
        spread_re = max(abs(mpmath.re(r) - centre) for r in roots)
        spread_im = max(abs(mpmath.im(r)) for r in roots)
    for r in roots:
        assert _inside(r, b), (w, im, r, b)
    assert float(b.real.rad()) <= 1.5 * float(spread_re), (w, im, b, spread_re)
    assert float(b.imag.rad()) <= 1.5 * float(spread_im), (w, im, b, spread_im)


@pytest.mark.parametrize("w", ["-6", "-4", "1", "2"])
def test_a_complex_box_refused_at_the_first_try_is_tried_at_start(w):
    """omega = w +/- 0.1 + i[-0.3, 0.3], V = 3.9765, 144 bits: the first box
    (``COMPLEX_START`` = 1.25 times the Newton image's radius) does not contract there, the
    box of ``START`` (twice) does; the enclosure is finite and holds the continued root at a
    7 x 7 grid of the box (mpmath, 60 digits)."""
    old = flint.ctx.prec
    flint.ctx.prec = 144
    try:
        b = PROX._imp_(acb(arb(w, "0.1"), arb(0, "0.3")), acb(arb("3.9765")))
    finally:
        flint.ctx.prec = old
    assert b.is_finite(), (w, b)
    V = mpmath.mpf("3.9765")
    with mpmath.workdps(60):
        W = mpmath.mpf(w)
        for i in range(-3, 4):
            for j in range(-3, 4):
                point = mpmath.mpc(W + mpmath.mpf("0.1") * i / 3, mpmath.mpf("0.3") * j / 3)
                root = _prox_mp(point, V)
                assert _inside(root, b), (w, point, root, b)


def test_a_ball_too_wide_to_contract_is_refused(prec):
    """Real balls: NotEnclosable naming the function; complex balls (inside acb.integral):
    a non-finite ball, so that the integrator subdivides."""
    for w, r in (("0.3", 40), ("0.3", 6), ("-5", 4)):
        with pytest.raises(NotEnclosable, match="prox_logistic"):
            PROX._imp_(arb(w, r), arb("1.5"))
    wide = PROX._imp_(acb(arb("-5", 1), arb(0, 2)), acb(arb("1.5")))
    assert not wide.is_finite()


def test_the_derivatives_of_the_root_in_ball_code(prec):
    """``d prox/d omega`` and ``d prox/d V`` (``fdiff``: -F_a/F_p at the root) evaluated by the
    generated ball code contain the derivatives of the root computed here by mpmath
    (numerical differentiation of the 50-digit root) and the hand-written formula."""
    w, V = sympy.symbols("w V", real=True)
    exprs = [sympy.diff(PROX(w, V), w), sympy.diff(PROX(w, V), V),
             sympy.diff(PROX(w, V), w, 2)]
    ev = Evaluator(exprs, [w, V])
    f = ev.functions("arb")[0]
    for wv, Vv in (("-2.5", "1"), ("0.77", "3.97"), ("4", "0.5")):
        got = f(arb(wv), arb(Vv))
        with mpmath.workdps(50):
            W, VV = _mid(arb(wv)), _mid(arb(Vv))
            d_w = mpmath.diff(lambda t: _prox_mp(t, VV), W)
            d_V = mpmath.diff(lambda t: _prox_mp(W, t), VV)
            d_ww = mpmath.diff(lambda t: _prox_mp(t, VV), W, 2)
        dw, dV = _dprox(W, VV)
        assert mpmath.almosteq(d_w, dw, 1e-40) and mpmath.almosteq(d_V, dV, 1e-40)
        for value, ball in zip((d_w, d_V, d_ww), got):
            assert ball.rad() < 1e-40
            with mpmath.workdps(60):  # (the numerical derivative: good to about 1e-35)
                mid = mpmath.mpf(ball.mid().str(60, radius=False))
                assert abs(mid - value) < mpmath.mpf(10) ** -30, (wv, Vv, ball, value)


@pytest.mark.parametrize("w,V,radius", [("0.3", "1.5", 1e-4), ("-3", "1", 1e-3), ("2", "4", 1e-2),
                                        ("12", "0.5", 1e-3)])
def test_a_box_too_small_is_inflated(prec, monkeypatch, w, V, radius):
    """With a first box far too small (``START`` divided by 2^20) the enclosure comes from an
    inflated box, and still holds the root at 21 points across the argument ball: a Krawczyk
    operator K(P) not inside the box P proves nothing (the roots at the ends of the ball lie
    outside a K(P) of a box too small by about the square of the ball's width)."""
    monkeypatch.setattr(PROX._imp_, "START", 2.0 ** -20)
    b = PROX._imp_(arb(w, radius), arb(V))
    W = _mid(arb(w))
    for t in range(-10, 11):
        with mpmath.workdps(60):
            root = _prox_mp(W + mpmath.mpf(radius) * t / 10, mpmath.mpf(V))
        assert _inside(root, b), (w, V, radius, t, b, root)


def test_an_integral_of_the_root_in_complex_balls():
    """``acb.integral`` of prox(sqrt(q) z, V)^2 exp(-z^2/2) on [-6, 6] with the root enclosed
    on the complex balls it asks for (analytic there: the Krawczyk test): the enclosure holds
    the value of mpmath's quadrature of the root written here, at 40 digits, and is narrow."""
    old = flint.ctx.prec
    flint.ctx.prec = 120
    try:
        q, V = acb(arb("4.1458")), acb(arb("3.9765"))
        sq = q.sqrt()

        def f(s, analytic):
            z = -6 + 12 * s
            p = PROX._imp_(sq * z, V)
            return p * p * (-z * z / 2).exp() * 12

        value = acb.integral(f, 0, 1)
    finally:
        flint.ctx.prec = old
    with mpmath.workdps(40):
        Q, VV = mpmath.mpf("4.1458"), mpmath.mpf("3.9765")
        exact = mpmath.quad(lambda z: _prox_mp(mpmath.sqrt(Q) * z, VV) ** 2
                            * mpmath.exp(-z * z / 2), mpmath.linspace(-6, 6, 7))
    assert value.imag.contains(0) and _inside(exact, value.real), (value, exact)
    assert value.real.rad() < 1e-30


CUBE = implicit_root("cube_balls_test", p_**3 + p_ - w_, p_, (w_,),
                     bracket=(-1 - abs(w_), 1 + abs(w_)))


@pytest.mark.parametrize("x,radius", [("-3", 0.5), ("-1", 0.2), ("0", 0.2), ("2", 0.5),
                                      ("5", 1.0)])
def test_wide_balls_of_a_polynomial_equation(prec, x, radius):
    """p^3 + p = x on wide balls: the enclosure holds the root at 41 points across the ball,
    found here by mpmath, and its radius is at most about twice the roots' half-range (the
    Krawczyk operator's first-order width)."""
    b = CUBE._imp_(arb(x, radius))
    with mpmath.workdps(60):
        X, R = _mid(arb(x)), mpmath.mpf(radius)
        roots = [mpmath.findroot(lambda t, y=X + R * k / 20: t**3 + t - y, 0)
                 for k in range(-20, 21)]
    for root in roots:
        assert _inside(root, b), (x, radius, b, root)
    assert float(b.rad()) <= 2.1 * float(roots[-1] - roots[0]) / 2


@pytest.mark.parametrize("pieces", [1, 4])
def test_the_slope_enclosure_holds_the_slope_on_the_box(prec, pieces):
    """The enclosure of dF/dp on a box (the narrowest of the direct, mean-value and Taylor
    forms) holds dF/dp at points of the box, computed here by hand: 3p^2 + 1 for the cubic,
    1 + V s(p) s(-p) for the proximal map; real boxes (21 points) and complex ones (a 5 x 5
    grid)."""
    cases = [(CUBE, [arb("0.4", 0)], lambda p, a: 3 * p**2 + 1),
             (PROX, [arb("-2", 0), arb("1.5", 0)],
              lambda p, a: 1 + a[1] * _sigma(p) * _sigma(-p))]
    for fn, args, slope in cases:
        imp = fn._imp_
        for complex_ in (False, True):
            equation = imp._ball_equation(complex_)
            balls = [acb(a) for a in args] if complex_ else args
            for centre, r in (("0.3", 0.05), ("-1.2", 0.2), ("0.8", 0.4)):
                p0 = acb(arb(centre)) if complex_ else arb(centre)
                d, dd = equation(p0, *balls)[1:3]
                box = imp._box(p0, arb(r), complex_, complex_)
                enclosure = imp._slope(equation, box, p0, (d, dd), balls, complex_, pieces)
                a = [_mid(x) for x in args]
                with mpmath.workdps(60):
                    grid = [k / mpmath.mpf(10) for k in range(-10, 11)] if not complex_ else [
                        mpmath.mpc(j, k) / 2 for j in range(-2, 3) for k in range(-2, 3)]
                    for t in grid:
                        point = _mid(arb(centre)) + mpmath.mpf(r) * t
                        assert _inside(slope(point, a), enclosure), (fn, centre, r, t, enclosure)
