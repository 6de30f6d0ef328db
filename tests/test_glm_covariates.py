"""GLM declarations with Gaussian covariates of a given spectrum (``replica.glm.Covariates``):
the identity covariance reproduces the isotropic model, the square loss with ridge equals the
hand-written Gaussian covariate model (``examples/structured_teacher.py``) and an independent
deterministic-equivalent closed form of the ridge risk, the replicon is the GCM stability
condition, the simulation generated from the parts agrees with the theory, and what is not
supported is a one-line error (the l1 penalty with a spectrum: tests/test_glm_lasso_spectrum.py)."""

import os
import runpy
from fractions import Fraction
import textwrap

import mpmath
import pytest

import numpy as np

import replica
from replica.glm import (ERM, Covariates, GaussBernoulli, L1, Linear, Logistic, Probit, Ridge,
                         Square, Teacher, simulation_of)
from replica.modeling import ModelError
from replica.spectra import parse_spec

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
POINT = dict(alpha="2", lam="1/10", sigma="1/2")


def gcm_ridge(**kw):
    return ERM("gcm_ridge", loss=Square(), penalty=Ridge("lam"),
               teacher=Teacher(Linear("sigma")), covariates=Covariates(**kw))


def digits(a, b) -> float:
    with mpmath.workdps(50):
        a, b = mpmath.mpf(a), mpmath.mpf(b)
        return 99.0 if a == b else float(-mpmath.log10(abs(a - b) / abs(b)))


def test_identity_covariance_is_the_isotropic_model():
    iso = ERM("iso", loss=Square(), penalty=Ridge("lam"), teacher=Teacher(Linear("sigma")))
    a = replica.solve(iso.problem, dps=30, **POINT)
    b = replica.solve(gcm_ridge().problem, dps=30, d=7, covariance="identity",
                      teacher="identity", **POINT)
    for k in ("m", "q", "V", "test", "risk", "train_loss"):
        assert digits(a.all_values[k], b.all_values[k]) >= 29, k


@pytest.mark.slow
def test_square_ridge_equals_the_hand_written_gaussian_covariate_model():
    st = runpy.run_path(os.path.join(REPO, "examples", "structured_teacher.py"))["MODEL"]
    spec = dict(d=50, covariance="powerlaw:1", teacher="powerlaw:2", **POINT)
    a = replica.solve(gcm_ridge().problem, dps=30, **spec)
    b = replica.solve(st.problem, dps=30, **spec)
    for k in ("m", "q", "V", "test"):
        assert digits(a.all_values[k], b.all_values[k]) >= 28, k


def _risk_closed_form(c, t, alpha, lam, sigma2):
    r"""Ridge risk (w - w*)^T C (w - w*)/d by the deterministic equivalent of the sample
    covariance (Hastie, Montanari, Rosset and Tibshirani 2022; Bach 2024): with n = alpha d,
    mu = lam/alpha and kappa the root of mu = kappa (1 - df1/n), df_k = sum (c/(c + kappa))^k,
    bias = kappa^2 sum t c/(c + kappa)^2 / (d (1 - df2/n)), variance = sigma^2 df2/(n - df2)."""
    d = len(c)
    n = alpha * d
    mu = lam / alpha

    def df(k, kap):
        return mpmath.fsum((ci / (ci + kap)) ** k for ci in c)

    kap = mpmath.findroot(lambda k: k * (1 - df(1, k) / n) - mu, mu)
    df2 = df(2, kap)
    bias = kap**2 * mpmath.fsum(ti * ci / (ci + kap) ** 2 for ci, ti in zip(c, t)) / (
        d * (1 - df2 / n))
    return bias + sigma2 * df2 / (n - df2)


@pytest.mark.parametrize("cov,teach,alpha", [("powerlaw:1", "identity", "2"),
                                              ("powerlaw:1", "powerlaw:2", "1/2")])
def test_ridge_risk_equals_the_deterministic_equivalent(cov, teach, alpha):
    d = 40
    res = replica.solve(gcm_ridge().problem, dps=30, d=d, covariance=cov, teacher=teach,
                        alpha=alpha, lam="1/10", sigma="1/2")
    with mpmath.workdps(45):
        c = parse_spec(cov, d).diag_mp()
        t = parse_spec(teach, d).diag_mp()
        a = Fraction(alpha)
        want = _risk_closed_form(c, t, mpmath.mpf(a.numerator) / a.denominator,
                                 mpmath.mpf(1) / 10, mpmath.mpf(1) / 4)
    assert digits(res.all_values["risk"], want) >= 28


def test_replicon_is_the_gcm_stability_condition():
    """1 - alpha E[(d g)^2] <c^2 (d_b f_w)^2> for square loss and ridge: 1 - alpha/(1 + V)^2
    <c^2/(lam + Vhat c)^2>, written out with the SPEC's eigenvalues."""
    d = 30
    res = replica.solve(gcm_ridge(teacher=None).problem, dps=30, d=d, covariance="powerlaw:1",
                        **POINT)
    v = res.all_values
    with mpmath.workdps(40):
        c = parse_spec("powerlaw:1", d).diag_mp()
        avg = mpmath.fsum(ci**2 / (mpmath.mpf(1) / 10 + v["Vhat"] * ci) ** 2 for ci in c) / d
        want = 1 - 2 / (1 + v["V"]) ** 2 * avg
    assert digits(res.to_json_dict()["stability"]["replicon"], want) >= 28


@pytest.mark.slow
def test_simulation_from_the_parts_agrees_with_the_theory(tmp_path, capsys):
    """d = 160, 8 seeds, a power-law covariance: the errors and overlaps within 4 standard
    errors of the theory; V (whose seed-to-seed scatter is tiny) within 1.5 % -- its O(1/d)
    finite-size bias, 1.0 %, 0.7 %, 0.3 % at d = 80, 160, 320 when this test was written."""
    import json

    from replica.cli import main

    f = tmp_path / "gcm.py"
    f.write_text(textwrap.dedent("""
        from replica.glm import ERM, Covariates, Linear, Ridge, Square, Teacher, simulation_of
        MODEL = ERM("gcm", loss=Square(), penalty=Ridge("lam"), teacher=Teacher(Linear("sigma")),
                    covariates=Covariates())
        SIMULATION = simulation_of(MODEL)
    """))
    code = main(["simulate", "--model", str(f), "--alpha", "2", "--lam", "1/10", "--sigma",
                 "1/2", "--d", "160", "--covariance", "powerlaw:1", "--seeds", "8", "--json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0 and out["theory_status"] == "converged"
    rows = out["errors"]
    for k in ("m", "q", "errors.test", "errors.risk", "errors.train_loss"):
        assert abs(float(rows[k]["z"])) < 4, (k, rows[k])
    v = rows["V"]
    assert abs(float(v["mean"]) / float(v["theory"]) - 1) < 0.015, v


def test_a_spectrum_of_another_dimension_is_a_clear_error():
    sim = simulation_of(gcm_ridge())
    params = gcm_ridge().problem.schema.parse(dict(d="20", covariance="powerlaw:1", **POINT))
    with pytest.raises(ModelError, match="dimension 20"):
        sim.sample(np.random.default_rng(0), 30, params)


@pytest.mark.slow
def test_logistic_identity_covariance_is_the_isotropic_model():
    iso = ERM("iso_log", loss=Logistic(), penalty=Ridge("lam"), teacher=Teacher(Probit("eta")))
    gcm = ERM("gcm_log", loss=Logistic(), penalty=Ridge("lam"), teacher=Teacher(Probit("eta")),
              covariates=Covariates())
    p = dict(alpha="2", lam="1/10", eta="1")
    a = replica.solve(iso.problem, dps=20, **p)
    b = replica.solve(gcm.problem, dps=20, d=5, covariance="identity", teacher="identity", **p)
    for k in ("m", "q", "V", "generalisation"):
        assert digits(a.all_values[k], b.all_values[k]) >= 19, k


def test_l1_with_a_spectrum_has_no_gaussian_integral():
    """The l1 penalty's coordinate average is closed form (tests/test_glm_lasso_spectrum.py
    checks its values): the spectral average holds no Gaussian integral."""
    from replica.modeling import GaussianIntegral

    m = ERM("gcm_l1", loss=Square(), penalty=L1("lam"),
            teacher=Teacher(Linear("sigma"), GaussBernoulli("eps")), covariates=Covariates())
    assert not m.free_energy.has(GaussianIntegral)


def test_covariates_must_be_a_record():
    with pytest.raises(ModelError, match="Covariates record"):
        ERM("bad", loss=Square(), penalty=Ridge("lam"), teacher=Teacher(Linear("sigma")),
            covariates="powerlaw:1")
