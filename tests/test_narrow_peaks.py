"""Gaussian integrands with a narrow feature -- a Gaussian peak or an error-function step far
narrower than the quadrature's cells -- at parameters where the feature sits between the nodes
of every rule the adaptive Gauss--Legendre error estimate compares (a wrong value and no error).

Found on ``examples/logistic_regression.py`` at ``alpha = 3, lam = 1/10000, eta = 9/10``: near
the boundary ``q > eta^2 m^2`` the label factor ``Phi(eta m xi / sqrt(q - eta^2 m^2))`` is a step
of width ``sqrt(q - eta^2 m^2)/(eta m)`` at ``xi = 0`` and its derivatives Gaussian peaks of that
width and height ``1/(q - eta^2 m^2)``; at ``q - eta^2 m^2 = 1e-5`` the fixed-point map came
out ``(-0.0127, 0.000186, -0.0270)`` instead of ``(3.45, 13.78, 7.34)``. The layouts now cut at
such features (:func:`replica.symbolic.gaussian.narrow_features`,
:func:`replica.symbolic.codegen._mp_layout`, ``_gauss_np``). Checked against closed forms and,
for the logistic map, against the map written by hand from the example's docstring and
integrated by ``mpmath.quad`` with the peak's breakpoints given to it.
"""

from pathlib import Path

import mpmath
import numpy as np
import pytest
import sympy

from replica.symbolic.codegen import Evaluator
from replica.symbolic.gaussian import gauss, narrow_features

ROOT = Path(__file__).resolve().parents[1]
z = sympy.Symbol("z", real=True)
a, c = sympy.symbols("a c", real=True)


def test_narrow_features_centers_and_widths():
    """The centers ``r/p`` and widths ``1/sqrt(p)`` of an off-center Gaussian peak (with the
    density's ``-z^2/2``) and of an error-function step, against the completed squares written
    here; a step whose width is a number not below 1/2 is no feature."""
    bare = sympy.exp(-a * (z - c) ** 2 / 2) + sympy.erfc(a * (z - c)) + sympy.erf(z / 3)
    got = narrow_features(bare, z)
    # e^{-a (z - c)^2/2 - z^2/2}: precision 1 + a, center a c/(1 + a)
    # erfc(a (z - c)): center c, width 1/|a|
    want = [(1 + a, a * c / (1 + a), 1 / sympy.sqrt(1 + a)), (a**2, c, 1 / sympy.Abs(a))]
    assert len(got) == 2
    for (p, r), (p0, c0, w0) in zip(sorted(got, key=lambda f: sympy.count_ops(f[0])),
                                    sorted(want, key=lambda f: sympy.count_ops(f[0]))):
        for av, cv in ((sympy.Rational(7, 2), sympy.Rational(-3, 10)), (100, 2)):
            at = {a: av, c: cv}
            assert sympy.simplify((r / p - c0).subs(at)) == 0
            assert sympy.simplify((1 / sympy.sqrt(p) - w0).subs(at)) == 0


# closed forms: E exp(-A (Z - C)^2/2) = exp(-A C^2/(2 (1 + A)))/sqrt(1 + A) (complete the
# square); E Phi(B (Z - C)) = Phi(-B C/sqrt(1 + B^2)), erfc(-x)/2 = Phi(sqrt 2 x);
# E sqrt(1 + A) exp(-A Z^2/2) = 1
def _closed(A, C):
    B = mpmath.sqrt(2) * A
    return [mpmath.exp(-A * C**2 / (2 * (1 + A))) / mpmath.sqrt(1 + A),
            mpmath.ncdf(-B * C / mpmath.sqrt(1 + B**2)),
            mpmath.mpf(1)]


@pytest.fixture(scope="module")
def peaks():
    return Evaluator([gauss(sympy.exp(-a * (z - c) ** 2 / 2), z),
                      gauss(sympy.erfc(-a * (z - c)) / 2, z),
                      gauss(sympy.sqrt(1 + a) * sympy.exp(-a * z**2 / 2), z)], [a, c])


@pytest.mark.parametrize("A, C", [("1e10", "0"), ("1e10", "0.7"), ("1e6", "0.3"),
                                  ("1e12", "-1.9"), ("3", "0.5")])
def test_narrow_peaks_and_steps_against_closed_forms(peaks, A, C):
    """At 30 digits (and in float64, to 1e-9 relative) the integrals equal their closed
    forms: a peak of width 1e-5 at a cell boundary (z = 0) or inside a cell, a step of width
    1e-6, a peak of height 1e5 and width 1e-5 at z = 0 (the third, whose value is 1), and a
    wide one."""
    with mpmath.workdps(30):
        Av, Cv = mpmath.mpf(A), mpmath.mpf(C)
        got = peaks.mp([Av, Cv])
    with mpmath.workdps(50):  # (the same arguments, as the engine got them)
        want = _closed(Av, Cv)
    for g, w in zip(got, want):
        assert abs(g - w) <= mpmath.mpf(10) ** -29 * abs(w), (g, w)
    # float64: z - C at a node next to the peak is rounded to eps |C| of a width 1/sqrt(A),
    # a relative error eps |C| sqrt(A) <= 2e-10 of the exponent's square root here (the step
    # at A = 1e10, C = 0.7 was -inf: gaussian.scaled_erfc expanded the square of its argument,
    # test_float64_steps_of_width_down_to_1e_12)
    got64 = peaks.f64([np.float64(A), np.float64(C)])
    for i in (0, 1, 2):
        g, w = float(got64[i]), float(want[i])
        assert abs(g - w) <= 1e-9 * abs(w), (i, g, w)


@pytest.fixture(scope="module")
def steps():
    return Evaluator([gauss(sympy.erfc(-a * (z - c)) / 2, z), gauss(sympy.erfc(a * (z - c)), z),
                      gauss(sympy.exp(-a**2 * (z - c) ** 2), z)], [a, c])


def test_float64_steps_of_width_down_to_1e_12(steps):
    """Float64 error-function steps erfc(-a (z - c))/2 and erfc(a (z - c)) of width 1/a =
    1e-6 ... 1e-12 at centers across [-8, 8], against their closed forms (E Phi(B (Z - C)) =
    Phi(-B C/sqrt(1 + B^2)), erfc(x) = 2 Phi(-sqrt 2 x)) at 40 digits, at the same float64
    arguments: right to 1e-12 relative (seen: <= 1e-14). Before, the scaled form of erfc
    (gaussian.scaled_erfc, at the nodes next to the step where a (z - c) >= 26.5) expanded
    a^2 (z - c)^2 into a^2 (z^2 - 2cz + c^2), a difference of terms of a^2 c^2 ~ 1e20 with a
    rounding error ~1e4: -inf or inf at width <= 1e-10 (e.g. the first at 1e-10, c = 0.7),
    else up to 8e-10 wrong. A node's own rounding, eps |z| ~ eps |c|, moves the step by at
    most that: a relative error of about eps c^2 of the value, whatever the width.

    The peak e^{-a^2 (z - c)^2} of width 1/a (the steps' derivative) is as right as float64
    can place its nodes: z - c at a node is rounded to eps |c| of the width 1/a, so its value
    to about eps |c| a relative (seen: <= 0.25 eps |c| a; 4e-4 at a = 1e12, c = 8); asserted
    here against that bound (the float64 check, in extended precision, sees the rest)."""
    A = np.array([1e6, 1e8, 1e10, 1e11, 1e12])[:, None]
    C = np.array([-8.0, -5.3, -1.9, -0.7, 0.0, 0.3, 0.7, 3.3, 7.9, 8.0])[None, :]
    A, C = np.broadcast_arrays(A, C)
    got = steps.f64([A, C])
    eps = np.finfo(float).eps
    with mpmath.workdps(40):
        for (i, j), Av in np.ndenumerate(A):
            av, cv = mpmath.mpf(Av), mpmath.mpf(C[i, j])
            b = mpmath.sqrt(2) * av
            want = [mpmath.ncdf(-b * cv / mpmath.sqrt(1 + b**2)),
                    2 * mpmath.ncdf(b * cv / mpmath.sqrt(1 + b**2)),
                    mpmath.exp(-av**2 * cv**2 / (1 + 2 * av**2)) / mpmath.sqrt(1 + 2 * av**2)]
            tol = [1e-12, 1e-12, max(1e-13, eps * abs(C[i, j]) * Av)]
            for k in range(3):
                g, w = float(got[k][i, j]), float(want[k])
                assert abs(g - w) <= tol[k] * abs(w), (k, Av, C[i, j], g, w)


def test_layout_cuts_at_features_and_keys_their_cells_apart():
    """The pieces of the mp layout at a feature of width 1e-3 at 0.3: they tile [-T, T]
    without gaps, have 0.3 and 0.3 +- 1e-3 4^j (j <= 5) as ends, the pieces of the cut cell are
    keyed (prec, 0, j) with distinct j, the cell [-2, 0] cut at 0.3 - 1.024, every other cell as
    without features; without features
    the layout is the old one (cells of 2, a kink at 0.5)."""
    from replica.symbolic.codegen import _mp_layout

    def make(mid, half):
        return half

    with mpmath.workprec(120):
        c, w = mpmath.mpf("0.3"), mpmath.mpf("1e-3")
        plain = _mp_layout([mpmath.mpf("0.5")], 100, make)
        cut = _mp_layout([mpmath.mpf("0.5")], 100, make, [(c, w)])
        graded = [c + sign * w * 4**j for j in range(6) for sign in (-1, 1)]
    finite = [p for p in cut if p[2] is None]
    for (a0, b0, _, _), (a1, _, _, _) in zip(finite[:-1], finite[1:]):
        assert b0 == a1
    ends = {p[0] for p in finite}
    assert c in ends and mpmath.mpf("0.5") in ends
    assert all(x in ends for x in graded)
    keys = [p[3] for p in finite if p[0] >= 0 and p[1] <= 2]
    assert len(keys) == len(set(keys)) == 14 and all(k[:2] == (100, 0) for k in keys)
    far = graded[10]  # 0.3 - 1.024, in the cell [-2, 0]
    assert [(p[0], p[1], p[3][2]) for p in finite if -2 <= p[0] < 0] == [(-2, far, 0),
                                                                          (far, 0, 1)]
    assert [p for p in plain if not -2 <= p[0] < 2] == [p for p in cut if not -2 <= p[0] < 2]
    assert [(p[0], p[1]) for p in plain if p[2] is None and 0 <= p[0] < 2] == [(0, 0.5),
                                                                               (0.5, 2)]


def _prox(w, V):
    """The logistic proximal map: the root of p - w - V/(1 + e^p) on [w, w + V] (increasing,
    slope >= 1), by Newton's method kept inside a bisection bracket."""
    lo, hi = w, w + V
    p = (lo + hi) / 2
    for _ in range(400):
        e = mpmath.exp(-abs(p))
        sig = 1 / (1 + e) if p < 0 else e / (1 + e)  # 1/(1 + e^p)
        f = p - w - V * sig
        if f > 0:
            hi = p
        else:
            lo = p
        new = p - f / (1 + V * sig * (1 - sig))
        if not lo <= new <= hi:
            new = (lo + hi) / 2
        if abs(new - p) <= 4 * mpmath.eps * (1 + abs(p)):
            return new
        p = new
    raise ArithmeticError("the proximal map did not converge")


def _logistic_map(m, q, V, alpha, lam, eta, dps):
    r"""The fixed-point map of ``examples/logistic_regression.py`` written from its docstring:
    with :math:`I = 2\int\mathcal D\xi\,\Phi(\eta m\xi/s)\,\mathcal M_V(1, \sqrt q\,\xi)`,
    :math:`s = \sqrt{q - \eta^2 m^2}`, the stationarity of :math:`\Phi` gives
    :math:`\hat m = -\alpha\,\partial_m I`, :math:`\hat V = 2\alpha\,\partial_q I`,
    :math:`\hat q = -2\alpha\,\partial_V I` and :math:`m = \hat m/(\lambda + \hat V)`,
    :math:`q = (\hat m^2 + \hat q)/(\lambda + \hat V)^2`, :math:`V = 1/(\lambda + \hat V)`;
    the derivatives under the integral by hand (:math:`\partial_\omega\mathcal M = (\omega -
    p)/V`, :math:`\partial_V\mathcal M = -(\omega - p)^2/(2V^2)`, :math:`\partial_m(\eta m\xi/s)
    = \eta\xi q/s^3`, :math:`\partial_q(\eta m\xi/s) = -\eta m\xi/(2s^3)`), each integral by
    ``mpmath.quad`` (tanh--sinh) with breakpoints at the label's step, :math:`0` and
    :math:`\pm w 4^j`, :math:`w = s/(\eta m)` (its peak's width), and at :math:`\pm 10`."""
    with mpmath.workdps(dps + 15):
        s = mpmath.sqrt(q - eta**2 * m**2)

        def parts(xi):
            w = mpmath.sqrt(q) * xi
            p = _prox(w, V)
            env = (p - w) ** 2 / (2 * V) + mpmath.log(1 + mpmath.exp(-p))
            u = eta * m * xi / s
            peak = mpmath.npdf(u)
            dm = peak * eta * xi * q / s**3 * env
            dq = (-peak * eta * m * xi / (2 * s**3) * env
                  + mpmath.ncdf(u) * (w - p) / V * xi / (2 * mpmath.sqrt(q)))
            dV = -mpmath.ncdf(u) * (w - p) ** 2 / (2 * V**2)
            return [2 * mpmath.npdf(xi) * x for x in (dm, dq, dV)]

        width, points = s / (eta * m), [mpmath.mpf(0), mpmath.mpf(-10), mpmath.mpf(10)]
        while width < 2:
            points += [width, -width]
            width *= 4
        points = [-mpmath.inf] + sorted(points) + [mpmath.inf]
        dm, dq, dV = (mpmath.quad(lambda x, i=i: parts(x)[i], points) for i in range(3))
        mhat, Vhat, qhat = -alpha * dm, 2 * alpha * dq, -2 * alpha * dV
        return [mhat / (lam + Vhat), (mhat**2 + qhat) / (lam + Vhat) ** 2, 1 / (lam + Vhat)]


@pytest.fixture(scope="module")
def logistic():
    from replica.numerics.machine import machine
    from replica.registry import load

    problem = load(str(ROOT / "examples" / "logistic_regression.py")).problem
    params = problem.schema.parse({"alpha": "3", "lam": "1/10000", "eta": "9/10"})
    return machine(problem, problem.variant_of(params)), params


@pytest.mark.slow
@pytest.mark.parametrize("k", [5, 8])
def test_logistic_map_next_to_the_boundary(logistic, k):
    """The map at m = 3.4831, V = 5.84, q = eta^2 m^2 + 10^-k (alpha = 3, lam = 1/10000,
    eta = 9/10), where the label's step and peaks have width ~10^(-k/2)/3: 20 digits asked,
    evaluated with the driver's 10 guard digits (30; the integrals there cancel up to
    ``_CANCELLATION_GUARD_BITS``, and the map's m loses 7 digits at k = 8), against the
    hand-written map at 45 digits, both given the same arguments; float64 at k = 5 (where its
    own cancellation, ~1/(q - eta^2 m^2) times its rounding, is below 1e-7). Before the cut
    points the map was (-0.0127, 0.000186, -0.0270) at k = 5, (-15.4, 275.9, -32.8) at k = 8,
    and float64 (0, 36.9, -32.7)."""
    from replica.numerics.precision import precision

    mach, params = logistic
    with precision(30):
        P = mach.parameter_values_mp(params)
        m, V = mpmath.mpf("3.4831"), mpmath.mpf("5.84")
        q = P[2] ** 2 * m**2 + mpmath.mpf(10) ** -k
        got = mach.evaluate("equations", "mp", [m, q, V], P, None)
    want = _logistic_map(m, q, V, *P, dps=30)
    for g, w in zip(got, want):
        assert abs(g - w) <= mpmath.mpf(10) ** -20 * abs(w), (k, g, w)
    if k == 5:
        got64 = mach.evaluate("equations", "np", [float(m), float(q), float(V)],
                              [float(x) for x in P], None)
        for g, w in zip(got64, want):
            assert abs(float(g) - float(w)) <= 1e-7 * abs(float(w)), (g, w)


def test_nodes_of_empty_pieces_are_not_evaluated_for_a_root_integrand(monkeypatch):
    """A float64 grid of the integral E[e^{-A (z - C)^2/2} r(z)], r the root of r^3 + r = z (an
    implicit root, solved at every node), where two elements have a narrow peak (A = 1e6, 1e4:
    cut points at the peak) and two have none (A = 0.5, 2: their cut points are padding, pieces
    of length 0 at -16): the integrand is evaluated only at the nodes of pieces of positive
    length (fewer nodes than the rule has), the values are those of the rule at every node
    (``EMPTY_NODES_SKIPPED`` above 1: the skipping off) to rounding (seen: 1392 nodes against
    2112, the values bit-identical), and agree with ``mpmath.quad`` of the integrand written
    here (Cardano's root; the peak given as a breakpoint) to 1e-9 relative."""
    from replica.modeling import implicit_root
    from replica.symbolic import codegen

    p, w = sympy.symbols("p w", real=True)
    root = implicit_root("cubic_root_peaks", p**3 + p - w, p, (w,),
                         bracket=(-1 - sympy.Abs(w), 1 + sympy.Abs(w)))
    ev = Evaluator([gauss(sympy.exp(-a * (z - c) ** 2 / 2) * root(z), z)], [a, c])
    A = np.array([1e6, 0.5, 1e4, 2.0])
    C = np.array([0.3, 0.1, -0.7, 0.2])
    sizes = []
    real = codegen._np_integrand

    def counted(g, zz, fargs, dtype):
        sizes.append(zz.size)
        return real(g, zz, fargs, dtype)

    monkeypatch.setattr(codegen, "_np_integrand", counted)
    skipped = ev.f64([A, C])[0]
    monkeypatch.setattr(codegen, "EMPTY_NODES_SKIPPED", 2.0)
    every = ev.f64([A, C])[0]
    assert sizes[0] < sizes[1], sizes
    assert np.max(np.abs(skipped - every) / np.abs(every)) < 1e-15, (skipped, every)

    def cbrt(v):
        return mpmath.sign(v) * abs(v) ** (mpmath.mpf(1) / 3)

    def r(v):  # Cardano: the real root of t^3 + t - v
        s = mpmath.sqrt(v**2 / 4 + mpmath.mpf(1) / 27)
        return cbrt(v / 2 + s) + cbrt(v / 2 - s)

    with mpmath.workdps(20):
        for k in range(A.size):
            Av, Cv = mpmath.mpf(A[k]), mpmath.mpf(C[k])
            want = mpmath.quad(lambda t: mpmath.npdf(t) * mpmath.exp(-Av * (t - Cv) ** 2 / 2)
                               * r(t), [-mpmath.inf, -1, Cv - 1e-2, Cv, Cv + 1e-2, 1,
                                        mpmath.inf])
            assert abs(skipped[k] - float(want)) <= 1e-9 * abs(float(want)), (k, skipped[k],
                                                                               want)
