"""Float64 Gaussian integrals far in an ``erfc`` tail (:func:`replica.symbolic.gaussian.scaled_erfc`):
the plain integrand where it is finite and its ``erfc`` arguments are below
``SCALED_ERFC_FROM`` (the same values as before), the scaled form ``erfc(y) = erfcx(y) e^{-y^2}``
beyond; the Gardner volume's float64 solve converges where ``log erfc`` and the Mills ratio
underflowed (q > 0.73 at kappa = 0)."""

from __future__ import annotations

import os

import mpmath
import numpy as np
import sympy

import replica
from replica.symbolic import codegen, gaussian
from replica.symbolic.codegen import Evaluator
from replica.symbolic.gaussian import gauss

from conftest import REPO

a, z = sympy.symbols("a z", real=True)


def test_thresholds_agree():
    assert codegen.SCALED_ERFC_FROM == float(gaussian.SCALED_ERFC_FROM)


def test_scaled_form_is_the_same_function():
    y = (a + 3 * z) / 2
    e = sympy.log(sympy.erfc(y) / 2) + sympy.exp(-y**2) / sympy.erfc(y)
    s = gaussian.scaled_erfc(e)
    assert not s.has(sympy.erfc) and s.has(gaussian.erfcx)
    with mpmath.workdps(30):
        for av, zv in ((0.3, -1.0), (2.0, 4.0), (-5.0, 1.5)):
            sub = {a: sympy.Float(av, 30), z: sympy.Float(zv, 30)}
            exact = e.subs(sub).evalf(30)
            scaled = s.subs(sub).replace(
                gaussian.erfcx,
                lambda x: sympy.exp(x**2) * sympy.erfc(x)).evalf(30)
            assert abs(exact - scaled) <= 1e-25 * max(1, abs(exact))


def _integral(av):
    ev = Evaluator([gauss(sympy.log(sympy.erfc(a + z) / 2) * sympy.exp(-(a + z) ** 2)
                          / sympy.erfc(a + z), z)], [a])
    return ev, ev.f64([np.asarray(av, dtype=float)])[0]


def test_plain_values_where_plain_works_and_finite_far_in_the_tail():
    near, far = np.array([-2.0, 0.5, 3.0, 10.0]), np.array([12.0, 30.0, 60.0])
    ev, got_near = _integral(near)  # every node's erfc argument below 26.5 (z <= 16)
    got_far = ev.f64([far])[0]
    g = ev._gauss["np"][0]
    assert g.scaled is not None
    g.scaled = g.combined = None  # the plain integrand only
    assert np.array_equal(got_near, ev.f64([near])[0])  # the same bits
    assert not np.all(np.isfinite(ev.f64([far])[0]))  # (the plain form fails in the tail ...)
    assert np.all(np.isfinite(got_far))  # (... the scaled one does not)
    av, got = np.concatenate([near, far]), np.concatenate([got_near, got_far])
    with mpmath.workdps(30):
        for x, v in zip(av, got):
            x = mpmath.mpf(x)
            ref = mpmath.quad(lambda t: mpmath.npdf(t) * mpmath.log(mpmath.erfc(x + t) / 2)
                              * mpmath.exp(-(x + t) ** 2) / mpmath.erfc(x + t),
                              [-mpmath.inf, -x, 0, mpmath.inf])
            assert abs(v - float(ref)) <= 1e-12 * abs(float(ref))


def test_gardner_float64_converges_beyond_q_073():
    model = replica.load_model(os.path.join(REPO, "examples", "perceptron_gardner.py"))
    alpha = np.array([1.2, 1.5])
    r = replica.solve_float64(model, alpha=alpha, kappa=0.0, strict=False)
    assert list(r["status"]) == ["converged", "converged"]
    assert r["q"][1] > 0.8
    ref = replica.solve(model, dps=20, alpha="3/2", kappa="0")
    q = float(ref["order_parameters"]["q"]) if "order_parameters" in ref else float(ref["q"])
    assert abs(r["q"][1] - q) <= 1e-8 * q


def test_erfc_of_an_absolute_value_in_float64():
    """An erfc whose argument holds |w| (a switch on each piece between the kinks) in float64,
    one- and two-dimensional, near and far in the tail: the same values as mpmath (one
    dimension) and SciPy's nested quadrature (two; before, the float64 rule's test for the
    erfc's tail called the arguments without the switches: NameError switch_0)."""
    from scipy import integrate, special

    w, xi = sympy.symbols("w xi", real=True)
    q = sympy.Symbol("q", positive=True)
    one = Evaluator([gauss(sympy.erfc(sympy.Abs(w) + q), w)], [q])
    for value in ("3/10", "20"):  # (at 20 the erfc underflows: the scaled form)
        got = float(one.f64([float(sympy.Rational(value))])[0])
        with mpmath.workdps(30):
            want = one.mp([sympy.Rational(value)])[0]
        assert got > 0 and abs(got - want) <= 1e-13 * abs(want), (value, got, want)
    two = Evaluator([gauss(gauss(sympy.erfc(sympy.Abs(w) - sympy.sqrt(q) * xi), w), xi)], [q])
    got = float(two.f64([0.3])[0])
    density = lambda x: np.exp(-x * x / 2) / np.sqrt(2 * np.pi)  # noqa: E731
    want = 2 * integrate.dblquad(lambda v, x: density(v) * density(x)
                                 * special.erfc(v - np.sqrt(0.3) * x),
                                 -np.inf, np.inf, 0, np.inf, epsabs=1e-14, epsrel=1e-13)[0]
    assert abs(got - want) <= 1e-12, (got, want)


def _distinct(e, seen=None):
    """The distinct subexpressions of ``e`` (a walk that visits each once)."""
    seen = set() if seen is None else seen
    if e not in seen:
        seen.add(e)
        for x in e.args:
            _distinct(x, seen)
    return seen


def test_each_distinct_subexpression_is_rewritten_once(monkeypatch):
    """A differentiated integrand is a tree with many copies of few subexpressions (phase
    retrieval's: 28,900 nodes, 217 distinct); the rewriting visits each distinct one once:
    here a product nested 14 deep, 2^14 copies of its innermost erfc, 46 distinct nodes."""
    e = sympy.erfc(z) + a
    for k in range(14):
        e = e * (e + k + 1)
    distinct = _distinct(e)
    calls = []
    combine = gaussian._combine_exponentials
    monkeypatch.setattr(gaussian, "_combine_exponentials",
                        lambda p: calls.append(p) or combine(p))
    s = gaussian.scaled_erfc(e)
    assert len(distinct) < 100 and 0 < len(calls) <= len(distinct)
    assert not s.has(sympy.erfc)
    check = {a: sympy.Float(1, 30) / 3, z: sympy.Float(1, 30) / 2}  # (30-digit arithmetic)
    want = e.xreplace(check)
    got = s.replace(gaussian.erfcx, lambda x: sympy.exp(x**2) * sympy.erfc(x)).xreplace(check)
    assert abs(got - want) <= 1e-25 * abs(want)


def test_a_far_tail_ratio_in_a_larger_expression_is_finite_in_float64():
    """In float64 at y = (a + 3z)/2 = 30 and 40 (erfc underflows: the plain form is 0/0 and
    log 0) the scaled form of e^{-(a^2 + 6az + 9z^2)/4}/erfc(y) times a larger erfc-free
    factor, plus log(erfc(y)/2) times another, plus erfc(y) times a third, plus an erfc-free
    term c/(a e^{2z^2} - e^{2z^2}) whose exponentials overflow (inf - inf in the plain form;
    e^{-2z^2} c/(a - 1) once the common factor is out, as in the Bayes-optimal sign channel's
    Jacobian near m = 1) is the value mpmath gives at 40 digits. An erfc-free expression keeps
    its value (the same function, rewritten)."""
    from replica.symbolic.codegen import _namespace

    y = (a + 3 * z) / 2
    big = sum((a + k) ** k * sympy.exp(k * a) / sympy.factorial(k) for k in range(1, 12))
    poly = 4 * a**2 + 4 * a * z
    cosh = sympy.cosh(a * (z + 1))
    free = sympy.exp((a + 1) ** 2) * sympy.exp(a * z) + a
    overflow = (1 + a**2) / (a * sympy.exp(2 * z**2) - sympy.exp(2 * z**2))
    e = (sympy.exp(-sympy.expand(y**2)) / sympy.erfc(y) * big * cosh
         + sympy.log(sympy.erfc(y) / 2) * poly + sympy.erfc(y) * free + overflow)
    rewritten = gaussian.scaled_erfc(big)
    for av in (-0.7, 1.3):
        v = {a: sympy.Float(av, 30)}
        assert abs(rewritten.xreplace(v) - big.xreplace(v)) <= 1e-25 * abs(big.xreplace(v))
    s = gaussian.scaled_erfc(e)
    assert not s.has(sympy.erfc) and gaussian.scaled_erfc(e, False).has(sympy.erfc)
    ns = _namespace("np")
    plain = sympy.lambdify([a, z], e, modules=[ns, "numpy"])
    scaled = sympy.lambdify([a, z], s, modules=[ns, "numpy"])
    ref = sympy.lambdify([a, z], e, modules="mpmath")
    for av, yv in ((-0.7, 30), (0.4, 30), (1.3, 40)):
        zv = (2 * yv - av) / 3
        with np.errstate(all="ignore"):
            assert not np.isfinite(plain(av, zv))
            got = scaled(av, zv)
        with mpmath.workdps(40):
            want = ref(mpmath.mpf(av), (2 * mpmath.mpf(yv) - mpmath.mpf(av)) / 3)
        assert np.isfinite(got) and abs(got - float(want)) <= 1e-12 * abs(float(want)), (
            av, got, want)


def test_common_factors_out_of_a_sum_with_erfc():
    """4 erfc(y) - 4 q erfc(y) becomes 4 (1 - q) erfcx(y) e^{-y^2} (not a difference of two
    erfcx terms, inf - inf where erfcx overflows); with ``scale=False`` 4 (1 - q) erfc(y)."""
    q = sympy.Symbol("q", positive=True)
    s = gaussian.scaled_erfc(4 * sympy.erfc(z) - 4 * q * sympy.erfc(z))
    assert s.is_Mul and gaussian.erfcx(z) in s.args and sympy.expand(s - 4 * (1 - q)
                                                                     * gaussian.erfcx(z)
                                                                     * sympy.exp(-z**2)) == 0
    c = gaussian.scaled_erfc(4 * sympy.erfc(z) - 4 * q * sympy.erfc(z), False)
    assert c.is_Mul and sympy.erfc(z) in c.args


def test_a_shifted_erfc_argument_keeps_its_square_factored():
    """The scaled form of erfc(y), y = a (z - c), at a = 1e10, c = 0.7 and z - c = 2e-9 and
    2.6e-9 (y = 20, 26) is erfcx(y) e^{-y^2} with the exponent -a^2 (z - c)^2 as written, 400
    or 676 to 16 digits; expanded, a^2 (z^2 - 2cz + c^2) is a difference of terms of 1e20 with
    a rounding error of ~1e4 (before: e^{+-1e4}, inf or 0, and an erfc step of width 1e-10 at
    0.7 integrated to -inf). The value, alone and times the density e^{-z^2/2} (the exponents
    combined), against mpmath at 40 digits at the same float64 arguments. A Mills ratio whose
    two squares are written differently, e^{-a^2 z^2 + 2a^2 cz - a^2 c^2}/erfc(a (z - c)),
    still cancels to 1/erfcx (the factored square is expanded where it cancels)."""
    from replica.symbolic.codegen import _namespace

    c = sympy.Symbol("c", real=True)
    y = a * (z - c)
    ns = _namespace("np")
    av, cv = 1e10, 0.7
    cases = [(sympy.erfc(y), lambda A, C, Z: mpmath.erfc(A * (Z - C))),
             (sympy.erfc(y) * sympy.exp(-z**2 / 2),
              lambda A, C, Z: mpmath.erfc(A * (Z - C)) * mpmath.exp(-Z**2 / 2))]
    for zv, (e, ref) in [(cv + d, case) for d in (2e-9, 2.6e-9) for case in cases]:
        s = gaussian.scaled_erfc(e)
        assert not s.has(sympy.erfc)
        f = sympy.lambdify([a, c, z], s, modules=[ns, "numpy"])
        with np.errstate(all="ignore"):
            got = float(f(av, cv, zv))
        with mpmath.workdps(40):
            want = ref(*(mpmath.mpf(x) for x in (av, cv, zv)))
        assert 0 < abs(float(want)) < 1e-170  # (representable: the test can see a wrong one)
        # (a (z - c) is rounded to eps/2 relative, z - c exact: e^{-y^2} to ~ eps y^2)
        tol = 4 * np.finfo(float).eps * (av * (zv - cv)) ** 2
        assert np.isfinite(got) and abs(got - float(want)) <= tol * abs(float(want)), (
            e, got, want)
    mills = gaussian.scaled_erfc(sympy.exp(-sympy.expand(y**2)) / sympy.erfc(y))
    assert not mills.has(sympy.exp) and sympy.simplify(mills - 1 / gaussian.erfcx(y)) == 0
