"""Defects of the s53 fuzz campaign fixed by job ``trust54``, each checked against a value
computed here independently of the engine.

* ``examples/perceptron_capacity.py`` at far negative margins: alpha_c = 1/I(kappa) with
  I(kappa) = int Dz (z + kappa)^2 theta(z + kappa) = (1 + kappa^2) Phi(kappa) + kappa phi(kappa)
  (integration by parts), and the reported ``at_ratio`` = alpha_c Phi(kappa), both in closed
  form with mpmath's erfc at 60 digits. Before the fix kappa = -25 exited 3 after raising the
  precision to 273 digits: the ball enclosure of int Dz theta(z + kappa) was truncated at
  |z| = T ~ 16 short of the kink at 25 (an enclosure 0 +- 2^-p, no relative digit).
"""

import mpmath
import pytest

import replica

from conftest import REPO

mp = mpmath
CAPACITY = f"{REPO}/examples/perceptron_capacity.py"


def _capacity_closed_form(kappa):
    """(alpha_c, at_ratio) of the capacity example at margin ``kappa`` (60 digits)."""
    with mp.workdps(60):
        k = mp.mpf(kappa)
        Phi = mp.erfc(-k / mp.sqrt(2)) / 2
        integral = (1 + k ** 2) * Phi + k * mp.npdf(k)
        return 1 / integral, Phi / integral


def _relative(value, reference):
    with mp.workdps(60):
        return abs(mp.mpf(value) / reference - 1)


@pytest.mark.slow
@pytest.mark.parametrize("kappa", ["-25", "-40"])
def test_capacity_far_negative_margin(kappa):
    """30 digits of alpha_c and at_ratio where the integrals are 1e-141 and 1e-353 in size."""
    alpha_c, at_ratio = _capacity_closed_form(kappa)
    r = replica.solve(CAPACITY, kappa=kappa)
    assert r.status == "converged" and r.digits == 30
    assert "working precision 35 digits" in r.digits_how  # no round of raised precision
    assert _relative(r["alpha_c"], alpha_c) < 1e-29
    assert _relative(r["at_ratio"], at_ratio) < 1e-29


def test_tanh_sinh_fallback_is_relative_to_the_integral(monkeypatch):
    """The fallback quadrature (mpmath.quad, whose own stop is absolute) reaches the working
    precision relative to an integral of size 1e-141 (kappa = -25): the Gauss--Legendre rule is
    made to give up so that every mp integral goes to the fallback."""
    import replica.symbolic.codegen as codegen

    monkeypatch.setattr(codegen, "_gauss_mp_rule", lambda *a, **k: None)
    alpha_c, at_ratio = _capacity_closed_form(-25)
    r = replica.solve(CAPACITY, kappa=-25, dps=20)
    assert r.status == "converged"
    assert _relative(r["alpha_c"], alpha_c) < 1e-19
    assert _relative(r["at_ratio"], at_ratio) < 1e-19


@pytest.mark.slow
def test_gardner_above_capacity_says_no_solution_was_reached():
    """Above the capacity (alpha = 5/4 > alpha_c(1/2) = 0.961..., closed form) the
    replica-symmetric overlap runs to q -> 1: the error says that Newton's iterates ran to the
    boundary q < 1 (status ``inadmissible``), not only that a quadrature failed there."""
    from replica.errors import ConvergenceError

    alpha_c, _ = _capacity_closed_form(mp.mpf(1) / 2)
    assert alpha_c < mp.mpf(5) / 4
    with pytest.raises(ConvergenceError) as info:
        replica.solve(f"{REPO}/examples/perceptron_gardner.py", alpha="5/4", kappa="1/2")
    assert info.value.status == "inadmissible"
    text = str(info.value)
    assert "boundary of the domain q < 1" in text and "no solution with q < 1" in text
    assert "\n" not in text


@pytest.mark.slow
def test_erm_penalty_named_alpha_is_refused(tmp_path):
    """A penalty parameter named as the sample ratio was silently the sample ratio itself:
    refused with one line naming the clash (exit 2); named apart (alpha='n_over_d'), the same
    model solves ridge regression, checked against the closed form (V the positive root of
    lam V^2 + (lam + a - 1) V - 1, m = a V/(1 + V), test = ((1 - m)^2 + s^2)/(1 - a V^2/(1 + V)^2))."""
    from conftest import run_cli
    from replica.modeling import ModelError
    from replica.glm import ERM, Linear, Ridge, Square, Teacher

    with pytest.raises(ModelError, match="parameter 'alpha' of the penalty 'ridge' is the name "
                                         "of the sample ratio"):
        ERM("clash", loss=Square(), penalty=Ridge("alpha"), teacher=Teacher(Linear("sigma")))
    src = tmp_path / "clash.py"
    src.write_text("from replica.glm import ERM, Linear, Ridge, Square, Teacher\n"
                   "MODEL = ERM('clash', loss=Square(), penalty=Ridge('alpha'), "
                   "teacher=Teacher(Linear('sigma')))\n")
    code, out, err = run_cli("solve", "--model", src, "--alpha", "2", "--sigma", "1/2")
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1
    assert "is the name of the sample ratio" in err
    apart = ERM("apart", loss=Square(), penalty=Ridge("alpha"), teacher=Teacher(Linear("sigma")),
                alpha="n_over_d")
    r = replica.solve(apart, n_over_d=2, alpha="1/10", sigma="1/2", dps=20)
    with mp.workdps(40):
        a, lam, s = mp.mpf(2), mp.mpf(1) / 10, mp.mpf(1) / 2
        V = (-(lam + a - 1) + mp.sqrt((lam + a - 1) ** 2 + 4 * lam)) / (2 * lam)
        m = a * V / (1 + V)
        test = ((1 - m) ** 2 + s ** 2) / (1 - a * V ** 2 / (1 + V) ** 2)
    assert _relative(r["test"], test) < 1e-19


def test_nan_function_stops_the_root_at_once():
    """A root whose function is NaN (no sign) stops at once as not finite; before, NaN read as
    one sign moved one end of the bracket at every step, and the iteration ended 'converged'
    at the other end (caught afterwards only as not-verified). The other points of the grid
    keep their roots (x^3 = 2: 2^(1/3))."""
    import numpy as np

    from replica.errors import ConvergenceError
    from replica.numerics.roots import ROOT_NOT_FINITE, bracketed_newton, bracketed_newton_vec

    def fdf(x):
        x = np.asarray(x, dtype=float)
        nan = x * np.nan
        return np.where(k == 0, nan, x ** 3 - 2), np.where(k == 0, nan, 3 * x ** 2)

    for k in (np.array([0]), np.array([0, 1, 1])):
        x, it, failed = bracketed_newton_vec(fdf, 0.0, 4.0, np.ones(k.shape), increasing=True,
                                             rtol=1e-15, per_point=True)
        assert failed[0] == ROOT_NOT_FINITE and np.isnan(x[0])
        assert np.all(failed[1:] == 0) and np.allclose(x[1:], 2 ** (1 / 3), rtol=1e-15, atol=0)
        with pytest.raises(ConvergenceError) as info:
            bracketed_newton_vec(fdf, 0.0, 4.0, np.ones(k.shape), increasing=True, rtol=1e-15)
        assert info.value.status == "non-finite"
    with pytest.raises(ConvergenceError) as info:
        bracketed_newton(lambda x: (mp.nan, mp.nan), mp.mpf(0), mp.mpf(4), mp.mpf(1),
                         increasing=True, rtol=mp.mpf(10) ** -14)
    assert info.value.status == "non-finite"
