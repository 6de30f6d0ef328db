"""Transition location, continuation and boundary tracing (replica.numerics.continuation)."""

import json

import mpmath
import pytest
import sympy

from replica.analysis.transitions import alignment_transition, isotropic_transition
from replica.numerics import precision
from replica.numerics.continuation import (continuation, limit_to_zero, locate_kink,
                                          trace_boundary)


@pytest.mark.slow
@pytest.mark.parametrize("F", ["1/2", "3/10", "7/9", "1/5", "9/10"])
def test_alignment_kappa_c_equals_rank_fraction_25_digits(F):
    r = alignment_transition(F, 2, "0.01", dps=50)
    with precision(50):
        exact = mpmath.mpf(sympy.Rational(F).p) / sympy.Rational(F).q
        assert abs(r.location.value - exact) < mpmath.mpf(10) ** -25
        # the reported bound is honest: the true error lies within it
        assert abs(r.location.value - exact) <= r.location.error_bound
    assert r.location.digits() >= 25


@pytest.mark.slow
@pytest.mark.parametrize("tau,rho", [("2", "0.01"), ("5", "1"), ("3/2", "1/2")])
def test_isotropic_kappa_c_is_one(tau, rho):
    r = isotropic_transition(tau, rho, dps=50)
    with precision(50):
        assert abs(r.location.value - 1) < mpmath.mpf(10) ** -25


def test_finite_alpha_crossover_converges_like_one_over_alpha():
    offsets = []
    for a in ("1e4", "1e8", "1e12"):
        r = alignment_transition("1/2", 2, "0.01", alpha=a, dps=40)
        with precision(40):
            offsets.append(r.location.value - mpmath.mpf(1) / 2)
        assert "extremal curvature" in r.definition
    with precision(40):
        assert all(o < 0 for o in offsets)
        assert abs(offsets[0] / offsets[1] - 10**4) < 10  # ~ 1/alpha
        assert abs(offsets[1] / offsets[2] - 10**4) < 1


def test_no_sharp_transition_for_tau_below_one():
    from replica.errors import ParameterError

    with pytest.raises(ParameterError, match="--tau"):
        isotropic_transition("1/2", "0.01")


def test_locate_kink_on_a_synthetic_function():
    """|x - 1/3| + x^2: a kink at 1/3 found to the working precision."""
    with precision(40):
        third = mpmath.mpf(1) / 3
        loc = locate_kink(lambda x: abs(x - third) + x**2, 0, 1)
        assert abs(loc.value - third) < mpmath.mpf(10) ** -30
        assert abs(loc.value - third) <= loc.error_bound


def test_limit_to_zero_richardson():
    with precision(30):
        val, err = limit_to_zero(lambda s: mpmath.exp(s) * 2 + s**2, mpmath.mpf(10) ** -3, 6)
        assert abs(val - 2) < mpmath.mpf(10) ** -25 and err < mpmath.mpf(10) ** -15


def test_continuation_warm_starts_both_directions():
    calls = []

    def solve_at(p, start):
        calls.append((p, start))
        with precision(30):
            x = start if start is not None else mpmath.mpf(1)
            return mpmath.findroot(lambda y: y**3 - p, x)

    vals = [mpmath.mpf(k) / 4 + 1 for k in range(9)]
    out = continuation(solve_at, vals, start_index=4)
    with precision(30):
        assert all(abs(o**3 - v) < 1e-25 for o, v in zip(out, vals))
    assert calls[0][1] is None and all(c[1] is not None for c in calls[1:])
    assert [c[0] for c in calls][:5] == vals[4:]


def test_trace_boundary_refines_where_the_curve_bends():
    """Trace p2 = tanh(20 (p1 - 1/2)): points cluster near the bend, all polished."""
    with precision(30):
        f = lambda p1, p2: p2 - mpmath.tanh(20 * (p1 - mpmath.mpf(1) / 2))  # noqa: E731
        pts = trace_boundary(f, [mpmath.mpf(k) / 10 for k in range(11)], -1, max_turn=0.3)
        assert all(abs(f(a, b)) < 1e-20 for a, b in pts)
        xs = [a for a, _ in pts]
        assert xs == sorted(xs)
        near = sum(1 for x in xs if abs(x - 0.5) < 0.1)
        far = sum(1 for x in xs if x < 0.2)
        assert near > 2 * far


@pytest.mark.slow
def test_transition_cli_json(cli):
    rc, out, err = cli("transition", "alignment", "--rank-fraction", "0.3", "--tau", "2",
                       "--rho", "0.01", "--dps", "40", "--json")
    assert rc == 0, err
    data = json.loads(out)
    for key in ("kappa_c", "error_bound", "definition", "method", "digits", "params"):
        assert key in data
    assert data["kappa_c"].startswith("0.3000000000000000000000")
    rc, out, err = cli("transition", "isotropic", "--tau", "2", "--rho", "0.01", "--alpha",
                       "100", "--json")
    assert rc == 0 and json.loads(out)["params"]["alpha"] == "100"
    rc, _, err = cli("transition", "alignment", "--rank-fraction", "1.5", "--tau", "2",
                     "--rho", "0.01")
    assert rc == 2 and "--rank-fraction" in err and err.count("\n") == 1


def test_interpolation_peak_approaches_one_as_ridge_vanishes():
    from replica.errors import ParameterError
    from replica.analysis.transitions import isotropic_interpolation_peak

    dist = []
    for lam in ("0.01", "0.001", "0.0001"):
        r = isotropic_interpolation_peak(10, "inf", "0.01", lam, dps=20)
        with precision(20):
            dist.append(abs(r.location.value - 1))
    assert dist[0] > dist[1] > dist[2] and dist[2] < 1e-3
    with pytest.raises(ParameterError, match="--lam"):
        isotropic_interpolation_peak(10, "inf", "0.01", "0")


LOWRANK_POINTS = [("1/2", "9/4", "3/10"), ("0.3", "2", "0.5"), ("0.7", "3", "0.1"),
                  ("0.15", "1.5", "1"), ("0.9", "5", "0.05")]


@pytest.mark.parametrize("kappa,tau,sigma", LOWRANK_POINTS)
def test_lowrank_rho_c_equals_kappa_25_digits(kappa, tau, sigma):
    from replica.analysis.transitions import lowrank_transition

    r = lowrank_transition(kappa, tau, sigma, dps=50)
    with precision(50):
        k = mpmath.mpf(sympy.Rational(kappa).p) / sympy.Rational(kappa).q
        assert abs(r.location.value - k) < mpmath.mpf(10) ** -25
        assert abs(r.location.value - k) <= r.location.error_bound


@pytest.mark.slow
def test_lowrank_idg_indicator_and_noiseless_case():
    from replica.errors import ParameterError
    from replica.analysis.transitions import lowrank_transition

    r = lowrank_transition("1/2", "9/4", "3/10", dps=40, indicator="idg_over_alpha")
    with precision(40):
        assert abs(r.location.value - mpmath.mpf(1) / 2) < mpmath.mpf(10) ** -20
    r0 = lowrank_transition("1/2", "9/4", "0", dps=40)  # noiseless: a kink of m0 all the same
    with precision(40):
        assert abs(r0.location.value - mpmath.mpf(1) / 2) < mpmath.mpf(10) ** -20
    with pytest.raises(ParameterError, match="--sigma"):
        lowrank_transition("1/2", "9/4", "0", indicator="idg_over_alpha")


def test_lowrank_crossover_sharpens_towards_kappa():
    from replica.analysis.transitions import lowrank_transition

    offs = []
    for a in ("1e2", "1e4", "1e6", "1e8"):
        r = lowrank_transition("1/2", "9/4", "3/10", alpha=a, dps=30)
        with precision(30):
            offs.append(abs(r.location.value - mpmath.mpf(1) / 2))
    assert offs[0] > offs[1] > offs[2] > offs[3]
    assert offs[3] < 1e-6


def test_lowrank_transition_cli(cli):
    rc, out, err = cli("transition", "lowrank", "--kappa", "0.4", "--tau", "2.6", "--sigma",
                       "0.01", "--dps", "40", "--json")
    assert rc == 0, err
    data = json.loads(out)
    assert data["rho_c"].startswith("0.4000000000000000000000") and "m0" in data["definition"]
    rc, _, err = cli("transition", "lowrank", "--kappa", "0.4", "--tau", "0.5", "--sigma", "0")
    assert rc == 2 and "--tau" in err
