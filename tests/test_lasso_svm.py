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
    how = (["--name", "donoho-tanner"] if delta == "1/4" else  # the declared transition
           ["--vary", "rho", "--between", "1/20,19/20", "--quantity", "slope", "--kind",
            "level", "--level", "1"])
    proc = subprocess.run(
        [sys.executable, "-m", "replica", "transition", "--model", DT, "--delta", delta, *how,
         "--dps", "30", "--json"], capture_output=True, text=True, cwd=REPO, timeout=600)
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


LASSO_CURVE = [dict(alpha="1", eps="1/5", lam=lam, sigma="1/5") for lam in ("1/10", "3/10", "1")]
LASSO_CURVE.append(dict(alpha="1/2", eps="1/10", lam="1", sigma="1/10"))  # n < d


@pytest.mark.slow
@pytest.mark.parametrize("point", LASSO_CURVE)
def test_lasso_agrees_with_simulations(point):
    """A risk curve in lambda at alpha = 1 and a point with fewer samples than dimensions: the
    LASSO by FISTA (the example's own SIMULATION code) at d = 200 and 400, 40 seeds each; risk,
    training error and fraction of non-zero entries within 3 standard errors of the theory at
    each d."""
    ns = runpy.run_path(LASSO)
    sim = ns["SIMULATION"]
    theory = replica.solve(LASSO, dps=15, **point)
    P = params(**point)
    rng = np.random.default_rng(2026)
    runs = {}
    for d in (200, 400):
        runs[d] = []
        for _ in range(40):
            instance = sim.sample(rng, d, P)
            runs[d].append(sim.measure(instance, sim.train(instance, P), P))
    zs = check_simulation(point, theory, runs,
                          ("errors.risk", "errors.train", "sparsity.nonzero"))
    print(point, {f"{d}:{k}": round(z, 2) for (d, k), z in zs.items()})


# ---------------------------------------------------------------------------------------------
# The max-margin classifier: the other order of integration, and the large-alpha constant
# ---------------------------------------------------------------------------------------------
def hinge_envelope_by_teacher_field(R, kappa):
    """(F, dF/dR) for F(R, kappa) = 2 E[1{u > 0} (kappa - R u - sqrt(1 - R^2) s)_+^2], the
    Gaussian s integrated first in closed form, b^2 g(a), g(a) = (1 + a^2) Phi(a) + a phi(a),
    a = (kappa - R u)/b, b = sqrt(1 - R^2), and the teacher field u > 0 by quadrature of a
    smooth integrand (the example integrates the student field t against the teacher's
    H-function instead). dF/dR by differentiating b^2 g(a) by hand: -2 R g(a)
    + b^2 g'(a) (R kappa - u)/b^3, g'(a) = 2 a Phi(a) + 2 phi(a)."""
    b = mpmath.sqrt(1 - R**2)

    def g(a):
        return (1 + a**2) * Phi(a) + a * phi(a)

    def value(u):
        return phi(u) * b**2 * g((kappa - R * u) / b)

    def slope(u):
        a = (kappa - R * u) / b
        return phi(u) * (-2 * R * g(a) + (2 * a * Phi(a) + 2 * phi(a)) * (R * kappa - u) / b)

    nodes = [0, 1, 4, mpmath.inf]
    return 2 * mpmath.quad(value, nodes), 2 * mpmath.quad(slope, nodes)


def max_margin_equations(alpha):
    """(R, kappa_max): 1 - R^2 = alpha F and 2 R = -alpha dF/dR, by findroot from
    R = 1 - 0.3/alpha, kappa = 0.8/alpha."""
    def F(R, k):
        f, df = hinge_envelope_by_teacher_field(R, k)
        return [1 - R**2 - alpha * f, 2 * R + alpha * df]

    return mpmath.findroot(F, (1 - mpmath.mpf("0.3") / alpha, mpmath.mpf("0.8") / alpha))


@pytest.fixture(scope="module")
def svm():
    return replica.load_model(SVM)


@pytest.mark.slow
@pytest.mark.parametrize("alpha", ["1", "2", "5"])
def test_max_margin_equals_the_teacher_field_quadrature(svm, alpha):
    r = replica.solve(svm, dps=25, alpha=alpha)
    assert r.digits >= 25
    with mpmath.workdps(35):
        R, k = max_margin_equations(mpq(alpha))
        tol = mpmath.mpf(10) ** -22
        assert abs(r["R"] - R) < tol, (r["R"], R)
        assert abs(r["kappa_max"] - k) < tol * k, (r["kappa_max"], k)
        assert abs(r["generalisation"] - mpmath.acos(R) / mpmath.pi) < tol


@pytest.mark.slow
def test_max_margin_large_alpha_constant(svm):
    """alpha eps_g -> c = 1/(sqrt(2 pi) G(k)), k^3 Phi(k) + (k^2 - 1) phi(k) = 0 (derived in the
    example's docstring), about 0.5005 (the value quoted by Engel and Van den Broeck). The
    correction falls like alpha^-2 (measured: 2.2e-3 at alpha = 20, 9.0e-5 at 100), so the
    Richardson extrapolation of the two agrees with c to 1e-5."""
    with mpmath.workdps(30):
        k = mpmath.findroot(lambda k: k**3 * Phi(k) + (k**2 - 1) * phi(k), mpmath.mpf("0.6"))
        c = 1 / (mpmath.sqrt(2 * mpmath.pi) * ((k**3 + 3 * k) * Phi(k) + (k**2 + 2) * phi(k)) / 3)
        assert abs(c - mpmath.mpf("0.5005")) < 1e-4
        a20 = 20 * replica.solve(svm, dps=20, alpha="20")["generalisation"]
        a100 = 100 * replica.solve(svm, dps=20, alpha="100")["generalisation"]
        assert abs(a100 - c) < 2e-4 < abs(a20 - c)
        assert abs((25 * a100 - a20) / 24 - c) < 1e-5, ((25 * a100 - a20) / 24, c)


@pytest.mark.slow
def test_max_margin_agrees_with_simulations(svm):
    """The hard-margin SVM (the example's least-distance programme by NNLS) at d = 100, 200,
    400: kappa_max, R and eps_g within 3 standard errors of the theory at each d."""
    ns = runpy.run_path(SVM)
    point = {"alpha": "2"}
    theory = replica.solve(svm, dps=15, **point)
    P = params(**point)
    rng = np.random.default_rng(1988)
    sim = ns["SIMULATION"]

    def one(d):
        instance = sim.sample(rng, d, P)
        return sim.measure(instance, sim.train(instance, P), P)

    runs = {d: [one(d) for _ in range(seeds)] for d, seeds in ((100, 100), (200, 60), (400, 30))}
    for values in runs.values():  # the solver's output is a separating direction
        assert min(v["margin.kappa_max"] for v in values) > 0
    zs = check_simulation(point, theory, runs,
                          ("margin.kappa_max", "overlap.R", "errors.generalisation"))
    print({f"{d}:{k}": round(z, 2) for (d, k), z in zs.items()})


# ---------------------------------------------------------------------------------------------
# The command lines the docstrings document, and refused input
# ---------------------------------------------------------------------------------------------
def run_cli(*args):
    return subprocess.run([sys.executable, "-m", "replica", *args], capture_output=True,
                          text=True, cwd=REPO, timeout=600)


@pytest.mark.slow
@pytest.mark.parametrize("path,args", [
    (LASSO, ["--alpha", "1", "--eps", "2", "--lam", "1", "--sigma", "0"]),
    (DT, ["--delta", "1/2", "--rho", "3"]),
    (SVM, ["--alpha", "0"]),
])
def test_refused_parameters_are_one_line_exit_2(path, args):
    proc = run_cli("solve", "--model", path, *args)
    assert proc.returncode == 2, proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr


@pytest.mark.slow
@pytest.mark.parametrize("path,args,keys", [
    (LASSO, ["--alpha", "1/2", "--eps", "1/10", "--lam", "1/2", "--sigma", "1/10", "--dps", "15"],
     [("errors", "risk"), ("sparsity", "nonzero"), ("order_parameters", "m")]),
    (SVM, ["--alpha", "2"], [("margin", "kappa_max"), ("errors", "generalisation")]),
])
def test_documented_solve_commands(path, args, keys):
    proc = run_cli("solve", "--model", path, *args, "--json")
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["converged"] and out["digits"] >= 15
    for group, name in keys:
        assert 0 < float(out[group][name]) < 1


@pytest.mark.slow
def test_documented_simulate_command():
    """``replica simulate`` runs the file's SIMULATION against its theory (the CLI path; the
    statistics are tested above)."""
    proc = run_cli("simulate", "--model", SVM, "--alpha", "2", "--d", "100", "--seeds", "10",
                   "--dps", "15", "--json")
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["theory_status"] == "converged" and out["sizes"] == {"n": 200}
    for key in ("margin.kappa_max", "errors.generalisation", "overlap.R"):
        assert math.isfinite(float(out["errors"][key]["z"]))
