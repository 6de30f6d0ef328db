"""The ball polygamma of the generated ball-arithmetic code (:func:`replica.symbolic.codegen.
_ball_polygamma`): its asymptotic series for large arguments (with the remainder bound of
Alzer 1997) and its memo, against mpmath's polygamma at 60 digits -- an independent
computation -- at points up to 1e250 and at both ends of balls with a radius."""

import mpmath
import pytest
from flint import arb, ctx

from replica.symbolic import codegen


def _enclosed(ball, ref):
    mid = mpmath.mpf(ball.mid().str(80, radius=False))
    rad = mpmath.mpf(ball.rad().str(80, radius=False))
    return abs(mid - ref) <= rad


@pytest.fixture
def prec():
    old = ctx.prec
    yield
    ctx.prec = old


ARGS = ("0.55", "1.25", "7.5", "31", "100", "123.456", "2917.3", "1e4", "3.3e7", "1e20",
        "2.5e62", "1e250")


def test_ball_polygamma_contains_the_true_value(prec):
    """For n = 1..3 (the series) and n = 0 (Arb's digamma) at 96 and 196 bits, exact
    balls and balls of radius 1e-41 relative: every ball contains mpmath's 60-digit value at
    the midpoint and at both ends of the ball; an exact argument's ball is within 2^-(p - 8)
    relative (no bound that is merely safe and wide). (0.26 s CPU.)"""
    codegen._POLYGAMMA_MEMO.clear()  # (computed here, not remembered from another test)
    with mpmath.workdps(60):
        for p in (96, 196):
            ctx.prec = p
            for n in range(4):
                for xs in ARGS:
                    x0 = mpmath.mpf(xs)
                    for rel in (0, 1e-41):
                        r = mpmath.mpf(rel) * x0
                        x = arb(xs, float(r)) if rel else arb(xs)
                        got = codegen._ball_polygamma(n, x)
                        for t in ((x0,) if not rel else (x0 - r, x0, x0 + r)):
                            assert _enclosed(got, mpmath.polygamma(n, t)), (p, n, xs, rel, got)
                        if not rel:
                            width = mpmath.mpf(got.rad().str(30, radius=False))
                            assert width <= 2 ** (8 - p) * abs(mpmath.polygamma(n, x0)), \
                                (p, n, xs, got)


def test_ball_polygamma_series_is_used_and_its_bound_is_tight(prec):
    """The series is what is used for large arguments (not Arb's Hurwitz zeta), none for an
    argument too near 0 at the precision; and with few terms forced (the remainder dominating
    the radius) the ball holds the value with the bound, and misses it for most points with
    half the bound: the remainder is neither dropped nor grossly overestimated."""
    ctx.prec = 196
    assert codegen._ball_polygamma_asymptotic(1, arb("1e4")) is not None
    assert codegen._ball_polygamma_asymptotic(1, arb("2")) is None
    assert codegen._ball_polygamma_asymptotic(1, arb(0, 1)) is None  # (contains 0)
    missed, total = 0, 0
    with mpmath.workdps(60):
        for n in (1, 2, 3):
            for xs in ("3", "7.25", "40", "1000"):
                ref = mpmath.polygamma(n, mpmath.mpf(xs))
                for terms in (1, 2, 4, 8):
                    f = codegen._ball_polygamma_asymptotic
                    assert _enclosed(f(n, arb(xs), terms), ref), (n, xs, terms)
                    missed += not _enclosed(f(n, arb(xs), terms, tail_scale=0.5), ref)
                    total += 1
    assert missed >= total * 3 // 4, (missed, total)


def test_ball_polygamma_memo_is_keyed_on_precision_and_ball(prec):
    """The memo returns a remembered ball only for the same order, precision, midpoint and
    radius."""
    codegen._POLYGAMMA_MEMO.clear()
    ctx.prec = 96
    a = codegen._ball_polygamma(1, arb("1e4"))
    ctx.prec = 196
    b = codegen._ball_polygamma(1, arb("1e4"))
    c = codegen._ball_polygamma(1, arb("1e4", 1e-30))
    d = codegen._ball_polygamma(2, arb("1e4"))
    assert a.rad() > b.rad() and c.rad() > b.rad() and d.mid() < 0 < b.mid()
    assert codegen._ball_polygamma(1, arb("1e4")) is b
