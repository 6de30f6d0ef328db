"""Digits that cannot lie: the claimed digits of an uncertified solve hold even where a re-solve at
higher precision shares the failure it is meant to detect.

At ``alpha = 1e-50`` the isotropic closed form adds and subtracts terms of size ``(1 + rho)/alpha
~ 1e50``: at 30 and at 45 digits both evaluations lose every digit the same way and *agree* on
``e_icl = 1.01`` (the value is 2.02 - 5e-51). The verification therefore also bounds, in ball
arithmetic, the rounding error of every reported value at the working precision
(:meth:`replica.numerics.driver.Machine.evaluation_digits`), and raises the guard digits until
the claimed digits survive it.
"""

from __future__ import annotations

from fractions import Fraction

import mpmath
import numpy as np
import pytest

from replica import models
from replica.errors import ReplicaError
from replica.numerics.driver import machine, solve_params
from replica.numerics.precision import agreement_digits


def solve(name, dps, **raw):
    problem = models.get(name)
    return solve_params(problem, problem.schema.parse(raw), dps=dps)


@pytest.mark.parametrize("alpha", ["1e-50", "1e-60", "1e-320"])
def test_cancellation_at_tiny_alpha_is_detected(alpha):
    res = solve("isotropic", 30, alpha=alpha, tau="1/2", kappa="1/2", rho="0.01")
    assert res.digits == 30
    with mpmath.workdps(40):
        # e_icl -> 2 (1 + rho) as alpha -> 0 here; the correction is O(alpha)
        assert abs(res["e_icl"] - mpmath.mpf("2.02")) < mpmath.mpf(10) ** -29
    assert "survive rounding" in res.digits_how


def test_the_rounding_bound_sees_what_the_re_solve_does_not():
    problem = models.get("isotropic")
    params = problem.schema.parse(dict(alpha="1e-50", tau="1/2", kappa="1/2", rho="0.01"))
    m = machine(problem, problem.variant_of(params))
    assert m.evaluation_digits(params, [], 30) == 0
    assert m.evaluation_digits(params, [], 45) == 0
    assert m.evaluation_digits(params, [], 120) >= 60


def _random_points(seed, n):
    rng = np.random.default_rng(seed)
    for _ in range(n):
        yield dict(alpha=f"1e{rng.integers(-60, 61)}", tau=f"{rng.integers(1, 999)}/100",
                   kappa=rng.choice(["inf", f"{rng.integers(1, 999)}/100"]),
                   rho=f"1e{rng.integers(-30, 3)}",
                   lam=rng.choice(["0", f"1e{rng.integers(-6, 1)}"]))


def test_claimed_digits_hold_against_a_much_higher_precision_solve():
    """40 isotropic points over 120 decades of alpha: every result that claims digits agrees with
    a solve at three times the precision to those digits (less one: the last printed digit is
    correctly rounded to within one unit); the others are refused (exit 2) or fail (exit 3)."""
    checked = refused = 0
    for raw in _random_points(2026, 40):
        try:
            res = solve("isotropic", 25, **raw)
        except ReplicaError:
            refused += 1
            continue
        ref = solve("isotropic", 75, **raw)
        with mpmath.workdps(90):
            for k, v in res.all_values.items():
                if v is None:
                    continue
                got = agreement_digits(v, ref.all_values[k], 25)
                assert got >= res.digits - 1, (raw, k, v, ref.all_values[k], res.digits)
        checked += 1
    assert checked >= 25, (checked, refused)


def test_errors_are_never_below_their_noise_floor_and_split_exactly():
    """e_icl = e_scalar + e_misalign and every error >= its noise floor rho, at the same random
    points (a negative error printed with full digits was one of the reported failures)."""
    for raw in _random_points(7, 25):
        try:
            res = solve("isotropic", 20, **raw)
        except ReplicaError:
            continue
        rho = Fraction(raw["rho"])
        with mpmath.workdps(40):
            e = res.all_values
            tol = mpmath.mpf(10) ** (-res.digits + 1) * max(1, abs(e["e_icl"]))
            assert abs(e["e_icl"] - e["e_scalar"] - e["e_misalign"]) <= tol
            assert e["e_icl"] >= mpmath.mpf(rho.numerator) / rho.denominator - tol
