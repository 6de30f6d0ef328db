"""The nested error estimate of the piecewise Gauss--Legendre rule
(:mod:`replica.symbolic.quadrature`): a piece's estimate comes from the top two Legendre
coefficients of the polynomial interpolating the integrand at the rule's own nodes
(:func:`~replica.symbolic.quadrature.tail_weights`), not from a second, coarser rule.

Checked against independent computations: the coefficients of a polynomial written in the
Legendre basis (mpmath's ``legendre``), and the true errors of rules on integrals with closed
forms (an arctangent, an error function, a sine integral of the Gaussian density)."""

import mpmath
import pytest

from replica.symbolic import quadrature as Q


@pytest.mark.parametrize("n", [8, 16, 64])
def test_tail_weights_give_the_top_legendre_coefficients(n):
    """For :math:`f = \\sum_j a_jP_j` of degree ``n - 1`` the sums are :math:`a_{n-1}`,
    :math:`a_{n-2}`, :math:`a_{n-3}`, :math:`a_{n-4}` (the interpolant is ``f`` itself)."""
    with mpmath.workdps(40):
        coeffs = [mpmath.mpf(1) / (j + 2) * (-1) ** j for j in range(n)]
        xs, _ = Q.legendre_rule(n)
        fs = [mpmath.fsum(a * mpmath.legendre(j, x) for j, a in enumerate(coeffs)) for x in xs]
        sums = [mpmath.fdot(v, fs) for v in Q.tail_weights(n)]
        assert len(sums) == 4
        for k, got in enumerate(sums):
            assert abs(got - coeffs[n - 1 - k]) < mpmath.mpf(10) ** -35


def _closed_forms():
    """``(f, a, b, exact)``: integrands analytic on ``[a, b]`` and their integrals, in closed
    form (none computed by the rule under test)."""
    return [
        (lambda z: 1 / (1 + z * z), 0, 2, lambda: mpmath.atan(2)),
        # even on a symmetric piece: every odd Legendre coefficient is 0
        (lambda z: 1 / (1 + z * z), -2, 2, lambda: 2 * mpmath.atan(2)),
        (lambda z: mpmath.npdf(z), -2, 2, lambda: mpmath.erf(mpmath.sqrt(2))),
        (lambda z: z * mpmath.npdf(z), 0, 2,
         lambda: (1 - mpmath.exp(-2)) / mpmath.sqrt(2 * mpmath.pi)),
        (lambda z: mpmath.cos(3 * z), -1, 1, lambda: 2 * mpmath.sin(3) / 3),
        (lambda z: mpmath.exp(z), -1, 1, lambda: 2 * mpmath.sinh(1)),
    ]


@pytest.mark.parametrize("case", range(6))
def test_a_pieces_estimate_bounds_its_true_error(case):
    """At every level the piece's estimate is at least the rule's true error, from the
    closed form (the even integrand on a symmetric piece included: its odd coefficients
    vanish, which is why two coefficients are taken)."""
    f, a, b, exact = _closed_forms()[case]
    with mpmath.workdps(40):
        truth = exact()
        for level in range(1, 5):
            piece = Q._Piece(mpmath.mpf(a), mpmath.mpf(b), ("t",), level, lambda z: [f(z)])
            assert piece.tails is not None  # the nested estimate, no coarse rule evaluated
            assert piece.coarse is None
            error = abs(piece.value[0] - truth)
            assert error <= piece.est[0] + mpmath.mpf(10) ** -38, (level, error, piece.est[0])


def test_the_adaptive_rule_meets_its_tolerance():
    r"""``gauss_legendre_pieces`` on :math:`\int\cos z\,\varphi(z)\,dz = e^{-1/2}` (pieces of
    width 2 on :math:`[-10, 10]`): its summed estimate within the tolerance, its value within
    the truncation's :math:`10^{-22}` of the closed form."""
    with mpmath.workdps(35):
        f = lambda z: mpmath.cos(z) * mpmath.npdf(z)  # noqa: E731
        pieces = [(mpmath.mpf(a), mpmath.mpf(a + 2), f, (a,)) for a in range(-10, 10, 2)]
        value, error, size = Q.gauss_legendre_pieces(pieces, mpmath.mpf(10) ** -30)
        exact = mpmath.exp(-mpmath.mpf(1) / 2)  # over the line; |z| > 10 holds below 1e-23
        assert error <= mpmath.mpf(10) ** -30 * size
        assert abs(value - exact) <= mpmath.mpf(10) ** -22


def test_the_ball_sums_give_the_same_coefficients():
    """The ball-arithmetic sums of :mod:`replica.symbolic.codegen` (one product of ball
    matrices) give the interpolant's coefficients that the mpmath sums give, member by member
    (two integrands of different parity on one piece)."""
    import flint

    from replica.symbolic.codegen import _BallRule

    def fast(z):
        return [flint.arb(1) / (1 + z * z), z * (z / 2).exp()]

    with mpmath.workdps(40):
        m, h = mpmath.mpf(1) / 3, mpmath.mpf(5) / 4
        n = 16
        xs, ws = Q.legendre_rule(n)
        tails = Q.tail_weights(n)
        value, scale, rounding, coefficients = _BallRule(fast, [], [], None).weighted_sums(
            m, h, xs, ws, tails)
        points = [m + h * x for x in xs]
        for r, f in enumerate([lambda z: 1 / (1 + z * z), lambda z: z * mpmath.exp(z / 2)]):
            fs = [f(z) for z in points]
            assert abs(value[r] - h * mpmath.fdot(ws, fs)) < mpmath.mpf(10) ** -36
            for i, v in enumerate(tails):
                assert abs(coefficients[r][i] - abs(h * mpmath.fdot(v, fs))) < \
                    mpmath.mpf(10) ** -36
