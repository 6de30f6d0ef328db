r"""The LASSO (and the elastic net) with a covariance spectrum (``ERM(..., penalty=L1("lam"),
covariates=Covariates(...))``, ``examples/glm_lasso_spectrum.py``): the closed-form average of
a piecewise-polynomial function over a Gaussian field against mpmath quadrature, the solve on a
two-level spectrum against a state evolution written here with quadrature, the isotropic limit
(both levels equal) against the isotropic model, the float64 path against the mp one, the
inadmissible SPECs as one-line errors, and (slow) the LASSO solved by coordinate descent at
d = 400, 800, 1600."""

import math
import os
from fractions import Fraction

import mpmath
import numpy as np
import pytest
import sympy

import replica
from replica.errors import ParameterError
from replica.glm import (ERM, Covariates, ElasticNet, GaussBernoulli, L1, Linear, Square,
                         Teacher, calculus)

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLE = os.path.join(REPO, "examples", "glm_lasso_spectrum.py")
POINT = dict(alpha="3/4", eps="1/5", lam="1/2", sigma="1/5")
LEVELS = (Fraction(1, 2), Fraction(3, 2))  # the two-level spectrum (mean 1)


def lasso(penalty=None, covariates=True):
    return ERM("lasso_spec", loss=Square(), penalty=penalty or L1("lam"),
               teacher=Teacher(Linear("sigma"), GaussBernoulli("eps")),
               covariates=Covariates(teacher=None) if covariates else None)


def spec_file(tmp_path, levels, name="levels.txt"):
    f = tmp_path / name
    f.write_text("\n".join(str(c) for c in levels) + "\n")
    return f"file:{f}"


def digits(a, b) -> float:
    with mpmath.workdps(60):
        a, b = mpmath.mpf(a), mpmath.mpf(b)
        return 99.0 if a == b else float(-mpmath.log10(abs(a - b) / abs(b)))


# ---------------------------------------------------------------------------------------------
# the closed-form average over a Gaussian field
# ---------------------------------------------------------------------------------------------
def test_piecewise_average_equals_quadrature():
    """E_Z f(mu + s Z) for the soft-threshold maximum (|b| - lam)_+^2/(2 Vh), its squared slope
    (Heaviside^2 and the product of two disjoint regions' indicators), and a two-sided
    indicator times a polynomial, at a field with a nonzero mean: closed form vs mpmath.quad of
    the same functions written with max/abs (30 digits)."""
    b, z = sympy.symbols("b z", real=True)
    lam, Vh = sympy.Rational(1, 2), sympy.Rational(7, 5)
    mu, s = sympy.Rational(3, 10), sympy.Rational(13, 10)
    H = sympy.Heaviside
    value = (b - lam)**2 * H(b - lam) / (2 * Vh) + (b + lam)**2 * H(-b - lam) / (2 * Vh)
    slope_sq = (H(b - lam) / Vh + H(-b - lam) / Vh)**2
    window = (b**2 - 3 * b + 2) * H(b + lam) * H(lam - b)
    with mpmath.workdps(40):
        L, V, M, S = (mpmath.mpf(x.p) / x.q for x in (lam, Vh, mu, s))

        def quad(g):
            return mpmath.quad(lambda t: g(M + S * t) * mpmath.npdf(t),
                               [-mpmath.inf, (-L - M) / S, (L - M) / S, mpmath.inf])

        refs = [quad(lambda x: max(abs(x) - L, 0)**2 / (2 * V)),
                quad(lambda x: (1 if abs(x) > L else 0) / V**2),
                quad(lambda x: (x**2 - 3 * x + 2) if abs(x) < L else 0)]
        for f, ref in zip((value, slope_sq, window), refs):
            closed = calculus.expect_piecewise(f, b, mu, s, z)
            assert closed is not None and not closed.has(b) and not closed.has(z)
            assert abs(sympy.N(closed, 40) - ref) < mpmath.mpf(10)**-30, (f, closed)


def test_piecewise_average_refuses_what_it_cannot_close():
    b, z, k = sympy.symbols("b z k", real=True)
    assert calculus.expect_piecewise(sympy.exp(b) * sympy.Heaviside(b), b, 0, 1, z) is None
    assert calculus.expect_piecewise(sympy.Heaviside(k * b - 1), b, 0, 1, z) is None


# ---------------------------------------------------------------------------------------------
# the two-level spectrum against a state evolution written here
# ---------------------------------------------------------------------------------------------
def state_evolution(levels, alpha, eps, lam, sigma):
    r"""The fixed-point map ``(m, q, V) -> (m', q', V')`` of the LASSO on a diagonal covariance
    with eigenvalues ``levels`` (equal weights), from the stationarity of
    Phi = -m mh + q Vh/2 - V qh/2 + <Psi_c> - alpha (rho + sigma^2 - 2m + q)/(2(1 + V)),
    Psi_c = E max_w[-Vh c w^2/2 + b w - lam |w|], b = mh c a + sqrt(qh c) Z, written out:
    mh = Vh = alpha/(1 + V), qh = alpha E_res/(1 + V)^2 with E_res = rho + sigma^2 - 2m + q,
    rho = eps <c>, and per level (w = eta(b)/(Vh c), eta the soft threshold; the envelope
    theorem for m and q, Stein's lemma in Z for V, E[a | b] = mh c b/s1^2 for m):
    m = <eps c (mh c/s1^2) E[b eta(b)]/(Vh c)>, q = <E[eta^2]/(Vh^2 c)>,
    V = <P(|b| > lam)>/Vh, with b ~ N(0, s0^2 = qh c) when a = 0 (weight 1 - eps) and
    b ~ N(0, s1^2 = mh^2 c^2 + qh c) when a ~ N(0, 1) (weight eps). Each average is a
    one-dimensional mpmath.quad on (lam, oo) (the integrands are even in b); the tail
    probability is erfc. Also returns the errors at ``(m, q, V)``."""
    cs = [mpmath.mpf(c.numerator) / c.denominator for c in map(Fraction, levels)]
    al, ep, la, sg = (mpmath.mpf(x.numerator) / x.denominator
                      for x in map(Fraction, (alpha, eps, lam, sigma)))
    rho = ep * mpmath.fsum(cs) / len(cs)

    def gauss_tail(g, s):  # E g(b), b ~ N(0, s^2), g even and zero on |b| < lam
        return 2 * mpmath.quad(lambda x: g(x) * mpmath.npdf(x, 0, s), [la, mpmath.inf])

    def update(m, q, V):
        mh = vh = al / (1 + V)
        e_res = rho + sg**2 - 2 * m + q
        qh = al * e_res / (1 + V)**2
        mm = qq = vv = 0
        for c in cs:
            s0, s1 = mpmath.sqrt(qh * c), mpmath.sqrt(mh**2 * c**2 + qh * c)
            mm += ep * c * (mh * c / s1**2) * gauss_tail(lambda x: x * (x - la), s1) / (vh * c)
            for wgt, s in ((1 - ep, s0), (ep, s1)):
                qq += wgt * gauss_tail(lambda x: (x - la)**2, s) / (vh**2 * c)
                vv += wgt * mpmath.erfc(la / (s * mpmath.sqrt(2))) / vh
        n = len(cs)
        errors = {"test": e_res, "risk": e_res - sg**2,
                  "train_loss": e_res / (2 * (1 + V)**2)}
        return (mm / n, qq / n, vv / n), errors

    return update


def test_two_level_spectrum_is_a_fixed_point_of_the_state_evolution(tmp_path):
    """The solve's (m, q, V) is a fixed point of the state evolution written here (to 18 of its
    20 digits), and its errors are the state evolution's at that point."""
    res = replica.solve(EXAMPLE, dps=20, d=2, covariance=spec_file(tmp_path, LEVELS), **POINT)
    v = res.all_values
    with mpmath.workdps(30):
        (m, q, V), errors = state_evolution(LEVELS, **POINT)(v["m"], v["q"], v["V"])
        for k, x in (("m", m), ("q", q), ("V", V)):
            assert digits(v[k], x) >= 18, (k, v[k], x)
        for k, x in errors.items():
            assert digits(v[k], x) >= 18, (k, v[k], x)


def test_example_and_its_two_level_file_solve(tmp_path):
    cov = "file:" + os.path.join(REPO, "examples", "two_level_covariance.txt")
    res = replica.solve(EXAMPLE, dps=20, d=2, covariance=cov, **POINT)
    own = replica.solve(EXAMPLE, dps=20, d=2, covariance=spec_file(tmp_path, LEVELS), **POINT)
    assert digits(res.all_values["test"], own.all_values["test"]) >= 19


@pytest.mark.slow
def test_isotropic_limit_equals_the_isotropic_lasso(tmp_path):
    """Both levels equal: the spectral model is the isotropic one (whose penalty term is a
    Gaussian integral by quadrature, not the closed form) to >= 14 digits (in fact to the
    16-digit solves)."""
    iso = replica.solve(lasso(covariates=False).problem, dps=16, **POINT)
    spec = replica.solve(lasso().problem, dps=16, d=2, covariance=spec_file(tmp_path, (1, 1)),
                         **POINT)
    for k in ("m", "q", "V", "test", "train_loss"):
        assert digits(iso.all_values[k], spec.all_values[k]) >= 15, k


@pytest.mark.slow
def test_isotropic_limit_of_the_elastic_net(tmp_path):
    p = dict(alpha="3/4", eps="1/5", lam1="1/2", lam2="1/3", sigma="1/5")
    iso = replica.solve(lasso(ElasticNet(), covariates=False).problem, dps=20, **p)
    spec = replica.solve(lasso(ElasticNet()).problem, dps=20, d=2,
                         covariance=spec_file(tmp_path, (1, 1)), **p)
    for k in ("m", "q", "V", "test", "train_loss"):
        assert digits(iso.all_values[k], spec.all_values[k]) >= 18, k


def test_float64_agrees_with_mp_on_the_two_level_spectrum(tmp_path):
    cov = spec_file(tmp_path, LEVELS)
    ref = replica.solve(EXAMPLE, dps=25, d=2, covariance=cov, **POINT)
    lams = np.array([0.05, 0.5, 2.0])
    out = replica.solve_float64(EXAMPLE, d=2, covariance=cov, alpha=0.75, eps=0.2, lam=lams,
                                sigma=0.2)
    assert list(out["status"]) == ["converged"] * 3
    assert abs(out["m"][1] / float(ref.all_values["m"]) - 1) < 1e-12
    for j, la in enumerate(("1/20", "1/2", "2")):
        r = replica.solve(EXAMPLE, dps=20, d=2, covariance=cov, **{**POINT, "lam": la})
        for k in ("m", "q", "V", "test"):
            assert abs(out[k][j] / float(r.all_values[k]) - 1) < 1e-12, (la, k)


def test_inadmissible_spectra_are_one_line_errors(tmp_path):
    m = lasso()
    with pytest.raises(ParameterError, match="every eigenvalue positive"):
        replica.solve(m.problem, dps=15, d=4, covariance="lowrank:1/2", **POINT)
    mat = tmp_path / "mat.txt"
    mat.write_text("1 0.3\n0.3 1\n")
    with pytest.raises(ParameterError, match="diagonal SPEC"):
        replica.solve(m.problem, dps=15, d=2, covariance=f"file:{mat}", **POINT)


# ---------------------------------------------------------------------------------------------
# the field: the LASSO solved on sampled data
# ---------------------------------------------------------------------------------------------
def lasso_cd(A, y, lam, tol=1e-11, max_sweeps=5000):
    """argmin_w |y - A w|^2/2 + lam |w|_1 by cyclic coordinate descent (exact minimisation in
    each coordinate: w_j = soft(A_j . r + |A_j|^2 w_j, lam)/|A_j|^2 on the residual r)."""
    At = np.ascontiguousarray(A.T)
    norms = np.einsum("ij,ij->i", At, At)
    w = np.zeros(A.shape[1])
    r = y.copy()
    for _ in range(max_sweeps):
        biggest = 0.0
        for j in range(len(w)):
            rho = At[j] @ r + norms[j] * w[j]
            new = math.copysign(max(abs(rho) - lam, 0.0), rho) / norms[j]
            step = new - w[j]
            if step != 0.0:
                r -= step * At[j]
                w[j] = new
                biggest = max(biggest, abs(step))
        if biggest < tol:
            break
    else:
        raise AssertionError("coordinate descent did not converge")
    g = At @ (y - A @ w)  # the optimality conditions (subgradient)
    on = w != 0
    assert np.all(np.abs(g[~on]) <= lam * (1 + 1e-7))
    assert np.allclose(g[on], lam * np.sign(w[on]), rtol=0, atol=1e-7)
    return w


@pytest.mark.slow
def test_lasso_on_sampled_data_agrees_with_the_theory(tmp_path):
    """Half the coordinates of variance 1/2, half 3/2; a Gauss-Bernoulli teacher; the LASSO by
    coordinate descent; per d (400, 800, 1600), 24 seeds: m = w.C w*/d, q = w.C w/d, the test
    error sigma^2 + (w - w*).C(w - w*)/d, the training loss |y - Aw|^2/(2n) and the fraction of
    nonzero weights (the theory's <P(|b| > lam)> = Vhat V). The theory lies within 4 standard
    errors of the mean at every d, and the standard errors shrink: at d = 1600 below 0.85 of
    those at d = 400 (1/2 for a 1/sqrt(d) law; the test error's measured 0.68 with these seeds
    when this test was written, its seed-to-seed scatter estimated to about 15 %)."""
    res = replica.solve(EXAMPLE, dps=20, d=2, covariance=spec_file(tmp_path, LEVELS), **POINT)
    v = {k: float(x) for k, x in res.all_values.items()}
    theory = {"m": v["m"], "q": v["q"], "test": v["test"], "train_loss": v["train_loss"],
              "nonzero": v["Vhat"] * v["V"]}
    alpha, eps, lam, sigma = 0.75, 0.2, 0.5, 0.2
    se = {}
    for d in (400, 800, 1600):
        n = int(round(alpha * d))
        c = np.repeat([float(x) for x in LEVELS], d // 2)
        rows = []
        for seed in range(24):
            rng = np.random.default_rng([26, d, seed])
            X = rng.standard_normal((n, d)) * np.sqrt(c)
            w_star = np.where(rng.random(d) < eps, rng.standard_normal(d), 0.0)
            A = X / math.sqrt(d)
            y = A @ w_star + sigma * rng.standard_normal(n)
            w = lasso_cd(A, y, lam)
            diff = w - w_star
            rows.append({"m": w @ (c * w_star) / d, "q": w @ (c * w) / d,
                         "test": sigma**2 + diff @ (c * diff) / d,
                         "train_loss": float(np.sum((y - A @ w)**2)) / (2 * n),
                         "nonzero": np.count_nonzero(w) / d})
        se[d] = {}
        for k, t in theory.items():
            xs = np.array([r[k] for r in rows])
            se[d][k] = xs.std(ddof=1) / math.sqrt(len(xs))
            assert abs(xs.mean() - t) < 4 * se[d][k], (d, k, xs.mean(), t, se[d][k])
    for k in theory:
        assert se[1600][k] < 0.85 * se[400][k], (k, se)
