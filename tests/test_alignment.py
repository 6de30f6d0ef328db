"""Paper A's theory (replica.models.alignment): reductions, limits, golden values, identities."""

import itertools

import mpmath
import numpy as np
import pytest
import sympy

import replica
from replica.models import alignment as A
from replica.derivations import paper_a as PA
from replica.models import isotropic as B
from replica.numerics import agreement_digits, precision
from replica.analysis.phase_diagram import misalignment_spectrum
from replica.spectra import parse_spec, spectral_pairs_mp
from replica.symbolic import LAMBDA_I, Evaluator, avg, expand_averages
from replica.analysis.transitions import resolvent

# ------------------------------------------------------------------------------------------------
# Isotropic reduction: C_train = C_test = I gives paper B's closed forms (>= 40 digits at dps 50)
# ------------------------------------------------------------------------------------------------
GRID = [
    # alpha, tau, kappa, rho, lam
    ("2", "1/2", "1/2", "1/100", "0"),
    ("2", "3/4", "3", "1/2", "0"),
    ("1/2", "1/5", "1/5", "1/10", "0"),
    ("10", "3/10", "20", "1", "0"),
    ("2", "3/2", "1/5", "1/100", "0"),
    ("2", "4", "1/2", "1/100", "0"),
    ("7/3", "10", "3", "1/2", "0"),
    ("1/2", "5/4", "20", "2", "0"),
    ("2", "1/2", "1/2", "1/100", "1/10"),
    ("10", "1", "3", "1/2", "1/1000"),
    ("2", "4", "1/5", "1/100", "1"),
    ("3", "2", "inf", "1/10", "0"),
    ("3", "1/2", "inf", "1/10", "0"),
    ("3", "1", "inf", "1/10", "1/10"),
]

M_PRIME = Evaluator([PA.M_PRIME_CLOSED], [A.M, A.z, A.kappa])
"""M'(z) from its closed form (implicit differentiation of eq. (17))."""


@pytest.mark.slow
@pytest.mark.parametrize("alpha,tau,kappa,rho,lam", GRID)
def test_isotropic_reduction_40_digits(alpha, tau, kappa, rho, lam):
    a = replica.solve("alignment", alpha=alpha, tau=tau, kappa=kappa, rho=rho, lam=lam, d=3,
                      train="identity", test="identity", dps=50, verify=False)
    b = replica.solve("isotropic", alpha=alpha, tau=tau, kappa=kappa, rho=rho, lam=lam, dps=50,
                      verify=False)
    for key in ("e_icl", "e_idg", "q", "sigma", "lambda_tilde", "M", "M_prime", "e_scalar",
                "e_misalign"):
        if b[key] == 0:
            assert abs(a[key]) < mpmath.mpf(10) ** -45
            continue
        assert agreement_digits(a[key], b[key], 50) >= 40, (key, a[key], b[key])


def test_isotropic_reduction_is_independent_of_d_and_trace_normalisation():
    """C_train = C_test = I at d = 1 and d = 7 give the same theory (only the spectrum matters)."""
    r1 = replica.solve("alignment", alpha=2, tau="1/2", kappa="1/2", rho="1/100", d=1, dps=40,
                       verify=False)
    r7 = replica.solve("alignment", alpha=2, tau="1/2", kappa="1/2", rho="1/100", d=7, dps=40,
                       verify=False)
    assert agreement_digits(r1["e_icl"], r7["e_icl"], 40) >= 38


# ------------------------------------------------------------------------------------------------
# e_IDG = tau q in the isotropic case
# ------------------------------------------------------------------------------------------------
def test_idg_equals_tau_q_symbolically_for_tau_gt_1():
    """B's ridgeless IDG for tau > 1 is tau*q with lambda_tilde = 0 (symbolic identity)."""
    q_iso = A.Q.subs({A.lambda_tilde: 0, A.sigma: B.X_STAR, A.M: B.M_STAR})
    assert sympy.simplify(B.IDG_RIDGELESS_TAU_GT_1 - A.tau * q_iso) == 0


@pytest.mark.parametrize("alpha,tau,kappa,rho", [("2", "1/2", "1/2", "1/100"),
                                                 ("1/3", "1/7", "5", "2"),
                                                 ("10", "9/10", "1/5", "1/2"),
                                                 ("3", "1/2", "inf", "1/10")])
def test_idg_equals_tau_q_for_tau_lt_1(alpha, tau, kappa, rho):
    """B's (structurally different) tau < 1 IDG closed form equals tau q to 45 digits."""
    r = replica.solve("isotropic", alpha=alpha, tau=tau, kappa=kappa, rho=rho, dps=50, verify=False)
    assert r.variant.startswith("ridgeless_below")  # e_idg is B's closed form, q is A's (C.14)
    with precision(50):
        idg_closed = r["e_idg"]
        assert agreement_digits(idg_closed, mpmath.mpf(sympy.Rational(tau)) * r["q"], 50) >= 45


# ------------------------------------------------------------------------------------------------
# Resolvent: Silverstein form, M' by implicit differentiation, isotropic Marchenko-Pastur
# ------------------------------------------------------------------------------------------------
def test_silverstein_identity_symbolic():
    """With M = <f>: delta = <lambda f>/kappa satisfies 1/(1 + delta) = a (summand algebra)."""
    # lambda_i f_i = (1 - z f_i)/a holds summand by summand:
    assert sympy.simplify(LAMBDA_I * PA.F_I - (1 - A.z * PA.F_I) / PA.A_COEFF) == 0
    delta = expand_averages(avg((1 - A.z * PA.F_I) / PA.A_COEFF)) / A.kappa
    delta = delta.subs(avg(PA.F_I), A.M)
    assert sympy.simplify(1 / (1 + delta) - PA.A_COEFF) == 0


def test_m_prime_closed_form_is_implicit_derivative():
    """Differentiate M(z) - <1/(a(z) lambda + z)> = 0 in z, solve for M'(z): the closed form."""
    Mz = sympy.Function("Mz")(A.z)
    eq = PA.SELF_CONSISTENCY.subs(A.M, Mz)
    deq = expand_averages(sympy.diff(eq, A.z))
    S2, T2 = sympy.symbols("S2 T2")
    names = {avg(PA.F_I**2).subs(A.M, Mz): S2, avg(LAMBDA_I * PA.F_I**2).subs(A.M, Mz): T2}
    deq = deq.xreplace(names)
    assert not deq.atoms(type(avg(PA.F_I)))  # every average was named
    dM = sympy.Derivative(Mz, A.z)
    sol = sympy.solve(deq, dM)
    assert len(sol) == 1
    closed = PA.M_PRIME_CLOSED.subs(A.M, Mz).xreplace(names)
    assert sympy.simplify(sol[0] - closed) == 0


def test_f_prime_is_z_derivative_of_f():
    fp = sympy.diff(PA.F_I.subs(A.M, sympy.Function("Mz")(A.z)), A.z)
    fp = fp.subs(sympy.Derivative(sympy.Function("Mz")(A.z), A.z), A.M_prime)
    fp = fp.subs(sympy.Function("Mz")(A.z), A.M)
    assert sympy.simplify(fp - PA.F_PRIME_I) == 0


@pytest.mark.parametrize("kappa", ["1/3", "3"])
@pytest.mark.parametrize("c", ["1", "5/2"])
def test_scaled_identity_equals_marchenko_pastur(kappa, c):
    """(17) with C = cI equals the closed form M_kappa(z; c) and M'_kappa(z; c), c != 1 too."""
    from replica.spectra import marchenko_pastur_expr, marchenko_pastur_prime_expr

    cov = _scaled_identity(4, c)
    z = sympy.Rational(3, 10)
    with precision(40):
        pairs = spectral_pairs_mp(cov, cov)
        k = mpmath.mpf(sympy.Rational(kappa))
        m = resolvent(pairs)(mpmath.mpf(z), k)
        (mp_,) = M_PRIME.mp([m, mpmath.mpf(z), k], pairs)
        mcl = sympy.N(marchenko_pastur_expr(z, sympy.Rational(kappa), sympy.Rational(c)), 45)
        mpcl = sympy.N(marchenko_pastur_prime_expr(z, sympy.Rational(kappa), sympy.Rational(c)), 45)
        assert agreement_digits(m, mpmath.mpf(str(mcl)), 40) >= 38
        assert agreement_digits(mp_, mpmath.mpf(str(mpcl)), 40) >= 38


def _scaled_identity(d, c):
    from fractions import Fraction

    from replica.spectra import Covariance

    return Covariance(f"{c}*identity", d, diagonal=tuple([Fraction(c)] * d))


def test_m_prime_matches_finite_difference_and_bracket():
    cov = parse_spec("powerlaw:1.2", 30)
    with precision(40):
        pairs = spectral_pairs_mp(cov, cov)
        k = mpmath.mpf("0.4")
        z = mpmath.mpf("0.7")
        M = resolvent(pairs)
        m = M(z, k)
        assert max(0, (1 - k) / z) < m <= 1 / z
        a = 1 - 1 / k + z * m / k
        assert 0 < a <= 1
        (mp_,) = M_PRIME.mp([m, z, k], pairs)
        h = mpmath.mpf(10) ** -12
        fd = (M(z + h, k) - M(z - h, k)) / (2 * h)
        assert agreement_digits(mp_, fd, 40) >= 20


def matches_given_decimals(x, text):
    """``x`` rounds to ``text`` at the number of decimals ``text`` gives (half a unit)."""
    decimals = len(text.split(".")[1])
    with precision(40):
        return abs(x - mpmath.mpf(text)) <= mpmath.mpf(5) * mpmath.mpf(10) ** -(decimals + 1)


# ------------------------------------------------------------------------------------------------
# Golden values: piano, d = 120, kappa = 2, alpha = 2, tau = 4, rho = 0.01
# ------------------------------------------------------------------------------------------------
def test_piano_golden_values():
    r = replica.solve("alignment", alpha=2, tau=4, kappa=2, rho="0.01", d=120, train="piano",
                      test="piano", dps=30)
    golden = {"q": "0.0929626003", "M": "0.9258394245", "M_prime": "-1.1015751428",
              "e_scalar": "0.2281094103", "e_misalign": "0.2424912674"}
    for key, val in golden.items():
        assert matches_given_decimals(r[key], val), (key, r[key], val)
    with precision(30):
        assert agreement_digits(r["sigma"], mpmath.mpf(101) / 200, 30) >= 29
    assert r.digits >= 28 and r.converged


# ------------------------------------------------------------------------------------------------
# Limits
# ------------------------------------------------------------------------------------------------
def test_kappa_infinite_is_population_resolvent_and_continuous():
    """kappa = inf: F = (C + zI)^{-1}, M' = -<F^2>; and kappa = 10^30 approaches it."""
    r_inf = replica.solve("alignment", alpha=2, tau=4, kappa="inf", rho="1/10", d=20,
                          train="powerlaw:1", test="spike:2", dps=40)
    cov = parse_spec("powerlaw:1", 20)
    with precision(40):
        lam = cov.diag_mp()
        s = r_inf["sigma"]
        assert agreement_digits(r_inf["M"], mpmath.fsum(1 / (l + s) for l in lam) / 20, 40) >= 38
        assert agreement_digits(r_inf["M_prime"],
                                -mpmath.fsum(1 / (l + s) ** 2 for l in lam) / 20, 40) >= 38
    r_big = replica.solve("alignment", alpha=2, tau=4, kappa="1e30", rho="1/10", d=20,
                          train="powerlaw:1", test="spike:2", dps=40)
    assert agreement_digits(r_inf["e_icl"], r_big["e_icl"], 40) >= 25


def test_kappa_tau_infinite_shrinkage_limit():
    """kappa = inf, tau -> inf: q -> 0 and E -> E_inf of the shrinkage estimator."""
    d = 16
    r = replica.solve("alignment", alpha=3, tau="1e24", kappa="inf", rho="1/2", d=d, train="piano",
                      test="powerlaw:1/2", dps=40)
    tr, te = parse_spec("piano", d), parse_spec("powerlaw:1/2", d)
    with precision(40):
        lam, mu = tr.diag_mp(), te.diag_mp()
        s = (mpmath.mpf(1) / 2 + 1) / 3
        e_inf = mpmath.mpf(1) / 2 + (1 + mpmath.mpf(1) / 2) / 3 * mpmath.fsum(
            l**2 / (l + s) ** 2 for l in lam) / d + s**2 * mpmath.fsum(
            m / (l + s) ** 2 for l, m in zip(lam, mu)) / d
        assert abs(r["q"]) < mpmath.mpf(10) ** -20
        assert agreement_digits(r["e_icl"], e_inf, 40) >= 20


@pytest.mark.parametrize("kappa", ["0.3", "2"])
def test_isotropic_alpha_tau_infinite(kappa):
    """alpha, tau -> inf with c = alpha/tau: e_ICL -> rho + (1 + c rho/(1+rho))(1-kappa)_+,
    e_IDG -> rho (rho of order 1, where the coefficient matters)."""
    rho = mpmath.mpf("0.5")
    c = 2
    big = 10**20
    r = replica.solve("alignment", alpha=c * big, tau=big, kappa=kappa, rho="0.5", d=2, dps=40,
                      verify=False)
    k = mpmath.mpf(kappa)
    with precision(40):
        limit = rho + (1 + c * rho / (1 + rho)) * max(1 - k, 0)
        assert abs(r["e_icl"] - limit) < mpmath.mpf(10) ** -15
        assert abs(r["e_idg"] - rho) < mpmath.mpf(10) ** -15


def test_low_rank_train_transition_limits():
    """C_train = P/r (lowrank:r), alpha = tau = 10^12: E(test = train) -> rho + (1 + c rho/(1+rho))
    (1 - kappa/r)_+, E(test = I) -> rho + (...)(1 - min(kappa, r)), tau q -> rho."""
    big = 10**12
    rho = mpmath.mpf("0.5")
    coef = 1 + rho / (1 + rho)  # c = 1
    for r_frac, kappa in (("1", "0.3"), ("1/2", "0.3"), ("1/2", "0.8")):
        rf, k = mpmath.mpf(sympy.Rational(r_frac)), mpmath.mpf(kappa)
        same = replica.solve("alignment", alpha=big, tau=big, kappa=kappa, rho="0.5", d=10,
                             train=f"lowrank:{r_frac}", test=f"lowrank:{r_frac}", dps=30,
                             verify=False)
        iso = replica.solve("alignment", alpha=big, tau=big, kappa=kappa, rho="0.5", d=10,
                            train=f"lowrank:{r_frac}", test="identity", dps=30, verify=False)
        with precision(30):
            assert abs(same["e_icl"] - (rho + coef * max(1 - k / rf, 0))) < 1e-9
            assert abs(iso["e_icl"] - (rho + coef * (1 - min(k, rf)))) < 1e-9
            assert abs(same["e_idg"] - rho) < 1e-9
    # the authors' worked example: rho = 0.5, r = 1, kappa = 0.3 -> 1.4333..., not 1.55
    ex = replica.solve("alignment", alpha=big, tau=big, kappa="0.3", rho="0.5", d=1, dps=20,
                       verify=False)
    assert mpmath.nstr(ex["e_icl"], 5) == "1.4333"


def test_double_descent_divergence_and_ridge_regularises():
    """Ridgeless q ~ C/|tau - 1| on both sides of tau = 1; finite with lambda > 0."""
    prods = []
    for eps in ("1e-6", "1e-9"):
        for sgn in (1, -1):
            tau = 1 + sgn * sympy.Rational(sympy.Float(eps, 30))
            r = replica.solve("alignment", alpha=2, tau=str(tau), kappa="1/2", rho="1/100", d=5,
                              train="piano", test="piano", dps=40, verify=False)
            prods.append((sgn, r["q"] * abs(tau - 1)))
    with precision(40):
        for sgn in (1, -1):
            a, b = [p for s, p in prods if s == sgn]
            assert abs(a - b) / abs(b) < 1e-5 and abs(b) > 1e-3
    r = replica.solve("alignment", alpha=2, tau=1, kappa="1/2", rho="1/100", lam="1/100", d=5,
                      train="piano", test="piano", dps=30)
    assert 0 < r["q"] < 100 and r["lambda_tilde"] > 0
    # lambda -> 0 at tau > 1: the ridge root tends to 0 and the ridgeless theory is recovered
    r0 = replica.solve("alignment", alpha=2, tau=3, kappa="1/2", rho="1/100", d=5, train="piano",
                       test="piano", dps=40)
    rl = replica.solve("alignment", alpha=2, tau=3, kappa="1/2", rho="1/100", lam="1e-20", d=5,
                       train="piano", test="piano", dps=40)
    assert rl["lambda_tilde"] < 1e-18
    assert agreement_digits(r0["e_icl"], rl["e_icl"], 40) >= 15


# ------------------------------------------------------------------------------------------------
# Representations and alignment properties
# ------------------------------------------------------------------------------------------------
def _bias_variance_form(r, lam, mu, kappa, rho, alpha):
    """E_ICL in the 'bias/variance' arrangement, evaluated from diagonal F and F'."""
    s, M, Mp, q, lt = r["sigma"], r["M"], r["M_prime"], r["q"], r["lambda_tilde"]
    k = mpmath.mpf(kappa)
    a = 1 - 1 / k + s * M / k
    ap = (M + s * Mp) / k
    F = [1 / (a * l + s) for l in lam]
    Fp = [-(ap * l + 1) * f**2 for l, f in zip(lam, F)]
    d = len(lam)
    ct = mpmath.fsum(mu) / d
    P = (ct + rho) / alpha
    mean = lambda xs: mpmath.fsum(xs) / d  # noqa: E731
    return ((ct + rho) - 2 * (ct - s * mean([m * f for m, f in zip(mu, F)]))
            + mean([(m + P) * (1 - 2 * s * f - s**2 * fp) for m, f, fp in zip(mu, F, Fp)])
            + q * mean([(m + P) * (f + lt * fp) for m, f, fp in zip(mu, F, Fp)]))


@pytest.mark.parametrize("tau,lam", [("4", "0"), ("1/2", "0"), ("1", "1/10")])
def test_eigenvalue_form_equals_bias_variance_form(tau, lam):
    d = 12
    r = replica.solve("alignment", alpha=2, tau=tau, kappa="3/5", rho="1/100", lam=lam, d=d,
                      train="powerlaw:1.3", test="spike:4", dps=40)
    with precision(40):
        tr, te = parse_spec("powerlaw:1.3", d), parse_spec("spike:4", d)
        e = _bias_variance_form(r, tr.diag_mp(), te.diag_mp(), "0.6", mpmath.mpf(1) / 100, 2)
        assert agreement_digits(r["e_icl"], e, 40) >= 35


def test_non_commuting_rotation_invariance(tmp_path):
    """Rotating C_train and C_test jointly (full matrices, eigendecomposed at working precision)
    leaves E_ICL unchanged; a rotated test alone changes it and uses u_i^T C_test u_i."""
    d = 6
    rng = np.random.default_rng(3)
    Q, _ = np.linalg.qr(rng.standard_normal((d, d)))
    tr = parse_spec("piano", d).diag_f64()
    te = parse_spec("powerlaw:2", d).diag_f64()
    np.save(tmp_path / "tr.npy", Q @ np.diag(tr) @ Q.T)
    np.save(tmp_path / "te.npy", Q @ np.diag(te) @ Q.T)
    base = replica.solve("alignment", alpha=2, tau="1/2", kappa="1/2", rho="1/10", d=d,
                         train="piano", test="powerlaw:2", dps=30)
    rot = replica.solve("alignment", alpha=2, tau="1/2", kappa="1/2", rho="1/10", d=d,
                        train=f"file:{tmp_path}/tr.npy", test=f"file:{tmp_path}/te.npy", dps=30)
    # .npy entries are float64: agreement is limited by the ~1e-16 rounding of the rotated input
    assert agreement_digits(base["e_icl"], rot["e_icl"], 30) >= 13
    assert any("non-commuting" in n for n in rot.notes)
    # rotated test only: e_misalign = (1/d) sum k_i (u_i^T C_test u_i) with u_i = e_i
    only = replica.solve("alignment", alpha=2, tau="1/2", kappa="1/2", rho="1/10", d=d,
                         train="piano", test=f"file:{tmp_path}/te.npy", dps=30)
    lam, k = misalignment_spectrum(alpha=2, tau="1/2", kappa="1/2", rho="1/10", d=d, train="piano",
                                   dps=30)
    Ct = Q @ np.diag(te) @ Q.T
    Ct *= d / np.trace(Ct)
    with precision(30):
        expect = mpmath.fsum(kk * float(Ct[i, i]) for i, kk in enumerate(k)) / d
        assert agreement_digits(only["e_misalign"], expect, 30) >= 13


@pytest.mark.parametrize("spec,tau,kappa", [("piano", "4", "1/2"), ("piano", "1/2", "2"),
                                            ("powerlaw:0.9", "4", "0.2"),
                                            ("powerlaw:0.9", "1/2", "1")])
def test_k_decreases_with_lambda_and_top_spike_is_optimal(spec, tau, kappa):
    d = 24
    lam, k = misalignment_spectrum(alpha=2, tau=tau, kappa=kappa, rho="1/100", d=d, train=spec,
                                   dps=30)
    assert all(k[i] < k[i + 1] for i in range(len(k) - 1))  # lambda sorted decreasing
    errs = [replica.solve("alignment", alpha=2, tau=tau, kappa=kappa, rho="1/100", d=d, train=spec,
                          test=f"spike:{j}", dps=20, verify=False)["e_icl"] for j in (1, 5, 12, 24)]
    assert errs == sorted(errs)


def test_alpha_test_only_changes_scalar_prefactor():
    kw = dict(alpha=2, tau=4, kappa="1/2", rho="1/100", d=10, train="piano", test="spike:3",
              dps=30)
    base = replica.solve("alignment", **kw)
    same = replica.solve("alignment", alpha_test=2, **kw)
    other = replica.solve("alignment", alpha_test=8, **kw)
    assert agreement_digits(base["e_icl"], same["e_icl"], 30) >= 29
    for key in ("q", "sigma", "M", "M_prime", "e_misalign"):
        assert agreement_digits(base[key], other[key], 30) >= 29
    with precision(30):
        # e_scalar - rho scales like 1/alpha_test
        assert agreement_digits((base["e_scalar"] - mpmath.mpf(1) / 100) / 4,
                                other["e_scalar"] - mpmath.mpf(1) / 100, 30) >= 28


def test_measures_on_known_cases():
    r = replica.solve("alignment", alpha=2, tau=4, kappa=2, rho="1/100", d=10, train="piano",
                      test="piano", dps=30)
    assert agreement_digits(r["inverse"], mpmath.mpf(1), 30) >= 29
    assert agreement_digits(r["cka_inv"], mpmath.mpf(1), 30) >= 29
    singular = replica.solve("alignment", alpha=2, tau=4, kappa=2, rho="1/100", d=10,
                             train="lowrank:1/2", test="identity", dps=20)
    assert singular["inverse"] is None
    assert any("singular" in n for n in singular.notes)


# ------------------------------------------------------------------------------------------------
# float64 evaluator
# ------------------------------------------------------------------------------------------------
def test_float64_grid_matches_high_precision():
    cov = parse_spec("powerlaw:0.9", 40)
    spike = parse_spec("spike:2", 40)
    alphas = np.array([0.5, 2.0, 10.0])[:, None, None]
    taus = np.array([0.3, 0.8, 1.5, 4.0])[None, :, None]
    lams = np.array([0.0, 0.05])[None, None, :]
    out = replica.solve_float64("alignment", train=cov, test=spike, alpha=alphas, tau=taus,
                                kappa=0.7, rho=0.05, lam=lams)
    assert out["e_icl"].shape == (3, 4, 2)
    for (i, a), (j, t), (k, l) in itertools.product(enumerate([0.5, 2, 10]),
                                                    enumerate(["0.3", "0.8", "1.5", "4"]),
                                                    enumerate(["0", "0.05"])):
        r = replica.solve("alignment", alpha=str(a), tau=t, kappa="0.7", rho="0.05", lam=l, d=40,
                          train="powerlaw:0.9", test="spike:2", dps=25, verify=False)
        assert abs(out["e_icl"][i, j, k] - float(r["e_icl"])) <= 1e-11 * abs(float(r["e_icl"]))


# ------------------------------------------------------------------------------------------------
# Finite-d check of the deterministic equivalent
# ------------------------------------------------------------------------------------------------
@pytest.mark.slow
@pytest.mark.parametrize("spec", ["powerlaw:1", "lowrank:1/2"])
def test_empirical_resolvent_converges_like_one_over_d(spec):
    """(1/d) tr (R_k + zI)^{-1}, averaged over sampled task sets, approaches M_kappa(z) at the same
    d's spectrum with an error shrinking roughly like 1/d (fixed seed: deterministic test)."""
    rng = np.random.default_rng(11)
    z, kappa = 0.3, 0.5
    ds, errs = [16, 32, 64, 128], []
    for d in ds:
        C = parse_spec(spec, d)
        lam = C.diag_f64()
        k = int(kappa * d)
        with precision(20):
            m_det = float(resolvent(spectral_pairs_mp(C, C))(mpmath.mpf(z), mpmath.mpf(kappa)))
        draws = 24000 // d
        vals = np.empty(draws)
        for n in range(draws):
            T = rng.standard_normal((d, k)) * np.sqrt(lam)[:, None]
            vals[n] = np.mean(1.0 / (np.linalg.eigvalsh(T @ T.T / k) + z))
        sem = vals.std(ddof=1) / np.sqrt(draws)
        errs.append(vals.mean() - m_det)
        assert abs(errs[-1]) < 2.0 / d + 3 * sem  # O(1/d) with a modest constant
    slope = np.polyfit(np.log(ds), np.log(np.abs(errs)), 1)[0]
    assert -1.5 < slope < -0.6, (errs, slope)
    assert abs(errs[-1]) < abs(errs[0]) / 4


# ------------------------------------------------------------------------------------------------
# Cancellation-free forms used by the numerics
# ------------------------------------------------------------------------------------------------
def test_stable_forms_equal_the_paper_forms():
    """With a = A_COEFF(M) and M = <f>: M_OF_A_STABLE = <f>, M_PRIME_STABLE = M_PRIME_CLOSED and
    A_PRIME_STABLE = (M + z M')/kappa (via the summand identity f - z f^2 = a lambda f^2)."""
    at = {A.a_coeff: PA.A_COEFF}
    assert sympy.simplify(A.F_I_A.subs(at) - PA.F_I) == 0
    assert sympy.simplify(A.M_PRIME_STABLE.subs(at) - PA.M_PRIME_CLOSED) == 0
    # summand identity behind a'
    assert sympy.simplify(A.F_I_A - A.z * A.F_I_A**2 - A.a_coeff * LAMBDA_I * A.F_I_A**2) == 0
    S2, T2 = sympy.symbols("S2 T2")
    names = {avg(A.F_I_A**2): S2, avg(LAMBDA_I * A.F_I_A**2): T2}
    mp_closed = A.M_PRIME_STABLE.xreplace(names)
    lhs = ((A.M + A.z * mp_closed) / A.kappa).subs(A.M, A.z * S2 + A.a_coeff * T2)
    assert sympy.simplify(lhs - A.A_PRIME_STABLE.xreplace(names)) == 0


def test_full_digits_deep_in_the_collapsed_phase():
    """alpha = 10^12, kappa < 1: a = O(1/alpha); the a-form keeps every digit (the M-form lost
    11 of 30 digits in e_misalign)."""
    r = replica.solve("alignment", alpha="1e12", tau=4, kappa="1/2", rho="0.01", d=3, dps=30)
    assert r.digits >= 29
    hi = replica.solve("alignment", alpha="1e12", tau=4, kappa="1/2", rho="0.01", d=3, dps=60,
                       verify=False)
    for key in ("e_icl", "e_misalign", "resolvent", "M", "M_prime"):
        assert agreement_digits(r[key], hi[key], 30) >= 29, key
