"""Truncated Laurent series over SymPy expression trees (:mod:`replica.symbolic.truncated_series`),
checked against SymPy's own ``series`` (an independent implementation) on expressions with
negative powers, fractional powers of series, and functions at nonzero points."""

from __future__ import annotations

import pytest
import sympy

from replica.symbolic.truncated_series import Expander, SeriesError

t = sympy.Symbol("t", positive=True)
a, b = sympy.symbols("a b", positive=True)

CASES = [
    sympy.exp(sympy.sin(t)) / (t * (1 - sympy.cos(t))),  # starts at t^-3: 3 orders of the factors spent
    sympy.sqrt(4 + a * t + t**3) * sympy.log(1 + t * sympy.exp(t)),
    sympy.erfc(a * t + b) * sympy.cosh(t**2) / (1 + b * t),
    sympy.sinh(t * sympy.sqrt(a + t**2)) / sympy.sqrt(t**2 * (a + b * t)),  # sqrt of t^2 (...)
    (1 + t)**sympy.Rational(-3, 2) - 1 / (t**2 + t**3),
]


@pytest.mark.parametrize("expr", CASES)
def test_coefficients_equal_sympy_series(expr):
    n = 5
    got = Expander(t).coefficients(expr, n)
    want = sympy.expand(sympy.series(expr, t, 0, n + 1).removeO())
    lowest = min(got)
    for p in range(lowest - 1, n + 1):
        diff = sympy.simplify(got.get(p, 0) - want.coeff(t, p))
        assert diff == 0, (expr, p, got.get(p, 0), want.coeff(t, p))


def test_a_half_integer_power_of_t_is_refused():
    with pytest.raises(SeriesError, match="not an integer"):
        Expander(t).coefficients(sympy.sqrt(t * (1 + t)), 3)


def test_a_function_at_a_singular_point_is_refused():
    with pytest.raises(SeriesError, match="not analytic"):
        Expander(t).coefficients(sympy.log(sympy.sin(t) / t - 1), 3)


def test_a_function_that_is_not_analytic_is_refused():
    """|r + t| (r real) is analytic at t = 0 only for r != 0, and its series from SymPy's
    derivatives of Abs holds sign and delta functions of r: refused, not expanded."""
    r = sympy.Symbol("r", real=True)
    with pytest.raises(SeriesError, match="not analytic"):
        Expander(t).coefficients(sympy.Abs(r + t), 3)
