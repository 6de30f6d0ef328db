"""The float64 start of the quadrature's implicit roots remembered under the arguments rounded to
float64 (:meth:`replica.symbolic.implicit._Numeric._ball_polish`, issue 26: Newton's iterates
and the verifying re-solve evaluate the equations at points that differ beyond float64's
precision, so most quadrature nodes repeat a float64 root already computed). A remembered start
must be the one a new call computes, so that every root -- and every printed digit of a solve --
is unchanged: checked bit for bit against roots computed with every memo emptied, and against
the root by plain bisection (``tests/logistic_prox.py``, written independently of the engine)."""

from __future__ import annotations

import mpmath
import pytest

flint = pytest.importorskip("flint")

from replica.symbolic.implicit import forget_ball_enclosures  # noqa: E402

from logistic_prox import declared_prox, prox_bisection  # noqa: E402

PROX, _ = declared_prox()
arb = flint.arb

# (omega, V) as exact binary numbers; each pair also shifted by 2^-70 of omega (another point
# whose float64 values are the same): the nodes of two Newton iterates 1e-21 apart
CASES = [("-7.25", "2.5"), ("-7.25", "0.375"), ("0.6875", "2.5"), ("12.5", "6.75"),
         ("-0.1875", "40")]


def _args(bits):
    out = []
    with mpmath.workprec(bits):  # (the shifted point exact at the working precision)
        for w, V in CASES:
            w = mpmath.mpf(w)
            for shifted in (w, w + mpmath.ldexp(w, -70)):
                out.append((shifted, mpmath.mpf(V)))
    assert len({a for a in out}) == len(out)  # ten distinct points
    return out


def _ball(x):
    return arb((int(x.man) * (-1 if x < 0 else 1), int(x.exp))) if x else arb(0)


def _midpoints(numeric, bits, args):
    """``numeric.midpoint`` at each pair of ``args`` at ``bits`` (flint's and mpmath's
    precision), the exact balls it returns."""
    old = flint.ctx.prec
    flint.ctx.prec = bits
    try:
        balls = [(_ball(w), _ball(V)) for w, V in args]
        assert all(b.rad() == 0 for pair in balls for b in pair)  # the points exactly
        with mpmath.workprec(bits):
            return [numeric.midpoint(*pair) for pair in balls]
    finally:
        flint.ctx.prec = old


def _cold(numeric):
    forget_ball_enclosures()
    numeric._mid_memo.clear()
    numeric._memo.clear()


@pytest.mark.parametrize("bits", [140, 196])
def test_a_remembered_float64_start_gives_the_roots_of_a_cold_start(bits, monkeypatch):
    """Roots at ten points (five pairs of points 2^-70 apart, which round to the same floats):
    ``_float_root`` runs once per distinct pair of floats, each remembered start is what a new
    call computes, and every root equals bit for bit the one computed with all memos emptied
    before it, and the bisection root to the working precision. Planted: the memo keyed on
    omega alone -> (-7.25, 0.375) gets (-7.25, 2.5)'s start: one call fewer and a remembered
    start that a new call does not give (its root falls back to the bracketed iteration);
    the memo never consulted -> ten calls, not five."""
    numeric = PROX._imp_
    args = _args(bits)
    cold = []
    for a in args:
        _cold(numeric)
        cold.append(_midpoints(numeric, bits, [a])[0])
    float_root = type(numeric)._float_root
    calls = []

    def counted(self, fa):
        calls.append(tuple(fa))
        return float_root(self, fa)

    monkeypatch.setattr(type(numeric), "_float_root", counted)
    _cold(numeric)
    try:
        warm = _midpoints(numeric, bits, args)
        floats = {(float(w), float(V)) for w, V in args}
        assert len(floats) == len(CASES)
        assert sorted(calls) == sorted(floats), calls
        assert set(numeric._float_memo) == floats
        for key, start in numeric._float_memo.items():
            assert start is not None and start == float_root(numeric, list(key)), key
    finally:
        _cold(numeric)
    for (w, V), a, b in zip(args, warm, cold):
        assert a.rad() == 0 and b.rad() == 0
        assert a.mid() == b.mid(), (w, V, bits)
        ref = prox_bisection(w, V, bits)
        with mpmath.workprec(bits + 40):
            got = mpmath.mpf(a.mid().str(bits // 3 + 12, radius=False))
            assert abs(got - ref) <= mpmath.ldexp(1, -bits + 6) * max(1, abs(ref)), (w, V)


def test_forget_ball_enclosures_empties_the_float64_starts():
    """The memo is emptied with the enclosures' (a certificate starts and ends with it) and
    refilled by the next root (planted: not emptied -> the first assertion after it fails)."""
    numeric = PROX._imp_
    _cold(numeric)
    _midpoints(numeric, 140, _args(140)[:2])
    assert numeric._float_memo
    forget_ball_enclosures()
    assert not numeric._float_memo
    numeric._mid_memo.clear()
    _midpoints(numeric, 140, _args(140)[:2])
    assert len(numeric._float_memo) == 1
    _cold(numeric)
