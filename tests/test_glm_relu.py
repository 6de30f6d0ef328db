"""Empirical risk minimisation on the ReLU channel y = max(0, u) + sigma eps with a loss whose
envelope average is not polynomial (Huber, absolute), against computations written here
independently of the builder:

* the replica-symmetric fixed-point equations of ridge-penalised Huber regression written out by
  hand in mpmath: the energetic term averaged over each half-line of the teacher field u
  (mpmath.quad over u > 0 and u < 0) of the Gaussian average over the rest of the residual in
  closed form (truncated Gaussian moments), its derivatives by mpmath.diff -- the builder
  instead conditions on the residual and folds the two sides by symmetry; agreement to 20 digits;
* the known limit: for a large Huber threshold the solution is the square loss's closed form;
* the simulation generated from the parts (slow): L-BFGS fits at d = 300 agree with the theory
  within 3 standard errors plus O(1/d).

The absolute-value channel with such a loss, and a loss that is not even in the residual, are
one-line model errors."""

from __future__ import annotations

import json
import os

import mpmath
import pytest
import sympy

from conftest import REPO
from replica.glm import (ERM, Absolute, AbsoluteValue, Huber, Linear, Loss, ReLU, Ridge, Square,
                         Teacher)
from replica.glm.parts import Piece, T
from replica.modeling import ModelError

R = sympy.Rational


def mpq(v):
    r = R(v)
    return mpmath.mpf(r.p) / r.q


# -- the hand-written replica-symmetric equations ----------------------------------------------
def _truncated(mu, s, lo, hi):
    """(E[1], E[X], E[X^2]) of X ~ N(mu, s^2) restricted to (lo, hi) (ends may be infinite)."""
    def end(c):
        if mpmath.isinf(c):
            return (mpmath.mpf(1) if c > 0 else mpmath.mpf(0)), mpmath.mpf(0), mpmath.mpf(0)
        a = (c - mu) / s
        dens = mpmath.npdf(a)
        return mpmath.ncdf(a), dens, (mu + c) * dens
    P_hi, d_hi, e_hi = end(hi)
    P_lo, d_lo, e_lo = end(lo)
    M0 = P_hi - P_lo
    M1 = mu * M0 + s * (d_lo - d_hi)
    M2 = (mu**2 + s**2) * M0 + s * (e_lo - e_hi)
    return M0, M1, M2


def huber_inner(mu, s, V, delta):
    """(E envelope, E loss at the proximal point, E (d g_out/d omega)^2) over x ~ N(mu, s^2) for
    Huber's loss: the envelope is x^2/(2(1+V)) for |x| <= a = delta(1+V) (proximal point
    x/(1+V)) and delta|x| - delta^2(1+V)/2 beyond (proximal point x - V delta sign x)."""
    a = delta * (1 + V)
    i0, i1, i2 = _truncated(mu, s, -a, a)
    p0, p1, _ = _truncated(mu, s, a, mpmath.inf)
    n0, n1, _ = _truncated(mu, s, -mpmath.inf, -a)
    env = i2 / (2 * (1 + V)) + delta * (p1 - n1) - delta**2 * (1 + V) / 2 * (p0 + n0)
    # outside: loss(x - V delta) = delta (|x| - V delta) - delta^2/2
    train = (i2 / (2 * (1 + V)**2) + delta * (p1 - n1)
             - (delta**2 * V + delta**2 / 2) * (p0 + n0))
    # prox' = 1/(1+V) inside, 1 outside: (d g_out)^2 = ((prox' - 1)/V)^2 = 1/(1+V)^2 inside
    g2 = i0 / (1 + V)**2
    return env, train, g2


def relu_average(m, q, V, sigma, delta, which=0):
    """E over (u, eps, omega) of the Huber quantity ``which`` at the residual
    y - omega = max(0, u) + sigma eps - omega (rho = 1): omega = m u + sqrt(q - m^2) zeta, so
    on the half-line u > 0 (u < 0) the residual is (1 - m) u + s Z ((-m) u + s Z),
    s^2 = q - m^2 + sigma^2; the u-average by mpmath.quad on each half-line."""
    s = mpmath.sqrt(q - m**2 + sigma**2)
    plus = mpmath.quad(lambda u: mpmath.npdf(u) * huber_inner((1 - m) * u, s, V, delta)[which],
                       [0, 2, 5, mpmath.inf])
    minus = mpmath.quad(lambda u: mpmath.npdf(u) * huber_inner(-m * u, s, V, delta)[which],
                        [-mpmath.inf, -5, -2, 0])
    return plus + minus


def handwritten_fixed_point(alpha, lam, sigma, delta, m, q, V):
    r"""The stationarity conditions of Phi = -m mh + q Vh/2 - V qh/2 + (mh^2 + qh)/(2(lam + Vh))
    - alpha E_M(m, q, V) (ridge, Gaussian prior): mh = -alpha dE_M/dm, Vh = 2 alpha dE_M/dq,
    qh = -2 alpha dE_M/dV, then m = mh/(lam + Vh), V = 1/(lam + Vh),
    q = (mh^2 + qh)/(lam + Vh)^2; returns the hats and the updated (m, q, V)."""
    def EM(mm, qq, VV):
        return relu_average(mm, qq, VV, sigma, delta)
    dm = mpmath.diff(EM, (m, q, V), (1, 0, 0))
    dq = mpmath.diff(EM, (m, q, V), (0, 1, 0))
    dV = mpmath.diff(EM, (m, q, V), (0, 0, 1))
    mh, Vh, qh = -alpha * dm, 2 * alpha * dq, -2 * alpha * dV
    return {"mhat": mh, "Vhat": Vh, "qhat": qh, "m": mh / (lam + Vh), "V": 1 / (lam + Vh),
            "q": (mh**2 + qh) / (lam + Vh)**2}


HUBER_RELU = ERM("huber_relu", loss=Huber("delta"), penalty=Ridge("lam"),
                 teacher=Teacher(ReLU("sigma")))


def _check_against_handwritten(point):
    got = HUBER_RELU.solve(dps=30, **{k: R(v) for k, v in point.items()})
    assert got.converged
    with mpmath.workdps(40):
        P = {k: mpq(v) for k, v in point.items()}
        x = {k: mpmath.mpf(got.all_values[k]) for k in ("m", "q", "V", "mhat", "qhat", "Vhat")}
        ref = handwritten_fixed_point(P["alpha"], P["lam"], P["sigma"], P["delta"], x["m"],
                                      x["q"], x["V"])
        for k, v in ref.items():  # the engine's point is a fixed point of the hand-written map
            assert abs(v - x[k]) < mpmath.mpf(10) ** -20 * abs(v), (k, v, x[k])
        m, q, V, s, d = x["m"], x["q"], x["V"], P["sigma"], P["delta"]
        train = relu_average(m, q, V, s, d, which=1)
        # E(y - omega)^2 with E y^2 = 1/2 + sigma^2 and E[y omega] = m E[yu] = m/2
        test = mpmath.mpf(1) / 2 + s**2 - m + q
        for k, v in (("train_loss", train), ("test", test), ("risk", 1 - 2 * m + q)):
            assert abs(mpmath.mpf(got.all_values[k]) - v) < mpmath.mpf(10) ** -20 * abs(v), k
        # the replicon 1 - alpha E[(d g_out)^2] E[(d f_w)^2], ridge: d f_w/d b = V
        g2 = relu_average(m, q, V, s, d, which=2)
        rep = 1 - P["alpha"] * g2 * V**2
        assert abs(mpmath.mpf(got.all_values["replicon"]) - rep) < mpmath.mpf(10) ** -20


def test_huber_relu_free_energy_equals_the_handwritten_one():
    # the derived free energy at a point off the saddle, against the hand-written Phi (ridge:
    # Psi_w = (mh^2 + qh)/(2(lam + Vh)))
    from replica.symbolic.codegen import Evaluator

    phi = HUBER_RELU.free_energy
    syms = sorted(phi.free_symbols, key=str)
    point = {"alpha": "3/2", "lam": "1/5", "sigma": "2/5", "delta": "3/4", "m": "1/3",
             "q": "1/2", "V": "7/10", "mhat": "2/3", "qhat": "1/4", "Vhat": "5/4"}
    with mpmath.workdps(30):
        x = {k: mpq(v) for k, v in point.items()}
        got = Evaluator([phi], syms).mp([x[str(s)] for s in syms])[0]
        m, q, V, mh, qh, Vh = (x[k] for k in ("m", "q", "V", "mhat", "qhat", "Vhat"))
        ref = (-m * mh + q * Vh / 2 - V * qh / 2 + (mh**2 + qh) / (2 * (x["lam"] + Vh))
               - x["alpha"] * relu_average(m, q, V, x["sigma"], x["delta"]))
        assert abs(got - ref) < mpmath.mpf(10) ** -25 * abs(ref), (got, ref)


@pytest.mark.slow
def test_huber_relu_matches_the_handwritten_fixed_point():
    _check_against_handwritten(dict(alpha="2", lam="1/10", sigma="1/2", delta="1"))


@pytest.mark.slow
def test_huber_relu_matches_the_handwritten_fixed_point_second_point():
    # few samples, a small threshold: most residuals in the linear part of the loss
    _check_against_handwritten(dict(alpha="1/2", lam="1/3", sigma="1/5", delta="1/3"))


def test_huber_relu_tends_to_the_square_loss_for_a_large_threshold():
    from test_glm_simulation import relu_ridge_closed_form

    got = HUBER_RELU.solve(alpha=2, lam=R(1, 10), sigma=R(1, 2), delta=40, dps=30)
    assert got.converged
    with mpmath.workdps(40):
        s = mpmath.mpf(1) / 2
        ref = relu_ridge_closed_form(2, mpmath.mpf(1) / 10, s, mpmath.mpf(1) / 2,
                                     mpmath.mpf(1) / 2 + s**2)
        for k in ("V", "m", "q", "test"):
            err = abs((mpmath.mpf(got.all_values[k]) - ref[k]) / ref[k])
            assert err < mpmath.mpf(10) ** -20, (k, got.all_values[k], ref[k])
    # and a threshold of order one is not the square loss
    small = HUBER_RELU.solve(alpha=2, lam=R(1, 10), sigma=R(1, 2), delta=R(1, 2), dps=20)
    assert abs(mpmath.mpf(small.all_values["q"]) - ref["q"]) > 1e-3


def test_relu_derivation_steps_are_those_of_the_linear_channel():
    lin = ERM("l", loss=Huber("delta"), penalty=Ridge("lam"), teacher=Teacher(Linear("sigma")))
    names = [s.name for s in HUBER_RELU.derivation.steps()]
    assert names == [s.name for s in lin.derivation.steps()]
    law = next(s for s in HUBER_RELU.derivation.steps() if s.name == "glm_label_law")
    assert set(law.objects) == {"Delta_plus", "Delta_minus"}
    S = {s.name: s for s in HUBER_RELU.free_energy.free_symbols}
    m, q, sg = S["m"], S["q"], S["sigma"]
    assert sympy.expand(law.objects["Delta_plus"].rhs - (1 + sg**2 - 2 * m + q)) == 0
    assert sympy.expand(law.objects["Delta_minus"].rhs - (sg**2 + q)) == 0


def test_absolute_loss_on_relu_solves():
    # the absolute loss (kink at 0) goes the same way; its overlaps satisfy m^2 < q
    M = ERM("abs_relu", loss=Absolute(), penalty=Ridge("lam"), teacher=Teacher(ReLU("sigma")))
    got = M.solve(alpha=2, lam=R(1, 10), sigma=R(1, 2), dps=20)
    assert got.converged
    m, q = (mpmath.mpf(got.all_values[k]) for k in ("m", "q"))
    assert 0 < m and m**2 < q


def test_unsupported_link_combinations_are_one_line_errors():
    with pytest.raises(ModelError, match="blind to the teacher's sign") as e:
        ERM("x", loss=Huber("delta"), penalty=Ridge("lam"), teacher=Teacher(AbsoluteValue()))
    assert "\n" not in str(e.value)
    # a loss that is not even in the residual (the pinball loss of the 1/4 quantile)
    pinball = Loss("pinball", r"\rho_{1/4}(t)", "residual",
                   pieces=(Piece(-3 * T / 4, -sympy.oo, 0), Piece(T / 4, 0, sympy.oo)))
    with pytest.raises(ModelError, match="needs a loss even in the residual") as e:
        ERM("x", loss=pinball, penalty=Ridge("lam"), teacher=Teacher(ReLU("sigma")))
    assert "\n" not in str(e.value)
    # the square loss stays on the closed-form route for both channels
    for ch in (ReLU("sigma"), AbsoluteValue("sigma")):
        M = ERM("s", loss=Square(), penalty=Ridge("lam"), teacher=Teacher(ch))
        law = next(s for s in M.derivation.steps() if s.name == "glm_label_law")
        assert set(law.objects) == {"residual"}


# -- the generated simulation (slow) ------------------------------------------------------------
@pytest.mark.slow
def test_huber_relu_simulation_agrees_with_theory(capsys):
    from replica.cli import main

    d = 300
    argv = ["simulate", "--model", os.path.join(REPO, "examples", "glm_relu_huber.py"), "--d",
            str(d), "--seeds", "8", "--json", "--alpha", "2", "--lam", "1/10", "--sigma", "1/2",
            "--delta", "1"]
    assert main(argv) == 0
    data = json.loads(capsys.readouterr().out)
    assert {"m", "q", "errors.test", "errors.train_loss"} <= set(data["errors"])
    for key, est in data["errors"].items():
        mean, sem, th = (float(est[k]) for k in ("mean", "sem", "theory"))
        assert abs(mean - th) <= 3 * sem + 2.0 / d, (key, est)
