"""The root enclosures of an implicit function remembered by the exact contents of their argument
balls (issue 29, the logistic certificate's cost): a remembered enclosure is handed back only for
the same balls at the same precision of the same function, and each one still holds the root
computed independently (mpmath's ``findroot`` at 60 digits, written in
``tests/test_implicit_balls.py``). Also the Krawczyk box centred at the last Newton iterate (no
final re-evaluation): its enclosures hold the root and are as narrow as the precision."""

from __future__ import annotations

import mpmath
import pytest
import sympy

flint = pytest.importorskip("flint")

from replica.symbolic.implicit import forget_ball_enclosures, implicit_root  # noqa: E402

from test_implicit_balls import PROX, _inside, _mid, _prox_mp  # noqa: E402

arb, acb = flint.arb, flint.acb
p_, w_, V_ = sympy.symbols("p omega V_", real=True)

# a second function of the same name and arguments but another equation (the proximal map of
# the loss log cosh: p - omega + V tanh(p) = 0, on [omega - V, omega + V])
OTHER = implicit_root("prox_logistic", p_ - w_ + V_ * sympy.tanh(p_), p_, (w_, V_),
                      bracket=(w_ - V_, w_ + V_))


def _prox_tanh(w, V):
    """The root of p - w + V tanh(p) = 0 by mpmath at 60 digits (bisection bracket, then
    ``findroot``'s Anderson method)."""
    with mpmath.workdps(60):
        return +mpmath.findroot(lambda p: p - w + V * mpmath.tanh(p), (w - V, w + V),
                                solver="anderson")


@pytest.fixture
def prec():
    old = flint.ctx.prec
    flint.ctx.prec = 180
    forget_ball_enclosures()
    yield 180
    flint.ctx.prec = old
    forget_ball_enclosures()


@pytest.mark.parametrize("complex_", [False, True])
def test_a_wider_ball_with_the_same_midpoint_gets_its_own_enclosure(prec, complex_):
    """A narrow ball first, then a ball 10^6 times wider about the same midpoint: the second
    enclosure holds the roots at the wider ball's ends (planted: the memo keyed on the balls'
    midpoints only -> the narrow enclosure is handed back and misses them)."""
    V = arb("1.5")
    for w in ("-3.25", "0.5", "4"):
        for narrow, wide in ((1e-30, 1e-6), (0.0, 1e-3)):
            args_n = (arb(w, narrow), V)
            args_w = (arb(w, wide), V)
            if complex_:
                args_n = tuple(acb(a) for a in args_n)
                args_w = tuple(acb(a) for a in args_w)
            b_n = PROX._imp_(*args_n)
            b_w = PROX._imp_(*args_w)
            for dw in (-wide, 0, wide):
                with mpmath.workdps(60):
                    root = _prox_mp(mpmath.mpf(w) + dw, mpmath.mpf("1.5"))
                assert _inside(root, b_w), (w, wide, dw, b_w)
            assert _inside(_prox_mp(mpmath.mpf(w), mpmath.mpf("1.5")), b_n)
            assert float(b_w.rad() if not complex_ else b_w.real.rad()) >= wide / 4


def test_the_same_balls_at_a_higher_precision_are_enclosed_again(prec):
    """The same (exact) balls at 56 bits and then at 180: the second enclosure is as narrow as
    180 bits allow (planted: the precision left out of the key -> the 56-bit enclosure, about
    1e-16 wide, is handed back)."""
    args = (arb("0.8125"), arb("3.5"))
    flint.ctx.prec = 56
    low = PROX._imp_(*args)
    flint.ctx.prec = 180
    high = PROX._imp_(*args)
    root = _prox_mp(mpmath.mpf("0.8125"), mpmath.mpf("3.5"))
    assert _inside(root, low) and _inside(root, high)
    assert float(low.rad()) > 1e-20
    assert float(high.rad()) < 1e-50, high


@pytest.mark.parametrize("complex_", [False, True])
def test_two_functions_of_one_name_keep_their_own_enclosures(prec, complex_):
    """Two declarations named ``prox_logistic`` (the logistic proximal map and that of log
    cosh), evaluated at the same balls: each enclosure holds its own function's root (planted:
    the memo keyed on the function's name, or shared by every function -> the second gets the
    first one's root)."""
    for w in ("-2", "0.75", "6"):
        args = (arb(w, 1e-20), arb("2.25"))
        if complex_:
            args = tuple(acb(a) for a in args)
        a = PROX._imp_(*args)
        b = OTHER._imp_(*args)
        assert _inside(_prox_mp(mpmath.mpf(w), mpmath.mpf("2.25")), a), (w, a)
        assert _inside(_prox_tanh(mpmath.mpf(w), mpmath.mpf("2.25")), b), (w, b)


def test_a_remembered_enclosure_is_the_one_a_new_test_computes(prec):
    """A hit returns exactly what the Krawczyk test computes afresh (same midpoint, same
    radius), and ``forget_ball_enclosures`` empties the memo."""
    args = (arb("-1.375", 1e-25), arb("0.625"))
    first = PROX._imp_(*args)
    assert PROX._imp_._ball_memo, "nothing remembered"
    again = PROX._imp_(*args)
    assert again is first
    forget_ball_enclosures()
    assert not PROX._imp_._ball_memo
    fresh = PROX._imp_(*args)
    assert fresh.mid() == first.mid() and fresh.rad() == first.rad()


@pytest.mark.parametrize("radius", [0.0, 1e-45, 1e-20])
def test_the_box_at_the_last_newton_iterate_is_tight(prec, radius):
    """The Krawczyk box is centred at the last Newton iterate (its F, F', F'' over the balls
    reused, no further evaluation): the enclosure holds the root and its radius is within a
    small factor of the root's propagated width plus 2^-170 (planted: the enclosure returned
    narrower than K(P) -> a root outside; the Newton image alone without the box term -> the
    same; the loop stopped one step early -> a radius far above the precision)."""
    V = arb("3.97654578910386148280472415737438")
    for w in ("-25", "-4.1", "-0.6", "0", "1.3", "9.5", "30"):
        wb = arb(w, radius)
        b = PROX._imp_(wb, V)
        root = _prox_mp(_mid(wb), _mid(V))
        assert _inside(root, b), (w, radius, b)
        # |dp/domega| <= 1: the propagated width is at most the argument's radius
        floor = mpmath.ldexp(abs(root) + 1, -170)
        assert mpmath.mpf(float(b.rad())) <= 3 * radius + floor, (w, radius, b.rad())


def test_a_remembered_newton_start_is_the_one_a_new_call_computes(prec, monkeypatch):
    """The float64 start of the Krawczyk test's Newton iteration is remembered under the balls'
    midpoints rounded to float64 (a certificate asks for it at the same node in the equations
    at the centre, the Jacobian over the box at 56 bits and the reported values over the box):
    balls that round to the same floats -- another radius, another precision -- reuse it, and
    every enclosure is the one computed with the memo emptied (the same midpoint and radius)
    and holds mpmath's root. Planted: the memo keyed on the first argument only -> the second
    V gets the first V's start (the start test and the identity fail); the start memo not
    emptied by ``forget_ball_enclosures`` -> the emptiness test fails."""
    numeric = PROX._imp_
    calls = []
    float_root = type(numeric)._float_root

    def counted(self, fa):
        calls.append(tuple(fa))
        return float_root(self, fa)

    monkeypatch.setattr(type(numeric), "_float_root", counted)
    cases = [("-7.25", "2.5"), ("-7.25", "0.375"), ("0.6875", "2.5"), ("12.5", "6.75")]
    balls = [(56, 1e-9), (180, 0.0), (180, 1e-24)]  # the Jacobian, the centre, the report
    got = {}
    for w, V in cases:
        for bits, radius in balls:
            flint.ctx.prec = bits
            args = (arb(w, radius), arb(V))
            fa = [float(a.mid()) for a in args]
            start = numeric._ball_start(args, False)
            assert start == arb(float_root(numeric, fa)[0]), (w, V, bits)
            got[w, V, bits, radius] = numeric.ball(*args)
    # one float64 root per distinct pair of floats, however many balls share it
    assert len(calls) == len(set(calls)) == len(cases), calls
    assert numeric._start_memo
    forget_ball_enclosures()
    assert not numeric._start_memo and not numeric._ball_memo
    for (w, V, bits, radius), b in got.items():
        flint.ctx.prec = bits
        forget_ball_enclosures()
        fresh = numeric.ball(arb(w, radius), arb(V))
        assert fresh.mid() == b.mid() and fresh.rad() == b.rad(), (w, V, bits, radius)
        for dw in ((-radius, radius) if radius else (0,)):
            root = _prox_mp(mpmath.mpf(w) + dw, mpmath.mpf(V))
            assert _inside(root, b), (w, V, bits, radius, dw, b)
