r"""The mp quadrature next to a pole pair close to the real line (the mpest3 search,
``benchmarks/mp_estimate_search.py``): a Lorentzian bump of low amplitude on a smooth Gaussian
integrand, :math:`E_z[e^{z^2/8}(1 + e/(1 + ((z - c)/w)^2))]`, whose exact value is
:math:`2/\sqrt3 + e w\sqrt{\pi/\beta}\int_0^\infty e^{-wt}\cos(ct)e^{-t^2/4\beta}\,dt/\sqrt{2\pi}`,
:math:`\beta = 3/8` (the Lorentzian's Fourier transform :math:`\pi w e^{-w|t|}e^{ict}` against the
Gaussian :math:`e^{-\beta z^2}/\sqrt{2\pi}`; the last integral by mpmath.quad at
:math:`2\,\text{dps} + 20` digits, written here).

On a cell of length 2 around the pair the bump's Legendre coefficients decay like
:math:`(1 + O(w))^{-j}` under the smooth part's fast ones: the estimate of
:mod:`replica.symbolic.quadrature` read the smooth part's decay (or the bump's, shrunk by
aliasing) and claimed up to :math:`10^7` less than the error (:math:`3.9\cdot10^{-11}` at 15
digits, :math:`1.1\cdot10^{-26}` at 30). Now the pair is a narrow feature
(:func:`replica.symbolic.gaussian.narrow_features`, cut at :math:`c \pm w4^j`) and the estimate
credits the decay seen between the top two coefficients (a knee at the top) and extrapolates
nothing from an 8-node rule."""

import mpmath
import pytest
import sympy

from replica.symbolic.gaussian import narrow_features

z = sympy.Symbol("z", real=True)
e, c, w = sympy.symbols("e c w", real=True)


def test_a_quadratic_denominator_with_complex_roots_is_a_feature():
    """``g^k`` with ``k < 0`` and ``g = A z^2 + B z + C``, ``4AC > B^2``: the feature at the real
    part of the roots, of width their imaginary part (roots by sympy.solve here); real roots,
    a positive power, or a width that is a number not below 1/2 give none."""
    A, B, C = sympy.Rational(3), sympy.Rational(-2, 5), sympy.Rational(1, 48)  # c = 1/15, w = 1/20
    got = narrow_features(1 / (A * z**2 + B * z + C) ** sympy.Rational(3, 2), z)
    x = sympy.Symbol("x")  # complex: the roots
    roots = sympy.solve(A * x**2 + B * x + C, x)
    centre, width = sympy.re(roots[0]), abs(sympy.im(roots[0]))
    assert len(got) == 1
    p, r = got[0]
    assert abs(sympy.N(r / p - centre, 30)) < 1e-25 and abs(sympy.N(1 / sympy.sqrt(p) - width, 30)) < 1e-25
    assert abs(sympy.N(width - sympy.Rational(1, 20), 30)) < 1e-25
    # the bump itself, symbolic: width w, centre c (compared at a few values)
    (p, r), = narrow_features(1 + e / (1 + ((z - c) / w) ** 2), z)
    for cv, wv in ((sympy.Rational(3, 10), sympy.Rational(1, 10)), (-2, sympy.Rational(1, 33))):
        at = {c: cv, w: wv, e: sympy.Rational(1, 7)}
        assert p.subs(at) == 1 / wv**2 and (r / p).subs(at) == cv
    assert narrow_features(1 / (z**2 - 4) + (z**2 + 1) ** 3 + 1 / (z**2 + 1), z) == []


def _exact(E, C, W):
    beta = mpmath.mpf(3) / 8
    bump = mpmath.quad(lambda t: mpmath.exp(-W * t - t**2 / (4 * beta)) * mpmath.cos(C * t),
                       [0, mpmath.inf])
    return 2 / mpmath.sqrt(3) + E * W * mpmath.sqrt(mpmath.pi / beta) * bump / mpmath.sqrt(
        2 * mpmath.pi)


@pytest.fixture(scope="module")
def bump():
    from replica.symbolic.codegen import Evaluator
    from replica.symbolic.gaussian import gauss

    return Evaluator([gauss(sympy.exp(z**2 / 8) * (1 + e / (1 + ((z - c) / w) ** 2)), z)],
                     [e, c, w])


# (dps, e, w, c), error on ec089ea (the old estimate, no feature): 15 digits 2.1e-11 and
# 6.7e-14, 30 digits 1.1e-26 and 8.3e-29; the 20-digit case and the 30-digit one at c = 1.1,
# w = 0.1 were within their claim there but fail with the feature and the estimate without
# its 8-node rule (1.1e-20) or its knee at the top (8.5e-30)
CASES = [(15, "1e-8", "0.1", "0.3"), (15, "1e-10", "0.03", "-2.5"), (20, "1e-10", "0.03", "0.3"),
         (30, "1e-8", "0.03", "1.1"), (30, "1e-8", "0.1", "-2.5"), (30, "1e-8", "0.1", "1.1")]


@pytest.mark.slow
def test_a_small_lorentzian_bump_within_the_claim(bump):
    """Each case from level 1 (fresh level hints) within ``10**-dps`` of the exact value."""
    from replica.symbolic import codegen

    wrong = []
    for dps, E, W, C in CASES:
        codegen._LEVEL_HINTS.clear()
        _clear_levels(bump)
        with mpmath.workdps(dps):
            got = bump.mp([mpmath.mpf(E), mpmath.mpf(C), mpmath.mpf(W)])[0]
        with mpmath.workdps(2 * dps + 20):
            exact = _exact(mpmath.mpf(E), mpmath.mpf(C), mpmath.mpf(W))
            rel = abs(got - exact) / exact
        if rel > mpmath.mpf(10) ** -dps:
            wrong.append((dps, E, W, C, mpmath.nstr(rel, 3)))
    assert not wrong, wrong


def _clear_levels(ev):
    for value in vars(ev).values():
        items = value.values() if isinstance(value, dict) else (
            value if isinstance(value, (list, tuple)) else [value])
        for g in items:
            for h in (g if isinstance(g, (list, tuple)) else [g]):
                levels = getattr(h, "levels", None)
                if isinstance(levels, dict):
                    levels.clear()


@pytest.mark.slow
def test_a_kink_case_is_unchanged():
    """A case of the mpest2 kink search, ``|z - c|/(1 + e^z)`` at ``c = 0.3`` (its kink a
    breakpoint, no feature), at 30 digits: within its claim of mpmath.quad at 80 digits with
    the kink as a point (``c +- kw`` too)."""
    from replica.symbolic.codegen import Evaluator
    from replica.symbolic.gaussian import gauss

    ev = Evaluator([gauss(sympy.Abs(z - c) / (1 + sympy.exp(z)), z)], [c])
    with mpmath.workdps(30):
        got = ev.mp([mpmath.mpf("0.3")])[0]
    with mpmath.workdps(80):
        C = mpmath.mpf("0.3")
        exact = mpmath.quad(lambda x: abs(x - C) * mpmath.npdf(x) / (1 + mpmath.exp(x)),
                            [-mpmath.inf, C - 1, C, C + 1, mpmath.inf])
        assert abs(got - exact) <= mpmath.mpf(10) ** -30 * exact, (got - exact) / exact


@pytest.mark.slow
def test_the_outer_variable_of_a_two_dimensional_integral_gets_the_cut_points():
    """The bump in the outer variable of E_xi E_z e^{xi z/2}(1 + e/(1 + ((xi - 0.3)/0.1)^2)) at
    15 digits (the outer layout had no feature cut points: 2.1e-11 wrong for e = 1e-8, claim
    1e-15), against 2/sqrt(3) + e w sqrt(pi/beta) int_0^inf e^{-wt} cos(ct) e^{-t^2/4beta} dt
    / sqrt(2 pi), beta = 3/8 (the inner integral is e^{xi^2/8})."""
    from replica.symbolic import codegen
    from replica.symbolic.codegen import Evaluator
    from replica.symbolic.gaussian import gauss

    xi = sympy.Symbol("xi", real=True)
    ev = Evaluator([gauss(gauss(sympy.exp(xi * z / 2), z) * (1 + e / (1 + ((xi - c) / w) ** 2)),
                          xi)], [e, c, w])
    for E in ("1e-8",):
        codegen._LEVEL_HINTS.clear()
        _clear_levels(ev)
        with mpmath.workdps(15):
            got = ev.mp([mpmath.mpf(E), mpmath.mpf("0.3"), mpmath.mpf("0.1")])[0]
        with mpmath.workdps(50):
            exact = _exact(mpmath.mpf(E), mpmath.mpf("0.3"), mpmath.mpf("0.1"))
            assert abs(got - exact) <= mpmath.mpf(10) ** -15 * exact, (E, (got - exact) / exact)
