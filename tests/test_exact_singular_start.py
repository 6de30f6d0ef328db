"""A start where a denominator of the equations is exactly 0 (job sstart, session 52).

``examples/lasso.py`` once started at m = q = 1/20, where the risk eps - 2m + q is exactly 0 at
eps = 1/20: at sigma = 0 every precision divided by zero, and the verified solve doubled its
guard digits six times before it said "a denominator cancels to zero even at 2240 digits",
without naming the start; the float64 solve called the point ``max-iterations`` after one
sweep. Here the same defect on a one-unknown problem, F(x; c) = x^2 - c + 1/(c - x) started at
x = c: the solve stops at once, names the start and the vanishing expression (decided in exact
rational arithmetic), and the float64 status is ``non-finite``.

The roots used below are independent of the engine: (x^2 - 2)(2 - x) + 1 = -(x - 1)(x^2 - x - 3)
at c = 2, so F has the roots 1 and (1 +- sqrt(13))/2.
"""

from __future__ import annotations

import mpmath
import numpy as np
import pytest
import sympy

from replica.errors import ConvergenceError
from replica.numerics import Status
from replica.numerics.driver import solve, solve_float64, solve_params
from replica.problem import Parameter, Problem, Schema, Start, System

x = sympy.Symbol("x")
c = sympy.Symbol("c", positive=True)


def _problem(start_value, fixed_point=False):
    def system(_variant):
        eqs = ({"fixed_point": {x: 1 / (c - x)}} if fixed_point
               else {"residuals": [x**2 - c + 1 / (c - x)]})
        return System(unknowns=(x,), parameters=(c,), symbols={"c": c}, report=[("x", x)],
                      start=Start(values={x: start_value}), **eqs)

    return Problem("pole", Schema([Parameter("c", "a positive constant")]), title="pole",
                   variants=[("only", None)], systems=system, groups={"values": ["x"]})


def test_a_declared_start_on_a_pole_is_named_at_once():
    """(about 0.3 s) Started at x = c, where 1/(c - x) is undefined exactly: exit status 3
    (``non-finite``) naming the declared start and the vanishing denominator c - x, after one
    division by zero (at the first working precision), not after six doublings of the guard
    digits."""
    with pytest.raises(ConvergenceError) as info:
        solve(_problem(c), c=2, dps=20)
    msg = str(info.value)
    assert info.value.status == Status.NON_FINITE.value and info.value.exit_status == 3
    assert "the declared start (x = 2) makes c - x exactly 0" in msg, msg
    assert "--start" in msg and "cancels to zero" not in msg, msg
    # the same start given by the user (its values read exactly: "2.0" is 2)
    p = _problem(c)
    with pytest.raises(ConvergenceError) as info:
        solve_params(p, p.schema.parse({"c": "2"}), dps=20, start={"x": "2.0"})
    assert "the given start (x = 2) makes c - x exactly 0" in str(info.value)
    # a start where the same denominator is not 0 solves: the root 1 (of x^3 - 2x^2 - 2x + 3)
    r = solve(_problem(c / 4), c=2, dps=20)
    assert r.status is Status.CONVERGED
    with mpmath.workdps(20):
        roots = [mpmath.mpf(1), (1 - mpmath.sqrt(13)) / 2, (1 + mpmath.sqrt(13)) / 2]
        assert min(abs(r["x"] - t) for t in roots) < mpmath.mpf(10) ** -18


def test_a_fixed_point_start_on_a_pole_is_named_at_once():
    """(about 0.2 s) x = 1/(c - x) from x = c: the damped iteration's first map value divides
    by zero (before the fix: six doublings of the guard digits, then "a denominator cancels to
    zero even at 1600 digits"); the fixed points (c -+ sqrt(c^2 - 4))/2 are reached from 0."""
    with pytest.raises(ConvergenceError) as info:
        solve(_problem(c, fixed_point=True), c=3, dps=20)
    msg = str(info.value)
    assert info.value.status == Status.NON_FINITE.value
    assert "the declared start (x = 3) makes c - x exactly 0" in msg, msg
    assert "cancels to zero" not in msg
    r = solve(_problem(0, fixed_point=True), c=3, dps=20)
    with mpmath.workdps(20):
        assert abs(r["x"] - (3 - mpmath.sqrt(5)) / 2) < mpmath.mpf(10) ** -18


def test_a_start_on_a_pole_is_non_finite_in_float64():
    """(about 0.1 s) The float64 solve at the same start: ``non-finite`` (the equations are not
    finite where the iteration starts), not ``max-iterations``; a point started elsewhere
    beside it converges."""
    out = solve_float64(_problem(c), c=np.array([2.0]), strict=False)
    assert list(out["status"]) == ["non-finite"]
    out = solve_float64(_problem(c, fixed_point=True), c=np.array([3.0]), strict=False)
    assert list(out["status"]) == ["non-finite"]
    with pytest.raises(ConvergenceError, match="1 non-finite"):
        solve_float64(_problem(c), c=2.0)
    out = solve_float64(_problem(c / 4), c=np.array([2.0]), strict=False)
    assert list(out["status"]) == ["converged"] and abs(out["x"][0] - 1) < 1e-12
