"""Covariance SPECs: exact normalisation to trace d, ordering, errors."""

from fractions import Fraction

import mpmath
import numpy as np
import pytest
import sympy

from replica.errors import ParameterError
from replica.params import parse_exact
from replica.spectra import marchenko_pastur_expr, parse_spec


@pytest.mark.parametrize("spec", ["identity", "piano", "lowrank:0.3", "spike:3", "powerlaw:0.9",
                                  "powerlaw:2"])
def test_trace_is_d_and_entries_nonnegative(spec):
    d = 10
    c = parse_spec(spec, d)
    with mpmath.workdps(40):
        vals = c.diag_mp()
        assert abs(mpmath.fsum(vals) - d) < mpmath.mpf(10) ** -35
        assert all(v >= 0 for v in vals)
    if c.diagonal is not None:
        assert sum(c.diagonal) == d  # exact


def test_orders_and_shapes():
    d = 5
    assert parse_spec("piano", d).diagonal == tuple(Fraction(2 * (d - j), d + 1) for j in range(d))
    pl = parse_spec("powerlaw:1", d).diag_f64()
    assert np.all(np.diff(pl) < 0)
    lr = parse_spec("lowrank:0.5", 10).diagonal
    assert lr == tuple([Fraction(2)] * 5 + [Fraction(0)] * 5)
    assert parse_spec("lowrank:0.25", 10).rank() == 3  # round(2.5) = 3 (half up)
    assert parse_spec("spike:1", d).diagonal[0] == d


def test_spec_errors_name_parameter():
    with pytest.raises(ParameterError, match="--test"):
        parse_spec("spike:6", 5, "--test")
    with pytest.raises(ParameterError, match="rank"):
        parse_spec("lowrank:0.01", 10)
    with pytest.raises(ParameterError, match="unknown"):
        parse_spec("gaussian", 10)


def test_exact_parsing():
    assert parse_exact("0.1", "x") == Fraction(1, 10)
    assert parse_exact("3/10", "x") == Fraction(3, 10)
    assert parse_exact("1e-6", "x") == Fraction(1, 10**6)
    assert parse_exact(0.1, "x") == Fraction(1, 10)
    assert parse_exact("inf", "x", allow_inf=True) == "inf"
    for bad in ("", "1/0", "abc", "1..2", "nan"):
        with pytest.raises(ParameterError):
            parse_exact(bad, "x")


def test_marchenko_pastur_solves_its_self_consistency():
    """M = 1/(a c + z), a = 1 - 1/kappa + z M/kappa, for the closed form (symbolic)."""
    z, k, c = sympy.symbols("z kappa c", positive=True)
    m = marchenko_pastur_expr(z, k, c)
    a = 1 - 1 / k + z * m / k
    resid = sympy.simplify(sympy.radsimp(m * (a * c + z) - 1))
    assert resid == 0 or abs(sympy.N(resid.subs({z: 0.3, k: 0.7, c: 2.5}), 30)) < 1e-25
    # and at the kappa > 1 and kappa < 1 sides numerically
    for kv in (sympy.Rational(1, 3), sympy.Rational(5, 2)):
        val = sympy.N((m * (a * c + z) - 1).subs({z: sympy.Rational(3, 10), k: kv, c: 2}), 40)
        assert abs(val) < 1e-35
