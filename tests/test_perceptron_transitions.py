"""The perceptron examples' transitions on the command line: the Bayes-optimal perceptron's
alpha_IT (a first-order transition, free-entropy crossing with the m = 1 branch) and alpha_alg
(the spinodal of the m < 1 branch), declared in ``examples/perceptron_teacher.py``; the
de Almeida--Thouless line of the Gardner volume below capacity
(``examples/perceptron_gardner.py``), against an independent plain-mpmath computation written
here, and its limits.

The independent AT computation: the stationarity condition of
G(q) = log(1-q)/2 + q/(2(1-q)) + alpha E_t log H(u), u = (kappa + sqrt(q) t)/sqrt(1-q), is
written by hand -- G'(q) = q/(2(1-q)^2) - alpha E_t[R(u) (t + kappa sqrt q)/(2 sqrt q (1-q)^{3/2})]
with R = phi/H -- so alpha is explicit on the stationary curve, alpha_s(q) = q/(2(1-q)^2 A(q)),
and the replicon 1 - alpha B(q), B(q) = E_t[(R(u)(R(u) - u))^2], vanishes where
alpha_s(q) B(q) = 1: one scalar root in q (mpmath.findroot), then alpha_AT = 1/B(q_AT). None of
the engine's code (no quadrature rule, no derivative of it) is used."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys

import mpmath
import pytest

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TEACHER = os.path.join(REPO, "examples", "perceptron_teacher.py")
GARDNER = os.path.join(REPO, "examples", "perceptron_gardner.py")


def cli(*argv, timeout=900):
    proc = subprocess.run([sys.executable, "-m", "replica", *argv], capture_output=True,
                          text=True, cwd=REPO, timeout=timeout)
    return proc.returncode, proc.stdout, proc.stderr


def H(x):
    return mpmath.erfc(x / mpmath.sqrt(2)) / 2


def mills(u):
    return mpmath.npdf(u) / H(u)


def expect(f, q, k):
    """E_t f(t), t ~ N(0, 1), split at the point u = 0 (t = -kappa/sqrt q)."""
    return mpmath.quad(lambda t: mpmath.npdf(t) * f(t), [-14, -k / mpmath.sqrt(q), 14])


def alpha_stationary(q, k):
    s, c = mpmath.sqrt(q), mpmath.sqrt(1 - q)
    A = expect(lambda t: mills((k + s * t) / c) * (t + k * s) / (2 * s * c**3), q, k)
    return q / (2 * (1 - q) ** 2) / A


def replicon_integral(q, k):
    s, c = mpmath.sqrt(q), mpmath.sqrt(1 - q)

    def f(t):
        u = (k + s * t) / c
        R = mills(u)
        return (R * (R - u)) ** 2

    return expect(f, q, k)


def at_point(k, q0):
    """(alpha_AT, q_AT) at margin k, from a start q0 near q_AT."""
    q = mpmath.findroot(lambda q: alpha_stationary(q, k) * replicon_integral(q, k) - 1,
                        (q0, q0 + mpmath.mpf("0.01")), solver="secant")
    return 1 / replicon_integral(q, k), q


def alpha_c(k):
    """1 / int Dz (z + k)^2 theta(z + k) (examples/perceptron_capacity.py, closed form)."""
    return 1 / ((1 + k**2) * mpmath.ncdf(k) + k * mpmath.npdf(k))


@pytest.mark.slow
def test_alpha_it_first_order_on_the_command_line():
    code, out, err = cli("transition", "--model", TEACHER, "--name", "alpha-it", "--dps", "20",
                         "--json")
    assert code == 0, err
    data = json.loads(out)
    assert data["status"] == "converged" and data["digits"] >= 20
    assert data["location"].startswith("1.24468398985069"), data["location"]
    assert data["equilibrium"] == {"below": "m < 1", "above": "m = 1"}


@pytest.mark.slow
def test_alpha_alg_spinodal_on_the_command_line():
    code, out, err = cli("transition", "--model", TEACHER, "--name", "alpha-alg", "--dps", "20",
                         "--json")
    assert code == 0, err
    data = json.loads(out)
    assert data["status"] == "converged" and data["digits"] >= 20
    assert data["location"].startswith("1.49263181823035"), data["location"]


@pytest.mark.slow
@pytest.mark.parametrize("kappa,guess,q0", [("-1/2", None, "0.89"), ("-1", "79/10", "0.70")])
def test_at_line_against_an_independent_computation(kappa, guess, q0):
    argv = ["transition", "--model", GARDNER, "--name", "at-line", f"--kappa={kappa}",
            "--dps", "20", "--json"]
    if guess:
        argv += ["--guess", guess, "--branch", f"RS:q={q0}"]
    code, out, err = cli(*argv)
    assert code == 0, err
    data = json.loads(out)
    assert data["digits"] >= 20 and data["status"] == "converged"
    with mpmath.workdps(30):
        p, _, r = kappa.partition("/")
        k = mpmath.mpf(int(p)) / (int(r) if r else 1)
        a_at, q_at = at_point(k, mpmath.mpf(q0))
        tol = mpmath.mpf(10) ** -19
        assert abs(mpmath.mpf(data["location"]) - a_at) < tol * a_at, (data["location"], a_at)
        assert abs(mpmath.mpf(data["point"]["q"]) - q_at) < tol
        # kappa < 0: replica symmetry breaks below the RS capacity
        assert a_at < alpha_c(k)


@pytest.mark.slow
@pytest.mark.parametrize("kappa,fraction", [("0", "0.95"), ("1/2", "0.9"), ("-1/2", "0.5")])
def test_replicon_limits(kappa, fraction):
    """kappa >= 0: stable up to (near) the capacity; kappa < 0: stable well below alpha_AT,
    unstable between alpha_AT and alpha_c (at kappa = -1/2: alpha_AT = 3.9507... and
    0.9 alpha_c = 4.29...), the replicon against the independent form at each point."""
    import replica

    model = replica.load_model(GARDNER)
    with mpmath.workdps(30):
        p, _, r = kappa.partition("/")
        k = mpmath.mpf(int(p)) / (int(r) if r else 1)
        a = mpmath.mpf(fraction) * alpha_c(k)
        a_text = mpmath.nstr(a, 12)
    res = replica.solve(model, dps=15, alpha=a_text, kappa=kappa)
    assert res.to_json_dict()["stability"]["stable"] is True
    with mpmath.workdps(25):
        q = mpmath.mpf(res["q"])
        a = mpmath.mpf(a_text)
        assert abs(alpha_stationary(q, k) - a) < mpmath.mpf(10) ** -13 * a
        ref = 1 - a * replicon_integral(q, k)
        assert abs(res["replicon"] - ref) < mpmath.mpf(10) ** -13
    if k < 0:
        with mpmath.workdps(30):
            a_text = mpmath.nstr(mpmath.mpf("0.9") * alpha_c(k), 12)
        res = replica.solve(model, dps=15, alpha=a_text, kappa=kappa)
        assert res.to_json_dict()["stability"]["stable"] is False and res["replicon"] < 0
        with mpmath.workdps(25):
            q, a = mpmath.mpf(res["q"]), mpmath.mpf(a_text)
            ref = 1 - a * replicon_integral(q, k)
            assert abs(res["replicon"] - ref) < mpmath.mpf(10) ** -13


@pytest.mark.slow
def test_a_metastable_solution_is_reported_as_metastable():
    """Between alpha_IT = 1.245 (published: Gyorgyi 1990; Barbier et al. 2019) and alpha_alg,
    Newton's method finds the m < 1 solution of the Rademacher perceptron, but the equilibrium is
    perfect recovery m = 1 (free entropy -log 2, declared in ``BRANCHES``). The fuzz campaign
    found ``solve --alpha 1.3`` reporting the m < 1 values as the answer, with ``--start``
    naming it "(equilibrium)". Below alpha_IT (1.2) the m < 1 solution is the equilibrium; with
    the Gaussian prior there is no m = 1 branch."""
    for alpha, prior, metastable in (("1.3", "rademacher", True), ("1.2", "rademacher", False),
                                     ("1.3", "gaussian", False)):
        rc, out, err = cli("solve", "--model", TEACHER, "--alpha", alpha, "--prior", prior,
                           "--json")
        assert rc == 0, err
        data = json.loads(out)
        assert data["equilibrium"]["solution"] is (not metastable)
        assert any("metastable" in n for n in data["notes"]) is metastable
        if metastable:
            assert data["equilibrium"]["branch"] == "m = 1"
            assert float(data["free_energy"]["free_entropy"]) < -math.log(2)
    rc, out, err = cli("solve", "--model", TEACHER, "--alpha", "1.3", "--prior", "rademacher",
                       "--start", "m=0.7", "--start", "m=0.999")
    assert rc == 0, err
    assert "(equilibrium)" not in out
    assert "all metastable; equilibrium: the closed-form branch m = 1" in out


@pytest.mark.slow
def test_a_failed_solve_names_the_declared_branch_that_exists_there():
    """Above alpha_alg = 1.4926 the Rademacher perceptron's m < 1 branch has ended and the solve
    fails (exit 3; at alpha = 2 the start iteration runs to the boundary m -> 1,
    tests/test_boundary_run.py). The audit of issue 26 found the message silent about the
    answer the model itself declares: perfect recovery m = 1, free entropy -log 2. The failure now names every closed-form branch that exists at
    the parameters, in the message and in the JSON; with the Gaussian prior (no such branch)
    nothing is named."""
    rc, out, err = cli("solve", "--model", TEACHER, "--alpha", "2", "--prior", "rademacher",
                       "--json")
    assert rc == 3
    data = json.loads(out)
    assert data["converged"] is False
    assert data["declared_branches"] == [
        {"branch": "m = 1", "free_energy": mpmath.nstr(-mpmath.log(2), 15)}]
    assert "closed-form branch at these parameters: m = 1" in err.strip().splitlines()[-1]
