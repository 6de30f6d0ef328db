"""The LASSO and max-margin examples (``examples/lasso.py``, ``examples/lasso_phase_transition.py``,
``examples/hinge_svm.py``) against computations written here: the Donoho--Maleki--Montanari
parametric closed form of the l1 phase transition, the Bayati--Montanari state evolution with
closed-form Gaussian moments (no quadrature), a two-dimensional quadrature of the max-margin
equations, and finite-size simulations."""

from __future__ import annotations

import json
import math
import os
import runpy
import subprocess
import sys
from fractions import Fraction
from types import SimpleNamespace

import mpmath
import numpy as np
import pytest

import replica

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LASSO = os.path.join(REPO, "examples", "lasso.py")
DT = os.path.join(REPO, "examples", "lasso_phase_transition.py")
SVM = os.path.join(REPO, "examples", "hinge_svm.py")

Phi, phi = mpmath.ncdf, mpmath.npdf


def mpq(text):
    f = Fraction(text)
    return mpmath.mpf(f.numerator) / f.denominator


def params(**raw):
    return SimpleNamespace(**{k: Fraction(v) for k, v in raw.items()})


def check_simulation(point, theory, seeds_by_d, keys, bound=3.0):
    """Mean over seeds at each d within ``bound`` standard errors of the theory; returns the
    z-scores."""
    zs = {}
    for d, values in seeds_by_d.items():
        for k in keys:
            x = np.array([v[k] for v in values])
            sem = x.std(ddof=1) / math.sqrt(len(x))
            th = float(theory[k.rpartition(".")[2]])
            zs[(d, k)] = (x.mean() - th) / sem
            assert abs(x.mean() - th) < bound * sem, (point, d, k, x.mean(), th, sem)
    return zs


# ---------------------------------------------------------------------------------------------
# The Donoho--Tanner transition: the parametric closed form (Donoho, Maleki, Montanari 2009)
# ---------------------------------------------------------------------------------------------
def dt_closed_form(delta):
    """rho_DT(delta) from delta = 2 phi(chi) / (chi + 2 (phi(chi) - chi Phi(-chi))),
    rho = 1 - chi Phi(-chi) / phi(chi): the minimax threshold chi found by findroot in this one
    equation (no integral is evaluated)."""
    def delta_of(c):
        return 2 * phi(c) / (c + 2 * (phi(c) - c * Phi(-c)))

    chi = mpmath.findroot(lambda c: delta_of(c) - delta, mpmath.mpf(1))
    return 1 - chi * Phi(-chi) / phi(chi), chi


@pytest.mark.slow
@pytest.mark.parametrize("delta", ["1/2", "1/4", "9/10"])
def test_donoho_tanner_transition_to_25_digits(delta):
    """``replica transition`` on the minimax-threshold model (the library's level locator,
    quadrature of the Gaussian integrals at every step) against the closed form."""
    proc = subprocess.run(
        [sys.executable, "-m", "replica", "transition", "--model", DT, "--delta", delta,
         "--vary", "rho", "--between", "1/20,19/20", "--quantity", "slope", "--kind", "level",
         "--level", "1", "--dps", "30", "--json"],
        capture_output=True, text=True, cwd=REPO, timeout=600)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["digits"] >= 25
    with mpmath.workdps(45):
        ref, _ = dt_closed_form(mpq(delta))
        rho = mpmath.mpf(out["location"])
        assert abs(rho - ref) < mpmath.mpf(10) ** -25 * ref, (rho, ref)
        if delta == "1/2":  # the curve at delta = 1/2, to the digits printed in the report
            assert abs(rho - mpmath.mpf("0.38568966618148091930187550873534")) < 1e-30


@pytest.mark.slow
def test_minimax_threshold_and_slope_on_either_side():
    """The solve's unknown is the minimax threshold chi of the closed form at the transition;
    the slope is below 1 (recovery) below rho_DT and above 1 above it."""
    with mpmath.workdps(40):
        ref, chi = dt_closed_form(mpmath.mpf(1) / 2)
        r = replica.solve(DT, dps=30, delta="1/2", rho=mpmath.nstr(ref, 34))
        assert r.digits >= 28
        assert abs(r["minimax"] - chi) < mpmath.mpf(10) ** -25
        assert abs(r["slope"] - 1) < mpmath.mpf(10) ** -25
    assert replica.solve(DT, dps=15, delta="1/2", rho="0.35")["slope"] < 1
    assert replica.solve(DT, dps=15, delta="1/2", rho="0.42")["slope"] > 1


# ---------------------------------------------------------------------------------------------
# The LASSO risk: Bayati--Montanari's calibrated state evolution, closed-form moments
# ---------------------------------------------------------------------------------------------
def soft_threshold_moments(tau, zeta, eps):
    """(E (eta(w* + tau Z; zeta) - w*)^2, E eta') for w* = B g, B ~ Bernoulli(eps), g ~ N(0, 1):
    Gaussian moments of a truncated normal (eta(u) - w* = tau Z - clip(u), Stein's lemma)."""
    t = zeta / tau
    mse0 = 2 * tau**2 * ((1 + t**2) * Phi(-t) - t * phi(t))
    s2 = 1 + tau**2
    a = zeta / mpmath.sqrt(s2)
    inside = 1 - 2 * Phi(-a)
    mse1 = tau**2 - 2 * tau**2 * inside + s2 * (inside - 2 * a * phi(a)) + 2 * zeta**2 * Phi(-a)
    return (1 - eps) * mse0 + eps * mse1, (1 - eps) * 2 * Phi(-t) + eps * 2 * Phi(-a)


def lasso_state_evolution(alpha, eps, lam, sigma):
    """Solve tau^2 = (sigma^2 + mse)/alpha, lam = zeta (alpha - E eta') for (tau, zeta)."""
    def F(tau, zeta):
        mse, d = soft_threshold_moments(tau, zeta, eps)
        return [tau**2 - (sigma**2 + mse) / alpha, lam - zeta * (alpha - d)]

    # a damped fixed-point start, then Newton
    tau, zeta = mpmath.mpf("0.3"), lam / alpha
    for _ in range(200):
        mse, d = soft_threshold_moments(tau, zeta, eps)
        tau = (tau + mpmath.sqrt((sigma**2 + mse) / alpha)) / 2
        zeta = (zeta + lam / (alpha - d)) / 2
    tau, zeta = mpmath.findroot(F, (tau, zeta))
    mse, d = soft_threshold_moments(tau, zeta, eps)
    return {"risk": mse, "nonzero": d,
            "train": (sigma**2 + mse) * (alpha - d) ** 2 / alpha**2}


LASSO_POINTS = [dict(alpha="1/2", eps="1/10", lam="1/2", sigma="1/10"),
                dict(alpha="1", eps="1/5", lam="3/10", sigma="1/5"),
                dict(alpha="3", eps="1/2", lam="2", sigma="0")]


@pytest.mark.slow
@pytest.mark.parametrize("point", LASSO_POINTS)
def test_lasso_equals_the_state_evolution_to_25_digits(point):
    r = replica.solve(LASSO, dps=30, **point)
    assert r.digits >= 28
    with mpmath.workdps(45):
        ref = lasso_state_evolution(*(mpq(point[k]) for k in ("alpha", "eps", "lam", "sigma")))
        for k, v in ref.items():
            assert abs(r[k] - v) < mpmath.mpf(10) ** -25 * v, (k, r[k], v)


@pytest.mark.slow
def test_lasso_agrees_with_simulations():
    """The LASSO by FISTA (the example's own simulation code) at d = 200 and 400, 40 seeds
    each: risk, training error and fraction of non-zero entries within 3 standard errors of the
    theory at each d."""
    ns = runpy.run_path(LASSO)
    point = dict(alpha="1", eps="1/5", lam="3/10", sigma="1/5")
    theory = replica.solve(LASSO, dps=15, **point)
    P = params(**point)
    rng = np.random.default_rng(2026)
    runs = {d: [ns["simulate_point"](rng, d, P) for _ in range(40)] for d in (200, 400)}
    zs = check_simulation(point, theory, runs,
                          ("errors.risk", "errors.train", "sparsity.nonzero"))
    print({f"{d}:{k}": round(z, 2) for (d, k), z in zs.items()})
