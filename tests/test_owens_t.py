"""Owen's T in the code generator (replica.symbolic.gaussian.owens_t): the float64 code (SciPy's
``owens_t``) and the mpmath code (the quadrature of the definition) of a generated function,
and its derivatives, against mpmath quadrature of the definition written here; the code is
cacheable (its source names only the namespace's ``owens_t``) and runs when loaded from the
code cache; it has no ball-arithmetic version (refused as not enclosable)."""

import mpmath
import numpy as np
import pytest
import sympy

from replica.symbolic.codegen import CodeCache, Evaluator, NotEnclosable, _arb_lambdify
from replica.symbolic.gaussian import owens_t

h, a = sympy.symbols("h a", real=True)

POINTS = [(0.3, 0.7), (1.5, 2.5), (-0.8, 0.4), (2.0, -1.3), (0.0, 3.0), (4.0, 0.5),
          (0.05, 20.0), (1.0, 0.0)]


def owen_by_hand(hv, av):
    """T(h, a) = (1/2 pi) int_0^a exp(-h^2 (1 + x^2)/2)/(1 + x^2) dx, by Gauss-Legendre."""
    hv, av = mpmath.mpf(hv), mpmath.mpf(av)
    f = lambda x: mpmath.exp(-hv**2 * (1 + x**2) / 2) / (1 + x**2)  # noqa: E731
    return mpmath.quad(f, mpmath.linspace(0, av, 5), method="gauss-legendre") / (2 * mpmath.pi)


def test_generated_float64_and_mpmath_code_against_the_definition():
    ev = Evaluator([owens_t(h, a)], [h, a])
    for hv, av in POINTS:
        with mpmath.workdps(40):
            ref = owen_by_hand(hv, av)
        f64 = float(ev.f64([np.float64(hv), np.float64(av)])[0])
        assert abs(f64 - float(ref)) <= 1e-15 * max(abs(float(ref)), 1e-300) + 1e-300, (hv, av)
        with mpmath.workdps(30):
            mp = ev.mp([mpmath.mpf(hv), mpmath.mpf(av)])[0]
        assert abs(mp - ref) <= mpmath.mpf(10) ** -28 * abs(ref), (hv, av, mp, ref)
    # and vectorised over arrays, as the float64 grids call it
    hs, as_ = np.array([p[0] for p in POINTS]), np.array([p[1] for p in POINTS])
    got = ev.f64([hs, as_])[0]
    assert np.allclose(got, [float(owen_by_hand(*p)) for p in POINTS], rtol=1e-14, atol=0)


def test_derivatives_against_numerical_differentiation_of_the_definition():
    ev = Evaluator([sympy.diff(owens_t(h, a), h), sympy.diff(owens_t(h, a), a)], [h, a])
    for hv, av in POINTS[:6]:
        with mpmath.workdps(40):
            dh = mpmath.diff(lambda x: owen_by_hand(x, av), hv)
            da = mpmath.diff(lambda x: owen_by_hand(hv, x), av)
        with mpmath.workdps(30):
            got = ev.mp([mpmath.mpf(hv), mpmath.mpf(av)])
        assert abs(got[0] - dh) <= mpmath.mpf(10) ** -25 * max(abs(dh), 1), (hv, av)
        assert abs(got[1] - da) <= mpmath.mpf(10) ** -25 * max(abs(da), 1), (hv, av)


def test_sympy_evalf_is_the_definition():
    with mpmath.workdps(40):
        ref = owen_by_hand("1.5", "2.5")
        got = mpmath.mpf(str(owens_t(sympy.Rational(3, 2), sympy.Rational(5, 2)).evalf(35)))
        assert abs(got - ref) < mpmath.mpf(10) ** -33


def test_code_is_cached_and_runs_when_loaded(tmp_path, monkeypatch):
    """The generated source names ``owens_t`` of the namespace (no import hook); written to the
    code cache and loaded by a second evaluator, it gives the same values."""
    monkeypatch.setenv("REPLICA_LAMBDIFY_CACHE", str(tmp_path))
    CodeCache.folder.cache_clear()
    try:
        cache = CodeCache("owens-t-test")
        first = Evaluator([owens_t(h, a) * 2], [h, a], cache=cache, name="owen")
        v1 = [float(first.f64([0.3, 0.7])[0]),
              first.mp([mpmath.mpf("0.3"), mpmath.mpf("0.7")])[0]]
        files = sorted(p.name for p in tmp_path.iterdir())
        sources = [p.read_text() for p in tmp_path.iterdir() if p.suffix == ".py"]
        assert any("owens_t(" in s for s in sources), files
        assert not any("__import__" in s for s in sources)
        second = Evaluator([owens_t(h, a) * 2], [h, a], cache=cache, name="owen")
        v2 = [float(second.f64([0.3, 0.7])[0]),
              second.mp([mpmath.mpf("0.3"), mpmath.mpf("0.7")])[0]]
        assert v1 == v2
        assert abs(v1[1] - 2 * owen_by_hand("0.3", "0.7")) < mpmath.mpf(10) ** -13
    finally:
        CodeCache.folder.cache_clear()


def test_real_balls_but_no_complex_ball_version():
    """Real balls (replica.symbolic.owen.owens_t_ball: what the mpmath quadrature's fast
    integrands use) enclose the value; complex balls (acb.integral's integrands, --certify) have
    no version: refused as not enclosable."""
    import flint

    from replica.symbolic.codegen import _acb_namespace

    f = _arb_lambdify([h, a], [owens_t(h, a)])
    old = flint.ctx.prec
    try:
        flint.ctx.prec = 120
        ball = f(flint.arb("0.3"), flint.arb("0.7"))[0]
    finally:
        flint.ctx.prec = old
    with mpmath.workdps(40):
        ref = owen_by_hand("0.3", "0.7")
        assert ball.overlaps(flint.arb(mpmath.nstr(ref, 38))), (ball, ref)
    assert ball.rad() < abs(ball.mid()) * flint.arb(2) ** -110
    with pytest.raises(NotEnclosable, match="owens_t"):
        _arb_lambdify([h, a], [owens_t(h, a)], namespace=_acb_namespace())
