"""The Bayes-optimal noisy ReLU channel (examples/glm_bayes_relu_noisy.py): a two-dimensional
Gaussian integral in the free entropy. Checked against what is written out here by hand, Z_out
in closed form and two-dimensional mpmath.quad: the free entropy (E_xi int dy Z_out log Z_out),
and the state-evolution map m -> mhat/(1 + mhat) with mhat = alpha E_xi int dy
(d_omega Z_out)^2/Z_out (the Nishimori form of 2 alpha dPsi_out/dm, not the engine's derivative
of the free entropy under both integrals). The log-space form of log Z_out (derivation check,
the float64 functions against mpmath), the float64 curves (finite, monotone in alpha, towards
the noiseless model as sigma -> 0), and the solved 20-digit fixed points against the
hand-written state evolution (slow). Not checked: the approach to the noiseless model in
mpmath (features of width sigma), solves at 30 digits (minutes of CPU time per map)."""

from __future__ import annotations

from fractions import Fraction

import mpmath
import pytest
import sympy

from replica.glm import BayesOptimal, Gaussian, ReLU
from replica.symbolic.codegen import Evaluator

MODEL = BayesOptimal("bayes_relu_noisy", prior=Gaussian(), channel=ReLU("sigma"))


def z_out_and_slope(m, D):
    """The function (xi, y) -> (Z_out(y; omega, V), d/domega of it) at omega = sqrt(m) xi, V =
    1 - m, for y = max(0, u) + sqrt(D) eps, u ~ N(omega, V): the mass P(u < 0) = Phi(-omega/sqrt
    V) times N(y; 0, D) plus N(y; omega, V + D) P(u > 0 | y), the law of u given y being
    N(mu, tau^2), mu = (omega D + y V)/(V + D), tau^2 = V D/(V + D); so

        Z = Phi(-omega/sqrt V) N(y; 0, D) + N(y; omega, S) Phi(mu/tau),   S = V + D,
        dZ = -phi(omega/sqrt V)/sqrt V N(y; 0, D)
             + N(y; omega, S) ((y - omega)/S Phi(mu/tau) + phi(mu/tau) D/(S tau)).

    The nested quadratures below call it with xi the outer variable (a whole inner sweep over y
    at one xi) and the same y nodes at every xi, so the factors of xi alone (Phi(-omega/sqrt V),
    phi(omega/sqrt V), the Gaussian weight phi(xi)) are computed once per xi and N(y; 0, D) once
    per y -- the same numbers as evaluating every factor at every point, four times fewer
    special-function calls. Returns (Z, dZ, phi(xi))."""
    V = 1 - m
    sV, S = mpmath.sqrt(V), V + D
    tau = mpmath.sqrt(V * D / S)
    sm, s2 = mpmath.sqrt(m), mpmath.sqrt(2)
    c0, c1 = 1 / mpmath.sqrt(2 * mpmath.pi * D), 1 / mpmath.sqrt(2 * mpmath.pi * S)
    at_xi, at_y = {}, {}

    def g(xi, y):
        if at_xi.get("xi") is not xi:
            om = sm * xi
            at_xi.update(xi=xi, om=om, mass=mpmath.ncdf(-om / sV),
                         slope=-mpmath.npdf(om / sV) / sV, weight=mpmath.npdf(xi))
        om = at_xi["om"]
        n0 = at_y.get(y)
        if n0 is None:
            n0 = at_y[y] = c0 * mpmath.exp(-y * y / (2 * D))
        n1 = c1 * mpmath.exp(-(y - om) ** 2 / (2 * S))
        t = (om * D + y * V) / (S * tau)
        Phi, phi = mpmath.erfc(-t / s2) / 2, mpmath.npdf(t)
        Z = at_xi["mass"] * n0 + n1 * Phi
        dZ = at_xi["slope"] * n0 + n1 * ((y - om) / S * Phi + phi * D / (S * tau))
        return Z, dZ, at_xi["weight"]

    return g


def handwritten_mhat(m, alpha, D):
    """alpha E_xi int dy (d_omega Z_out)^2/Z_out by two-dimensional mpmath.quad (tanh-sinh,
    xi split at -4, 0, 4 and y at -2, 0, 2)."""
    g = z_out_and_slope(m, D)

    def f(xi, y):
        Z, dZ, w = g(xi, y)
        return w * dZ**2 / Z

    return alpha * mpmath.quad(f, [-mpmath.inf, -4, 0, 4, mpmath.inf],
                               [-mpmath.inf, -2, 0, 2, mpmath.inf])


def test_the_cached_z_out_is_z_out():
    """z_out_and_slope's factors cached per xi and per y give Z_out and its slope: against the
    law of y written directly (Z_out = int du N(u; omega, V) N(y - max(0, u); 0, D) by
    mpmath.quad, the slope with d/domega N(u; omega, V) = (u - omega)/V N(u; omega, V) under the
    integral) on a grid swept as the quadrature sweeps it
    (each xi object over all y, the y values again at the next xi), 16 digits."""
    with mpmath.workdps(16):
        m, D = mpmath.mpf(1) / 3, mpmath.mpf(1) / 4
        V = 1 - m
        g = z_out_and_slope(m, D)

        def direct(omega, y, k):
            return mpmath.quad(lambda u: ((u - omega) / V) ** k
                               * mpmath.npdf(u, omega, mpmath.sqrt(V))
                               * mpmath.npdf(y - max(u, 0), 0, mpmath.sqrt(D)),
                               [-mpmath.inf] + sorted({0, y}) + [mpmath.inf])

        ys = [mpmath.mpf("-0.3"), mpmath.mpf("1.9")]
        for xi in (mpmath.mpf("0.7"), mpmath.mpf("-2.5")):
            om = mpmath.sqrt(m) * xi
            for y in ys:
                Z, dZ, w = g(xi, y)
                assert abs(Z - direct(om, y, 0)) < mpmath.mpf(10) ** -14 * Z, (xi, y)
                dref = direct(om, y, 1)
                assert abs(dZ - dref) < mpmath.mpf(10) ** -14 * abs(dref), (xi, y, dZ, dref)
                assert w == mpmath.npdf(xi)


@pytest.mark.slow
def test_the_free_entropy_channel_term_is_the_handwritten_integral():
    """Psi_out(m) by the engine's two-dimensional quadrature (mpmath, 20 digits) against
    E_xi int dy Z_out log Z_out by mpmath.quad over (xi, y), Z_out written here."""
    syms = sorted(MODEL.free_energy.free_symbols, key=str)
    x = {"alpha": mpmath.mpf(1), "m": mpmath.mpf(1) / 3, "mhat": mpmath.mpf(1) / 2,
         "sigma": mpmath.mpf(1) / 2}
    with mpmath.workdps(20):
        got = Evaluator([MODEL.free_energy], syms).mp([x[str(s)] for s in syms])[0]
        m, mh, D = x["m"], x["mhat"], x["sigma"]**2

        g = z_out_and_slope(m, D)

        def f(xi, y):
            Z, _, w = g(xi, y)
            return w * Z * mpmath.log(Z)

        with mpmath.workdps(12):  # (a check to 1e-10: the quadrature's cost)
            psi = mpmath.quad(f, [-mpmath.inf, 0, mpmath.inf], [-mpmath.inf, 0, mpmath.inf])
        ref = -m * mh / 2 + mh / 2 - mpmath.log(1 + mh) / 2 + x["alpha"] * psi
        assert abs(got - ref) < mpmath.mpf(10) ** -10, (got, ref)


@pytest.mark.slow
def test_state_evolution_map_against_the_handwritten_one():
    """The engine's fixed-point map m -> mhat/(1 + mhat) at m = 1/2 (mhat = 2 alpha dPsi_out/dm,
    differentiated under both integrals, 18 digits) against the hand-written Nishimori form
    (two-dimensional mpmath.quad at 18 digits) to 15 digits."""
    from replica.numerics.machine import machine
    from replica.numerics.precision import precision

    params = MODEL.problem.schema.parse({"alpha": Fraction(1), "sigma": Fraction(1, 2)})
    mach = machine(MODEL.problem, MODEL.problem.variant_of(params))
    assert list(mach.outline.unknowns) == ["m"] and mach.fixed_point
    with precision(18):
        got = mach.evaluate("equations", "mp", [mpmath.mpf(1) / 2],
                            mach.parameter_values_mp(params), None)[0]
        mh = handwritten_mhat(mpmath.mpf(1) / 2, mpmath.mpf(1), mpmath.mpf(1) / 4)
        ref = mh / (1 + mh)
        assert abs(got - ref) < mpmath.mpf(10) ** -15 * ref, (got, ref)


def test_sigma_zero_is_a_one_line_error(cli):
    """(Another link is refused in tests/test_glm_bayes_relu.py; the noisy absolute value is
    derived, tests/test_glm_bayes_abs_noisy.py.)"""
    rc, out, err = cli("solve", "--model", "examples/glm_bayes_relu_noisy.py", "--alpha", "1",
                       "--sigma", "0")
    assert rc == 2 and len(err.strip().splitlines()) == 1 and "sigma" in err, (rc, err)


def test_certify_is_refused_in_one_line(cli):
    rc, out, err = cli("solve", "--model", "examples/glm_bayes_relu_noisy.py", "--alpha", "1",
                       "--sigma", "1/2", "--certify")
    assert rc == 2, (rc, out, err)
    assert len(err.strip().splitlines()) == 1 and "not certifiable" in err, err


def test_two_dimensional_integral_in_the_free_entropy():
    from replica.symbolic.gaussian import GaussianIntegral, is_two_dimensional

    assert any(is_two_dimensional(g) for g in MODEL.free_energy.atoms(GaussianIntegral))
    assert not any(isinstance(a, sympy.Add) and a.has(sympy.erfc) and 2 in a.args
                   for a in MODEL.free_energy.atoms(sympy.Add))


def test_derivation_checks_pass_the_log_space_form_included():
    """Every derivation step's check, among them log Z_out in log space (exp(a + softplus(b - a))
    and exp(b + softplus(a - b)) simplify to Z_out exactly; a wrong constant in a fails it)."""
    from replica.derivations.base import run_check

    steps = MODEL.derivation.steps()
    assert "glm_channel_log_partition" in [s.name for s in steps]
    assert all(run_check(s).passed for s in steps)


def test_log_space_functions_in_float64_against_mpmath():
    """The float64 log_erfc, rerfcx, softplus, sigmoid (the generated code's namespace) against
    their definitions in mpmath at 30 digits, across the range where erfc underflows and erfcx
    overflows: relative 1e-13 where the value is representable, 0 where it underflows."""
    import numpy as np

    from replica.symbolic.codegen import _namespace

    ns = _namespace("np")
    xs = np.array([-40.0, -27.0, -5.0, -0.5, 0.0, 0.3, 4.0, 26.0, 27.5, 40.0, 1e3])
    defs = {"log_erfc": lambda x: mpmath.log(mpmath.erfc(x)),
            "rerfcx": lambda x: mpmath.exp(-x * x) / mpmath.erfc(x),
            "softplus": lambda x: mpmath.log(1 + mpmath.exp(x)),
            "sigmoid": lambda x: 1 / (1 + mpmath.exp(-x))}
    with mpmath.workdps(30):
        for name, ref in defs.items():
            got = ns[name](xs)
            assert np.all(np.isfinite(got)), name
            for x, g in zip(xs, got):
                r = ref(mpmath.mpf(float(x)))
                if abs(r) < 1e-300:
                    assert g == 0 or abs(g) < 1e-300, (name, x, g)
                else:
                    assert abs(g - r) <= 1e-13 * abs(r), (name, x, g, r)


def test_float64_curve_over_alpha_is_finite_and_monotone():
    """The float64 fixed point (tensor product of the fixed rules, no 0 log 0: log Z_out in log
    space) over alpha at sigma = 1/2: finite, reported not-verified (a two-dimensional integral),
    0 < m < 1 increasing with alpha (more data, more overlap), m -> 0 as alpha -> 0 (m ~ alpha
    to first order) and m -> 1 for large alpha."""
    import numpy as np

    from replica.numerics.driver import solve_float64

    alphas = np.array([0.01, 0.1, 0.5, 1.0, 2.0, 5.0, 20.0, 100.0])
    r = solve_float64(MODEL.problem, strict=False, alpha=alphas, sigma=0.5)
    m = r["m"]
    assert np.all(np.isfinite(m)) and np.all(r["status"] == "not-verified"), r
    assert np.all(np.diff(m) > 0) and 0 < m[0] < 0.02 and m[-1] > 0.99, m


@pytest.mark.slow
def test_float64_approaches_the_noiseless_model_as_sigma_vanishes():
    """At alpha = 1 the float64 overlap grows as the noise decreases, sigma = 1, 1/2, 1/5,
    1/10, 1/20, and approaches the noiseless ReLU model's (examples/glm_bayes_relu.py, a
    separate derivation: the atom and the Gaussian density in closed form, one integral) from
    below: within 0.04 of it at sigma = 1/20, and never above it (noise loses information)."""
    import numpy as np

    from replica.numerics.driver import solve_float64

    clean = BayesOptimal("bayes_relu", prior=Gaussian(), channel=ReLU(0))
    m0 = float(solve_float64(clean.problem, strict=False, alpha=1.0)["m"])
    sigmas = [1.0, 0.5, 0.2, 0.1, 0.05]
    ms = [float(solve_float64(MODEL.problem, strict=False, alpha=1.0, sigma=s)["m"])
          for s in sigmas]
    assert np.all(np.diff(ms) > 0) and ms[-1] < m0 and m0 - ms[-1] < 0.04, (ms, m0)


SOLVED = {  # (alpha, sigma): m by `replica solve --dps 20` (20 digits verified by a re-solve at
    # 37 digits; 730 s of CPU time), the table of examples/glm_bayes_relu_noisy.py
    ("1", "1/2"): "0.36468165430489193084",
}


@pytest.mark.slow
@pytest.mark.parametrize("alpha,sigma", sorted(SOLVED))
def test_solved_fixed_point_is_the_handwritten_state_evolution_fixed_point(alpha, sigma):
    """The solved overlap (20 digits, the table of examples/glm_bayes_relu_noisy.py) is a fixed
    point of the state evolution written out by hand, m = mhat/(1 + mhat) with the Nishimori
    form of mhat by two-dimensional mpmath.quad at 24 digits, to 1e-19 relative (the 20-digit
    value rounded: |F(m) - m| <= (1 + F') 5e-21 m). (The engine's map at the same point: the
    next test; two tests, so that xdist runs them side by side.)"""
    a, s = Fraction(alpha), Fraction(sigma)
    with mpmath.workdps(24):
        m = mpmath.mpf(SOLVED[(alpha, sigma)])
        mh = handwritten_mhat(m, mpmath.mpf(a.numerator) / a.denominator,
                              (mpmath.mpf(s.numerator) / s.denominator) ** 2)
        assert abs(mh / (1 + mh) - m) < mpmath.mpf(10) ** -19 * m, (m, mh / (1 + mh))


@pytest.mark.slow
@pytest.mark.parametrize("alpha,sigma", sorted(SOLVED))
def test_solved_fixed_point_is_the_engine_map_fixed_point(alpha, sigma):
    """The solved overlap is a fixed point of the engine's map at 24 digits too, to 1e-19
    relative (as above)."""
    from replica.numerics.machine import machine
    from replica.numerics.precision import precision

    a, s = Fraction(alpha), Fraction(sigma)
    params = MODEL.problem.schema.parse({"alpha": a, "sigma": s})
    mach = machine(MODEL.problem, MODEL.problem.variant_of(params))
    with precision(24):
        m = mpmath.mpf(SOLVED[(alpha, sigma)])
        got = mach.evaluate("equations", "mp", [m], mach.parameter_values_mp(params), None)[0]
        assert abs(got - m) < mpmath.mpf(10) ** -19 * m, (got, m)
