"""Simulations generated from the parts of an ERM model (:mod:`replica.glm.simulation`) and the
ReLU channel: the generated ridge simulation equals the hand-written one of
``examples/ridge_regression.py`` seed by seed; the NumPy forms of the parts equal their SymPy
forms; ``replica simulate`` on the GLM model files agrees with their theory within 3 standard
errors plus O(1/d) (slow); the ReLU channel's square-loss ridge solution equals an independent
closed form in the channel's moments E[yu], E[y^2] to more than 20 digits."""

from __future__ import annotations

import json
import os

import mpmath
import numpy as np
import pytest
import sympy

from conftest import REPO
from replica.cli import main
from replica.glm import (ERM, Absolute, AbsoluteValue, Gaussian, GLMParts, Hinge, Huber, L1,
                         Linear, Logistic, ReLU, Ridge, Square, Teacher, simulation_of)
from replica.glm.parts import T
from replica.glm.simulation import NumericParts
from replica.modeling import ModelError
from replica.simulate.declared import simulate_declared
from replica.simulate.source import ModelSource

EX = os.path.join(REPO, "examples")


def per_seed(path, name, d, seeds, **raw):
    res = simulate_declared(ModelSource(name, os.path.join(EX, path)), d, seeds, 0,
                            with_theory=False, **raw)
    return [r["errors"] for r in res.per_seed]


# -- the generated ridge simulation against the hand-written one ------------------------------
def _ridge_pairs(lam_glm):
    hand = per_seed("ridge_regression.py", "ridge_regression", 40, 3, alpha="2", lam="1/10",
                    sigma="1/2")
    gen = per_seed("glm_ridge.py", "glm_ridge", 40, 3, alpha="2", lam=lam_glm, sigma="1/2")
    return [(h["test"], g["errors.test"], h["train"], 2 * g["errors.train_loss"])
            for h, g in zip(hand, gen)]


def test_generated_ridge_equals_handwritten_seed_by_seed():
    # same sampling order (X, teacher, noise), same estimator: the hand-written objective
    # sum (y - yhat)^2 + lam |w|^2 is twice the parts' sum (y - yhat)^2/2 + lam |w|^2/2
    for test_h, test_g, train_h, train_g in _ridge_pairs("1/10"):
        assert test_g == pytest.approx(test_h, rel=1e-11)
        assert train_g == pytest.approx(train_h, rel=1e-11)


def test_a_wrong_lambda_convention_is_caught():
    # the comparison above fails when the generated estimator's lambda is off by a factor 2
    # (the convention sum l + lam |w|^2 instead of lam |w|^2/2)
    pairs = _ridge_pairs("1/5")
    assert all(abs(tg - th) > 1e-4 * th for th, tg, _, _ in pairs)


# -- one source of truth: the NumPy forms are the SymPy forms ---------------------------------
@pytest.mark.parametrize("loss,penalty,channel", [
    (Logistic(), Ridge("lam"), None), (Huber("delta"), L1("lam"), Linear("sigma")),
    (Hinge(), Ridge("lam"), None), (Square(), L1("lam"), ReLU("sigma"))])
def test_numeric_parts_agree_with_sympy_at_random_points(loss, penalty, channel):
    from replica.glm import Probit

    channel = channel or Probit("eta")
    N = NumericParts(GLMParts(loss, penalty, channel, Gaussian()))
    rng = np.random.default_rng(3)
    vals = [float(v) for v in rng.uniform(0.2, 0.9, len(N.symbols))]
    subs = dict(zip(N.symbols, vals))
    t = rng.uniform(-3, 3, 7)
    ell = loss.expression().xreplace(subs)
    got = N.loss(t, vals)
    for k in range(3):
        want = [float(sympy.diff(ell, T, k).subs(T, tv)) for tv in t]
        assert np.allclose(got[k], want, rtol=1e-13, atol=1e-13)
    # the proximal map of the penalty: prox_{s r}(v) minimises (w - v)^2/(2s) + r(w)
    r = sympy.Piecewise(*[(p.expr, T <= p.hi) for p in penalty.pieces[:-1]]
                        + [(penalty.pieces[-1].expr, True)]).xreplace(subs)
    s = 0.7
    grid = np.linspace(-6, 6, 240001)
    rg = N.penalty(grid, vals)
    for v in (-2.5, -0.1, 0.3, 1.7):
        best = grid[np.argmin((grid - v) ** 2 / (2 * s) + rg)]
        assert abs(N.prox(np.array([v]), s, vals)[0] - best) < 1e-4
        assert N.penalty(np.array([v]), vals)[0] == pytest.approx(float(r.subs(T, v)), rel=1e-13)


def test_relu_label_is_max_plus_noise():
    N = NumericParts(GLMParts(Square(), Ridge("lam"), ReLU("sigma"), Gaussian()))
    u, e = np.array([-1.5, 0.0, 2.0]), np.array([0.3, -1.0, 0.5])
    vals = [0.25 if str(s) == "sigma" else 1.0 for s in N.symbols]
    assert np.allclose(N.label(u, e, vals), np.maximum(0, u) + 0.25 * e, atol=0, rtol=1e-15)


@pytest.mark.slow
def test_simulation_of_a_non_erm_model_is_a_one_line_error():
    from replica.glm import BayesOptimal, Rademacher, Sign

    with pytest.raises(ModelError, match="not declared by replica.glm.ERM"):
        simulation_of(BayesOptimal("b", prior=Rademacher(), channel=Sign()))
    with pytest.raises(ModelError, match="the absolute loss with the l1 penalty has no solver"):
        simulation_of(ERM("x", loss=Absolute(), penalty=L1("lam"),
                          teacher=Teacher(Linear("sigma"))))
    with pytest.raises(ModelError, match="only the square loss"):
        ERM("x", loss=Huber("delta"), penalty=Ridge("lam"),
            teacher=Teacher(AbsoluteValue("sigma")))


def test_hinge_dual_solver_satisfies_the_primal_optimality():
    # hinge + ridge by its dual: the primal objective at the returned w is not decreased by
    # small random moves (a subgradient certificate would be exact; this one can fail)
    from types import SimpleNamespace

    from replica.glm import Sign

    # simulation_of reads only the model's name and parts (the free energy is not needed here)
    sim = simulation_of(SimpleNamespace(name="svm", glm_parts=GLMParts(Hinge(), Ridge("lam"),
                                                                         Sign(), Gaussian())))
    params = SimpleNamespace(alpha=2, lam=0.5)
    inst = sim.sample(np.random.default_rng(1), 30, params)
    w = sim.train(inst, params)
    X, y, _ = inst

    def objective(v):
        return np.sum(np.maximum(0, 1 - y * (X @ v) / np.sqrt(30))) + 0.25 * v @ v

    f0 = objective(w)
    rng = np.random.default_rng(2)
    assert all(objective(w + 1e-4 * rng.standard_normal(30)) >= f0 - 1e-9 for _ in range(50))


# -- the ReLU channel against an independent closed form --------------------------------------
def relu_ridge_closed_form(alpha, lam, sigma, yu, y2, rho=1):
    r"""Square loss + ridge, any channel: only c = E[yu]/rho and E[y^2] enter. Stationarity of
    Phi = -m mh + q Vh/2 - V qh/2 + (mh^2 rho + qh)/(2(lam + Vh)) - alpha Delta/(2(1 + V)),
    Delta = E y^2 - 2 c m + q: lam V^2 + (lam + alpha - 1) V - 1 = 0, m = alpha c rho V/(1 + V),
    q (1 - alpha V^2/(1+V)^2) = V^2 (mh^2 rho + alpha (E y^2 - 2 c m)/(1+V)^2)."""
    c = yu / rho
    V = (-(lam + alpha - 1) + mpmath.sqrt((lam + alpha - 1) ** 2 + 4 * lam)) / (2 * lam)
    mh = alpha * c / (1 + V)
    m = mh * rho * V
    q = V**2 * (mh**2 * rho + alpha * (y2 - 2 * c * m) / (1 + V) ** 2) \
        / (1 - alpha * V**2 / (1 + V) ** 2)
    return {"V": V, "m": m, "q": q, "test": y2 - 2 * c * m + q}


@pytest.mark.parametrize("alpha,lam,sigma", [("2", "1/10", "1/2"), ("1/2", "1/3", "1/5")])
def test_relu_square_ridge_equals_closed_form(alpha, lam, sigma):
    M = ERM("c", loss=Square(), penalty=Ridge("lam"), teacher=Teacher(ReLU("sigma")))
    R = sympy.Rational
    got = M.solve(alpha=R(alpha), lam=R(lam), sigma=R(sigma), dps=30)
    assert got.converged
    with mpmath.workdps(40):
        a, la, s = (mpmath.mpf(R(v).p) / R(v).q for v in (alpha, lam, sigma))
        # ReLU: E[yu] = E[u^2; u > 0] = 1/2, E[y^2] = 1/2 + sigma^2 (rho = 1)
        ref = relu_ridge_closed_form(a, la, s, mpmath.mpf(1) / 2, mpmath.mpf(1) / 2 + s**2)
        for k in ("V", "m", "q", "test"):
            err = abs((mpmath.mpf(got.all_values[k]) - ref[k]) / ref[k])
            assert err < mpmath.mpf(10) ** -20, (k, got.all_values[k], ref[k])


@pytest.mark.parametrize("channel,yu,y2", [(ReLU, sympy.Rational(1, 2), sympy.Rational(1, 2)),
                                           (AbsoluteValue, 0, 1), (Linear, 1, 1)])
def test_link_channel_free_energy_is_the_moment_form(channel, yu, y2):
    # square loss + ridge: Phi depends on the channel only through E[yu] and E[y^2] (written
    # here independently of the builder); the absolute value has E[yu] = 0, so m = 0 there
    M = ERM("c", loss=Square(), penalty=Ridge("lam"), teacher=Teacher(channel("sigma")))
    S = {s.name: s for s in M.free_energy.free_symbols}
    m, q, V, mh, qh, Vh, al, la, sg = (S[k] for k in ("m", "q", "V", "mhat", "qhat", "Vhat",
                                                     "alpha", "lam", "sigma"))
    delta = y2 + sg**2 - 2 * yu * m + q
    phi = (-m * mh + q * Vh / 2 - V * qh / 2 + (mh**2 + qh) / (2 * (la + Vh))
           - al * delta / (2 * (1 + V)))
    assert sympy.simplify(M.free_energy - phi) == 0
    wrong = phi.xreplace({q: 2 * q}) if channel is not Linear else phi + m / 7
    assert sympy.simplify(M.free_energy - wrong) != 0


# -- replica simulate / check on the GLM model files (slow) -----------------------------------
def _simulate(capsys, path, d, seeds, **params):
    argv = ["simulate", "--model", os.path.join(EX, path), "--d", str(d), "--seeds", str(seeds),
            "--json"]
    for k, v in params.items():
        argv += [f"--{k}", v]
    assert main(argv) == 0
    return json.loads(capsys.readouterr().out)


def _agree(data, d, expect):
    assert set(data["errors"]) == expect
    for key, est in data["errors"].items():
        mean, sem, th = (float(est[k]) for k in ("mean", "sem", "theory"))
        assert abs(mean - th) <= 3 * sem + 2.0 / d, (key, est)


@pytest.mark.slow
@pytest.mark.parametrize("path,params,expect", [
    ("glm_ridge.py", dict(alpha="2", lam="1/10", sigma="1/2"),
     {"m", "q", "V", "errors.train_loss", "errors.test", "errors.risk"}),
    ("glm_relu.py", dict(alpha="2", lam="1/10", sigma="1/2"),
     {"m", "q", "V", "errors.train_loss", "errors.test", "errors.risk"}),
    ("glm_lasso.py", dict(alpha="1", eps="1/5", lam="3/10", sigma="1/5"),
     {"m", "q", "errors.train_loss", "errors.test", "errors.risk"}),
    ("glm_logistic.py", dict(alpha="2", lam="1/10", eta="9/10"),
     {"m", "q", "V", "errors.train_loss", "errors.generalisation", "errors.teacher"})])
def test_simulate_glm_model_files_agree_with_theory(capsys, path, params, expect):
    _agree(_simulate(capsys, path, 200, 10, **params), 200, expect)


@pytest.mark.slow
def test_check_glm_lasso_runs(tmp_path, capsys):
    rc = main(["check", "--model", os.path.join(EX, "glm_lasso.py"), "--alpha", "1/2,1",
               "--ds", "100,200", "--seeds", "4", "--eps", "1/5", "--lam", "3/10", "--sigma",
               "1/5", "--line-points", "5", "--workers", "1", "--no-progress", "--cache",
               "none", "-o", str(tmp_path)])
    assert rc == 0
    assert (tmp_path / "check.csv").exists()
    rows = (tmp_path / "check.csv").read_text().splitlines()
    assert len(rows) > 4


@pytest.mark.slow
@pytest.mark.parametrize("decl,params,expect", [
    ('ERM("hinge_probit", loss=Hinge(), penalty=Ridge("lam"), teacher=Teacher(Probit("eta")))',
     dict(alpha="2", lam="1/2", eta="9/10"),
     {"m", "q", "errors.train_loss", "errors.generalisation", "errors.teacher"}),
    ('ERM("huber_rad", loss=Huber("delta"), penalty=Ridge("lam"), '
     'teacher=Teacher(Linear("sigma"), prior=Rademacher()))',
     dict(alpha="2", lam="1/2", sigma="1/2", delta="1"),
     {"m", "q", "errors.train_loss", "errors.test", "errors.risk"})])
def test_simulate_hinge_dual_and_huber_lbfgs_agree_with_theory(tmp_path, capsys, decl, params,
                                                               expect):
    # the hinge loss by its dual box QP, the Huber loss by L-BFGS, a Rademacher teacher
    path = tmp_path / "model.py"
    path.write_text("from replica.glm import *\nMODEL = " + decl
                    + "\nSIMULATION = simulation_of(MODEL)\n")
    argv = ["simulate", "--model", str(path), "--d", "200", "--seeds", "10", "--json"]
    for k, v in params.items():
        argv += [f"--{k}", v]
    assert main(argv) == 0
    _agree(json.loads(capsys.readouterr().out), 200, expect)


@pytest.mark.slow
def test_unsimulable_parts_in_a_model_file_exit_2_with_one_line(tmp_path):
    import subprocess
    import sys

    f = tmp_path / "bad.py"
    f.write_text("from replica.glm import ERM, Absolute, L1, Linear, Teacher, simulation_of\n"
                 "MODEL = ERM('bad', loss=Absolute(), penalty=L1('lam'), "
                 "teacher=Teacher(Linear('sigma')))\nSIMULATION = simulation_of(MODEL)\n")
    out = subprocess.run([sys.executable, "-m", "replica", "simulate", "--model", str(f),
                          "--alpha", "2", "--lam", "1", "--sigma", "1", "--d", "10"],
                         capture_output=True, text=True, cwd=REPO)
    assert out.returncode == 2, out.stderr
    assert "absolute loss with the l1 penalty" in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1


def test_a_kink_in_loss_and_penalty_is_refused_at_declaration():
    from types import SimpleNamespace

    parts = GLMParts(Absolute(), L1("lam"), Linear("sigma"), Gaussian())
    with pytest.raises(ModelError, match="absolute loss with the l1 penalty has no solver"):
        simulation_of(SimpleNamespace(name="x", glm_parts=parts))
    # with a ridge penalty the same loss is simulated (by its dual)
    ok = GLMParts(Absolute(), Ridge("lam"), Linear("sigma"), Gaussian())
    assert simulation_of(SimpleNamespace(name="x", glm_parts=ok)).description
