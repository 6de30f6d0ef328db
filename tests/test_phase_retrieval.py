"""Bayes-optimal real phase retrieval (examples/phase_retrieval.py: BayesOptimal with the
noiseless absolute-value channel y = |u|, Gaussian prior) against what is written out here by
hand, not taken from the engine:

* the channel term Psi_out(m) = E_xi int_0^inf dy Z_out log Z_out with Z_out = N(y; omega, V) +
  N(-y; omega, V) summed as two Gaussians (no folding to cosh), by Gauss-Legendre rules in
  NumPy (fast) -- the engine folds, uses the evenness in y and writes log 2 cosh as |X| +
  log(1 + exp(-2|X|));
* the state evolution in its Nishimori form, mhat = alpha h(m) with h(m) = E(u tanh(u omega/V)
  - omega)^2/V^2 (the square of d_omega log Z_out averaged over the label and the field; not
  the engine's derivative of the free entropy), m = mhat/(1 + mhat) for the Gaussian prior, in
  NumPy (fast) and in mpmath (slow);
* alpha_WR = 1/E(y^2 - 1)^2 = 1/2 (Mondelli and Montanari 2018), the fold alpha_alg of the
  hand-written state evolution by golden-section search in mpmath, the published values
  (Barbier et al., PNAS 2019: 1/2, 1, 1.13), and the perfect-recovery asymptotics
  V h(1 - V) -> 1 behind alpha_IT = 1."""

from __future__ import annotations

import json
import importlib.util
import os
from fractions import Fraction

import mpmath
import numpy as np
import pytest
import sympy

from replica.glm import AbsoluteValue, BayesOptimal, Gaussian, Rademacher
from replica.symbolic.codegen import Evaluator

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _example():
    spec = importlib.util.spec_from_file_location(
        "phase_retrieval_example", os.path.join(REPO, "examples", "phase_retrieval.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


PR = _example()


_LEGGAUSS = {}


def _gl(a, b, n):
    """Gauss-Legendre nodes and weights on [a, b]."""
    if n not in _LEGGAUSS:
        _LEGGAUSS[n] = np.polynomial.legendre.leggauss(n)
    x, w = _LEGGAUSS[n]
    return (b - a) / 2 * x + (a + b) / 2, (b - a) / 2 * w


def _phi(x):
    return np.exp(-x**2 / 2) / np.sqrt(2 * np.pi)


def _xi_nodes():
    """Nodes and weights of the standard Gaussian on xi > 0 (the integrands here are even in
    xi together with the inner variable: twice the half line)."""
    x, w = _gl(0.0, 12.0, 240)
    return x, 2 * w * _phi(x)


def hand_h(m):
    """h(m) = E_{xi, w}(u tanh(u omega/V) - omega)^2/V^2, omega = sqrt(m) xi, u = omega +
    sqrt(V) w, V = 1 - m: the inner w rule split where u omega changes sign."""
    V = 1 - m
    total = 0.0
    for x, wx in zip(*_xi_nodes()):
        om = np.sqrt(m) * x
        w0 = -om / np.sqrt(V)
        a, wa = _gl(w0 - 14, w0, 300)
        b, wb = _gl(w0, 14.0, 300)
        w, ww = np.concatenate([a, b]), np.concatenate([wa, wb]) * _phi(np.concatenate([a, b]))
        u = om + np.sqrt(V) * w
        total += wx * np.sum(ww * (u * np.tanh(u * om / V) - om) ** 2)
    return total / V**2


def hand_psi_out(m):
    """E_xi int_0^inf dy Z_out log Z_out, Z_out the sum of the two Gaussian densities at the
    label's two preimages; the y rule split at the peak y = |omega|."""
    V = 1 - m
    total = 0.0
    for x, wx in zip(*_xi_nodes()):
        om = np.sqrt(m) * x
        a, wa = _gl(0.0, om, 200) if om > 0 else (np.zeros(0), np.zeros(0))
        b, wb = _gl(om, om + 16 * np.sqrt(V), 300)
        y, wy = np.concatenate([a, b]), np.concatenate([wa, wb])
        logs = np.logaddexp(-(y - om) ** 2 / (2 * V), -(y + om) ** 2 / (2 * V)) \
            - 0.5 * np.log(2 * np.pi * V)
        total += wx * np.sum(wy * np.exp(logs) * logs)
    return total


def hand_overlap(alpha):
    """The fixed point m < 1 of the hand-written state evolution at alpha (1/2 < alpha < 1):
    the root of m/((1 - m) h(m)) = alpha on [0.05, 0.8], where alpha(m) increases, by regula
    falsi (Illinois) to 1e-12."""
    def f(m):
        return m / ((1 - m) * hand_h(m)) - alpha

    a, b = 0.05, 0.8
    fa, fb = f(a), f(b)
    assert fa < 0 < fb
    side = 0
    while b - a > 1e-12:
        c = (a * fb - b * fa) / (fb - fa)
        fc = f(c)
        if fc == 0:
            return c
        if fc < 0:
            a, fa = c, fc
            if side == -1:
                fb /= 2
            side = -1
        else:
            b, fb = c, fc
            if side == 1:
                fa /= 2
            side = 1
        if abs(fc) < 1e-15:
            return c
    return (a + b) / 2


def engine(exprs):
    _, m, _ = PR._symbols()
    return Evaluator(exprs, [m])


def test_the_channel_partition_step_verifies_and_is_shown(cli):
    """The derivation's checks (the folded Z_out, its evenness, its mass against the law of
    |u| by quadrature; the integrand is log Z_out at y = u and its stable form equals
    log 2 cosh; the quadratic form's eigenvalues, the radial closed form against quadrature,
    the angular maps and the one-dimensional form against a nested rule) pass, and ``replica
    equations`` shows the derived channel steps."""
    steps = {s.name: s for s in PR.MODEL.derivation.steps()}
    for name in ("partition", "two_dimensional", "quadratic_form", "radial", "average"):
        assert steps[f"glm_channel_{name}"].verify(), name
    rc, out, err = cli("equations", "--model", "examples/phase_retrieval.py")
    assert rc == 0, err
    assert "cosh" in out and "absolute-value" in out and "[derived]" in out
    assert "noiseless" in out.splitlines()[0] and "noise" not in out.splitlines()[0].replace(
        "noiseless", "")


def test_channel_term_equals_the_handwritten_integral():
    """Psi_out(m) (engine, float64: the one-dimensional polar form) against E_xi int dy Z_out
    log Z_out written out here, at three overlaps, to 1e-13 (the hand-written Gauss-Legendre
    rule's own accuracy: measured 9e-15, 6e-16, 1.1e-14 at m = 0.2, 0.6, 0.85), and against the
    engine's mpmath path at 30 digits to 1e-15 (measured at most 1.2e-16; the tensor-product
    rule of the former two-dimensional form was 6e-9 off at m = 0.85)."""
    ev = engine([PR.channel_term()])
    for m in (0.2, 0.6, 0.85):
        got = float(ev.f64([m])[0])
        ref = hand_psi_out(m)
        assert abs(got - ref) < 1e-13, (m, got, ref)
        with mpmath.workdps(30):
            exact = ev.mp([mpmath.mpf(m)])[0]
        assert abs(got - exact) < 1e-15, (m, got, exact)


@pytest.mark.slow
def test_channel_term_mpmath_path_equals_the_handwritten_integral():
    """The engine's mpmath path (the one-dimensional polar form, 30 digits) for Psi_out(0.85)
    against E_xi int_0^inf dy Z_out log Z_out written out here with nested mpmath.quad (y split
    at the peak |omega|) at 30 digits, to 1e-25. The densities are written with their constants
    computed once, Z = (e^{-(y - omega)^2/(2V)} + e^{-(y + omega)^2/(2V)})/sqrt(2 pi V) (the same
    integrand as two calls of ``mpmath.npdf`` at each node, half the CPU time: 40 s, not 79)."""
    ev = engine([PR.channel_term()])
    with mpmath.workdps(30):
        mv = mpmath.mpf("0.85")
        got = ev.mp([mv])[0]
        V = 1 - mv
        norm, k, sm = 1 / mpmath.sqrt(2 * mpmath.pi * V), -1 / (2 * V), mpmath.sqrt(mv)
        norm_xi = 2 / mpmath.sqrt(2 * mpmath.pi)  # (twice: the even integrand on xi > 0)
        exp = mpmath.exp

        def inner(x):
            om = sm * x

            def f(y):
                Z = norm * (exp(k * (y - om) ** 2) + exp(k * (y + om) ** 2))
                return Z * mpmath.log(Z)
            return norm_xi * exp(-x * x / 2) * mpmath.quad(f, [0, om, mpmath.inf])
        ref = mpmath.quad(inner, [0, mpmath.inf])
    assert abs(got - ref) < mpmath.mpf("1e-25"), (got, ref)


def test_state_evolution_map_equals_the_nishimori_form():
    """2 Psi_out'(m) by the engine's derivative under both integrals against the Nishimori form
    h(m) = E(d_omega log Z_out)^2 written out here, to 1e-12 relative."""
    _, m, _ = PR._symbols()
    ev = engine([2 * sympy.diff(PR.channel_term(), m)])
    for mv in (0.05, 0.5, 0.85):
        got = float(ev.f64([mv])[0])
        ref = hand_h(mv)
        assert abs(got - ref) < 1e-12 * ref, (mv, got, ref)


def test_weak_recovery_threshold_is_one_half_exactly():
    """alpha_WR from the model's expansion at m = 0 (SymPy) is 1/2 exactly, equal to
    1/E(y^2 - 1)^2 for y = |z| computed here by SymPy's integration, and to the published 1/2;
    Psi_out = Psi_out(0) + m^2/2 + O(m^3)."""
    a_wr, c2 = PR.weak_recovery_threshold()
    z = sympy.Symbol("z", real=True)
    moment = sympy.integrate((z**2 - 1) ** 2 * sympy.exp(-z**2 / 2) / sympy.sqrt(2 * sympy.pi),
                             (z, -sympy.oo, sympy.oo))
    assert a_wr == 1 / moment == sympy.Rational(1, 2)
    assert Fraction(str(a_wr)) == PR.ALPHA_WR_PUBLISHED
    assert c2 == sympy.Rational(1, 2)


@pytest.mark.slow
def test_float64_solution_equals_the_handwritten_fixed_point():
    """The engine's float64 solve at alpha = 4/5 and 19/20 against the fixed point of the
    hand-written state evolution (regula falsi), to 1e-12. Its status is ``converged``: the
    channel term is a one-dimensional integral, so the float64 point gets the engine's
    extended-precision error estimate (``not-verified`` while it was two-dimensional). Slow:
    the first float64 solve of a process generates its code."""
    for alpha in (0.8, 0.95):
        got, status = PR.overlap_float64(alpha)
        ref = hand_overlap(alpha)
        assert abs(got - ref) < 1e-12, (alpha, got, ref)
        assert status == "converged"


def test_perfect_recovery_asymptotics_behind_alpha_it():
    """alpha_IT = 1: the potential is (1 - alpha) log(V)/2 + O(1) as V -> 0 (module docstring)
    because V h(1 - V) -> 1 (h = 2 Psi_out'); engine's h at V = 1e-3, 1e-4, its deviation
    O(sqrt V) extrapolated away (Richardson in sqrt V) to within 1e-3 of 1."""
    _, m, _ = PR._symbols()
    ev = engine([2 * sympy.diff(PR.channel_term(), m)])
    f = {V: V * float(ev.f64([1 - V])[0]) for V in (1e-3, 1e-4)}
    for V, val in f.items():
        assert 0 < 1 - val < np.sqrt(V), (V, val)
    r = np.sqrt(10)
    assert abs((r * f[1e-4] - f[1e-3]) / (r - 1) - 1) < 1e-3, f
    assert PR.ALPHA_IT_PUBLISHED == 1


def test_alpha_outside_the_branch_is_a_one_line_error(cli):
    """alpha <= 1/2 (m = 0) and alpha >= 6/5 (past the branch's end alpha_alg = 1.128...) are
    refused, exit 2."""
    for alpha in ("1/2", "6/5"):
        rc, out, err = cli("solve", "--model", "examples/phase_retrieval.py", "--alpha", alpha)
        assert rc == 2, (alpha, rc, out, err)
        assert len(err.strip().splitlines()) == 1 and "--alpha" in err and "(1/2, 6/5)" in err


def test_noisy_absolute_value_is_derived_for_both_priors():
    """The noisy channel (tests/test_glm_bayes_abs_noisy.py checks it) builds with either
    prior: its channel term is a two-dimensional integral, and sigma = 0 is refused."""
    from replica.symbolic.gaussian import GaussianIntegral, is_two_dimensional

    for prior in (Gaussian(), Rademacher()):
        model = BayesOptimal("b", prior=prior, channel=AbsoluteValue("sigma"))
        assert any(is_two_dimensional(g) for g in model.free_energy.atoms(GaussianIntegral))
        assert any("must be positive" in r.message for r in model.rules)


@pytest.mark.slow
def test_algorithmic_threshold_against_the_handwritten_state_evolution():
    """alpha_alg, the fold of the branch m < 1 (engine: float64, bisection on alpha'(m) = 0),
    against the state evolution written here: (i) the maximum of alpha(m) = m/((1 - m) h(m))
    located by golden-section search (to 1e-4 in m, so alpha to about 2e-8, checked to 1e-7)
    with h by the NumPy rule :func:`hand_h` (its relative error is about 1e-14: 1.1e-14 against
    the 20-digit mpmath h below at m = 0.85, measured; the search compares values that differ
    by 1e-9 and more until its last steps, and its maximum needs 1e-8); (ii) with h in mpmath
    at 20 digits, alpha(m*) at the engine's m* equals the engine's value to 1e-13 and the
    central difference alpha(m* + d) - alpha(m* - d), d = 1e-5, vanishes (m* a critical
    point) with alpha(m* +- d) < alpha(m*) (a maximum); (iii) the published 1.13 (two
    decimals). (The search ran in mpmath at 12 digits before: 4.7 s of CPU per h, 17 of
    them, two thirds of the test's time.)"""
    a_alg, m_star = PR.algorithmic_threshold()

    def h(mv):
        V = 1 - mv
        sm, sV = mpmath.sqrt(mv), mpmath.sqrt(V)

        def inner(x):
            om = sm * x
            g = lambda w: mpmath.npdf(w) * ((om + sV * w) * mpmath.tanh((om + sV * w) * om / V)
                                            - om) ** 2
            return mpmath.npdf(x) * mpmath.quad(g, [-mpmath.inf, -om / sV, mpmath.inf])
        return 2 * mpmath.quad(inner, [0, mpmath.inf]) / V**2

    def alpha_of(mv):
        return mv / ((1 - mv) * h(mv))

    def alpha_np(mv):
        return mv / ((1 - mv) * hand_h(mv))

    g = (np.sqrt(5) - 1) / 2
    lo, hi = 0.8, 0.9
    c, d = hi - g * (hi - lo), lo + g * (hi - lo)
    fc, fd = alpha_np(c), alpha_np(d)
    while hi - lo > 1e-4:
        if fc > fd:
            hi, d, fd = d, c, fc
            c = hi - g * (hi - lo)
            fc = alpha_np(c)
        else:
            lo, c, fc = c, d, fd
            d = lo + g * (hi - lo)
            fd = alpha_np(d)
    hand = max(fc, fd)
    assert abs(hand - a_alg) < 1e-7, (hand, a_alg)
    assert abs(m_star - (lo + hi) / 2) < 2e-4
    with mpmath.workdps(20):
        ms, step = mpmath.mpf(m_star), mpmath.mpf("1e-5")
        at, up, down = alpha_of(ms), alpha_of(ms + step), alpha_of(ms - step)
    assert abs(at - a_alg) < 1e-13, (at, a_alg)
    assert abs(up - down) < 1e-12 and up < at and down < at, (up, down, at)
    assert round(a_alg, 2) == float(PR.ALPHA_ALG_PUBLISHED)
    assert abs(float(PR.ALPHA_ALG) - a_alg) <= 5e-12  # the example's constant, rounded


def hand_psi_polar(m):
    """Psi_out(m) in mpmath at the working precision, by the polar reduction written out here
    (independent of the engine's code and of its quadrature): -log(2 pi V)/2 - (1 + m)/(2V) +
    (1/pi) int_0^pi dphi G(|c(phi)|), c(phi) = (m + sqrt(m) cos phi)/(2V), with the radial
    average G(a) = 2a + log 2 - beta(1 + 1/(4a)), beta(x) = sum_j (-1)^j/(j + x) =
    (psi((x + 1)/2) - psi(x/2))/2 (the engine writes psi(1 + 1/(8a)) - psi(1/2 + 1/(8a))), and
    the angle by mpmath.quad (tanh-sinh) split at the zero phi_0 = acos(-sqrt m) of c (the
    engine maps each side to a Gaussian variable)."""
    V = 1 - m

    def G(a):
        x = 1 + 1 / (4 * a)
        return 2 * a + mpmath.log(2) - (mpmath.digamma((x + 1) / 2) - mpmath.digamma(x / 2)) / 2

    phi0 = mpmath.acos(-mpmath.sqrt(m))
    angular = mpmath.quad(lambda ph: G(abs(m + mpmath.sqrt(m) * mpmath.cos(ph)) / (2 * V)),
                          [0, phi0, mpmath.pi]) / mpmath.pi
    return -mpmath.log(2 * mpmath.pi * V) / 2 - (1 + m) / (2 * V) + angular


def test_handwritten_radial_average_equals_its_quadrature():
    """The hand-written G(a) of hand_psi_polar against int_0^oo e^{-s} log 2 cosh(2as) ds by
    mpmath.quad at 30 digits, from a = 1e-8 (c -> 0: G -> log 2) to 1e4 (G - 2a -> 0), to
    1e-25 relative."""
    with mpmath.workdps(30):
        for av in ("1e-8", "0.002", "0.25", "1", "3.7", "1e4"):
            a = mpmath.mpf(av)
            x = 1 + 1 / (4 * a)
            G = 2 * a + mpmath.log(2) - (mpmath.digamma((x + 1) / 2) - mpmath.digamma(x / 2)) / 2
            ref = mpmath.quad(lambda s: mpmath.exp(-s) * mpmath.log(2 * mpmath.cosh(2 * a * s)),
                              [0, 1 / (4 * a), 1, mpmath.inf])
            assert abs(G - ref) < mpmath.mpf("1e-25") * abs(ref), (av, G, ref)


@pytest.mark.slow
def test_algorithmic_threshold_to_twenty_digits():
    """The example's ALPHA_ALG (25 digits, by ``replica transition --model
    examples/phase_retrieval.py --name alpha-alg --dps 25``: Newton's method on the fold of the
    saddle-point equations, at 35 and at 52 digits; 3.6 min of CPU time, so not re-run here)
    against the fold located here from hand_psi_polar: alpha(m) = m/((1 - m) 2 Psi_out'(m)) is
    stationary where m (1 - m) Psi_out''(m) = Psi_out'(m), solved by the secant method at 25
    digits with the derivatives by mpmath.diff (numerical differentiation), and alpha evaluated
    there at 30 digits (alpha is stationary: an error e in m changes it by O(e^2)); agreement to
    1e-22. And ALPHA_ALG is the engine's fold: at alpha = ALPHA_ALG the engine's fixed-point
    map G(m) = F(m) - m (30 digits) vanishes at that m* to 1e-22 -- at a fold G and G' vanish
    together, so an error e in m* leaves O(e^2), while an error in alpha moves G linearly.
    The float64 bisection (PR.algorithmic_threshold) agrees to 1e-13."""
    from replica.numerics.machine import machine
    from replica.numerics.precision import precision

    def F(mv):
        return mv * (1 - mv) * mpmath.diff(hand_psi_polar, mv, 2) - mpmath.diff(hand_psi_polar,
                                                                               mv, 1)

    with mpmath.workdps(25):
        a, b = mpmath.mpf("0.846"), mpmath.mpf("0.847")
        fa, fb = F(a), F(b)
        assert fa < 0 < fb
        while abs(b - a) > mpmath.mpf("1e-16"):
            a, fa, b = b, fb, b - fb * (b - a) / (fb - fa)
            fb = F(b)
        m_star = b
    with mpmath.workdps(30):
        hand = m_star / ((1 - m_star) * 2 * mpmath.diff(hand_psi_polar, m_star, 1))
        assert abs(hand - mpmath.mpf(PR.ALPHA_ALG)) < mpmath.mpf("1e-22"), (hand, PR.ALPHA_ALG)
    problem = PR.MODEL.problem
    params = problem.schema.parse({"alpha": Fraction(PR.ALPHA_ALG)})
    mach = machine(problem, problem.variant_of(params))
    assert list(mach.outline.unknowns) == ["m"] and mach.fixed_point
    with precision(30):
        got = mach.evaluate("equations", "mp", [mpmath.mpf(m_star)],
                            mach.parameter_values_mp(params), None)[0]
        assert abs(got - m_star) < mpmath.mpf("1e-22"), (got, m_star)
    a_f64, _ = PR.algorithmic_threshold()
    assert abs(a_f64 - float(PR.ALPHA_ALG)) < 1e-13, (a_f64, PR.ALPHA_ALG)


@pytest.mark.slow
def test_the_branch_above_alpha_it_is_reported_as_metastable(cli):
    """alpha_IT = 1 (published; checked above from the potential near V = 0): from there on
    perfect recovery (m = 1, free entropy +oo, declared in ``BRANCHES``) is the equilibrium, and
    the m < 1 solution the solve finds is metastable -- the solve must say so (before: its values
    were printed as the answer, exit 0). Below 1 it is the equilibrium."""
    for alpha, metastable in (("11/10", True), ("4/5", False)):
        rc, out, err = cli("solve", "--model", "examples/phase_retrieval.py", "--alpha", alpha,
                           "--json")
        assert rc == 0, err
        data = json.loads(out)
        assert data["equilibrium"]["solution"] is (not metastable)
        assert any("metastable" in n for n in data["notes"]) is metastable
        assert float(data["order_parameters"]["m"]) < 1
