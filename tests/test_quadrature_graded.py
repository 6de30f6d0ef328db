"""The error estimate of the piecewise Gauss--Legendre rule (:mod:`replica.symbolic.quadrature`)
next to a graded feature: a narrow error-function step or Gaussian peak, the pieces cut at
:math:`c \\pm w4^j` as the layouts of :mod:`replica.symbolic.codegen` cut them. On such a
piece the interpolant's coefficients have a knee -- the normal density's fall fast, the
feature's (of amplitude far below the piece's scale) slowly -- and the squared estimate
:math:`2^8E^2/s` alone assumed the decay it had not seen: the step
:math:`\\mathrm{erfc}(-1000(z + 8))/2` came out 1.5e-27 wrong at 30 digits (its piece
:math:`[c + 4w, c + 16w]` accepted at 8 nodes, estimate 7e-34).

Checked against closed forms written here, at several precisions and starting levels (the
levels a previous evaluation leaves in ``memory``): for a standard normal :math:`Z`,
:math:`E\\,\\mathrm{erfc}(\\mp a(Z - c))/2 = \\Phi(\\pm\\sqrt2 a(Z - c))` averages to
:math:`\\Phi(\\mp bc/\\sqrt{1 + b^2})`, :math:`b = \\sqrt2 a` (:math:`P(X < b(Z - c))` for an
independent standard normal :math:`X`: :math:`X - bZ` is normal of variance :math:`1 + b^2`),
and :math:`E e^{-a^2(Z - c)^2} = e^{-a^2c^2/(1 + 2a^2)}/\\sqrt{1 + 2a^2}` (complete the
square)."""

import mpmath
import pytest
import sympy

from replica.symbolic import quadrature as Q


def _closed(kind, a, c):
    b = mpmath.sqrt(2) * a
    if kind == "up":
        return mpmath.ncdf(-b * c / mpmath.sqrt(1 + b**2))
    if kind == "down":
        return mpmath.ncdf(b * c / mpmath.sqrt(1 + b**2))
    return mpmath.exp(-a**2 * c**2 / (1 + 2 * a**2)) / mpmath.sqrt(1 + 2 * a**2)


def _integrand(kind, a, c):
    if kind == "peak":
        return lambda z: mpmath.exp(-(a * (z - c)) ** 2) * mpmath.npdf(z)
    s = -a if kind == "up" else a
    return lambda z: mpmath.erfc(s * (z - c)) / 2 * mpmath.npdf(z)


def _pieces(f, c, w):
    """Cells of width 2 on [-T, T], cut at c and c +- w 4^j (j < 6), and the two half-lines
    beyond, mapped onto [0, 1] by z = +-(T + t/(1 - t))."""
    T = Q.gauss_truncation()
    T += T % 2
    cuts = {mpmath.mpf(x) for x in range(-T, T + 1, 2)} | {c}
    cuts |= {c + s * w * 4**j for j in range(6) for s in (-1, 1) if -T < c + s * w * 4**j < T}
    cuts = sorted(cuts)
    out = [(lo, hi, f, ("cell", i)) for i, (lo, hi) in enumerate(zip(cuts[:-1], cuts[1:]))]
    for side, edge in ((1, cuts[-1]), (-1, cuts[0])):
        def g(t, side=side, edge=edge):
            u = 1 - t
            return f(edge + side * t / u) / (u * u) if u else mpmath.mpf(0)
        out.append((mpmath.mpf(0), mpmath.mpf(1), g, ("half", side)))
    return out


# widths 1e-2 ... 1e-6; the peaks up to 1e-4 only: at width 1e-6 next to c = -8 the nodes'
# own rounding (8 2^-p of a width 1e-6) moves the point-wise integrand by more than 1e-40 of
# the integral at 40 digits, which no quadrature rule sees (the engine's balls bound it)
CASES = [(kind, A, C) for kind in ("up", "down") for A in ("1e2", "1e3", "1e4", "1e6")
         for C in ("-8", "0.3", "7.9")] + \
        [("peak", A, C) for A in ("1e2", "1e3", "1e4") for C in ("-8", "0.3", "7.9")]


@pytest.mark.parametrize("dps", [30, pytest.param(40, marks=pytest.mark.slow),
                                 pytest.param(60, marks=pytest.mark.slow)])
def test_graded_steps_and_peaks_within_the_claim(dps):
    """At ``dps`` digits (the rule at 20 guard bits, the tolerance ``10**-dps/2`` as
    :func:`replica.symbolic.codegen._gauss_mp` asks), from the starting levels 1 and 2, each
    integral is within its claim of its closed form: ``|value - exact| <= rtol * size``.
    (With the squared estimate alone, 11 of these fail at 30 digits, the step at a = 1000,
    c = -8 from level 1 by 1.5e-27.)"""
    wrong = []
    for kind, A, C in CASES:
        with mpmath.workdps(dps):
            a, c = mpmath.mpf(A), mpmath.mpf(C)
            rtol = mpmath.mpf(10) ** -dps / 2
            with mpmath.workprec(mpmath.mp.prec + 20):
                pieces = _pieces(_integrand(kind, a, c), c, 1 / a)
                for start in (1, 2):
                    value, error, size = Q.gauss_legendre_pieces(pieces, rtol, {}, start)
                    with mpmath.workdps(dps + 30):
                        exact = _closed(kind, a, c)
                        if not abs(value - exact) <= rtol * size:
                            wrong.append((kind, A, C, start,
                                          mpmath.nstr(abs(value - exact) / size, 3)))
    assert not wrong, wrong


@pytest.mark.parametrize("dps", [30, 40, pytest.param(60, marks=pytest.mark.slow)])
def test_the_engines_step_far_out(dps):
    """The engine's own path (:class:`~replica.symbolic.codegen.Evaluator`, ball sums, its
    layout and tails): E erfc(-1000 (Z + 8))/2 at 30, 40 and 60 digits within ``10**-dps/2``
    of the closed form (it was 1.5e-27 wrong at 30 digits in a fresh process)."""
    from replica.symbolic.codegen import Evaluator
    from replica.symbolic.gaussian import gauss

    z = sympy.Symbol("z", real=True)
    a, c = sympy.symbols("a c", real=True)
    ev = Evaluator([gauss(sympy.erfc(-a * (z - c)) / 2, z)], [a, c])
    with mpmath.workdps(dps):
        av, cv = mpmath.mpf(1000), mpmath.mpf(-8)
        got = ev.mp([av, cv])[0]
    with mpmath.workdps(dps + 30):
        exact = _closed("up", av, cv)
        assert abs(got - exact) <= mpmath.mpf(10) ** -dps / 2 * exact, (got, exact)


def test_a_knee_is_not_taken_for_decay():
    """The piece [c + 4w, c + 16w] next to the step (w = 1/1000, c = -8) at 30 digits: its
    8-node rule is 2.3e-11 of the piece's scale wrong (mpmath.quad at 60 digits); the estimate
    must not claim the 1e-17 the squared one did (the knee: the top coefficients flat at
    3e-10 of the scale). From 32 nodes on the estimate bounds the true error."""
    with mpmath.workdps(30):
        a, c = mpmath.mpf(1000), mpmath.mpf(-8)
        w = 1 / a
        lo, hi = c + 4 * w, c + 16 * w
        f = _integrand("up", a, c)
        with mpmath.workdps(60):
            exact = mpmath.quad(f, [lo, hi])
        for level in (1, 2, 3, 4):
            piece = Q._Piece(lo, hi, ("t",), level, lambda z: [f(z)])
            error = abs(piece.value[0] - exact)
            s = piece.scale[0]
            assert piece.est[0] >= 1e-15 * s or piece.est[0] >= error, (level, error / s)
            if level >= 3:
                assert piece.est[0] >= error, (level, error / s, piece.est[0] / s)


@pytest.mark.parametrize("A, C", [("1e2", "0.5"), ("1e2", "-5.3"), ("1e3", "-1.9")])
def test_the_engines_peak_tail_layer_at_57_to_61_digits(A, C):
    """The engine's off-centre Gaussian peak e^{-a^2 (z - c)^2} (width w = 1/sqrt(1 + 2a^2))
    at 58 and 61 digits within ``10**-dps/2`` of the closed form. Its tail on the piece
    [c + 16w, c + 64w] of the old grading has all its mass, about e^{-128} of the integral,
    within w/16 of the piece's near end, where no node of the 8-point rule lies: the rule and
    its estimate saw 0, and the value came out 1.3e-57 wrong at every precision from 192 to 206
    bits (above, the pieces' levels differ and it was right). The layout now cuts that tail
    finer where it still counts (``codegen._feature_points``)."""
    from replica.symbolic.codegen import Evaluator
    from replica.symbolic.gaussian import gauss

    z = sympy.Symbol("z", real=True)
    a, c = sympy.symbols("a c", real=True)
    ev = Evaluator([gauss(sympy.exp(-a**2 * (z - c) ** 2), z)], [a, c])
    for dps in (58, 61):
        with mpmath.workdps(dps):
            av, cv = mpmath.mpf(A), mpmath.mpf(C)
            got = ev.mp([av, cv])[0]
        with mpmath.workdps(dps + 30):
            exact = _closed("peak", av, cv)
            assert abs(got - exact) <= mpmath.mpf(10) ** -dps / 2 * exact, (
                dps, mpmath.nstr(abs(got / exact - 1), 3))


@pytest.mark.parametrize("A, C", [("1e6", "-8"), ("1e6", "7.9"), ("1e8", "-5.3")])
def test_the_engines_features_far_from_zero_get_the_bits_their_nodes_need(A, C):
    """A peak and a step of width 1e-6 (1e-8) at |c| = 5-8, at 30 digits, within ``10**-30/2``
    of their closed forms. A node next to the feature is rounded to 2^-p |c|, i.e. 2^-p |c|/w
    of the width: with the rule's 20 guard bits alone that is about 1e-29 of the integrand
    there, the refinements could not get below it, and both the Gauss--Legendre rule and the
    tanh--sinh fallback refused the integral (QuadratureError at 30, 40 and 60 digits). The
    nodes now get log2(|c|/w) - 10 more bits (``codegen._feature_guard_bits``)."""
    from replica.symbolic.codegen import Evaluator
    from replica.symbolic.gaussian import gauss

    z = sympy.Symbol("z", real=True)
    a, c = sympy.symbols("a c", real=True)
    ev = Evaluator([gauss(sympy.exp(-a**2 * (z - c) ** 2), z),
                    gauss(sympy.erfc(-a * (z - c)) / 2, z)], [a, c])
    with mpmath.workdps(30):
        av, cv = mpmath.mpf(A), mpmath.mpf(C)
        got = ev.mp([av, cv])
    with mpmath.workdps(70):
        for value, kind in zip(got, ("peak", "up")):
            exact = _closed(kind, av, cv)
            assert abs(value - exact) <= mpmath.mpf(10) ** -30 / 2 * exact, (
                kind, mpmath.nstr(abs(value / exact - 1), 3))


class _CoarseSums:
    """An integrand whose rule sums give no Legendre coefficients (no ``nested``: estimated by
    the coarser rule, as the outer integrand of a two-dimensional integral was): the normal
    density's e^{-3z^2/8} part plus a Lorentzian bump of amplitude 1e-8, width 0.1 at 0.3."""

    def __call__(self, z):
        return (mpmath.exp(-3 * z**2 / 8) * mpmath.npdf(0)
                * (1 + mpmath.mpf("1e-8") / (1 + ((z - mpmath.mpf("0.3")) * 10) ** 2)))

    def weighted_sums(self, m, h, xs, ws):
        fs = [self(m + h * x) for x in xs]
        return h * mpmath.fdot(ws, fs), h * mpmath.fdot(ws, [abs(v) for v in fs]), 0


@pytest.mark.parametrize("dps", [15, 20, 30])
def test_a_coarse_estimate_without_coefficients_is_not_squared(dps):
    """Without coefficients no decay is seen (``_seen_decay`` is 1) and the coarse estimate
    :math:`|G_n - G_{n/2}|` is not squared: squared (its value :math:`2^8E^2/s`), the bump on
    :math:`[0, 2]` came out 4.6e-11 wrong at 15 digits (claim 2.5e-17), 8.4e-18 at 20, 9e-25
    at 30. Against mpmath.quad at 2 dps + 20 digits with the bump's centre as a point."""
    f = _CoarseSums()
    with mpmath.workdps(dps):
        tol = mpmath.mpf(10) ** -dps
        value, error, size = Q.gauss_legendre_pieces([(mpmath.mpf(0), mpmath.mpf(2), f, 0)], tol)
        assert error <= tol * size
    with mpmath.workdps(2 * dps + 20):
        ref = mpmath.quad(f, [0, mpmath.mpf("0.3"), 2])
        assert abs(value - ref) <= tol * size, (value - ref, error)
