"""Replica-symmetry stability of issue 26's hand-written examples
(``examples/perceptron_teacher.py``, ``logistic_regression.py``, ``lasso.py``,
``hinge_svm.py``): each file's ``stability`` record against computations written here, none of
which uses the engine's quadrature or code generator:

* the Bayes-optimal perceptron states exactness (Nishimori), and the JSON says so;
* ridge logistic regression: the replicon by mpmath quadrature of the stated formula with the
  proximal map solved here by ``findroot`` at the engine's order parameters; the replicon of
  ``examples/glm_logistic.py`` (built from parts by :mod:`replica.glm`) at the same parameters;
  the Cauchy--Schwarz bound; the declared slope of ``g_out`` against SymPy's derivative of the
  declared proximal map;
* the LASSO: the replicon from closed-form threshold probabilities (erfc) at the engine's
  conjugates; ``1 - (fraction of non-zeros)/alpha`` from the Bayati--Montanari state evolution
  solved here with closed-form moments; ``examples/glm_lasso.py``; FISTA fits (``1 - nnz/n``);
* the max-margin classifier: mpmath quadrature of the support-vector probability; the bivariate
  normal probability it equals (SciPy); the number of support vectors of NNLS fits.

And ``replica phase-diagram`` on the two models with two continuous parameters: no AT line is
drawn where the replicon is positive everywhere, and the command says so."""

from __future__ import annotations

import csv
import json
import math
import os
import runpy
from fractions import Fraction
from types import SimpleNamespace

import mpmath
import numpy as np
import pytest
import sympy

import replica
from replica.analysis.scan import replicon_summary
from replica.cli import main

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def example(name):
    return os.path.join(REPO, "examples", f"{name}.py")


def mpq(text):
    f = Fraction(str(text))
    return mpmath.mpf(f.numerator) / f.denominator


def values(result, *names):
    return [mpmath.mpf(result.all_values[n]) for n in names]


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


# ---------------------------------------------------------------------------------------------
# Every file declares its stability (fails when a Stability record is dropped)
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name, kind", [("perceptron_teacher", "exact"),
                                        ("logistic_regression", "replicon"),
                                        ("lasso", "replicon"), ("hinge_svm", "replicon")])
def test_each_example_declares_its_stability(name, kind):
    problem = replica.load_model(example(name))
    st = problem.stability
    assert st is not None, f"{name} declares no stability"
    if kind == "exact":
        assert st.replicon is None and "Nishimori" in st.exact
        assert "replicon" not in problem.report_names()
    else:
        assert st.replicon is not None and not st.exact
        assert "replicon" in problem.report_names()


def test_bayes_optimal_json_states_exactness(capsys):
    """``replica solve --json`` on the Bayes-optimal perceptron: ``stability`` carries no
    replicon, ``stable: true`` and the reason (the Nishimori identities)."""
    code, out, err = run(capsys, "solve", "--model", example("perceptron_teacher"), "--alpha",
                         "1", "--dps", "15", "--json", "--quiet")
    assert code == 0, err
    st = json.loads(out)["stability"]
    assert st["replicon"] is None and st["stable"] is True
    assert st["how"].startswith("exact:") and "Nishimori" in st["how"]


# ---------------------------------------------------------------------------------------------
# Ridge logistic regression
# ---------------------------------------------------------------------------------------------
def test_logistic_slope_is_the_derivative_of_the_declared_proximal_map():
    """The declared ``d_omega g_out = -1/(V + 4 cosh^2(p/2))`` is SymPy's derivative of
    ``(prox(omega, V) - omega)/V`` (implicit function theorem on the declared root), written
    with the proximal value as a plain symbol."""
    ns = runpy.run_path(example("logistic_regression"))
    w, V, P = ns["w_"], ns["V"], ns["P"]
    derivative = sympy.diff((ns["PROX"](w, V) - w) / V, w)
    p = sympy.Symbol("p", real=True)
    declared = ns["PROX_SLOPE_TERM"].xreplace({P: p})
    assert declared.free_symbols == {p, V}
    derived = derivative.xreplace({ns["PROX"](w, V): p})
    for pv, Vv in ((0, 1), (sympy.Rational(3, 2), sympy.Rational(1, 3)), (-7, 5), (20, 2)):
        a = sympy.N(derived.subs({p: pv, V: Vv}), 30)
        b = sympy.N(declared.subs({p: pv, V: Vv}), 30)
        assert abs(a - b) <= 1e-28 * abs(b), (pv, Vv, a, b)


def logistic_replicon_by_hand(alpha, lam, eta, m, q, V, Vhat):
    """1 - 2 alpha/(lam + Vhat)^2 int Dxi Phi(eta m xi/sqrt(q - eta^2 m^2)) (l''/(1 + V l''))^2
    at p = prox(sqrt(q) xi, V), the root of p - omega - V/(1 + e^p) on [omega, omega + V],
    l''(p) = sigma(p) sigma(-p), by mpmath (quad, findroot): the stated formula, none of the
    engine's code."""
    s = mpmath.sqrt(q - eta**2 * m**2)

    def prox(omega):  # Newton from the bracket's middle, kept inside the bracket
        lo, hi = omega, omega + V
        p = omega + V / 2
        for _ in range(200):
            e = mpmath.exp(-abs(p))  # sigma(p) and sigma''s slope without overflow
            sig = 1 / (1 + e) if p >= 0 else e / (1 + e)  # 1/(1 + e^-p)
            f = p - omega - V * (1 - sig)  # V/(1 + e^p) = V (1 - sigma(p))
            step = f / (1 + V * sig * (1 - sig))
            new = min(max(p - step, lo), hi)
            if abs(new - p) <= 16 * mpmath.eps * (1 + abs(p)):
                return new
            p = new
        raise ArithmeticError(f"no proximal root at omega = {omega}")

    def integrand(xi):
        p = prox(mpmath.sqrt(q) * xi)
        curv = 1 / ((1 + mpmath.exp(p)) * (1 + mpmath.exp(-p)))
        return mpmath.npdf(xi) * mpmath.ncdf(eta * m * xi / s) * (curv / (1 + V * curv)) ** 2

    return 1 - 2 * alpha / (lam + Vhat) ** 2 * mpmath.quad(integrand, [-mpmath.inf, 0,
                                                                      mpmath.inf])


LOGISTIC_POINTS = [dict(alpha="2", lam="1/10", eta="9/10"), dict(alpha="1/2", lam="1", eta="1")]
_LOGISTIC = {}


def logistic_solve(point):
    """The example's solve at ``point`` (30 digits), once per test session."""
    key = tuple(sorted(point.items()))
    if key not in _LOGISTIC:
        _LOGISTIC[key] = replica.solve(example("logistic_regression"), dps=30, **point)
    return _LOGISTIC[key]


@pytest.mark.slow
@pytest.mark.parametrize("point", LOGISTIC_POINTS)
def test_logistic_replicon_against_quadrature_by_hand(point):
    """The reported replicon against :func:`logistic_replicon_by_hand` at the engine's solved
    (m, q, V, Vhat), to 15 digits; it is positive and obeys the Cauchy--Schwarz bound
    1 - replicon >= (V Vhat)^2/alpha."""
    r = logistic_solve(point)
    assert r.converged and r.digits >= 28
    with mpmath.workdps(25):
        m, q, V, Vhat = values(r, "m", "q", "V", "Vhat")
        a, la, e = (mpq(point[k]) for k in ("alpha", "lam", "eta"))
        ref = logistic_replicon_by_hand(a, la, e, m, q, V, Vhat)
        got = mpmath.mpf(r["replicon"])
        assert abs(got - ref) <= mpmath.mpf(10) ** -15 * abs(ref), (got, ref)
        assert 0 < got < 1
        assert 1 - got >= (V * Vhat) ** 2 / a
    assert json.loads(json.dumps(r.stability_dict()))["stable"] is True


@pytest.mark.slow
def test_logistic_replicon_equals_the_glm_builder():
    """``examples/glm_logistic.py`` (``replica.glm.ERM``, replicon derived from the parts) at
    the same parameters: the same replicon to 25 digits (the two files agree on the parameter
    conventions: tests/test_glm.py compares their order parameters)."""
    p = LOGISTIC_POINTS[0]
    mine = logistic_solve(p)
    glm = replica.solve(example("glm_logistic"), dps=30, **p)
    for k in ("m", "q", "V"):
        assert abs(mine[k] - glm[k]) <= mpmath.mpf(10) ** -25 * abs(glm[k])
    assert abs(mine["replicon"] - glm["replicon"]) <= mpmath.mpf(10) ** -25 * glm["replicon"]


# ---------------------------------------------------------------------------------------------
# The LASSO
# ---------------------------------------------------------------------------------------------
def lasso_replicon_closed_form(alpha, eps, lam, V, mhat, qhat, Vhat):
    """1 - alpha/((1 + V)^2 Vhat^2) [(1 - eps) P(|sqrt(qhat) z| > lam)
    + eps P(|sqrt(mhat^2 + qhat) z| > lam)], P(|s z| > lam) = erfc(lam/(s sqrt 2))."""
    def outside(s):
        return mpmath.erfc(lam / (s * mpmath.sqrt(2)))

    slope_sq = ((1 - eps) * outside(mpmath.sqrt(qhat))
                + eps * outside(mpmath.sqrt(mhat**2 + qhat))) / Vhat**2
    return 1 - alpha * slope_sq / (1 + V) ** 2


def lasso_nonzero_by_state_evolution(alpha, eps, lam, sigma, start):
    """E eta' of the calibrated state evolution (Bayati and Montanari 2012): tau^2 = (sigma^2 +
    mse)/alpha, lam = zeta (alpha - E eta'), with the soft threshold's moments in closed form
    (w* = B g, B ~ Bernoulli(eps)): E eta' = (1 - eps) 2 Phi(-zeta/tau)
    + eps 2 Phi(-zeta/sqrt(1 + tau^2)); the mse by truncated-normal moments. ``start``:
    (tau, zeta) to start Newton's method from (the engine's solution rounded to 6 digits, a
    start only: the root is that of these equations, to the working precision)."""
    Phi, phi = mpmath.ncdf, mpmath.npdf

    def moments(tau, zeta):
        t = zeta / tau
        zero = 2 * tau**2 * ((1 + t**2) * Phi(-t) - t * phi(t))  # E (eta(tau Z) - 0)^2
        s = mpmath.sqrt(1 + tau**2)
        a = zeta / s
        # w* ~ N(0, 1): u = w* + tau Z ~ N(0, s^2); E (eta(u) - w*)^2 written by hand:
        # E[(u - w*)^2; |u| < zeta]-type pieces collected as in the truncated-normal moments
        inside = 1 - 2 * Phi(-a)
        one = (tau**2 - 2 * tau**2 * inside + s**2 * (inside - 2 * a * phi(a))
               + 2 * zeta**2 * Phi(-a))
        nonzero = (1 - eps) * 2 * Phi(-t) + eps * 2 * Phi(-a)
        return (1 - eps) * zero + eps * one, nonzero

    def F(tau, zeta):
        mse, nz = moments(tau, zeta)
        return [tau**2 - (sigma**2 + mse) / alpha, lam - zeta * (alpha - nz)]

    tau, zeta = mpmath.findroot(F, start)
    assert abs(tau - start[0]) < 1e-3 * tau and abs(zeta - start[1]) < 1e-3 * zeta
    return moments(tau, zeta)[1]


LASSO_POINTS = [dict(alpha="1/2", eps="1/10", lam="1/2", sigma="1/10"),
                dict(alpha="1/2", eps="1/5", lam="1/20", sigma="1/5"),
                dict(alpha="3", eps="1/2", lam="2", sigma="0")]


@pytest.mark.slow
@pytest.mark.parametrize("point", LASSO_POINTS)
def test_lasso_replicon_against_closed_forms(point):
    """The reported replicon (Gaussian integrals of Heaviside functions split at the thresholds
    by the engine) against (a) the erfc closed form at the engine's conjugates, 25 digits;
    (b) 1 - E eta'/alpha with E eta' from the state evolution solved here, 25 digits; (c) the
    identity replicon = 1/(1 + V) at the saddle point."""
    r = replica.solve(example("lasso"), dps=30, **point)
    assert r.converged and r.digits >= 28
    with mpmath.workdps(45):
        a, e, la, s = (mpq(point[k]) for k in ("alpha", "eps", "lam", "sigma"))
        V, mhat, qhat, Vhat = values(r, "V", "mhat", "qhat", "Vhat")
        got = mpmath.mpf(r["replicon"])
        tol = mpmath.mpf(10) ** -25
        closed = lasso_replicon_closed_form(a, e, la, V, mhat, qhat, Vhat)
        assert abs(got - closed) <= tol * closed, (got, closed)
        risk = mpmath.mpf(r["risk"])
        start = tuple(mpmath.mpf(mpmath.nstr(x, 6)) for x in
                      (mpmath.sqrt((s**2 + risk) / a), la * (1 + V) / a))
        by_se = 1 - lasso_nonzero_by_state_evolution(a, e, la, s, start) / a
        assert abs(got - by_se) <= tol * by_se, (got, by_se)
        assert abs(got - 1 / (1 + V)) <= tol * got
        assert 0 < got < 1


@pytest.mark.slow
def test_lasso_replicon_equals_the_glm_builder():
    """``examples/glm_lasso.py`` (square loss, L1, Gauss--Bernoulli prior from parts; the same
    parameter names and conventions, tests/test_glm.py) reports the same replicon."""
    p = dict(alpha="1/2", eps="1/10", lam="1/2", sigma="1/10")
    mine = replica.solve(example("lasso"), dps=30, **p)
    glm = replica.solve(example("glm_lasso"), dps=30, **p)
    assert abs(mine["replicon"] - glm["replicon"]) <= mpmath.mpf(10) ** -25 * glm["replicon"]


@pytest.mark.slow
def test_lasso_replicon_against_fista_fits():
    """1 - (non-zero entries)/n of the LASSO fitted by FISTA (the example's SIMULATION) at
    d = 200 and 400, n = d/2, 30 seeds each: within 3 standard errors of the theory. At this
    point a quarter of the samples carry a non-zero coefficient."""
    point = dict(alpha="1/2", eps="1/5", lam="1/20", sigma="1/5")
    theory = float(replica.solve(example("lasso"), dps=15, **point)["replicon"])
    assert theory < 0.8
    sim = runpy.run_path(example("lasso"))["SIMULATION"]
    P = SimpleNamespace(**{k: Fraction(v) for k, v in point.items()})
    rng = np.random.default_rng(26)
    for d in (200, 400):
        x = []
        for _ in range(30):
            inst = sim.sample(rng, d, P)
            x.append(sim.measure(inst, sim.train(inst, P), P)["stability.replicon"])
        mean, sem = np.mean(x), np.std(x, ddof=1) / math.sqrt(len(x))
        assert abs(mean - theory) <= 3 * sem, (d, mean, theory, sem)


# ---------------------------------------------------------------------------------------------
# The max-margin classifier
# ---------------------------------------------------------------------------------------------
def support_vector_probability(theta, kappa):
    """2 int_{-oo}^{kappa} Dt H(-t cos(theta)/sin(theta)), by mpmath quadrature split at 0."""
    c = mpmath.cos(theta) / mpmath.sin(theta)
    f = lambda t: mpmath.npdf(t) * mpmath.ncdf(t * c)  # H(-x) = Phi(x)
    pts = [-mpmath.inf, 0, kappa] if kappa > 0 else [-mpmath.inf, kappa]
    return 2 * mpmath.quad(f, pts)


@pytest.mark.parametrize("alpha", ["1/2", "2", "10"])
def test_max_margin_replicon_against_quadrature(alpha):
    """The reported replicon against 1 - alpha P(support vector), the probability by mpmath at
    the engine's (theta, kappa), 20 digits; and P against a second route, the bivariate normal
    probability P(T <= kappa, (Z - T cot theta) sin theta <= 0) = Phi_2(kappa, 0; -cos theta)
    (SciPy, 1e-7)."""
    from scipy.stats import multivariate_normal

    r = replica.solve(example("hinge_svm"), dps=25, alpha=alpha)
    assert r.converged and r.digits >= 20
    with mpmath.workdps(30):
        theta, kappa = values(r, "theta", "kappa")
        prob = support_vector_probability(theta, kappa)
        ref = 1 - mpq(alpha) * prob
        got = mpmath.mpf(r["replicon"])
        assert abs(got - ref) <= mpmath.mpf(10) ** -20 * abs(ref), (got, ref)
        rho = -float(mpmath.cos(theta))
        bvn = multivariate_normal(mean=[0, 0], cov=[[1, rho], [rho, 1]]).cdf(
            [float(kappa), 0.0])
        assert abs(float(prob) - 2 * bvn) <= 1e-7
        assert 0 < got < 1


def test_max_margin_replicon_tends_to_zero_from_above():
    """Derived in the docstring: n_SV/d -> 1 as alpha -> oo, so the replicon is positive and
    tends to zero (marginal, never negative)."""
    got = [replica.solve(example("hinge_svm"), dps=15, alpha=a)["replicon"]
           for a in ("2", "10", "100")]
    assert 0 < got[2] < got[1] < got[0]
    assert got[2] < 1e-3


@pytest.mark.slow
def test_max_margin_replicon_against_support_vectors_of_fits():
    """1 - n_SV/d of the hard-margin SVM (the example's NNLS programme) at alpha = 2, d = 100,
    200, 400: within 3 standard errors plus 2/d of the theory (a finite-size allowance: measured
    means 0.174, 0.178, 0.183 against 0.1829), the largest d within 3 standard errors alone."""
    point = {"alpha": "2"}
    theory = float(replica.solve(example("hinge_svm"), dps=15, **point)["replicon"])
    sim = runpy.run_path(example("hinge_svm"))["SIMULATION"]
    P = SimpleNamespace(alpha=Fraction(2))
    rng = np.random.default_rng(1988)
    for d, seeds in ((100, 60), (200, 40), (400, 20)):
        x = []
        for _ in range(seeds):
            inst = sim.sample(rng, d, P)
            x.append(sim.measure(inst, sim.train(inst, P), P)["stability.replicon"])
        mean, sem = np.mean(x), np.std(x, ddof=1) / math.sqrt(len(x))
        allowance = 0 if d == 400 else 2 / d
        assert abs(mean - theory) <= 3 * sem + allowance, (d, mean, theory, sem)


# ---------------------------------------------------------------------------------------------
# Phase diagrams: the AT line where it exists, "no AT line" where it does not
# ---------------------------------------------------------------------------------------------
def test_replicon_summary_sentences():
    assert replicon_summary([0.5, 0.7, float("nan")], 0).startswith(
        "no AT line: replicon > 0 at all 2 converged points (smallest 0.5)")
    assert "unstable on the whole grid" in replicon_summary([-0.1, -0.2], 0)
    assert replicon_summary([-0.1, 0.2, 0.3], 1).startswith(
        "AT line (replicon = 0): 1 segment; replica symmetry unstable (replicon < 0) at 1 of 3")
    assert "stability unknown" in replicon_summary([], 0)


@pytest.mark.slow
@pytest.mark.parametrize("name, args", [
    ("lasso", ["--x", "alpha:1/4:1:3", "--y", "lam:1/10:1:3:log", "--quantity", "risk",
               "--eps", "1/10", "--sigma", "1/10"]),
    ("logistic_regression", ["--x", "alpha:1/2:3:3", "--y", "lam:1/100:1:3:log", "--quantity",
                             "generalisation", "--eta", "1"]),
])
def test_phase_diagram_says_there_is_no_at_line(name, args, tmp_path, capsys):
    """Convex ERM with lambda > 0: the replicon is positive at every grid point (its column in
    the CSV), the AT-line file has no points, and the command says "no AT line" with the
    smallest replicon instead of drawing a line."""
    code, out, err = run(capsys, "phase-diagram", "--model", example(name), *args, "-o",
                         str(tmp_path), "--quiet")
    assert code == 0, err
    line = [s for s in out.splitlines() if s.startswith("stability: ")]
    stem = next(p for p in tmp_path.iterdir() if p.suffix == ".csv"
                and not p.name.endswith("_at_line.csv"))
    with open(stem, newline="") as fh:
        rows = [r for r in csv.DictReader(fh) if r["converged"] == "True"]
    assert len(rows) >= 6  # of 9 (logistic regression: 7 verified in float64 at lam = 1/100)
    assert len(line) == 1 and f"no AT line: replicon > 0 at all {len(rows)} converged" in line[0]
    smallest = min(float(r["replicon"]) for r in rows)
    assert smallest > 0 and f"smallest {smallest:.4g}" in line[0]
    at_line = next(p for p in tmp_path.iterdir() if p.name.endswith("_at_line.csv"))
    assert at_line.read_text().strip().splitlines() == [args[1].split(":")[0] + ","
                                                        + args[3].split(":")[0] + ",segment"]


@pytest.mark.slow
def test_phase_diagram_reports_the_at_line_where_it_exists(tmp_path, capsys):
    """The Gardner volume at negative margin (``examples/perceptron_gardner.py``), whose AT line
    at kappa = -1/2 is alpha_AT = 3.95...: a grid across it reports the line and the points
    where replica symmetry is unstable (those with alpha > alpha_AT)."""
    code, out, err = run(capsys, "phase-diagram", "--model", example("perceptron_gardner"),
                         "--x", "alpha:3:4.5:4", "--y=kappa:-0.6:-0.4:3", "--quantity", "q",
                         "-o", str(tmp_path), "--quiet")
    assert code == 0, err
    line = [s for s in out.splitlines() if s.startswith("stability: ")]
    assert len(line) == 1 and line[0].startswith("stability: AT line (replicon = 0): 1 segment")
    with open(next(p for p in tmp_path.iterdir() if p.name.endswith("_at_line.csv"))) as fh:
        pts = list(csv.DictReader(fh))
    assert pts and all(3 < float(p["alpha"]) <= 4.5 for p in pts)
