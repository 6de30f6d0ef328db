"""``replica expand --at 0`` on models whose equations hold Gaussian integrals
(:mod:`replica.analysis.gaussian_series`): the Bayes-optimal sign-channel perceptron
(examples/perceptron_teacher.py) at small sample ratio alpha.

Independent checks: (1) the series derived here by hand from the *published* state evolution
(m = mhat/(1 + mhat) for the Gaussian prior, mhat = 2 alpha/(1 - m) int Dxi N(c xi)^2/H(c xi),
c^2 = m/(1 - m); the model file declares the free entropy, not these equations), its Gaussian
moments taken by sympy.integrate; (2) the engine's 30-digit solutions at alpha = 1e-3, 1e-4,
1e-5, whose distance from the truncated series falls like the next power of alpha.
"""

from __future__ import annotations

import math
from pathlib import Path

import mpmath
import pytest
import sympy

from replica.analysis.series import series
from replica.registry import load

ROOT = Path(__file__).resolve().parent.parent
TEACHER = str(ROOT / "examples" / "perceptron_teacher.py")
a, c, xi = sympy.symbols("alpha c xi", positive=True)


@pytest.fixture(scope="module")
def problem():
    return load(TEACHER).problem


def _prior(problem, word):
    return {"prior": problem.schema["prior"].parse(word, {})}


def _gauss_moment(expr):
    """E over a standard normal xi of a polynomial in xi (sympy.integrate, not the engine's
    double factorials)."""
    return sympy.integrate(sympy.expand(expr) * sympy.exp(-xi**2 / 2) / sympy.sqrt(2 * sympy.pi),
                           (xi, -sympy.oo, sympy.oo))


def _state_evolution_series(order, prior="gaussian"):
    """m(alpha) through alpha**order from the published state evolution, by fixed-point
    iteration on truncated series (each sweep fixes one more order)."""
    m = sympy.Symbol("m")
    phi = sympy.exp(-xi**2 * c**2 / 2) / sympy.sqrt(2 * sympy.pi)  # N(c xi)
    H = sympy.erfc(c * xi / sympy.sqrt(2)) / 2
    integrand = sympy.series(phi**2 / H, c, 0, 2 * order).removeO()
    E = _gauss_moment(integrand)  # even in c: a polynomial in c^2
    E_of_m = sympy.expand(E).subs(c, sympy.sqrt(m / (1 - m)))
    cur = sympy.Integer(0)
    for _ in range(order + 1):
        h = sympy.series(2 * a / (1 - m) * E_of_m, m, 0, order).removeO().subs(m, cur)
        h = sympy.expand(sympy.series(h, a, 0, order + 1).removeO())
        if prior == "gaussian":
            new = h / (1 + h)
        else:  # m = E tanh(h + sqrt(h) xi): tanh's Taylor series, moments by sympy.integrate
            u = sympy.Symbol("u")
            tanh = sympy.series(sympy.tanh(u), u, 0, 2 * order + 2).removeO()
            hh = sympy.Symbol("hh", positive=True)
            new = _gauss_moment(tanh.subs(u, hh + sympy.sqrt(hh) * xi)).subs(hh, h)
        cur = sympy.expand(sympy.series(new, a, 0, order + 1).removeO())
    return [sympy.nsimplify(cur.coeff(a, k)) if k else cur.subs(a, 0) for k in range(order + 1)]


def test_gaussian_prior_series_is_the_state_evolution_series(problem):
    out = series(problem, "alpha", 3, "m", at="0", values=_prior(problem, "gaussian"))
    want = _state_evolution_series(3)
    got = out["quantity"]
    assert got[1] == 2 / sympy.pi  # the known leading order, m = 2 alpha / pi
    for k in range(4):
        assert sympy.simplify(got[k] - want[k]) == 0, (k, got[k], want[k])
    assert out["numeric"] == {}  # every coefficient exact (Gaussian moments)


def _engine_m(problem, alpha, prior):
    from replica.numerics.driver import solve

    with mpmath.workdps(40):
        r = solve(problem, dps=30, verify=False, alpha=str(alpha), prior=prior)
        return mpmath.mpf(str(r.all_values["m"]))


@pytest.mark.parametrize("prior", ["gaussian", "rademacher"])
def test_series_error_falls_like_the_next_power(problem, prior):
    order = 2
    out = series(problem, "alpha", order, "m", at="0", values=_prior(problem, prior))
    coeffs = [sympy.N(x, 40) for x in out["quantity"]]
    xs, errs = [], []
    for k in (3, 4, 5):
        al = mpmath.mpf(10) ** -k
        with mpmath.workdps(40):
            ser = sum(mpmath.mpf(str(cf)) * al**j for j, cf in enumerate(coeffs))
            errs.append(float(abs(_engine_m(problem, f"1e-{k}", prior) - ser)))
        xs.append(-k * math.log(10))
    slope = (math.log(errs[2]) - math.log(errs[0])) / (xs[2] - xs[0])
    assert abs(slope - (order + 1)) < 0.05, (errs, slope)


def test_quantity_with_square_root_is_a_series_in_sqrt_alpha(problem):
    """The Bayes error arccos(sqrt m)/pi = 1/2 - sqrt(m)/pi - m^(3/2)/(6 pi) - ...: with
    m = 2 alpha/pi + ... its leading terms, written here, are 1/2 - sqrt(2 alpha/pi)/pi."""
    out = series(problem, "alpha", 1, "bayes", at="0", values=_prior(problem, "gaussian"))
    assert out["half_powers"]
    q = out["quantity"]  # coefficients of alpha^(j/2)
    assert q[0] == sympy.Rational(1, 2)
    assert sympy.simplify(q[1] + sympy.sqrt(2 / sympy.pi) / sympy.pi) == 0
    assert q[2] == 0


def test_cli_refuses_an_expansion_it_cannot_start(capsys):
    """Logistic regression at alpha -> 0: the equations at alpha = 0 do not fix a leading order
    (the order parameters' scaling is not found); the command says so in one line, exit 3."""
    from replica import cli

    rc = cli.main(["expand", "--model", str(ROOT / "examples" / "logistic_regression.py"),
                   "--parameter", "alpha", "--at", "0", "--quantity", "m", "--order", "1",
                   "--lam", "1", "--eta", "1"])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 3
    assert len([x for x in err if x.startswith("replica: error")]) == 1
    assert "leading-order" in err[-1] and "tried:" in err[-1]


def test_rademacher_prior_series_is_the_state_evolution_series(problem):
    """The Rademacher prior's term nests the channel's Gaussian integral inside the prior's
    (the fixed-point form puts mhat, an integral, under the prior's log cosh). Its series
    through alpha^3 equals the state evolution's with m = E tanh(mhat + sqrt(mhat) xi) (the
    helper above), and differs from the Gaussian prior's first at alpha^3, by
    (2/3) mhat^3 = 16/(3 pi^3) alpha^3 (E tanh(h + sqrt h xi) = h - h^2 + 5/3 h^3 against
    h/(1 + h) = h - h^2 + h^3, by hand). SymPy's own ``series`` spent more than 10 minutes on
    this equation (in ``trigsimp``); the truncated-series rules take about 10 s."""
    out = series(problem, "alpha", 3, "m", at="0", values=_prior(problem, "rademacher"))
    want = _state_evolution_series(3, prior="rademacher")
    got = out["quantity"]
    for k in range(4):
        assert sympy.simplify(got[k] - want[k]) == 0, (k, got[k], want[k])
    gauss = _state_evolution_series(3)
    assert [sympy.simplify(got[k] - gauss[k]) for k in range(3)] == [0, 0, 0]
    assert sympy.simplify(got[3] - gauss[3] - 16 / (3 * sympy.pi**3)) == 0
    assert out["numeric"] == {}


def test_a_symbolic_prior_is_refused_in_one_line():
    """Without ``--prior`` the prior's weight stays a symbol: its leading order leaves an
    integral of a function of z with that symbol, which has no closed form; the command says
    so in one line naming the symbol, exit 3 (before, it refused every nested integral at once;
    a child process with a 120 s limit: the model file's load has its own interval timer, so
    no alarm here)."""
    import os
    import subprocess
    import sys

    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    run = subprocess.run([sys.executable, "-m", "replica", "expand", "--model", TEACHER,
                          "--parameter", "alpha", "--at", "0", "--quantity", "m", "--order", "1"],
                         capture_output=True, text=True, timeout=120, env=env, cwd=str(ROOT))
    err = run.stderr.strip().splitlines()
    assert run.returncode == 3, run.stderr
    assert len([x for x in err if x.startswith("replica: error")]) == 1
    assert "symbols prior" in err[-1] and "tried:" in err[-1] and len(err[-1]) < 400


def test_cli_prints_the_series(capsys):
    from replica import cli

    rc = cli.main(["expand", "--model", TEACHER, "--parameter", "alpha", "--at", "0",
                   "--quantity", "m", "--order", "1", "--prior", "gaussian", "--latex"])
    out = capsys.readouterr().out
    assert rc == 0
    assert r"\frac{2 \alpha}{\pi}" in out


def test_a_non_polynomial_coefficient_is_integrated_numerically():
    """E exp(z) = e^(1/2) (closed form written here) from the numeric fallback, 30 digits."""
    from replica.analysis.gaussian_series import _integrate, _Numeric

    z = sympy.Symbol("z", real=True)
    num = _Numeric(30)
    got = _integrate(3 * sympy.exp(z) + z**2, z, set(), num)
    want = 3 * sympy.exp(sympy.Rational(1, 2)) + 1
    assert abs(sympy.N(got - want, 40)) < sympy.Float("1e-29")
    assert list(num.done) == [sympy.exp(z)]  # recorded as numeric
