"""The caches that make a 30-digit point of a quadrature model cheap (issue 26) give the values
that a cold start gives: the Gauss--Legendre rules cached per (nodes, precision)
(:func:`replica.symbolic.quadrature.legendre_rule`), their exact balls cached by identity
(``replica.symbolic.codegen._arb_rule``) and the implicit roots remembered per (precision,
arguments) (``replica.symbolic.implicit._Numeric``). Checked against Legendre nodes and weights
computed here by Newton's method on mpmath's Legendre polynomials, and at two points of
examples/logistic_regression.py: the 30-digit values with every cache warm from a solve at
another precision equal those with every cache emptied first, to every printed digit."""

import os

import mpmath
import pytest

from replica.symbolic import codegen, quadrature
from replica.symbolic.implicit import REGISTRY

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LOGISTIC = os.path.join(REPO, "examples", "logistic_regression.py")


def legendre_reference(n: int, prec: int):
    r"""Nodes and weights of the ``n``-point Gauss--Legendre rule at ``prec`` bits, written
    here: Newton's method on :math:`P_n` (mpmath's ``legendre``) from
    :math:`\cos(\pi(k - 1/4)/(n + 1/2))`, :math:`P_n'(x) = n(xP_n - P_{n-1})/(x^2 - 1)`,
    :math:`w = 2/((1 - x^2)P_n'(x)^2)`; ascending."""
    with mpmath.workprec(prec + 40):
        xs, ws = [], []
        for k in range(1, n + 1):
            x = mpmath.cos(mpmath.pi * (k - mpmath.mpf(1) / 4) / (n + mpmath.mpf(1) / 2))
            for _ in range(100):
                p, q = mpmath.legendre(n, x), mpmath.legendre(n - 1, x)
                d = n * (x * p - q) / (x * x - 1)
                step = p / d
                x -= step
                if abs(step) < mpmath.ldexp(1, -prec - 30):
                    break
            p, q = mpmath.legendre(n, x), mpmath.legendre(n - 1, x)
            d = n * (x * p - q) / (x * x - 1)
            xs.append(x)
            ws.append(2 / ((1 - x * x) * d * d))
        order = sorted(range(n), key=lambda i: xs[i])
        return [xs[i] for i in order], [ws[i] for i in order]


@pytest.mark.parametrize("n", [8, 32])
def test_cached_rule_is_the_rule_of_the_precision_asked(n):
    """A rule first built at 53 bits and then asked for at 200 bits is the 200-bit rule (to its
    last bits, against the reference above), and the 53-bit one is still the 53-bit rule."""
    low = quadrature.legendre_rule(n, 53)
    high = quadrature.legendre_rule(n, 200)
    for prec, (xs, ws) in ((53, low), (200, high)):
        rx, rw = legendre_reference(n, prec)
        got = sorted(zip(xs, ws))
        for (x, w), x0, w0 in zip(got, rx, rw):
            assert abs(x - x0) <= mpmath.ldexp(1, -prec + 2)
            assert abs(w - w0) <= mpmath.ldexp(1, -prec + 2)
    assert quadrature.legendre_rule(n, 200) is high  # cached: the same object


def test_ball_rule_of_two_rules_of_the_same_length_are_their_own():
    """The exact balls of the 16-point rule at 100 and at 200 bits (tuples of the same length)
    are each their own rule's values, exactly."""
    for prec in (100, 200, 100):
        xs, ws = quadrature.legendre_rule(16, prec)
        for vs in (xs, ws):
            balls = codegen._arb_rule(vs)
            assert len(balls) == len(vs)
            for b, v in zip(balls, vs):
                assert b.rad() == 0 and b == codegen.arb_of(v)


def _cold():
    """Every cache of the test's title emptied."""
    quadrature._rule.cache_clear()
    codegen._ARB_RULES.clear()
    for cls in REGISTRY.values():
        numeric = cls._imp_
        numeric._memo.clear()
        numeric._mid_memo.clear()


@pytest.fixture(scope="module")
def logistic():
    import replica

    return replica.load_model(LOGISTIC)


@pytest.mark.parametrize("point", [dict(alpha=2, lam="1/10", eta=1),
                                   dict(alpha="1/2", lam="1/2", eta="1/2")])
def test_logistic_30_digits_with_warm_caches_equal_a_cold_start(logistic, point):
    """The 30-digit values, ``digits`` and status at a point with the caches warm (a 12-digit
    solve at a nearby point just before, which builds rules of the same lengths at other
    precisions and fills the root memo) equal those after emptying every cache."""
    import replica

    near = dict(point, alpha=mpmath.mpf(mpmath.mpmathify(point["alpha"])) * 11 / 10)
    replica.solve(logistic, dps=12, **{k: str(v) for k, v in near.items()})
    warm = replica.solve(logistic, dps=30, **point)
    _cold()
    cold = replica.solve(logistic, dps=30, **point)
    assert str(warm.status.value) == str(cold.status.value) == "converged"
    assert (warm.digits, warm.digits_how) == (cold.digits, cold.digits_how)
    assert warm.digits >= 30
    got, want = warm.to_dict(kind="str"), cold.to_dict(kind="str")
    assert got == want
    assert len(got) >= 10 and all(len(v.lstrip("-0.")) >= 30 for v in got.values() if v)
