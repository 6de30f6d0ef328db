"""Owen's T and its complement U(h, a) = erfc(h/sqrt 2)/4 - T(h, a) in generated code
(replica.symbolic.owen, replica.symbolic.gaussian.owens_u): the mpmath code at 30 digits and the
float64 code against the definitions written here (mpmath quadrature; U by the difference at
the digits it loses: U is as small as exp(-h^2 (1 + a^2)/2)), far into the tails; the
derivatives against numerical differentiation."""

import mpmath
import numpy as np
import pytest
import sympy

from replica.symbolic.codegen import Evaluator
from replica.symbolic.gaussian import owens_t, owens_u

h, a = sympy.symbols("h a", real=True)

POINTS = [(0.0, 1.3), (0.3, 1.05), (1.0, 1.4), (1.7, 1.9), (2.5, 1.4), (3.0, 0.3), (5.0, 1.05),
          (7.0, 1.9), (10.0, 1.4), (20.0, 1.05), (-0.8, 1.4), (0.5, 3.0)]


def _t_def(hv, av):
    """T(h, a) = (1/2 pi) int_0^a exp(-h^2 (1 + x^2)/2)/(1 + x^2) dx with x = u/|h| (the
    Gaussian's scale), mpmath's tanh-sinh on unit pieces of [0, a|h|] (working precision)."""
    hv, av = abs(mpmath.mpf(hv)), mpmath.mpf(av)
    if hv == 0:
        return mpmath.atan(av) / (2 * mpmath.pi)
    top = av * hv
    pts = mpmath.linspace(0, top, int(top) + 2)
    return mpmath.exp(-hv**2 / 2) / (2 * mpmath.pi * hv) * mpmath.quad(
        lambda u: mpmath.exp(-u**2 / 2) / (1 + (u / hv) ** 2), pts)


def _u_def(hv, av):
    """U(h, a) = erfc(h/sqrt 2)/4 - T(h, a), computed at 40 digits plus those the difference
    loses (U/T(h, inf) is about exp(-h^2 a^2/2))."""
    with mpmath.workdps(40 + int(hv * hv * av * av / 4.6)):
        return mpmath.erfc(mpmath.mpf(hv) / mpmath.sqrt(2)) / 4 - _t_def(hv, av)


def test_mpmath_and_float64_code_against_the_definition():
    """(0.4 s) mp to 1e-29 relative; float64 to 2e-13 relative (the tail form's fixed
    48-node rule: 7e-14 measured) and exactly the least subnormal where U underflows."""
    ev = Evaluator([owens_t(h, a), owens_u(h, a)], [h, a])
    for hv, av in POINTS:
        ref_u = _u_def(hv, av)
        with mpmath.workdps(50):
            ref_t = _t_def(abs(hv), av)
        with mpmath.workdps(30):
            got_t, got_u = ev.mp([mpmath.mpf(hv), mpmath.mpf(av)])
        assert abs(got_t / ref_t - 1) < mpmath.mpf(10) ** -29, (hv, av, got_t, ref_t)
        assert abs(got_u / ref_u - 1) < mpmath.mpf(10) ** -29, (hv, av, got_u, ref_u)
        f64 = float(ev.f64([np.float64(hv), np.float64(av)])[1])
        if ref_u < mpmath.mpf("1e-320"):  # (none here: U(20, 1.05) = 1e-185)
            assert f64 == np.nextafter(0, 1), (hv, av, f64)
        else:
            assert abs(f64 / float(ref_u) - 1) < 2e-13, (hv, av, f64, ref_u)


def test_derivatives_of_u_against_numerical_differentiation():
    """(0.5 s) SymPy's derivatives of owens_u (its fdiff) against mpmath.diff of the
    definition at 60 digits."""
    ev = Evaluator([sympy.diff(owens_u(h, a), h), sympy.diff(owens_u(h, a), a)], [h, a])
    for hv, av in [(0.3, 1.05), (2.5, 1.4), (-0.8, 1.4)]:
        with mpmath.workdps(60):
            dh = mpmath.diff(lambda x: mpmath.erfc(x / mpmath.sqrt(2)) / 4 - _t_def(x, av), hv)
            da = mpmath.diff(lambda x: -_t_def(hv, x), av)
        with mpmath.workdps(30):
            got = ev.mp([mpmath.mpf(hv), mpmath.mpf(av)])
        assert abs(got[0] - dh) < mpmath.mpf(10) ** -28 * abs(dh), (hv, av)
        assert abs(got[1] - da) < mpmath.mpf(10) ** -28 * abs(da), (hv, av)


# ---------------------------------------------------------------------------------------------
# ball arithmetic (replica.symbolic.owen.owens_t_ball, owens_u_ball): enclosures against the
# definitions above at 60 digits and more
# ---------------------------------------------------------------------------------------------
BALL_POINTS = [(0.0, 1.3), (0.3, 1.05), (2.5, 1.4), (-0.8, 1.4), (0.5, 3.0), (3.0, -0.3),
               (1e-3, 0.5), (15.0, 0.44), (30.0, 0.05), (9.0, 0.75)]
"""Quick references (0.3 s): the series form, h < 0, a < 0 (T only), h near 0; a < 1 with s
much larger than s a^2 (the coefficients' recursion: downward for |a| < 1/2, upward at extra
bits for 1/2 <= |a| < 1 -- upward at the working bits, the balls were 2^-27 wide at 60 bits)."""

BALL_POINTS_FAR = [(6.9, 1.4), (7.0, 1.4), (10.0, 1.4), (20.0, 1.05), (-10.0, 1.4), (1.0, 8.0),
                   (4.0, 5.0)]
"""Far out (their references 2.3 s): 6.9 and 7.0 on either side of the switch from the series
to the tail integral at a = 1.4 (s a^2 = 48); (4, 5): s a^2 = 200; (1, 8): the series losing 46
bits; U(-10, 1.4): erfc minus the tail form's T."""


def _t_ref(hv, av, dps):
    with mpmath.workdps(dps):
        return mpmath.sign(av) * _t_def(abs(hv), abs(av))


def _u_ref(hv, av, dps):
    with mpmath.workdps(dps + int(hv * hv * av * av / 4.6) + 10):
        return +(mpmath.erfc(mpmath.mpf(hv) / mpmath.sqrt(2)) / 4 - _t_def(hv, av))


def test_balls_contain_the_definition():
    """(0.4 s) At 170 bits (51 digits) the balls contain the 60-digit values of the definitions
    (tanh-sinh, above), and are tight: radius below 2^-160 of the value."""
    _check_balls(BALL_POINTS)


@pytest.mark.slow
def test_balls_contain_the_definition_far_out():
    """(2.5 s) As above at large h and a, both forms and the switch between them."""
    _check_balls(BALL_POINTS_FAR)


def _assert_tight_enclosure(ball, ref, where):
    """``ball`` overlaps the reference ``ref`` (an ``mpf`` to 60 digits) and its radius is
    below 2^-160 of its midpoint."""
    import flint

    with mpmath.workdps(80):
        refb = flint.arb(mpmath.nstr(ref, 70))
    assert ball.overlaps(refb), (*where, ball, ref)
    assert ball.rad() < abs(ball.mid()) * flint.arb(2) ** -160, (*where, ball)


def _check_balls(points):
    import flint

    from replica.symbolic.owen import _BALL_MEMO, owens_t_ball, owens_u_ball

    _BALL_MEMO.clear()
    old = flint.ctx.prec
    try:
        flint.ctx.prec = 170
        for hv, av in points:
            hb, ab = flint.arb(hv), flint.arb(av)  # (exact binary values, as mpf(hv))
            pairs = [(owens_t_ball(hb, ab), _t_ref(hv, av, 60))]
            if av > 0:
                pairs.append((owens_u_ball(hb, ab), _u_ref(hv, av, 60)))
            else:
                assert not owens_u_ball(hb, ab).is_finite()  # (a <= 0: no U)
            for ball, ref in pairs:
                assert ball.is_finite(), (hv, av)
                _assert_tight_enclosure(ball, ref, (hv, av))
    finally:
        flint.ctx.prec = old


def test_t_alone_sums_one_series_at_its_own_precision(monkeypatch):
    """(0.1 s) An integrand naming T(h, a) alone (the committee's Gibbs error: U never asked at
    that a) sums one series at T's precision, p + GUARD + ceil(S log2 e) + 8 bits, and no U
    (whose difference form would sum T at about twice the further bits); the ball contains the
    60-digit reference. Asked for U at that a once, T shares U's series again."""
    import math

    import flint

    from replica.symbolic import owen

    bits, us = [], []
    series, u_ball = owen._series_f, owen._u_ball
    monkeypatch.setattr(owen, "_series_f", lambda h, a, b, terms=None: (
        bits.append(b), series(h, a, b, terms))[1])
    monkeypatch.setattr(owen, "_u_ball", lambda h, a, parts=None: (
        us.append(1), u_ball(h, a, parts))[1])
    old = flint.ctx.prec
    try:
        flint.ctx.prec = 170
        owen._BALL_MEMO.clear()
        owen._U_WANTED.clear()
        hv, av = 3.0, 1.4
        t = owen.owens_t_ball(flint.arb(hv), flint.arb(av))
        S = hv * hv / 2 * av * av
        assert us == [] and bits == [170 + owen.GUARD + math.ceil(S * math.log2(math.e)) + 8]
        _assert_tight_enclosure(t, _t_ref(hv, av, 60), (hv, av))
        owen.owens_u_ball(flint.arb(2.5), flint.arb(av))  # U asked at a: T shares from now on
        bits.clear()
        us.clear()
        owen.owens_t_ball(flint.arb(3.25), flint.arb(av))
        S = 3.25 * 3.25 / 2 * av * av
        c = math.ceil(S * math.log2(math.e))  # (T at U's precision p + GUARD + 2c + 16)
        assert us == [1] and bits == [170 + owen.GUARD + 2 * c + 16 + owen.GUARD + c + 8]
    finally:
        flint.ctx.prec = old


def test_truncation_bounds_are_what_makes_the_enclosure():
    """(0.2 s) With the sums cut short on purpose the truncation bounds are most of the radius
    and still enclose: the series F(s, a) with 4 and 8 terms, the tail integral cut at V = 0.02
    and 0.05 (the omitted part 1-20 % of U). A bound halved would not enclose (the bounds are
    within a factor 1.3 of the omitted parts here: measured 1.0-1.2)."""
    import flint

    from replica.symbolic.owen import _series_f, _u_tail_ball

    old = flint.ctx.prec
    try:
        flint.ctx.prec = 200
        for hv, av, n in [(1.0, 0.3, 4), (1.0, 0.3, 8), (3.0, 0.25, 12)]:
            ball = _series_f(flint.arb(hv), flint.arb(av), 200, terms=n)
            with mpmath.workdps(70):
                s = mpmath.mpf(hv) ** 2 / 2
                ref = mpmath.quad(lambda x: mpmath.exp(-s * x * x) / (1 + x * x), [0, av])
                refb = flint.arb(mpmath.nstr(ref, 65))
            assert ball.overlaps(refb), (hv, av, n)
            # the bound is not much larger than the error it bounds
            assert ball.rad() < 1.3 * abs(ball.mid() - refb).upper(), (hv, av, n)
        for hv, av, cut in [(8.0, 1.4, 0.02), (8.0, 1.4, 0.05), (3.0, 2.0, 0.05)]:
            ball = _u_tail_ball(flint.arb(hv), flint.arb(av), 200, cut=flint.arb(cut))
            ref = _u_ref(hv, av, 60)
            refb = flint.arb(mpmath.nstr(ref, 65))
            assert ball.overlaps(refb), (hv, av, cut)
            assert ball.rad() < 1.3 * abs(ball.mid() - refb).upper(), (hv, av, cut)
    finally:
        flint.ctx.prec = old


@pytest.mark.parametrize("h", ["10", "1e5", "1e20", "3e29"])
def test_mpmath_values_far_out_have_every_digit(h):
    """T(h, 1) = Phi(h) Phi(-h)/2 (the orthant form at a = 1, written separately) for large h,
    where e^{-h^2/2} is below every float and its exponent has ~2 log2 h bits: the prefactor's
    exponent carries them (at h = 3e29 the balls had no relative digit and the value printed
    as 0.0, so the committee's Z log Z was NaN at |xi| ~ 1e40 and its map at alpha = 1e-20/3
    and 20 digits was refused). Against 400-bit mpmath, within 2^-80 at 90 bits; U(h, 1) > 0
    too."""
    from replica.symbolic.owen import owens_t_mp, owens_u_mp

    with mpmath.workprec(90):
        H = mpmath.mpf(h)
        t, u = owens_t_mp(H, mpmath.mpf(1)), owens_u_mp(H, mpmath.mpf(1))
    with mpmath.workprec(400):
        ref = mpmath.ncdf(H) * mpmath.ncdf(-H) / 2
        assert abs(t / ref - 1) < mpmath.mpf(2) ** -80, (t, ref)
    assert u > 0 and mpmath.isfinite(mpmath.log(u))


def test_t_and_u_share_one_series_and_one_tail_integral(monkeypatch):
    """(0.9 s at load 8: the references) An integrand naming T(h, a) and then U(h, a) (the
    committee's channel) costs, once U has been asked at that a (a node before), one series sum
    where s a^2 <= SERIES_MAX (U's difference form sums T at its precision and leaves it,
    rounded, for T) and one tail integral beyond (T takes U from the memo); both balls contain
    the 60-digit references and hold 160 bits."""
    import flint

    from replica.symbolic import owen

    calls = {"_series_f": 0, "_u_tail_ball": 0}
    for name in calls:
        def counted(*args, _f=getattr(owen, name), _n=name, **kw):
            calls[_n] += 1
            return _f(*args, **kw)
        monkeypatch.setattr(owen, name, counted)
    old = flint.ctx.prec
    try:
        flint.ctx.prec = 170
        for hv, av, series, tail in [(3.0, 1.4, 1, 0), (7.5, 1.4, 0, 1)]:
            owen._BALL_MEMO.clear()
            owen._U_WANTED.clear()
            owen.owens_u_ball(flint.arb(2.5), flint.arb(av))  # (a node before: U asked at a)
            for k in calls:
                calls[k] = 0
            hb, ab = flint.arb(hv), flint.arb(av)
            t, u = owen.owens_t_ball(hb, ab), owen.owens_u_ball(hb, ab)
            assert (calls["_series_f"], calls["_u_tail_ball"]) == (series, tail), (hv, calls)
            for ball, ref in ((t, _t_ref(hv, av, 60)), (u, _u_ref(hv, av, 60))):
                _assert_tight_enclosure(ball, ref, (hv, av))
    finally:
        flint.ctx.prec = old


# ---------------------------------------------------------------------------------------------
# balls with a radius (owen._mean_value): the value at the exact midpoint plus the derivatives'
# suprema over the box times the radii
# ---------------------------------------------------------------------------------------------
DERIVATIVE_POINTS = [(0.3, 1.05), (1.5, 1.4), (-0.8, 1.4), (3.0, -0.3), (1e-3, 0.5)]
DERIVATIVE_POINTS_U = [(1.5, 1.4), (-0.8, 1.4)]


def _t_amb(hv, av):
    """T by the definition at mpmath's working precision (which mpmath.diff raises)."""
    return mpmath.sign(av) * _t_def(abs(hv), abs(av))


def _u_amb(hv, av):
    return mpmath.erfc(hv / mpmath.sqrt(2)) / 4 - _t_def(hv, av)


def test_derivative_formulas_against_numerical_differentiation():
    """(~0.4 s at low load, as the first test above; 1.2 s CPU at load 8) owen._derivatives
    (dT/dh = -phi(h)(Phi(ah) - 1/2), dT/da = e^{-h^2(1+a^2)/2}/(2 pi (1 + a^2)), dU/dh =
    -phi(h) Phi(-ah), dU/da = -dT/da) at point balls (170 bits) contain mpmath.diff of the
    tanh-sinh definitions at 60 digits (to 2^-120 of their size: mpmath.diff agrees with itself
    to about 45 digits), and owen._derivative_bounds (the error functions bounded by
    exponentials) bound their absolute values from above, within a factor 2.5."""
    import flint

    from replica.symbolic.owen import _derivative_bounds, _derivatives

    old = flint.ctx.prec
    try:
        flint.ctx.prec = 170
        for hv, av in DERIVATIVE_POINTS:
            with mpmath.workdps(60):
                h0, a0 = mpmath.mpf(hv), mpmath.mpf(av)
                refs = {"T": (mpmath.diff(lambda x: _t_amb(x, a0), h0),
                              mpmath.diff(lambda x: _t_amb(h0, x), a0))}
            if (hv, av) in DERIVATIVE_POINTS_U:  # (U's difference loses 10 digits at most)
                with mpmath.workdps(70):
                    refs["U"] = (mpmath.diff(lambda x: _u_amb(x, a0), h0),
                                 mpmath.diff(lambda x: _u_amb(h0, x), a0))
            hb, ab = flint.arb(hv), flint.arb(av)
            for which, ref in refs.items():
                balls = _derivatives(which, hb, ab)
                bounds = _derivative_bounds(which, hb, ab)
                for ball, r, bound in zip(balls, ref, bounds):
                    with mpmath.workdps(80):
                        refb = flint.arb(mpmath.nstr(r, 70))
                    tol = abs(refb).upper() * flint.arb(2) ** -120
                    assert (ball + flint.arb(0, tol)).overlaps(refb), (which, hv, av, ball, r)
                    assert abs(ball).upper() <= bound <= 2.5 * abs(ball).upper(), (
                        which, hv, av, ball, bound)
    finally:
        flint.ctx.prec = old


RADIUS_POINTS = [(2.5, 1.4, 1e-12, 1e-12), (-0.8, 1.4, 1e-15, 0.0), (3.0, -0.3, 1e-12, 1e-12)]
"""(h, a, radius of h, radius of a): the series (2.5), h < 0, a < 0 (T only)."""

RADIUS_POINTS_FAR = [(8.0, 1.4, 0.0, 1e-15), (7.0, 1.386, 1e-30, 1e-30), (10.0, 1.05, 1e-20, 1e-20)]
"""The tail form (8, 10) and h = 7 at the committee's a with radii of its rounding at 100
bits."""


def test_balls_with_a_radius_enclose_the_values_over_the_box():
    """(0.5 s) A ball h = h0 +- r, a = a0 +- rho (owens_t_ball / owens_u_ball: the value at the
    midpoint plus the derivatives' suprema times the radii) contains the 60-digit values at the
    midpoint and at the corners (h0 +- r, a0 +- rho), and is tight: its radius at most 2.5 times
    the variation (|T(h0 + r, a0) - T(h0, a0)| + |T(h0, a0 + rho) - T(h0, a0)|) plus 2^-160 of
    the value. A derivative bound halved leaves a corner outside, doubled the radius is too wide
    (planted: both fail)."""
    _check_radius_balls(RADIUS_POINTS)


@pytest.mark.slow
def test_balls_with_a_radius_enclose_the_values_over_the_box_far_out():
    """(3 s: the references) As above in the tail form and at the committee's a."""
    _check_radius_balls(RADIUS_POINTS_FAR)


def _check_radius_balls(points):
    import flint

    from replica.symbolic.owen import _BALL_MEMO, owens_t_ball, owens_u_ball

    _BALL_MEMO.clear()
    old = flint.ctx.prec
    try:
        flint.ctx.prec = 170
        for hv, av, r, rho in points:
            hb = flint.arb(hv, r)
            ab = flint.arb(av, rho)
            assert hb.rad() > 0 or ab.rad() > 0
            with mpmath.workdps(80):
                # the exact endpoints of the balls (the radius as python-flint rounded it up)
                H0, A0 = mpmath.mpf(hv), mpmath.mpf(av)
                R = mpmath.mpf(flint.arb(hb.rad()).str(50, radius=False))
                P = mpmath.mpf(flint.arb(ab.rad()).str(50, radius=False))
                corners = [(H0, A0), (H0 + R, A0), (H0, A0 + P), (H0 - R, A0 - P)]
            cases = [("T", owens_t_ball, _t_ref)] + (
                [("U", owens_u_ball, _u_ref)] if av > 0 else [])
            for which, fn, ref in cases:
                ball = fn(hb, ab)
                assert ball.is_finite(), (which, hv, av)
                values = [ref(x, y, 60) for x, y in corners]
                for (x, y), v in zip(corners, values):
                    with mpmath.workdps(80):
                        vb = flint.arb(mpmath.nstr(v, 70))
                    assert ball.overlaps(vb), (which, hv, av, x, y, ball, v)
                with mpmath.workdps(80):
                    spread = abs(values[1] - values[0]) + abs(values[3] - values[0])
                    cap = flint.arb(mpmath.nstr(2.5 * spread + abs(values[0]) * mpmath.mpf(2)
                                                ** -160, 30))
                assert ball.rad() <= cap, (which, hv, av, ball.rad(), spread)
    finally:
        flint.ctx.prec = old


def test_a_full_memo_drops_its_older_half(monkeypatch):
    """(< 0.01 s) The ball memo at MEMO values drops the older half, not all: the values of a
    solve's last integrands stay for the next solve (a full clear made the second solve of the
    committee machine redo 290 series); its size stays bounded."""
    from replica.symbolic import owen

    monkeypatch.setattr(owen, "MEMO", 8)
    monkeypatch.setattr(owen, "_BALL_MEMO", {})
    for k in range(8):
        owen._remember(("T", k), k)
    assert len(owen._BALL_MEMO) == 8
    owen._remember(("T", 8), 8)
    assert list(owen._BALL_MEMO) == [("T", k) for k in range(4, 9)]
    for k in range(9, 40):
        owen._remember(("T", k), k)
        assert len(owen._BALL_MEMO) <= 8
    assert ("T", 39) in owen._BALL_MEMO and owen._BALL_MEMO[("T", 39)] == 39
