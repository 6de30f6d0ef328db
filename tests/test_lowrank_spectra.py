"""Closed-form Stieltjes transforms of the low-rank task covariance: quadratics, branch, derivatives, golden values, empirical spectra."""

import mpmath
import numpy as np
import pytest
import sympy

from replica.errors import ParameterError
from replica.spectra import (lowrank_atom_masses, lowrank_regular_expr,
                             lowrank_stieltjes_derivative_expr, lowrank_stieltjes_expr,
                             lowrank_stieltjes_mp, lowrank_stieltjes_prime_expr,
                             lowrank_stieltjes_quadratic, lowrank_stieltjes_tilde_derivative_expr,
                             lowrank_stieltjes_tilde_expr, lowrank_stieltjes_tilde_quadratic)

# (kappa, rho, z) on both sides of the branch switch b = kappa rho z + rho - kappa = 0, and rho = 1
POINTS = [("0.4", "0.7", "-0.1"), ("1.5", "0.9", "-0.5"), ("0.5", "0.2", "-1.0"),
          ("3", "0.5", "-2"), ("0.3", "1", "-0.05"), ("2", "1", "-3"), ("0.7", "0.7", "-1e-6"),
          ("0.2", "0.9", "-1e-9"), ("5", "0.1", "-1e3")]


def _mp(*vals):
    return [mpmath.mpf(v) for v in vals]


@pytest.mark.parametrize("k,r,zv", POINTS)
def test_quadratics_identity_and_derivatives(k, r, zv):
    with mpmath.workdps(50):
        k, r, zv = _mp(k, r, zv)
        g = lowrank_stieltjes_mp(zv, k, r)
        gt = lowrank_stieltjes_mp(zv, k, r, tilde=True)
        scale = 1 + abs(zv * g) ** 2
        assert abs(lowrank_stieltjes_quadratic(g, zv, k, r)) < mpmath.mpf(10) ** -44 * scale
        assert abs(lowrank_stieltjes_tilde_quadratic(gt, zv, k, r)) < \
            mpmath.mpf(10) ** -44 * (1 + abs(zv * gt**2) + abs(k * r * zv * gt))
        # g = -(1 - rho)/z + rho gtilde
        assert abs(g - (-(1 - r) / zv + r * gt)) <= mpmath.mpf(10) ** -45 * abs(g)
        # positivity (z < 0): g, g', gtilde, gtilde' > 0
        for n in range(3):
            for tilde in (False, True):
                assert lowrank_stieltjes_mp(zv, k, r, n, tilde) > 0
        # derivatives equal numerical derivatives
        for tilde in (False, True):
            for n in (1, 2, 3):
                num = mpmath.diff(lambda x: lowrank_stieltjes_mp(x, k, r, n - 1, tilde), zv,
                                  h=abs(zv) * mpmath.mpf(10) ** -12)
                exact = lowrank_stieltjes_mp(zv, k, r, n, tilde)
                assert abs(num - exact) <= mpmath.mpf(10) ** -20 * abs(exact), (tilde, n)


def test_golden_spectral_values():
    """Golden values of the authors' code: (kappa, rho, z) -> g, g', gtilde, gtilde' to the 10 decimals given."""
    golden = [(("0.4", "0.7", "-0.1"), ("6.3118196638", "60.4727409300", "4.7311709483",
                                        "43.5324870428")),
              (("1.5", "0.9", "-0.5"), ("0.9388582373", "1.1663747560", "0.8209535970",
                                        "0.8515275067")),
              (("0.5", "0.2", "-1.0"), ("0.8449489743", "0.8132993162", "0.2247448714",
                                        "0.0664965809"))]
    with mpmath.workdps(30):
        for (k, r, zv), vals in golden:
            k, r, zv = _mp(k, r, zv)
            got = [lowrank_stieltjes_mp(zv, k, r, 0), lowrank_stieltjes_mp(zv, k, r, 1),
                   lowrank_stieltjes_mp(zv, k, r, 0, True), lowrank_stieltjes_mp(zv, k, r, 1, True)]
            for gv, want in zip(got, vals):
                assert abs(gv - mpmath.mpf(want)) <= mpmath.mpf("0.5e-10"), (gv, want)


def test_equals_the_spec_formula_RS2_RS3():
    """The cancellation-free piecewise forms equal the authors' verbatim formulas."""
    z, k, r = sympy.symbols("z kappa rho")
    spec_g = (k + r - k * r * z - 2 - sympy.sqrt((r * k * z + r - k) ** 2 - 4 * r**2 * k * z)) \
        / (2 * z)
    spec_gt = (-(k * r * z + r - k) - sympy.sqrt((k * r * z + r - k) ** 2 - 4 * r**2 * k * z)) \
        / (2 * r * z)
    fg = sympy.lambdify([z, k, r], spec_g, "mpmath")
    fgt = sympy.lambdify([z, k, r], spec_gt, "mpmath")
    with mpmath.workdps(60):
        for kv, rv, zv in POINTS[:6]:
            kv, rv, zv = _mp(kv, rv, zv)
            assert abs(fg(zv, kv, rv) - lowrank_stieltjes_mp(zv, kv, rv)) < mpmath.mpf(10) ** -40
            assert abs(fgt(zv, kv, rv) - lowrank_stieltjes_mp(zv, kv, rv, tilde=True)) < \
                mpmath.mpf(10) ** -40


def test_spec_derivative_formula_as_coded():
    """g' equals the authors' implicit-differentiation formula for g."""
    with mpmath.workdps(40):
        for kv, rv, zv in POINTS[:6]:
            kv, rv, zv = _mp(kv, rv, zv)
            g = lowrank_stieltjes_mp(zv, kv, rv)
            coded = (-kv * rv - 2 * g - rv * kv * (rv * kv * zv - rv - kv)
                     / (kv + rv - 2 - kv * rv * zv - 2 * zv * g)) / (2 * zv)
            assert abs(coded - lowrank_stieltjes_mp(zv, kv, rv, 1)) < mpmath.mpf(10) ** -30


def test_large_negative_z_and_small_z():
    with mpmath.workdps(40):
        k, r = _mp("0.6", "0.8")
        for zv in ("-1e6", "-1e12"):
            zv = mpmath.mpf(zv)
            # g ~ -1/z, with full relative accuracy (no cancellation)
            assert abs(lowrank_stieltjes_mp(zv, k, r) * (-zv) - 1) < mpmath.mpf(10) ** -5
        # atom of mass 1 - min(kappa, rho) at 0: -z g(z) -> 1 - min(kappa, rho)
        zv = mpmath.mpf("-1e-20")
        assert abs(-zv * lowrank_stieltjes_mp(zv, k, r) - (1 - k)) < mpmath.mpf(10) ** -15
        # restricted spectrum: atom (1 - kappa/rho)_+
        assert abs(-zv * lowrank_stieltjes_mp(zv, k, r, tilde=True) - (1 - k / r)) < \
            mpmath.mpf(10) ** -15


def test_branch_rule_rejects_nonnegative_z():
    with mpmath.workdps(20):
        for zv in ("0", "0.5"):
            with pytest.raises(ParameterError, match="z < 0"):
                lowrank_stieltjes_mp(mpmath.mpf(zv), 1, mpmath.mpf("0.5"))
        with pytest.raises(ParameterError, match="rho"):
            lowrank_stieltjes_mp(-1, 1, 2)


def test_kappa_infinite_limit():
    """kappa = oo: the spectrum of P/rho (atom 1/rho of mass rho): g = (1-rho)/(-z) +
    rho^2/(1 - rho z); the closed forms at large kappa approach it."""
    with mpmath.workdps(40):
        r, zv = _mp("0.3", "-0.5")
        exact = (1 - r) / (-zv) + r**2 / (1 - r * zv)
        assert abs(lowrank_stieltjes_mp(zv, mpmath.inf, r) - exact) < mpmath.mpf(10) ** -38
        big = lowrank_stieltjes_mp(zv, mpmath.mpf(10) ** 20, r)
        assert abs(big - exact) < mpmath.mpf(10) ** -18
        for n in (1, 2):
            assert abs(lowrank_stieltjes_mp(zv, mpmath.mpf(10) ** 20, r, n)
                       - lowrank_stieltjes_mp(zv, mpmath.inf, r, n)) < mpmath.mpf(10) ** -17
    zs, rs = sympy.symbols("z rho")
    assert lowrank_stieltjes_tilde_expr(zs, sympy.oo, rs) == rs / (1 - rs * zs)
    assert sympy.simplify(lowrank_stieltjes_expr(zs, sympy.oo, rs)
                          - (-(1 - rs) / zs + rs**2 / (1 - rs * zs))) == 0
    assert sympy.simplify(lowrank_stieltjes_prime_expr(zs, sympy.oo, rs)
                          - sympy.diff(lowrank_stieltjes_expr(zs, sympy.oo, rs), zs)) == 0


def test_symbolic_derivative_forms_differentiate_the_closed_form():
    """gtilde^(n) (chain rule on gtilde' = rho gtilde(gtilde+kappa)/s) equals d^n/dz^n of the
    closed form on each branch."""
    z = sympy.Symbol("z", negative=True)
    k, r = sympy.Rational(3, 2), sympy.Rational(9, 10)
    gt = lowrank_stieltjes_tilde_expr(z, k, r)
    for n in (1, 2):
        d = sympy.piecewise_fold(lowrank_stieltjes_tilde_derivative_expr(z, k, r, n))
        for zv in (sympy.Rational(-1, 10), sympy.Rational(-7, 2)):
            a = sympy.N(sympy.diff(gt, z, n).subs(z, zv), 30)
            b = sympy.N(d.subs(z, zv), 30)
            assert abs(a - b) < 1e-25 * abs(a)
    gfull = lowrank_stieltjes_derivative_expr(z, k, r, 2)
    assert abs(sympy.N(gfull.subs(z, -1), 30)
               - sympy.N(sympy.diff(lowrank_stieltjes_expr(z, k, r), z, 2).subs(z, -1), 30)) \
        < 1e-25


def test_empirical_spectrum_and_trace_identities():
    """An empirical S = A W A^T / rho at D = 1500 (W = (1/M0) V V^T, r x r) reproduces the
    closed forms to finite-size accuracy; the trace identities (R-S5) hold exactly for it."""
    rng = np.random.default_rng(7)
    D, kappa, rho = 1500, 0.6, 0.4
    r, M0 = int(rho * D), int(kappa * D)
    V = rng.standard_normal((r, M0))
    W = V @ V.T / M0
    lam = np.linalg.eigvalsh(W) / rho                 # nonzero part of the spectrum of S
    ev = np.concatenate([lam, np.zeros(D - r)])       # spectrum of S (eigenvalues on span A, 0)
    trS = ev.sum() / D
    for zv in (-0.2, -1.0, -3.0):
        g_emp = np.mean(1 / (ev - zv))
        gt_emp = np.mean(1 / (lam - zv))              # (1/r) Tr A^T (S - z)^-1 A
        with mpmath.workdps(20):
            g = float(lowrank_stieltjes_mp(zv, kappa, rho))
            gt = float(lowrank_stieltjes_mp(zv, kappa, rho, tilde=True))
            g1 = float(lowrank_stieltjes_mp(zv, kappa, rho, 1))
            gt1 = float(lowrank_stieltjes_mp(zv, kappa, rho, 1, tilde=True))
        assert abs(g_emp - g) < 5e-3 * g
        assert abs(gt_emp - gt) < 5e-3 * gt
        assert abs(np.mean(1 / (ev - zv) ** 2) - g1) < 1e-2 * g1
        assert abs(np.mean(1 / (lam - zv) ** 2) - gt1) < 1e-2 * gt1
        # (R-S5) with the empirical g, g' (exact at finite D; the leading 1 of the second and
        # fifth identity is the empirical Tr S / D)
        ge, g1e = g_emp, np.mean(1 / (ev - zv) ** 2)
        np.testing.assert_allclose(np.mean(ev / (ev - zv)), 1 + zv * ge, rtol=1e-12)
        np.testing.assert_allclose(np.mean(ev**2 / (ev - zv)), trS + zv + zv**2 * ge,
                                   rtol=1e-12)
        np.testing.assert_allclose(np.mean(ev / (ev - zv) ** 2), ge + zv * g1e, rtol=1e-11)
        np.testing.assert_allclose(np.mean(ev**2 / (ev - zv) ** 2),
                                   1 + 2 * zv * ge + zv**2 * g1e, rtol=1e-11)
        np.testing.assert_allclose(np.mean(ev**3 / (ev - zv) ** 2),
                                   trS + 2 * zv + 3 * zv**2 * ge + zv**3 * g1e, rtol=1e-11)


@pytest.mark.parametrize("k,r", [("0.5", "0.3"), ("0.3", "0.7"), ("0.01", "1"), ("0.5", "0.5"),
                                 ("2", "0.99")])
def test_atom_split_is_cancellation_free_in_float64(k, r):
    """g = -p0/z + rho h(z), gtilde = -ptilde0/z + h(z): the regular part h and its derivatives,
    evaluated in float64 from the closed form, keep full relative precision from z = -1e-14 to
    z = -1e6 (the atom's pole is exact; nothing of size 1/|z| is subtracted)."""
    z, kk, rr = sympy.symbols("z kappa rho")
    f64 = [sympy.lambdify([z, kk, rr], lowrank_regular_expr(z, kk, rr, n), "numpy")
           for n in range(3)]
    p0, pt0 = lowrank_atom_masses(kk, rr)
    with mpmath.workdps(100):  # the reference subtracts poles up to 1e42 from g''
        km, rm = mpmath.mpf(k), mpmath.mpf(r)
        p0v = mpmath.mpf(1) - min(km, rm)
        pt0v = max(mpmath.mpf(0), 1 - km / rm)
        assert abs(sympy.lambdify([kk, rr], p0, "mpmath")(km, rm) - p0v) < mpmath.mpf(10) ** -50
        assert abs(sympy.lambdify([kk, rr], pt0, "mpmath")(km, rm) - pt0v) < \
            mpmath.mpf(10) ** -50
        for w in ("1e-14", "1e-8", "1e-3", "0.1", "1", "10", "1e3", "1e6"):
            zv = -mpmath.mpf(w)
            for n in range(3):
                pole = -pt0v * (-1) ** n * mpmath.factorial(n) / zv ** (n + 1)
                ref = lowrank_stieltjes_mp(zv, km, rm, n, tilde=True) - pole
                got = f64[n](-float(w), float(k), float(r))
                assert abs(got - float(ref)) <= 4e-15 * abs(float(ref)), (w, n)
