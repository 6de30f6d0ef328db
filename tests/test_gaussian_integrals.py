"""Gaussian integrals (:mod:`replica.symbolic.gaussian`) against closed forms written here.

Every reference is an independent computation: a closed form of the integral (by integration by
parts or completing the square, written with mpmath's ``ncdf``/``npdf``), a derivative of that
closed form (by hand, or ``mpmath.diff`` of it), or, where no closed form exists, the test's own
quadrature of a differently written integrand. The engine's values come from the generated
evaluators (:class:`replica.symbolic.codegen.Evaluator`) in all three backends."""

from __future__ import annotations

import mpmath
import numpy as np
import pytest
import sympy

from replica.symbolic.codegen import Evaluator, NotEnclosable
from replica.symbolic.gaussian import GaussianIntegral, GaussianIntegralError, gauss

z = sympy.Symbol("z", real=True)
kappa, a, b = sympy.symbols("kappa a b", real=True)
H = sympy.Heaviside
DPS = 50

Phi, phi = mpmath.ncdf, mpmath.npdf


def closed_forms(k, av, bv):
    """``{name: (integrand, closed form)}`` at kappa = k, a = av, b = bv > 0 (mpf)."""
    s = av / bv
    return {
        # int_{-k}^inf z^2 phi = Phi(k) - k phi(k)   (by parts: [-z phi] + int phi)
        "z2_theta": (z**2 * H(z + kappa), Phi(k) - k * phi(k)),
        # int_{-k}^inf (z + k)^2 phi = (1 + k^2) Phi(k) + k phi(k)
        "gardner": ((z + kappa) ** 2 * H(z + kappa), (1 + k**2) * Phi(k) + k * phi(k)),
        # E max(0, a + bZ) = a Phi(a/b) + b phi(a/b)
        "relu": (sympy.Max(0, a + b * z), av * Phi(s) + bv * phi(s)),
        # E |a + bZ| = 2 b phi(a/b) + a (2 Phi(a/b) - 1)
        "abs": (sympy.Abs(a + b * z), 2 * bv * phi(s) + av * (2 * Phi(s) - 1)),
        # E sign(a + bZ) = 2 Phi(a/b) - 1
        "sign": (sympy.sign(a + b * z), 2 * Phi(s) - 1),
        # E exp(a Z) theta(Z - k) = exp(a^2/2) Phi(a - k)   (complete the square)
        "exp_theta": (sympy.exp(a * z) * H(z - kappa), mpmath.exp(av**2 / 2) * Phi(av - k)),
        # E cosh(a + bZ) = cosh(a) exp(b^2/2)
        "cosh": (sympy.cosh(a + b * z), mpmath.cosh(av) * mpmath.exp(bv**2 / 2)),
        # a Piecewise with two kinks: E[Z; -k < Z < a] = phi(k) - phi(a) (0 if -k >= a)
        "window": (sympy.Piecewise((0, z < -kappa), (z, z < a), (0, True)),
                   phi(k) - phi(av) if -k < av else mpmath.mpf(0)),
    }


POINTS = [("1/3", "3/10", "2"), ("-7/5", "-1/2", "3/4"), ("0", "2", "1/5")]


def mpq(text):
    p, _, q = text.partition("/")
    return mpmath.mpf(int(p)) / (int(q) if q else 1)


@pytest.fixture(scope="module")
def evaluator():
    with mpmath.workdps(DPS):
        forms = closed_forms(mpmath.mpf(0), mpmath.mpf(1), mpmath.mpf(1))
    names = list(forms)
    ev = Evaluator([gauss(forms[n][0], z) for n in names], [kappa, a, b])
    return names, ev


@pytest.mark.slow
@pytest.mark.parametrize("point", POINTS)
def test_closed_forms_to_50_digits(evaluator, point):
    names, ev = evaluator
    with mpmath.workdps(DPS):
        k, av, bv = (mpq(t) for t in point)
        got = ev.mp([k, av, bv])
    with mpmath.workdps(DPS + 20):
        want = closed_forms(k, av, bv)
        for name, value in zip(names, got):
            ref = want[name][1]
            assert abs(value - ref) <= mpmath.mpf(10) ** -DPS * max(1, abs(ref)), (name, value,
                                                                                  ref)


@pytest.mark.slow
def test_log_2cosh_against_an_independent_quadrature():
    """E log(2 cosh(a + bZ)) (no closed form): the test's own quadrature of the integrand
    written as |x| + log1p(exp(-2|x|)), split at its kink -a/b; and at b = 0 the exact
    log(2 cosh a). Its derivative in a is E tanh(a + bZ), checked the same way."""
    f = gauss(sympy.log(2 * sympy.cosh(a + b * z)), z)
    ev = Evaluator([f, sympy.diff(f, a)], [a, b])
    with mpmath.workdps(DPS):
        av, bv = mpmath.mpf(3) / 10, mpmath.mpf(2)
        got = ev.mp([av, bv])
        at_zero = ev.mp([av, mpmath.mpf(0)])
    with mpmath.workdps(DPS + 20):
        def lc(x):
            return abs(x) + mpmath.log1p(mpmath.exp(-2 * abs(x)))
        ref = mpmath.quad(lambda t: lc(av + bv * t) * phi(t), [-mpmath.inf, -av / bv, mpmath.inf])
        dref = mpmath.quad(lambda t: mpmath.tanh(av + bv * t) * phi(t),
                           [-mpmath.inf, -av / bv, mpmath.inf])
        tol = mpmath.mpf(10) ** -DPS
        assert abs(got[0] - ref) < tol * abs(ref)
        assert abs(got[1] - dref) < tol
        assert abs(at_zero[0] - mpmath.log(2 * mpmath.cosh(av))) < tol


@pytest.mark.slow
def test_derivatives_under_the_integral_match_the_closed_forms():
    """d^n/dkappa^n of int Dz (z + kappa)^2 theta(z + kappa): 2(kappa Phi + phi), 2 Phi and
    2 phi (the third comes from the delta function of the second derivative, integrated
    exactly); d/db E|a + bZ| = 2 phi(a/b) (differentiating the closed form by hand); the
    ReLU's derivatives in a and b by mpmath.diff of its closed form; d/dkappa Phi(kappa/b) =
    phi(kappa/b)/b from a delta function of negative slope."""
    G = gauss((z + kappa) ** 2 * H(z + kappa), z)
    derivs = [sympy.diff(G, kappa, n) for n in (1, 2, 3)]
    for d in derivs:
        assert not d.has(sympy.DiracDelta)
    assert not derivs[2].has(GaussianIntegral)  # the delta's term is a closed form
    A = gauss(sympy.Abs(a + b * z), z)
    R = gauss(sympy.Max(0, a + b * z), z)
    T = gauss(H(kappa - b * z), z)  # Phi(kappa/b) for b > 0: a kink with a negative slope
    ev = Evaluator(derivs + [sympy.diff(A, b), sympy.diff(R, a), sympy.diff(R, b),
                             sympy.diff(R, a, 2), sympy.diff(T, kappa)], [kappa, a, b])
    with mpmath.workdps(DPS):
        k, av, bv = mpmath.mpf(-2) / 3, mpmath.mpf(1) / 4, mpmath.mpf(3) / 2
        got = ev.mp([k, av, bv])
    with mpmath.workdps(DPS + 20):
        s = av / bv
        relu = lambda x, y: x * Phi(x / y) + y * phi(x / y)  # noqa: E731
        want = [2 * (k * Phi(k) + phi(k)), 2 * Phi(k), 2 * phi(k), 2 * phi(s),
                mpmath.diff(lambda x: relu(x, bv), av), mpmath.diff(lambda y: relu(av, y), bv),
                mpmath.diff(lambda x: relu(x, bv), av, 2), phi(k / bv) / bv]
        for i, (g, w) in enumerate(zip(got, want)):
            assert abs(g - w) < mpmath.mpf(10) ** -(DPS - 5) * max(1, abs(w)), (i, g, w)


@pytest.mark.slow
def test_float64_agrees_with_mpmath_on_a_grid(evaluator):
    """The vectorised float64 rule (piecewise Gauss--Legendre, each grid element with its own
    kinks) against the 50-digit values, to 1e-13 relative (absolute for values below 1)."""
    names, ev = evaluator
    ks = np.linspace(-2.5, 2.5, 11)
    av, bv = 0.3, 1.7
    grid = ev.f64([ks, av, bv])
    for i, k in enumerate(ks):
        with mpmath.workdps(30):
            ref = ev.mp([mpmath.mpf(k), mpmath.mpf(av), mpmath.mpf(bv)])
        for name, g, r in zip(names, grid, ref):
            assert abs(g[i] - float(r)) <= 1e-13 * max(1.0, abs(float(r))), (name, k, g[i], r)


@pytest.mark.slow
def test_ball_enclosures_contain_the_value_and_are_narrow(evaluator):
    from flint import arb, ctx

    names, ev = evaluator
    old = ctx.prec
    try:
        ctx.prec = 200
        balls = ev.arb([arb(1) / 3, arb(3) / 10, arb(2)])
        with mpmath.workdps(60):
            ref = ev.mp([mpmath.mpf(1) / 3, mpmath.mpf(3) / 10, mpmath.mpf(2)])
            for name, ball, r in zip(names, balls, ref):
                assert ball.overlaps(arb(mpmath.nstr(r, 60), "1e-58")), (name, ball, r)
                assert ball.rad() < arb("1e-50"), (name, ball)
    finally:
        ctx.prec = old


def test_ball_evaluation_over_a_box_encloses_every_point():
    """A wide parameter ball: the enclosure holds the integral at both ends of the box."""
    from flint import arb

    G = gauss((z + kappa) ** 2 * H(z + kappa), z)
    ev = Evaluator([G], [kappa])
    ball = ev.arb([arb("0.5", "0.01")])[0]
    for end in ("0.49", "0.51"):
        k = mpmath.mpf(end)
        assert ball.contains(arb(mpmath.nstr((1 + k**2) * Phi(k) + k * phi(k), 30), "1e-28"))
    assert ball.rad() < 0.1


def test_integrands_without_a_tail_bound_are_not_enclosable():
    from flint import arb

    # (a reciprocal of a sum that is not a positive constant plus non-negative terms: no
    # envelope; 1/(1 + z^2) <= 1 has one, tests/test_tail_envelopes.py)
    ev = Evaluator([gauss(1 / (2 + sympy.tanh(z)), z)], [])
    with mpmath.workdps(30):  # the mpmath quadrature has no such restriction
        assert abs(ev.mp([])[0] - mpmath.quad(lambda t: phi(t) / (2 + mpmath.tanh(t)),
                                              [-mpmath.inf, 0, mpmath.inf])) < 1e-28
    with pytest.raises(NotEnclosable, match="tails"):
        ev.arb([arb(1)])


def _no_build():
    raise AssertionError("the code was generated again instead of loaded from the cache")


def test_ball_code_of_gaussian_integrals_is_cached(tmp_path):
    """The ball-arithmetic code of an expression with Gaussian integrals (integrand, kinks,
    switches, growth envelope) is stored in the code cache and loaded by a fresh evaluator
    without generating it again, giving the same enclosure; so is the outcome "not
    enclosable" (the generation is not retried in every process)."""
    from flint import arb

    from replica.symbolic.codegen import CodeCache

    cache = CodeCache(f"test-gauss-arb-{tmp_path.name}")
    G = gauss((z + kappa) ** 2 * H(z + kappa), z) + gauss(sympy.cosh(a * z), z)
    first = Evaluator([G, kappa * G], [kappa, a], cache=cache, name="g").arb(
        [arb(1) / 3, arb(3) / 10])
    again = Evaluator(build=_no_build, args=[kappa, a], cache=cache, name="g").arb(
        [arb(1) / 3, arb(3) / 10])
    assert [str(x) for x in again] == [str(x) for x in first]
    assert again[0].rad() < 1e-10 and again[0].overlaps(first[0])

    bad = [gauss(1 / (2 + sympy.tanh(z)), z)]
    with pytest.raises(NotEnclosable, match="tails"):
        Evaluator(bad, [], cache=cache, name="bad").arb([])
    with pytest.raises(NotEnclosable, match="tails"):
        Evaluator(build=_no_build, args=[], cache=cache, name="bad").arb([])


def test_the_expression_object():
    G = gauss(kappa * (z + kappa) ** 2 * H(z + kappa), z)
    assert G.free_symbols == {kappa}
    assert isinstance(G, sympy.Mul) and kappa in G.args  # the constant factor is taken out
    inner = [g for g in G.args if isinstance(g, GaussianIntegral)][0]
    assert sympy.latex(inner).startswith(r"\int \mathcal{D}z\, \left(")
    assert gauss(kappa**2, z) == kappa**2  # the measure has mass one
    assert sympy.diff(gauss(z**2, z), kappa) == 0
    assert gauss(z, sympy.Symbol("z")).free_symbols == set()  # z is taken as real and bound
    with pytest.raises(GaussianIntegralError, match="not linear"):
        gauss(H(z**2 - kappa), z)


@pytest.mark.parametrize("name", ["erf", "erfc"])
@pytest.mark.parametrize("size", [7, 300, 5000])
def test_float64_error_functions_against_mpmath(name, size):
    """The float64 namespace's ``erf``/``erfc`` (Python's ``math`` element by element for small
    arrays, SciPy's ufunc for large ones: ``codegen._small_erf``) against mpmath at 30 digits,
    from the far left to where ``erfc`` underflows, as arrays and as a number: within 4 units
    in the last place (relative) on the small arrays; SciPy's ``erfc`` (Cephes) loses up to
    ~260 of them in the far tail (``x`` near 24), so 1e-13 on the large one."""
    from replica.symbolic.codegen import _namespace

    f = _namespace("np")[name]
    x = np.linspace(-7.0, 26.0, size)
    got = f(x)
    assert isinstance(got, np.ndarray) and got.shape == x.shape and got.dtype == np.float64
    with mpmath.workdps(30):
        exact = np.array([float(getattr(mpmath, name)(mpmath.mpf(v))) for v in x])
        nonzero = exact != 0
        rel = np.abs(got - exact)[nonzero] / np.abs(exact[nonzero])
        assert rel.max() <= (4 * np.finfo(float).eps if size <= 4096 else 1e-13)
        assert np.all(got[~nonzero] == 0)
        assert float(f(0.3)) == pytest.approx(float(getattr(mpmath, name)(0.3)), rel=1e-15)
    assert f(x.reshape(-1, 1)).shape == (size, 1)


def test_a_float64_gaussian_integral_with_erfc_does_not_import_scipy():
    """A float64 evaluation of a Gaussian integral with an ``erfc`` on the default nodes (a few
    hundred per element) does not import SciPy (0.14 s of CPU time per process): the value
    against its closed form :math:`E[\\Phi(az)^2] = 1/4 + \\arcsin(a^2/(1 + a^2))/(2\\pi)`."""
    import subprocess
    import sys

    code = ("import sys, math, numpy as np, sympy\n"
            "from replica.symbolic.codegen import Evaluator\n"
            "from replica.symbolic.gaussian import gauss\n"
            "z, a = sympy.symbols('z a', real=True)\n"
            "ev = Evaluator([gauss((sympy.erfc(-a * z / sympy.sqrt(2)) / 2)**2, z)], [a])\n"
            "v = float(ev.f64([np.array(1.2)])[0])\n"
            "want = 0.25 + math.asin(1.44 / 2.44) / (2 * math.pi)\n"
            "print(abs(v - want) / want, any(m.startswith('scipy') for m in sys.modules))\n")
    import os

    env = dict(os.environ, REPLICA_LAMBDIFY_CACHE="0")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                         check=True).stdout.split()
    assert float(out[0]) < 1e-14
    assert out[1] == "False"
