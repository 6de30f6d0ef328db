"""The leading order of ``replica expand`` is solved with each Gaussian integral masked as an
undefined function of the unknowns it holds (:func:`replica.analysis.series._solve_masked`): the
solutions are SymPy's on the unmasked system, with the integrals put back (where SymPy
substituted a solved unknown into a masked integral's arguments, into the integral), and a
system SymPy cannot solve still raises ``NotImplementedError``."""

import mpmath
import pytest
import sympy

from replica.analysis.series import _solve_masked
from replica.symbolic.gaussian import gauss

X = sympy.Symbol("x", real=True)
A, B, C = sympy.symbols("a b c")


@pytest.mark.parametrize("lead, unknowns", [
    # the integral holds a parameter only: a = I(c), b = 1/I(c)
    ([A - gauss(X**2 * sympy.Heaviside(X - C), X), B * A - 1], [A, B]),
    # the integral holds an unknown that the other equation fixes: a = 2, b = I(a = 2)
    ([A - 2, B - gauss(X**2 * sympy.Heaviside(X - A), X)], [A, B]),
    # an integral free of every unknown (masked as a dummy symbol)
    ([A - gauss(X**2 * sympy.Heaviside(X - 1), X)], [A]),
])
def test_masked_solutions_are_sympy_s_on_the_unmasked_system(lead, unknowns):
    assert _solve_masked(lead, unknowns) == sympy.solve(lead, unknowns, dict=True)


def test_the_integral_put_back_is_the_gaussian_integral():
    """b = I(2) from the second system: its integrand, integrated against the normal density by
    mpmath's quadrature (40 digits, split at the kink), against the closed form
    :math:`\\int_c^\\infty x^2\\varphi(x)\\,dx = c\\,\\varphi(c) + H(c)` (by parts) at c = 2,
    to 30 digits."""
    from replica.symbolic.gaussian import GaussianIntegral

    sol = _solve_masked([A - 2, B - gauss(X**2 * sympy.Heaviside(X - A), X)], [A, B])
    assert len(sol) == 1 and sol[0][A] == 2
    integral = sol[0][B]
    assert isinstance(integral, GaussianIntegral)
    f = sympy.lambdify(integral.variable, integral.integrand,
                       modules=[{"Heaviside": lambda t, *h0: mpmath.mpf(t > 0)}, "mpmath"])
    with mpmath.workdps(40):
        got = mpmath.quad(lambda t: f(t) * mpmath.npdf(t), [-mpmath.inf, 2, mpmath.inf])
        c = mpmath.mpf(2)
        closed = c * mpmath.npdf(c) + mpmath.ncdf(-c)
        assert abs(got - closed) <= mpmath.mpf(10) ** -30 * closed


def test_an_unknown_inside_an_integral_is_still_unsolvable():
    """sin(a) I(a) = 0 with the unknown inside the integral: SymPy cannot solve it, masked or
    not (``NotImplementedError``, which ``replica expand`` reports as exit 3)."""
    lead = [sympy.sin(A) * gauss((X - A)**2 * sympy.Heaviside(A - X), X)]
    with pytest.raises(NotImplementedError):
        sympy.solve(lead, [A], dict=True)
    with pytest.raises(NotImplementedError):
        _solve_masked(lead, [A])
