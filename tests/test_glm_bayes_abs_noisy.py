"""Bayes-optimal noisy real phase retrieval (examples/phase_retrieval_noisy.py: BayesOptimal with
AbsoluteValue("sigma"), y = |u| + sigma eps, Gaussian prior) against what is written out here:

* the derived Z_out (the recorded step) against the convolution int du N(u; omega, V)
  N(y; |u|, sigma^2) by mpmath quadrature, and its mass 1 over y; its log-space form in float64
  against mpmath's logarithm of the quadrature, far in the tails;
* the weak-recovery threshold alpha_WR(sigma) = 1/E_y[(E[z^2|y] - 1)^2] (the linearised state
  evolution at m = 0; Mondelli and Montanari 2018), E[z^2|y] from the truncated Gaussian law of
  |z| given y, by mpmath quadrature, against the engine's derived Psi_out: alpha(m) = m/((1 - m)
  2 Psi_out'(m)) extrapolated to m = 0; 1/2 without noise, growing with sigma;
* the parameter's domain (one-line errors, exit status 2);
* (slow) the approach to the noiseless model's overlap as sigma -> 0 at alpha = 0.8, and the
  float64 solve at (alpha, sigma) = (1, 1/2) against the state evolution written out with SciPy
  (Nishimori form mhat = alpha E_xi int dy (d_omega Z_out)^2/Z_out, m = mhat/(1 + mhat))."""

from __future__ import annotations

import os
import runpy

import mpmath
import numpy as np
import pytest
import sympy

from replica.symbolic.codegen import Evaluator

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLE = os.path.join(REPO, "examples", "phase_retrieval_noisy.py")
MODEL = runpy.run_path(EXAMPLE)["MODEL"]


def _step(name):
    return next(s for s in MODEL.derivation.steps() if s.name == name)


def _convolution(y, omega, V, D):
    """Z_out(y) = int du N(u; omega, V) N(y; |u|, D), by mpmath quadrature; breakpoints at the
    integrand's maximum on each side of u = 0 (the Gaussian's peak, clipped to 0) and around it
    on geometrically growing scales from w = min(sqrt(V D/(V + D)), D/(1 + |y|)) (far in the
    tails the integrand is an exponential sliver of width ~ D/|y| next to u = 0)."""
    w = min(mpmath.sqrt(V * D / (V + D)), D / (1 + abs(y)))
    pts = {mpmath.mpf(0)}
    for sg in (1, -1):
        peak = sg * max(0, (sg * omega * D + y * V) / (V + D))
        pts |= {peak + k * w * 2**j for j in range(16) for k in (1, -1)} | {peak}
    return mpmath.quad(lambda u: mpmath.npdf(u, omega, mpmath.sqrt(V))
                       * mpmath.npdf(y, abs(u), mpmath.sqrt(D)),
                       [-mpmath.inf] + sorted(pts) + [mpmath.inf])


def _symbols(expr):
    return {s.name: s for s in expr.free_symbols}


POINTS = [("1/3", "-2/5", "3/10", "1/2"), ("1/2", "3/2", "-1/5", "1/4"),
          ("9/10", "1", "2", "1/16"), ("1/10", "-3", "1", "1")]  # (m, xi, y, sigma)


def test_z_out_is_the_convolution_and_has_mass_one():
    Zout = _step("glm_channel_partition").objects["Zout"].rhs
    s = _symbols(Zout)
    args = [s["m"], s["xi"], s["y"], s["sigma"]]
    ev = Evaluator([Zout], args)
    with mpmath.workdps(30):
        for mv, xv, yv, sv in POINTS:
            m, x, y, sg = (mpmath.mpf(sympy.Rational(v).p) / sympy.Rational(v).q
                           for v in (mv, xv, yv, sv))
            omega, V = mpmath.sqrt(m) * x, 1 - m
            got = ev.mp([m, x, y, sg])[0]
            ref = _convolution(y, omega, V, sg**2)
            assert abs(got - ref) < mpmath.mpf(10)**-25 * ref, (mv, xv, yv, sv)
            mass = mpmath.quad(lambda t: ev.mp([m, x, t, sg])[0],
                               [-mpmath.inf, -abs(omega) - 1, 0, abs(omega) + 1, mpmath.inf])
            assert abs(mass - 1) < mpmath.mpf(10)**-25, (mv, xv, sv, mass)


def test_log_space_form_is_finite_and_right_in_float64():
    """log Z_out in its log-space form (the recorded step), evaluated in float64 where Z_out
    itself underflows (|y| up to 60, omega up to 8), against the log of Z_out written out here
    as the sum of its two Gaussian-times-Phi terms in 60-digit mpmath (whose exponent range
    holds e^-28838; the closed form is checked against quadrature above, and at the first
    point against the quadrature here too)."""
    logZ = _step("glm_channel_log_partition").objects["logZ"].rhs
    s = _symbols(logZ)
    ev = Evaluator([logZ], [s["m"], s["xi"], s["y"], s["sigma"]])
    for m, x, y, sg in [(0.5, 8.0, -60.0, 0.25), (0.5, -8.0, 40.0, 0.1), (0.9, 3.0, 0.0, 0.05),
                        (0.1, 0.2, 25.0, 1.0), (0.3, 0.0, -3.0, 0.5)]:
        got = float(ev.f64([np.float64(m), np.float64(x), np.float64(y), np.float64(sg)])[0])
        with mpmath.workdps(60):
            args = (mpmath.mpf(y), mpmath.sqrt(m) * x, 1 - mpmath.mpf(m), mpmath.mpf(sg)**2)
            ref = mpmath.log(_z_and_slope(*args)[0])
            if y == -60.0:
                assert abs(mpmath.log(_convolution(*args)) / ref - 1) < 1e-14
        assert np.isfinite(got) and abs(got - float(ref)) < 1e-13 * max(1.0, abs(float(ref))), \
            (m, x, y, sg, got, ref)


def alpha_wr(sigma):
    r"""alpha_WR = 1/E_y[(E[z^2|y] - 1)^2], y = |z| + sigma eps: given y, z = +-g with g the
    Gaussian of mean mu = y/(1 + D), variance tau^2 = D/(1 + D) truncated to g > 0 (D =
    sigma^2), so E[z^2|y] = mu^2 + tau^2 + mu tau phi(mu/tau)/Phi(mu/tau), and the density of
    y is 2 N(y; 0, 1 + D) Phi(mu/tau)."""
    D = mpmath.mpf(sigma)**2
    tau = mpmath.sqrt(D / (1 + D))

    def f(y):
        mu = y / (1 + D)
        P = mpmath.ncdf(mu / tau)
        ez2 = mu**2 + tau**2 + mu * tau * mpmath.npdf(mu / tau) / P
        return 2 * mpmath.npdf(y, 0, mpmath.sqrt(1 + D)) * P * (ez2 - 1)**2

    return 1 / mpmath.quad(f, [-mpmath.inf, -1, 0, 1, mpmath.inf])


def test_weak_recovery_threshold_from_the_derived_channel_term():
    """The engine's alpha(m) = m/((1 - m) h(m)), h = 2 dPsi_out/dm differentiated by SymPy
    under both integrals (float64), at m = 1e-4, 2e-4, 4e-4, extrapolated to m = 0 (second
    order: alpha(m) is a power series in m, the integrands even in xi), equals the threshold
    computed here to 1e-7; it is 1/2 without noise and grows with sigma."""
    s = _symbols(MODEL.free_energy)
    al, m = s["alpha"], s["m"]
    h = 2 * sympy.diff(sympy.diff(MODEL.free_energy, al), m)
    ev = Evaluator([m / ((1 - m) * h)], [m, s["sigma"]])
    with mpmath.workdps(20):
        refs = {sg: alpha_wr(mpmath.mpf(1) / sg) for sg in (16, 4, 2, 1)}
    for sg in (4, 2):
        a1, a2, a4 = (float(ev.f64([np.float64(x), np.float64(1 / sg)])[0])
                      for x in (1e-4, 2e-4, 4e-4))
        extrapolated = (8 * a1 - 6 * a2 + a4) / 3
        assert abs(extrapolated / float(refs[sg]) - 1) < 1e-7, (sg, extrapolated, refs[sg])
    values = [refs[sg] for sg in (16, 4, 2, 1)]
    assert 0.5 < values[0] < 0.505 and all(a < b for a, b in zip(values, values[1:]))


def test_sigma_must_be_positive(cli):
    for sigma, what in (("0", "must be positive"), ("-1", "non-negative")):
        rc, out, err = cli("solve", "--model", EXAMPLE, "--alpha", "1", "--sigma", sigma)
        assert rc == 2 and len(err.strip().splitlines()) == 1, (rc, err)
        assert "--sigma" in err and what in err, err


@pytest.mark.slow
def test_sigma_to_zero_approaches_the_noiseless_overlap():
    """Float64 overlaps at alpha = 0.8, sigma = 1/4, 1/8, 1/16 approach the noiseless model's
    (its state evolution written out in tests/test_phase_retrieval.py, NumPy): the gap shrinks by more than 2 at each halving of
    sigma (3.4 and 3.8 measured when this test was written) and is below 0.01 at 1/16."""
    from replica.numerics.driver import solve_float64

    from test_phase_retrieval import hand_overlap  # the noiseless state evolution by hand

    m0 = hand_overlap(0.8)
    r = solve_float64(MODEL.problem, alpha=np.full(3, 0.8), sigma=np.array([1 / 4, 1 / 8,
                                                                          1 / 16]))
    gaps = m0 - np.asarray(r["m"], float)
    assert np.all(gaps > 0), gaps
    assert gaps[1] < gaps[0] / 2 and gaps[2] < gaps[1] / 2 and gaps[2] < 0.01, gaps


def _z_and_slope(y, omega, V, D):
    """Z_out and d Z_out/d omega, written out: sum over the two preimages +-u of
    N(y; +-omega, S) Phi(k_+-), k_+- = (+-omega D + y V)/sqrt(V D S), S = V + D (mpmath)."""
    S = V + D
    r = mpmath.sqrt(V * D * S)
    Z = dZ = 0
    for sg in (1, -1):
        k = (sg * omega * D + y * V) / r
        n = mpmath.npdf(y, sg * omega, mpmath.sqrt(S))
        P = mpmath.ncdf(k)
        Z += n * P
        dZ += sg * n * ((y - sg * omega) / S * P + mpmath.npdf(k) * D / r)
    return Z, dZ


def _z_and_slope_np(y, omega, V, D):
    """:func:`_z_and_slope` in NumPy."""
    from scipy.special import ndtr

    S = V + D
    r = np.sqrt(V * D * S)
    Z = dZ = 0.0
    for sg in (1, -1):
        k = (sg * omega * D + y * V) / r
        n = np.exp(-(y - sg * omega) ** 2 / (2 * S)) / np.sqrt(2 * np.pi * S)
        P = ndtr(k)
        Z += n * P
        dZ += sg * n * ((y - sg * omega) / S * P + np.exp(-k * k / 2) / np.sqrt(2 * np.pi)
                        * D / r)
    return Z, dZ


def _se_map(m, alpha, D):
    """m -> mhat/(1 + mhat), mhat = alpha E_xi int dy (d_omega Z_out)^2/Z_out (even in xi:
    twice the half line), omega = sqrt(m) xi, V = 1 - m; nested scipy.integrate.quad to
    2e-14 relative on pieces split at the integrand's features (the y integral cut at 12
    standard deviations of y beyond |omega| + sqrt(V + D), where the weight is below 1e-32)."""
    import warnings

    from scipy import integrate

    V = 1 - m
    sD, sS = np.sqrt(D), np.sqrt(V + D)

    def pieces(f, cuts):
        return sum(integrate.quad(f, a, b, epsabs=0, epsrel=2e-14, limit=200)[0]
                   for a, b in zip(cuts, cuts[1:]))

    def fisher(omega):
        def f(y):
            Z, dZ = _z_and_slope_np(y, omega, V, D)
            return dZ * dZ / Z if Z > 0 else 0.0
        edge = abs(omega) + sS
        top = edge + 12 * sS
        return pieces(f, [-top, -edge, -sD, 0, sD, edge, top])

    with warnings.catch_warnings():  # (quadpack's note that 2e-14 is near its round-off)
        warnings.simplefilter("ignore")
        mhat = 2 * alpha * pieces(lambda x: np.exp(-x * x / 2) / np.sqrt(2 * np.pi)
                                  * fisher(np.sqrt(m) * x), [0, 1, 2, 3, 5, 9])
    return mhat / (1 + mhat)


@pytest.mark.slow
def test_float64_solve_is_the_handwritten_state_evolution_fixed_point():
    """At (alpha, sigma) = (1, 1/2): F(m) = map(m) - m at the float64 overlap, the map written
    out here with SciPy's quadrature (about 1 s; it was a 12-digit mpmath map, 100 s, before),
    and the map's slope by a central difference; the distance to the fixed point,
    |F|/(1 - slope), is at most 1e-10 (measured 2e-15)."""
    from replica.numerics.driver import solve_float64

    r = solve_float64(MODEL.problem, alpha=np.array([1.0]), sigma=np.array([0.5]))
    mf = float(r["m"][0])
    F = _se_map(mf, 1, 0.25) - mf
    h = 1e-3
    slope = (_se_map(mf + h, 1, 0.25) - _se_map(mf - h, 1, 0.25)) / (2 * h)
    assert 0 < slope < 0.95, slope  # a stable fixed point
    assert abs(F) / (1 - slope) < 1e-10, (mf, F, slope)
