"""The worked examples in ``examples/`` against independent evidence: the built-in model where
they coincide with it, finite-size simulations, and published closed forms."""

import math
import os

import mpmath
import numpy as np
import pytest

import replica
from conftest import converges_like_one_over_d as _converges

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OVERLAP = os.path.join(REPO, "examples", "lowrank_partial_overlap.py")
POINT = dict(alpha=2, tau="9/4", kappa="3/2", rho="1/2", sigma="3/10")


@pytest.fixture(scope="module")
def overlap():
    return replica.load_model(OVERLAP)


@pytest.mark.slow
def test_partial_overlap_reduces_to_idg_and_odg(overlap):
    """phi = 0 is the built-in model's IDG error and phi = 1 - rho its ODG error (30 digits):
    the file's saddle point and overlaps are the low-rank model's, evaluated by the generic
    engine instead of the model's own declaration."""
    ref = replica.solve("lowrank", dps=30, **POINT)
    for phi, key in (("0", "idg"), ("1/2", "odg")):
        r = replica.solve(overlap, dps=30, phi=phi, **POINT)
        assert r.digits >= 28
        with mpmath.workdps(40):
            assert abs(r["e_phi"] - ref[key]) < mpmath.mpf(10) ** -27
    r = replica.solve(overlap, dps=30, phi="1/4", **POINT)
    assert r["m_perp"] == 0  # nothing is learnt outside the subspace
    assert ref["idg"] < r["e_phi"] < ref["odg"]


@pytest.mark.slow
def test_partial_overlap_agrees_with_finite_size_simulations(overlap):
    """Linear attention trained at D = 8, 16, 32 (every ratio exact): its exact expected error on
    tasks with a quarter of their power outside the subspace, and the overlap
    q_perp = tr(Gamma (I - P) Gamma^T)/(D - r) on the complement (the new ingredient of e_phi),
    approach the theory like 1/D (:func:`_converges`). The overlap has the larger finite-size
    correction: D (mean - theory)/theory measured 7.4, 6.5, 6.5, 5.4, 4.0 at D = 8, 12, 16, 24,
    32, so its allowance is A = 8 (6 for the error); a wrong q_perp (q_perp = qbar) fails the
    extrapolation by 7 of its standard errors."""
    from replica.simulate import seed_sequences
    from replica.simulate.evaluate import TaskMoments, expected_error
    from replica.simulate.experiment import make_experiment, train_lowrank

    phi = 0.25
    r = replica.solve(overlap, dps=20, phi="1/4", **POINT)
    errors, q_perp = {}, {}
    for d, seeds in ((8, 200), (16, 80), (32, 30)):
        exp = make_experiment("lowrank", d, **POINT)
        assert not any(n.startswith("finite size") for n in exp.notes())
        errors[d], q_perp[d] = [], []
        for seq in seed_sequences(11, seeds):
            gamma, _, A = train_lowrank(exp, seq)
            proj = A @ A.T
            k = A.shape[1]
            R = (1 - phi) * (d / k) * proj + phi * (d / (d - k)) * (np.eye(d) - proj)
            errors[d].append(expected_error(gamma, TaskMoments.gaussian(R),
                                            exp.sizes["ell_test"], 0.0))
            q_perp[d].append((np.sum(gamma * gamma) - np.sum((gamma @ A) ** 2)) / (d - k))
    _converges(errors, float(r["e_phi"]), "e_phi")
    _converges(q_perp, float(r["q_perp"]), "q_perp", allowance=8)


TEACHER = os.path.join(REPO, "examples", "structured_teacher.py")


@pytest.fixture(scope="module")
def teacher():
    return replica.load_model(TEACHER)


def spectral_learning_curve(alpha, lam, sigma2, cs, ts):
    r"""The published closed form of the spectral theory of kernel ridge regression, in this
    file's normalisation: the effective ridge :math:`\kappa` solves
    :math:`\alpha\kappa = \lambda + \kappa\langle c/(c+\kappa)\rangle`, and with
    :math:`\gamma = \langle c^2/(c+\kappa)^2\rangle/\alpha` the test error (label noise included)
    is :math:`\sigma^2 + [\kappa^2\langle t c/(c+\kappa)^2\rangle + \sigma^2\gamma]/(1-\gamma)`.
    Solved with mpmath's root finder; nothing of the model file is used."""
    d = len(cs)

    def mean(f):
        return mpmath.fsum(f(c, t) for c, t in zip(cs, ts)) / d

    kappa = mpmath.findroot(lambda k: alpha * k - lam - k * mean(lambda c, t: c / (c + k)),
                            lam / alpha + lam)
    gamma = mean(lambda c, t: c**2 / (c + kappa) ** 2) / alpha
    return sigma2 + (kappa**2 * mean(lambda c, t: t * c / (c + kappa) ** 2)
                     + sigma2 * gamma) / (1 - gamma)


@pytest.mark.parametrize("cov,spec_t,alpha,lam", [("powerlaw:1", "powerlaw:2", "2", "1/100"),
                                                  ("piano", "identity", "1/2", "1/10"),
                                                  ("powerlaw:3/2", "spike:1", "5", "1")])
def test_structured_teacher_equals_the_published_closed_form(teacher, cov, spec_t, alpha, lam):
    from fractions import Fraction

    from replica.spectra import parse_spec

    d = 40
    r = replica.solve(teacher, dps=35, alpha=alpha, lam=lam, sigma="1/10", d=d, covariance=cov,
                      teacher=spec_t)
    assert r.digits >= 33
    with mpmath.workdps(45):
        cs, ts = parse_spec(cov, d).diag_mp(), parse_spec(spec_t, d).diag_mp()
        a, la = (mpmath.mpf(Fraction(v).numerator) / Fraction(v).denominator
                 for v in (alpha, lam))
        ref = spectral_learning_curve(a, la, mpmath.mpf(1) / 100, cs, ts)
        assert abs(r["test"] - ref) <= mpmath.mpf(10) ** -31 * ref, (r["test"], ref)


@pytest.mark.slow
def test_structured_teacher_agrees_with_simulation(teacher):
    """Ridge regression on sampled data with C = powerlaw:1 and teacher T = powerlaw:2 at
    d = 60 and 120 (n = 2d): test and training errors within 4 standard errors of the theory at
    each d's spectrum, over 150 data sets per d."""
    from replica.spectra import parse_spec

    rng = np.random.default_rng(5)
    for d in (60, 120):
        r = replica.solve(teacher, dps=20, alpha=2, lam="1/100", sigma="1/10", d=d,
                          covariance="powerlaw:1", teacher="powerlaw:2")
        c = np.asarray(parse_spec("powerlaw:1", d).diag_f64(), float)
        t = np.asarray(parse_spec("powerlaw:2", d).diag_f64(), float)
        n = 2 * d
        test, train = [], []
        for _ in range(150):
            w = rng.standard_normal(d) * np.sqrt(t)
            X = rng.standard_normal((n, d)) * np.sqrt(c)
            y = X @ w / np.sqrt(d) + 0.1 * rng.standard_normal(n)
            wh = np.linalg.solve(X.T @ X / d + 0.01 * np.eye(d), X.T @ y / np.sqrt(d))
            e = w - wh
            test.append(0.01 + e @ (c * e) / d)
            train.append(np.mean((y - X @ wh / np.sqrt(d)) ** 2))
        for values, key in ((test, "test"), (train, "train")):
            mean, sem = np.mean(values), np.std(values, ddof=1) / math.sqrt(len(values))
            assert abs(mean - float(r[key])) < 4 * sem, (d, key, mean, float(r[key]), sem)
