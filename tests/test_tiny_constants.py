"""Constants of extreme size written in a user's model file (job ``edges``): a noise level or a
margin as ``Rational(1, 10**25)``, ``Rational(10**25)``, ``Float('1e-25')`` or exact 0.

Reported: such a constant may reach the float64 / longdouble generated code as a Python integer
("loop of ufunc does not support argument 0 of type int"). Found: SymPy keeps ``log(10**25)``
(and ``log(1/10**25) = -log(10**25)``, ``sqrt(10**25 + 1)``, ``erfc(10**25)``) unevaluated, the
NumPy printer wrote the integer as it is, and NumPy made the integer that no int64 holds an
object array, whose loop has no ``log``: a TypeError out of every float64 evaluation, the solve's
float64 start included. Fixed where the code is printed (``codegen._numpy_printer``: integers
beyond int64 are float64 literals). Where the constant meets an array first (``10**25 * q``)
NumPy converted it already; those paths are checked here too.

References, written here: the Bayes-optimal linear channel with a Gaussian prior in closed form
(:math:`x = 1 + \\hat m` solves :math:`\\Delta x^2 + (1 - \\Delta - \\alpha)x - 1 = 0`,
:math:`m = 1 - 1/x`, :math:`\\Delta = \\sigma^2`), mpmath values of the constant expressions, and
the Gardner volume whose ``log 2`` is rewritten as ``log(2 10^25) - log(10^25)`` (the same
function) against the example as it is.
"""

from __future__ import annotations

import json
from pathlib import Path

import mpmath
import numpy as np
import pytest
import sympy

from replica.cli import main

from conftest import REPO

EX = Path(REPO) / "examples"

CONSTANTS = {
    "rational_tiny": "sympy.Rational(1, 10**25)",
    "rational_huge": "sympy.Rational(10**25)",
    "float_tiny": "sympy.Float('1e-25')",
    "zero": "sympy.Integer(0)",
}


# -- the generated code itself -----------------------------------------------------------------
def _constant_cases():
    q = sympy.Symbol("q", positive=True)
    B = sympy.Integer(10 ** 25)
    with mpmath.workdps(40):
        b = mpmath.mpf(10) ** 25
        return q, [
            ("log(10^25) q", sympy.log(B) * q, lambda v: mpmath.log(b) * v),
            ("log(10^-25) q", sympy.log(sympy.Rational(1, 10 ** 25)) * q,
             lambda v: -mpmath.log(b) * v),
            ("sqrt(10^25 + 1) q", sympy.sqrt(B + 1) * q, lambda v: mpmath.sqrt(b + 1) * v),
            ("erfc(10^25) + q", sympy.erfc(B) + q, lambda v: v),
            ("atan(-10^25) q", sympy.atan(-B) * q, lambda v: (1 / b - mpmath.pi / 2) * v),  # atan(-x) = 1/x - pi/2 + O(x^-3)
            ("exp(10^-25) q", sympy.exp(sympy.Rational(1, 10 ** 25)) * q,
             lambda v: mpmath.exp(mpmath.mpf(1) / b) * v),
            ("10^25 + q", B + q, lambda v: b + v),
            ("exact 0 q", sympy.Integer(0) * q + 1, lambda v: mpmath.mpf(1)),
        ]


@pytest.mark.parametrize("k", range(8))
def test_constant_expressions_in_float64_longdouble_and_mpmath(k):
    """Each expression in the engine's float64 code, its longdouble recomputation (the same
    NumPy code with longdouble arguments) and mpmath, against the value written by hand."""
    from replica.numerics.float64_checks import call_longdouble
    from replica.symbolic.codegen import Evaluator

    q, cases = _constant_cases()
    name, expr, want = cases[k]
    ev = Evaluator([expr], [q])
    with mpmath.workdps(40):
        ref = want(mpmath.mpf(1) / 2)
    got = float(np.asarray(ev.f64([np.array([0.5])])[0]).reshape(-1)[0])
    assert got == pytest.approx(float(ref), rel=1e-15), (name, got, ref)
    ld = call_longdouble(ev, [np.array([0.5])], ())[0]
    assert ld.dtype == np.longdouble
    assert float(ld.reshape(-1)[0]) == pytest.approx(float(ref), rel=1e-15)
    with mpmath.workdps(30):
        mp = ev.mp([mpmath.mpf(1) / 2])[0]
        assert abs(mpmath.mpf(mp) - ref) <= mpmath.mpf(10) ** -28 * abs(ref), (name, mp, ref)


def test_integer_beyond_float64_is_left_an_integer():
    """10**400 has no float64 (its float would be infinite, a silent wrong value): the printer
    leaves it an integer, and a float64 evaluation that needs it fails loudly."""
    from replica.symbolic.codegen import _numpy_printer

    p = _numpy_printer(["numpy"])
    assert p.doprint(sympy.Integer(10 ** 400)) == str(10 ** 400)
    assert p.doprint(sympy.Integer(-10 ** 25)) == "-1e+25"
    assert p.doprint(sympy.Integer(2 ** 62)) == str(2 ** 62)


# -- model files with such constants ----------------------------------------------------------
def _linear_model(tmp_path, const) -> Path:
    """examples/glm_bayes_relu_noisy.py with its channel the linear one of noise ``const``."""
    src = (EX / "glm_bayes_relu_noisy.py").read_text()
    old = 'channel=ReLU("sigma")'
    assert old in src
    src = src.replace(old, f"channel=Linear({const})").replace(
        "from replica.glm import BayesOptimal, Gaussian, ReLU",
        "import sympy\n\nfrom replica.glm import BayesOptimal, Gaussian, Linear")
    path = tmp_path / "linear_constant.py"
    path.write_text(src)
    return path


def _linear_closed_form(alpha, sigma):
    """(m, mhat) of the Bayes-optimal linear channel, Gaussian prior, by hand: m = mhat/(1 +
    mhat), mhat = alpha/(Delta + 1 - m); with x = 1 + mhat, Delta x^2 + (1 - Delta - alpha)x
    - 1 = 0, its positive root written without cancellation."""
    with mpmath.workdps(80):
        alpha = mpmath.mpf(alpha)
        delta = mpmath.mpf(sigma) ** 2
        b = 1 - delta - alpha
        root = mpmath.sqrt(b * b + 4 * delta)
        x = 2 / (b + root) if b > 0 else (root - b) / (2 * delta)
        return 1 - 1 / x, x - 1


def _sigma(const):
    """The constant's value: a rational exactly; a SymPy Float as the decimal number it prints
    (the generated code reads a Float's decimal digits at the working precision, so
    Float('1e-25') is 10^-25, not its 53-bit binary neighbour 1e-25 (1 + 8e-18))."""
    c = eval(const, {"sympy": sympy})
    with mpmath.workdps(80):
        return mpmath.mpf(c.p) / c.q if c.is_Rational else mpmath.mpf(str(c))


@pytest.mark.parametrize("key,alpha", [("rational_tiny", "2"), ("rational_huge", "2"),
                                       ("float_tiny", "2"), ("zero", "1/2"),
                                       ("rational_tiny", "1/2")])
def test_linear_channel_with_a_constant_noise(tmp_path, capsys, key, alpha):
    """``replica solve`` (30 digits) and ``--certify`` against the closed form. At alpha = 2
    and sigma = 1e-25, 1 - m ~ 1e-50 and mhat ~ 1e50: the constant is visible in mhat, which
    only the closed form's root gets right (a constant read as 0 gives no finite mhat)."""
    path = _linear_model(tmp_path, CONSTANTS[key])
    m_ref, mhat_ref = _linear_closed_form(_mpf_of(alpha), _sigma(CONSTANTS[key]))
    for extra in ([], ["--certify"]):
        rc = main(["solve", "--model", str(path), "--alpha", alpha, "--json"] + extra)
        out = capsys.readouterr()
        assert rc == 0, out.err[-400:]
        data = json.loads(out.out)
        with mpmath.workdps(40):
            for name, ref in (("m", m_ref), ("mhat", mhat_ref)):
                group = "order_parameters" if name == "m" else "conjugates"
                v = mpmath.mpf(data[group][name])
                assert abs(v - ref) <= mpmath.mpf(10) ** -25 * abs(ref), (extra, name, v, ref)


def _mpf_of(text):
    a, _, b = text.partition("/")
    with mpmath.workdps(80):
        return mpmath.mpf(a) / (mpmath.mpf(b) if b else 1)


@pytest.mark.parametrize("key", ["rational_huge", "rational_tiny"])
def test_linear_channel_float64_path(tmp_path, key):
    """The float64 path (``solve_float64``): a converged point is the closed form to 1e-12; a
    point float64 cannot hold (1 - m ~ 1e-50 at alpha = 2, sigma = 1e-25) is refused (an
    error or a status other than converged), never a wrong converged value."""
    from replica.errors import ConvergenceError
    from replica.numerics.driver import solve_float64
    from replica.registry import load

    problem = load(str(_linear_model(tmp_path, CONSTANTS[key]))).problem
    m_ref, mhat_ref = _linear_closed_form(2, _sigma(CONSTANTS[key]))
    try:
        r = solve_float64(problem, alpha=np.array([2.0]))
    except ConvergenceError:
        assert key == "rational_tiny"
        return
    if str(r["status"][0]) == "converged":
        assert float(r["m"][0]) == pytest.approx(float(m_ref), rel=1e-12)
        assert float(r["mhat"][0]) == pytest.approx(float(mhat_ref), rel=1e-12)
    else:
        assert key == "rational_tiny", r["status"]


def _gardner_with_big_logs(tmp_path) -> Path:
    """examples/perceptron_gardner.py with log 2 written log(2 10^25) - log(10^25)."""
    src = (EX / "perceptron_gardner.py").read_text()
    old = "LOG_H = log_erfc(U / sympy.sqrt(2)) - sympy.log(2)"
    assert old in src
    src = src.replace(old, "LOG_H = (log_erfc(U / sympy.sqrt(2)) - sympy.log(2 * 10**25)\n"
                           "         + sympy.log(10**25))")
    src = src.replace('MODEL = FixedPointModel(\n    "perceptron_gardner",',
                      'MODEL = FixedPointModel(\n    "gardner_big_logs",')
    assert '"gardner_big_logs"' in src
    path = tmp_path / "gardner_big_logs.py"
    path.write_text(src)
    return path


def test_gardner_with_a_logarithm_of_a_huge_integer(tmp_path, capsys):
    """The free energy holds log(2 10^25) and log(10^25) (SymPy keeps both): the float64 path
    (it raised the TypeError of the report) and the 30-digit solve give the example's values;
    log_volume by hand at the solved q (mpmath quadrature of the declared G(q))."""
    from replica.numerics.driver import solve_float64
    from replica.registry import load

    base = solve_float64(load(str(EX / "perceptron_gardner.py")).problem,
                         alpha=np.array([0.5]), kappa=np.array([0.0]))
    path = _gardner_with_big_logs(tmp_path)
    r = solve_float64(load(str(path)).problem, alpha=np.array([0.5]), kappa=np.array([0.0]))
    assert str(r["status"][0]) == "converged", r["status"]
    assert float(r["q"][0]) == pytest.approx(float(base["q"][0]), rel=1e-13)
    assert float(r["log_volume"][0]) == pytest.approx(float(base["log_volume"][0]), rel=1e-13)
    rc = main(["solve", "--model", str(path), "--alpha", "1/2", "--kappa", "0", "--json"])
    out = capsys.readouterr()
    assert rc == 0, out.err[-400:]
    data = json.loads(out.out)
    with mpmath.workdps(40):
        a = mpmath.mpf(1) / 2
        H = lambda u: mpmath.erfc(u / mpmath.sqrt(2)) / 2  # noqa: E731

        def G(q):  # the declared log-volume at kappa = 0, by mpmath quadrature
            c = mpmath.sqrt(q / (1 - q))
            return (mpmath.log(1 - q) / 2 + q / (2 * (1 - q))
                    + a * mpmath.quad(lambda t: mpmath.npdf(t) * mpmath.log(H(c * t)),
                                      [-mpmath.inf, 0, mpmath.inf]))

        q = mpmath.mpf(data["order_parameters"]["q"])
        assert abs(mpmath.diff(G, q)) < mpmath.mpf(10) ** -20  # q is stationary
        assert abs(mpmath.mpf(data["free_energy"]["log_volume"]) - G(q)) < mpmath.mpf(10) ** -25
