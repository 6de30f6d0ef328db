"""The engine on small declared problems: statuses that say what happened, exit status 3 for a
solve that fails, and one solver path for every declaration.

The problems here are declared with the public API (:mod:`replica.problem`) exactly as the
built-in models are; each failure below is a real failure of the solver, not a mock.
"""

from __future__ import annotations

import json

import mpmath
import numpy as np
import pytest
import sympy

from replica.errors import ConvergenceError, ParameterError
from replica.numerics import Status
from replica.numerics.driver import solve, solve_float64
from replica.problem import Parameter, Problem, Rule, ScalarRoot, Schema, Start, System

x = sympy.Symbol("x")
c = sympy.Symbol("c", positive=True)
SCHEMA = Schema([Parameter("c", "a positive constant")],
                [Rule("c", lambda p: p.c == 7, "seven is refused by a rule")])


def toy(residual, start_value, *, admissible=(), exact_root=None):
    """A one-unknown problem F(x; c) = 0 started at ``start_value`` (or at a declared monotone
    root when ``exact_root`` is given)."""
    def system(_variant):
        start = Start(values={x: start_value})
        if exact_root is not None:
            start = Start(roots=(exact_root,), values={x: x}, exact=True)
        return System(unknowns=(x,), parameters=(c,), symbols={"c": c}, residuals=[residual],
                      report=[("x", x), ("x2", x**2)], start=start, admissible=admissible)

    return Problem("toy", SCHEMA, title="toy", variants=[("only", None)], systems=system,
                   groups={"values": ["x", "x2"]})


def test_a_solvable_problem_converges_with_verified_digits():
    p = toy(x**2 - c, 1)
    r = solve(p, c=2, dps=40)
    assert r.status is Status.CONVERGED and r.converged and r.digits == 40
    with mpmath.workdps(40):
        assert abs(r["x"] - mpmath.sqrt(2)) < mpmath.mpf(10) ** -39
    assert r.to_json_dict()["status"] == "converged"
    r2 = solve(p, c=2, dps=20, verify=False)
    assert r2.status is Status.NOT_VERIFIED and r2.digits is None


def test_an_exact_monotone_start_needs_no_iteration_in_float64():
    root = ScalarRoot(x, x**3 - c, lower=0, upper=None, initial=1)
    p = toy(x**3 - c, 1, exact_root=root)
    out = solve_float64(p, c=np.array([1.0, 8.0, 27.0]))
    assert np.allclose(out["x"], [1, 2, 3], rtol=1e-15)
    assert out["converged"].all() and list(out["status"]) == ["converged"] * 3
    assert solve(p, c=27, dps=30).digits == 30


def test_singular_jacobian_is_its_own_status():
    # x^2 + c has no real root; from x = 1 Newton lands on x = 0 where F' = 0
    with pytest.raises(ConvergenceError) as info:
        solve(toy(x**2 + c, 1), c=1, dps=20)
    assert info.value.status == Status.SINGULAR_JACOBIAN.value
    assert "singular" in str(info.value)


def test_a_run_away_iteration_stops_at_max_iterations():
    # exp(-x) = 0 has no root; every Newton step lowers the residual and moves x by 1
    with pytest.raises(ConvergenceError) as info:
        solve(toy(sympy.exp(-x) * c, 0), c=1, dps=20)
    assert info.value.status == Status.MAX_ITERATIONS.value
    out = solve_float64(toy(sympy.exp(-x) * c, 0), c=np.array([1.0, 2.0]), strict=False,
                        maxiter=50)
    assert not out["converged"].any() and np.isnan(out["x"]).all()
    assert list(out["status"]) == ["max-iterations"] * 2
    with pytest.raises(ConvergenceError, match="did not converge"):
        solve_float64(toy(sympy.exp(-x) * c, 0), c=1.0, maxiter=50)


def test_a_solution_outside_the_declared_domain_is_inadmissible():
    # the root x = 2 violates the declared condition -x > 0
    with pytest.raises(ConvergenceError) as info:
        solve(toy(x - 2 * c, 1, admissible=[(-x, "x < 0")]), c=1, dps=20)
    assert info.value.status == Status.INADMISSIBLE.value and "x < 0" in str(info.value)
    # float64: the margin -x = -2c is far below the float64 resolution of x, so the refusal is
    # shown (Machine._undecided_margins keeps it) and the values are not results
    out = solve_float64(toy(x - 2 * c, 1, admissible=[(-x, "x < 0")]), c=np.array([1.0, 1e-3]),
                        strict=False)
    assert list(out["status"]) == ["inadmissible"] * 2 and np.isnan(out["x"]).all()


def test_schema_rules_and_domains_give_parameter_errors():
    p = toy(x**2 - c, 1)
    with pytest.raises(ParameterError, match="--c: must be positive"):
        solve(p, c=0)
    with pytest.raises(ParameterError, match="--c: seven is refused"):
        solve(p, c=7)
    with pytest.raises(ParameterError, match="unknown parameter"):
        solve(p, c=1, d=3)
    with pytest.raises(ParameterError, match="--c: is required"):
        solve(p)


def test_cli_exit_status_3_with_the_status_in_json(monkeypatch, capsys):
    """``replica solve`` on a problem whose solve fails: exit 3, one line on stderr naming what
    was tried, and with --json a JSON object with the status. The declaration looked up for
    ``isotropic`` is replaced by one with the same schema and no real root (x^2 + alpha = 0,
    started at x = 0 where the Jacobian vanishes), so the command line, the engine and the failure
    are the real ones."""
    from replica import cli as cli_module
    from replica import models
    from replica.models.parameters import ISOTROPIC

    alpha = sympy.Symbol("alpha", positive=True)

    def system(_variant):
        return System(unknowns=(x,), parameters=(alpha,), symbols={"alpha": alpha},
                      residuals=[x**2 + alpha], report=[("x", x)], start=Start(values={x: 0}))

    failing = Problem("isotropic", ISOTROPIC, title="no real root", variants=[("only", None)],
                      systems=system, groups={"values": ["x"]})
    monkeypatch.setattr(models, "get", lambda name: failing)
    args = ["solve", "isotropic", "--alpha", "2", "--tau", "4", "--kappa", "2", "--rho", "1"]
    rc = cli_module.main(args + ["--json"])
    captured = capsys.readouterr()
    assert rc == 3
    data = json.loads(captured.out)
    assert data["status"] == "singular-jacobian" and data["converged"] is False
    assert len(captured.err.strip().splitlines()) == 1 and "tried" in captured.err
    rc = cli_module.main(args)
    captured = capsys.readouterr()
    assert rc == 3 and captured.out == "" and "singular Jacobian" in captured.err
