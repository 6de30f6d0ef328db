"""The digamma difference D_n(z) = psi^(n)(1 + z) - psi^(n)(1/2 + z)
(:mod:`replica.symbolic.digamma_difference`, ``replica.symbolic.gaussian.digamma_difference``):
its ball enclosures (asymptotic series, Taylor series about fixed centres, Arb's functions),
its mpmath and float64 values, and the SymPy function, against mpmath's polygamma at 60 digits
and more (the working precision raised by the digits the difference cancels) -- an independent
computation -- from z = 0 to 1e250, at the midpoints and at both ends of balls with a radius."""

import math

import mpmath
import numpy as np
import pytest
import sympy
from flint import arb, ctx

from replica.symbolic import codegen
from replica.symbolic import digamma_difference as dd
from replica.symbolic.balls import arb_of
from replica.symbolic.gaussian import digamma_difference


def _ref(n, x, dps=60):
    """mpmath's difference at ``dps`` digits plus those it cancels (log10 of 2 y log y)."""
    with mpmath.workdps(dps + 10):
        x = mpmath.mpf(x)
    with mpmath.workdps(dps + 10 + 2 * int(mpmath.log10(abs(x) + 2))):
        out = mpmath.polygamma(n, 1 + x) - mpmath.polygamma(n, x + mpmath.mpf(1) / 2)
    return out


def _exact(b):
    """The exact value of an exact ball (a midpoint, a radius)."""
    man, exp = b.man_exp()
    with mpmath.workprec(4000):
        return mpmath.ldexp(mpmath.mpf(int(man)), int(exp))


def _ends(ball):
    """The exact ends of a ball: midpoint -+ radius."""
    m, r = _exact(ball.mid()), _exact(ball.rad())
    with mpmath.workprec(8000):
        return m - r, m + r


def _contains(ball, ref):
    """Whether the ball holds the 60-digit (and more) reference: its ends' exact values."""
    lo, hi = _ends(ball)
    return lo <= ref <= hi


@pytest.fixture
def prec():
    old = ctx.prec
    yield
    ctx.prec = old
    dd._MEMO.clear()


ZS = ("0", "1e-12", "0.03", "0.29", "0.5", "0.8", "1.3", "1.77", "3.7", "10", "19.2", "23.5", "27",
      "40", "3.3e4", "2.5e62", "1e250")


@pytest.mark.parametrize("bits", [96, 140, 196])
def test_enclosure_contains_the_true_value_and_is_tight(prec, bits):
    """For n = 0..2 (what the integrands use) at 96, 140 and 196 bits, z from 0 to 1e250 (both
    series and the centres' boundaries between): the ball of an exact z holds the reference and
    is at most 2^(5-p) of it wide (the widest here: 2^(3.7-p)); a ball of radius 1e-30
    relative holds the reference at both of its ends (the enclosure is of every point) and is
    at most a few times the first-order width |D_(n+1)| rad wide. Both the asymptotic and the
    Taylor forms are exercised (counted)."""
    ctx.prec = bits
    used = {"asymptotic": 0, "taylor": 0}
    for zs in ZS:
        x = mpmath.mpf(zs)
        z0 = arb_of(x)
        for n in range(3):
            dd._MEMO.clear()
            ref = _ref(n, x)
            got = dd.digamma_difference_ball(n, z0)
            assert _contains(got, ref), (bits, zs, n, got)
            assert _exact(got.rad()) <= mpmath.mpf(2) ** (5 - bits) * abs(ref), \
                (bits, zs, n, got)
            used["asymptotic" if dd.asymptotic_ball(n, z0) is not None else "taylor"] += 1
            for rel in ("1e-30",):
                if x == 0:
                    continue
                r = x * mpmath.mpf(rel)
                ball = z0 + arb(0, arb_of(r))
                dd._MEMO.clear()
                got = dd.digamma_difference_ball(n, ball)
                for end in _ends(ball):
                    assert _contains(got, _ref(n, end)), (bits, zs, n, rel, got)
                first = abs(_ref(n + 1, x)) * r
                assert _exact(got.rad()) <= 4 * first + mpmath.mpf(2) ** (12 - bits) * abs(ref), \
                    (bits, zs, n, rel, got, first)
    assert min(used.values()) >= 6, used


def test_a_bound_too_small_shows(prec):
    """Planted: with few terms, where the remainder is what the radius must cover, the balls
    hold the reference with the stated bound and do not without it (tail_scale = 0): the
    asymptotic series with 6 terms at z = 39.5, and the Taylor series with 8 terms at the far
    end of four centres' discs (orders 0-2, 96 to 196 bits) -- the bounds are neither missing
    nor too small where the truncation is the error."""
    ctx.prec = 196
    z = arb_of(mpmath.mpf("39.5"))
    for n in (0, 1, 2):
        ref = _ref(n, mpmath.mpf("39.5"))
        assert _contains(dd.asymptotic_ball(n, z, terms=6), ref)
        assert not _contains(dd.asymptotic_ball(n, z, terms=6, tail_scale=0), ref), n
    for bits in (96, 196):
        ctx.prec = bits
        for j in (0, 9, 20, 33):
            for n in (0, 1, 2):
                c, r, poly, tail = dd._taylor_table(j, bits, n)
                x = _exact(c.mid()) + mpmath.mpf(r) * mpmath.mpf("0.999")
                ref = _ref(n, x)
                z = arb_of(x)
                assert _contains(dd.taylor_ball(n, z, terms=8), ref), (bits, j, n)
                assert not _contains(dd.taylor_ball(n, z, terms=8, tail_scale=0), ref), \
                    (bits, j, n)
                assert _contains(dd.taylor_ball(n, z), ref), (bits, j, n)


def test_taylor_coefficients_obey_the_stated_bound(prec):
    """The Taylor coefficients d_k = (-1)^(k+1) [zeta(k+1, 1+c) - zeta(k+1, 1/2+c)] (mpmath's
    Hurwitz zeta at 90 digits) obey |d_k| <= a^(-k-1) (1 + a/k), the bound the remainder rests
    on, and the stored balls (Arb's series) hold them, for eight centres and every k < L."""
    ctx.prec = 300
    for j in (0, 3, 8, 17, 25, 33, 40, 46):
        a_f = dd._centre(j)
        d = dd._taylor_series(j, 196)
        with mpmath.workdps(90):
            a, c = mpmath.mpf(a_f), mpmath.mpf(a_f) - mpmath.mpf(1) / 2
            for k in range(1, len(d), 7):
                ref = (-1) ** (k + 1) * (mpmath.zeta(k + 1, 1 + c) - mpmath.zeta(k + 1, a))
                assert abs(ref) <= a ** (-k - 1) * (1 + a / k), (j, k)
                assert _contains(d[k], ref), (j, k, d[k])


def test_asymptotic_coefficients_are_the_series_of_the_difference():
    """The exact coefficients (1 - 4^-k) B_2k / k of the series in 1/y^2, y = z + 1/2, against
    SymPy's expansion of psi(y + 1/2) - psi(y) at infinity (from its own Bernoulli series), and
    the derivative's coefficients e_k (2k)_n against the termwise derivative."""
    y, w = sympy.symbols("y w", positive=True)
    # psi(x) ~ log x - 1/(2x) - sum B_2k/(2k x^2k); at x = 2y and y by the duplication formula
    K = 6

    def psi_series(x):
        return sympy.log(x) - 1 / (2 * x) - sum(sympy.bernoulli(2 * k) / (2 * k * x ** (2 * k))
                                                for k in range(1, K + 1))

    diff = sympy.expand(2 * psi_series(2 * y) - 2 * psi_series(y) - 2 * sympy.log(2))
    diff = sympy.expand(sympy.expand_log(diff, force=True))
    mine = 1 / (2 * y) + sum(sympy.Rational(*dd._asymptotic_coefficients(0)[0][k - 1])
                             / y ** (2 * k) for k in range(1, K + 1))
    assert sympy.expand(diff - mine) == 0
    for n in (1, 2, 3):
        deriv = sympy.diff(mine, y, n)
        coeffs = dd._asymptotic_coefficients(n)[0]
        theirs = (-1) ** n * y ** (-n) * (sympy.factorial(n) / (2 * y) + sum(
            sympy.Rational(*coeffs[k - 1]) / y ** (2 * k) for k in range(1, K + 1)))
        assert sympy.expand(deriv - theirs) == 0, n
    # and numerically: the series at y = 40 with 20 terms against mpmath at 60 digits
    with mpmath.workdps(60):
        yv = mpmath.mpf(40)
        s = 1 / (2 * yv) + sum(mpmath.mpf(p) / q / yv ** (2 * k) for k, (p, q) in
                               enumerate(dd._asymptotic_coefficients(0)[0][:20], start=1))
        assert abs(s - _ref(0, yv - mpmath.mpf(1) / 2)) < mpmath.mpf(10) ** -40


def test_mpmath_value_keeps_its_digits_where_the_difference_cancels():
    """digamma_difference_mp at 30 digits against the reference at 60 (and more), to 1e-29
    relative, from z = 1e-9 to 1e200 (where the two polygamma values agree to 200 digits), and
    the SymPy function's evalf likewise; its derivative is the next order."""
    for n in range(3):
        for zs in ("1e-9", "0.7", "12", "1e8", "2.5e62", "1e200"):
            ref = _ref(n, zs)
            with mpmath.workdps(30):
                got = dd.digamma_difference_mp(n, mpmath.mpf(zs))
                assert abs(got - ref) <= mpmath.mpf("1e-29") * abs(ref), (n, zs, got)
                via_codegen = codegen._mpmath_namespace()["digamma_difference"](n, mpmath.mpf(zs))
                assert via_codegen == got
            with mpmath.workdps(30):
                ev = mpmath.mpf(sympy.N(digamma_difference(n, sympy.Float(zs, 40)), 30))
                assert abs(ev - ref) <= mpmath.mpf("1e-28") * abs(ref), (n, zs, ev)
    z = sympy.Symbol("z", positive=True)
    assert sympy.diff(digamma_difference(1, z), z) == digamma_difference(2, z)
    # (LaTeX: the difference it stands for, as SymPy prints polygamma)
    assert sympy.latex(digamma_difference(0, z)) == r"\left(%s\right)" % sympy.latex(
        sympy.polygamma(0, 1 + z) - sympy.polygamma(0, z + sympy.Rational(1, 2)))


def test_float64_value_and_longdouble():
    """The float64 difference is SciPy's two values' difference (what the generated code
    computed before: float64 curves unchanged), to 2e-14 relative where y log y is small
    (z <= 12) and within its stated 2 y log y units in the last place up to z = 1e8; the
    longdouble form (float64 plus the first-order correction) likewise."""
    from scipy import special

    f = codegen._numpy_namespace()["digamma_difference"]
    zs = ["0", "0.1", "0.77", "3.2", "11.49", "30", "1e3", "1e8"]
    x = np.array([float(z) for z in zs])
    assert np.array_equal(f(0, x), special.psi(x + 1) - special.psi(x + 0.5))
    assert np.array_equal(f(2, x), special.polygamma(2, x + 1) - special.polygamma(2, x + 0.5))
    for n in range(4):
        got = f(n, x)
        gld = f(n, x.astype(np.longdouble))
        for k, zv in enumerate(zs):
            ref = float(_ref(n, mpmath.mpf(float(zv))))
            y = float(zv) + 0.5
            tol = max(2e-14, 8 * 2.2e-16 * 2 * y * max(1.0, math.log(y)))
            assert abs(got[k] - ref) <= tol * abs(ref), (n, zv, got[k], ref)
            assert abs(float(gld[k]) - ref) <= tol * abs(ref), (n, zv, gld[k], ref)


def test_the_generated_code_calls_one_function(prec):
    """The ball namespace's digamma_difference is the module's (the memo returns the same
    ball again); a ball wider than every disc and not far out (where Arb's digamma gives NaN)
    is enclosed by the hull of the values at its ends (D_n is monotone), which holds the
    reference at its ends and middle and is at most half the values' range wide (up to the
    rounding of a radius to 30 bits);
    a ball reaching z <= -1/2 goes to Arb's functions."""
    ns = codegen._arb_namespace()
    ctx.prec = 140
    z = arb_of(mpmath.mpf("0.8"))
    a = ns["digamma_difference"](1, z)
    assert ns["digamma_difference"](1, z) is a
    wide = arb("2", "0.3")  # [1.7, 2.3]: no disc holds it, too near 0 for the series
    assert dd.taylor_ball(0, wide) is None and dd.asymptotic_ball(0, wide) is None
    assert not dd.arb_ball(0, wide).is_finite()
    for n in range(3):
        got = ns["digamma_difference"](n, wide)
        lo, hi = _ends(wide)
        refs = [_ref(n, t) for t in (lo, (lo + hi) / 2, hi)]
        for r in refs:
            assert _contains(got, r), (n, got)
        # (a radius is a 30-bit upper bound, after the union rounded its ends: a few 2^-30)
        assert _exact(got.rad()) <= abs(refs[0] - refs[2]) / 2 * (1 + mpmath.mpf(2) ** -25)
    assert dd.hull_ball(0, arb("-0.4", "0.2")) is None
