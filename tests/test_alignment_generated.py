"""The alignment and isotropic solvers' equations are computed from the unified free energy
(replica.models.unified, replica.models.alignment): they equal paper A's equations as the paper
states them (replica.derivations.paper_a) identically, and the solvers' values equal an
independent evaluation of paper A's stated equations (and paper B's closed forms) to >= 30
digits at points covering SPECs and matrices, tau < 1 and > 1, lambda = 0 and > 0, and
kappa = inf."""

import mpmath
import numpy as np
import pytest
import sympy

import replica
from replica.derivations import paper_a as PA
from replica.models import alignment as A
from replica.models import isotropic as B
from replica.models import lowrank as L
from replica.models import unified as U
from replica.numerics import agreement_digits
from replica.spectra import parse_spec, spectral_pairs_mp
from replica.symbolic import LAMBDA_I, MU_I, SpectralAverage
from replica.symbolic.spectral import expand_averages, on_symbolic_spectrum

GENERATED = ("SELF_CONSISTENCY_A", "M_OF_A_STABLE", "A_PRIME_STABLE", "M_PRIME_STABLE", "SIGMA",
             "RIDGE_EQUATION", "RIDGELESS_EQUATION", "RIDGE_ROOT_EQUATION", "Q", "E_SCALAR",
             "K_I_STABLE", "E_MISALIGN_STABLE", "E_TM", "E_IDG")


def _difference(gen, stated):
    """gen - stated with the averages written over a symbolic 3-point spectrum (an identity for
    every spectrum of that size), cancelled."""
    d = on_symbolic_spectrum(expand_averages(sympy.sympify(gen - stated)), 3)
    return sympy.simplify(sympy.cancel(d))


def _difference_at_rationals(gen, stated, seed=3):
    """gen - stated over a symbolic 3-point spectrum at a random rational value of every symbol,
    exactly (a nonzero rational function vanishes there with probability 0)."""
    import random
    rnd = random.Random(seed)
    d = on_symbolic_spectrum(expand_averages(sympy.sympify(gen - stated)), 3)
    point = {x: sympy.Rational(rnd.randint(1, 40), rnd.randint(1, 40)) for x in d.free_symbols}
    return sympy.nsimplify(d.xreplace(point))


# ---------------------------------------------------------------------------------------------
# The one free energy
# ---------------------------------------------------------------------------------------------
def test_lowrank_free_energy_is_the_unified_one_at_unit_task_power():
    assert L.FREE_ENERGY == U.FREE_ENERGY.xreplace({U.c_train: 1})
    assert not L.FREE_ENERGY.has(U.c_train) and U.FREE_ENERGY.has(U.c_train)


@pytest.mark.slow  # the replica derivation of the free energy and of the RS measure (seconds)
def test_derived_free_energy_and_overlaps_are_the_solvers_objects():
    """The replica calculus's output (replica.derivations.unified) is the solvers' typed object,
    and its test overlaps from the RS measure of the weights are the solvers' (read off the
    saddle-point equations by their spectral weights)."""
    from replica.derivations import unified as DU
    assert sympy.cancel(sympy.expand(DU.free_energy() - U.FREE_ENERGY)) == 0
    assert sympy.cancel(sympy.expand(DU.free_energy() - U.FREE_ENERGY.xreplace(
        {U.chihat: 2 * U.chihat}))) != 0
    der, mine = DU.derived_test_overlaps(), U.test_overlaps()
    for k in ("m_C", "q_C"):
        assert sympy.cancel(sympy.expand(der[k] - mine[k])) == 0, k


def test_direction_moments_closed_form():
    """Written out here: mean = (mhat/qhat) s/(s - z), second moment =
    [mhat^2 s^2 + chihat s/kappa + chibarhat/kappa]/(qhat^2 (s - z)^2)."""
    s, z = U.s, U.z
    mom = U.direction_moments()
    assert sympy.cancel(mom["mean"] - U.mhat / U.qhat * s / (s - z)) == 0
    want = (U.mhat**2 * s**2 + U.chihat * s / U.kappa + U.chibarhat / U.kappa) / (
        U.qhat**2 * (s - z)**2)
    assert sympy.cancel(mom["second"] - want) == 0
    assert sympy.cancel(mom["second"] - want.xreplace({U.chihat: 2 * U.chihat})) != 0


def test_test_overlaps_at_gamma_one_and_gamma_s_are_the_saddle_point_equations():
    """gamma = 1 (g_C = g, c_C = 1) gives the qbar equation; gamma = s (g_C = 1 + z g,
    g_C' = g + z g', c_C = c) the m and q equations."""
    fp = U.fixed_point_equations()
    ov = U.test_overlaps()
    g, g1, z = U.G[0](U.z), U.G[1](U.z), U.z
    one = {U.GC[0](z): g, U.GC[1](z): g1, U.c_C: 1}
    at_s = {U.GC[0](z): 1 + z * g, U.GC[1](z): g + z * g1, U.c_C: U.c_train}
    assert sympy.cancel(ov["q_C"].xreplace(one) - fp[U.qbar]) == 0
    assert sympy.cancel(ov["m_C"].xreplace(at_s) - fp[U.m]) == 0
    assert sympy.cancel(ov["q_C"].xreplace(at_s) - fp[U.q]) == 0
    assert sympy.cancel(ov["q_C"].xreplace(one) - fp[U.q]) != 0


# ---------------------------------------------------------------------------------------------
# Generated = stated, symbolically
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", GENERATED)
def test_generated_equation_equals_paper_a_stated(name):
    gen, stated = getattr(A, name), getattr(PA, name)
    if name == "M_PRIME_STABLE":  # in M, as stated: M = <f> is the self-consistency
        at = {A.M: A.M_OF_A_STABLE}
        gen, stated = gen.xreplace(at), stated.xreplace(at)
    assert _difference(gen, stated) == 0


def test_decomposition_equals_the_one_written_by_hand():
    """The signal/memorisation/structural/noise parts of E_ICL, computed from the unified test
    error by the conjugate each term comes from, equal the positive-term forms written here
    (the package's decomposition as first written, not paper A's), and sum to
    e_scalar + e_misalign with M = <f>, M' = -<(a' lambda + 1) f^2> at z = sigma and
    sigma = (c_train + rho)/alpha + lambda_tilde."""
    lam_i, mu_i, a, ap, s = LAMBDA_I, MU_I, A.a_coeff, A.a_prime, A.sigma
    f2 = 1 / (a * lam_i + s)**2
    fpn = (ap * lam_i + 1) * f2
    s_test = (A.c_test + A.rho) / A.alpha_test
    s_ctx = (A.c_train + A.rho) / A.alpha
    written = {
        "signal": s_test * SpectralAverage(lam_i * f2 * (a**2 * lam_i + s**2 * ap))
        + s**2 * SpectralAverage(mu_i * fpn),
        "memorization": A.q * (a - s * ap) * (s_test * SpectralAverage(lam_i * f2)
                                              + SpectralAverage(mu_i * lam_i * f2)),
        "structural": A.q * s_ctx * (s_test * SpectralAverage(fpn) + SpectralAverage(mu_i * fpn)),
        "noise": A.rho,
    }
    for k, e in written.items():
        assert _difference(A.DECOMPOSITION[k], e) == 0, k
    at = {A.M: SpectralAverage(1 / (a * lam_i + s)), A.M_prime: -SpectralAverage(fpn),
          A.alpha: (A.c_train + A.rho) / (s - A.lambda_tilde)}  # sigma = s_ctx + lambda_tilde
    total = sum(A.DECOMPOSITION.values()).xreplace(at)
    assert _difference_at_rationals(total, (A.E_SCALAR + A.E_MISALIGN_STABLE).xreplace(at)) == 0
    assert _difference_at_rationals(total, (A.E_SCALAR + A.E_MISALIGN_STABLE).xreplace(
        {**at, A.M_prime: SpectralAverage(fpn)})) != 0
    assert _difference_at_rationals(A.DECOMPOSITION["structural"], written["structural"] * 2) != 0


def test_generated_forms_have_the_stated_shape():
    """The float64 path evaluates the same operations: the hot equations are the same SymPy
    objects as the stated ones."""
    for name in ("SELF_CONSISTENCY_A", "M_OF_A_STABLE", "A_PRIME_STABLE", "M_PRIME_STABLE",
                 "RIDGE_ROOT_EQUATION", "E_SCALAR"):
        assert sympy.srepr(getattr(A, name)) == sympy.srepr(getattr(PA, name)), name


def test_the_comparison_can_fail():
    assert _difference(A.Q, PA.Q.xreplace({A.rho: 2 * A.rho})) != 0
    assert _difference(A.K_I_STABLE, PA.K_I_STABLE.xreplace({A.a_prime: 2 * A.a_prime})) != 0
    assert _difference(A.RIDGE_EQUATION, PA.RIDGE_EQUATION.xreplace({A.tau: 2 * A.tau})) != 0


# ---------------------------------------------------------------------------------------------
# Numerically: the solvers against paper A's stated equations, evaluated independently
# ---------------------------------------------------------------------------------------------
def _mp(expr, values: dict, pairs):
    """``expr`` at ``values`` with each spectral average the weighted sum over ``pairs`` (at the
    working precision)."""
    prec = mpmath.mp.dps + 10

    def num(v):
        return sympy.Float(v, prec) if isinstance(v, mpmath.mpf) else sympy.sympify(v)

    values = {k: num(v) for k, v in values.items()}
    expr = sympy.sympify(expr)
    rep = {}
    for av in expr.atoms(SpectralAverage):
        f = sympy.lambdify([LAMBDA_I, MU_I], av.args[0].xreplace(values), "mpmath")
        rep[av] = num(mpmath.fsum(w * f(lv, mv) for lv, mv, w in zip(pairs.lam, pairs.mu,
                                                                    pairs.weight)))
    return mpmath.mpf(sympy.N(expr.xreplace(rep).xreplace(values), prec))


def _stated_solution(params, pairs):
    """Paper A's stated equations solved on their own: a from the stated eq. (17) (in a) at
    sigma, lambda_tilde from the stated ridge (or ridgeless) equation, then q, E_ICL, e_TM
    (kappa = inf: each stated expression at kappa -> oo, a = 1)."""
    kinf = params["kappa"] == mpmath.inf
    c_tr = mpmath.fsum(w * lv for lv, w in zip(pairs.lam, pairs.weight))
    c_te = mpmath.fsum(w * mv for mv, w in zip(pairs.mu, pairs.weight))
    base = {A.alpha: params["alpha"], A.alpha_test: params["alpha"], A.tau: params["tau"],
            A.rho: params["rho"], A.lam: params["lam"], A.c_train: c_tr, A.c_test: c_te}
    if not kinf:
        base[A.kappa] = params["kappa"]

    def st(e):
        return e.subs(A.kappa, sympy.oo) if kinf else e

    def at_sigma(lt):
        sig = _mp(PA.SIGMA, {**base, A.lambda_tilde: lt}, pairs)
        v = {**base, A.z: sig, A.sigma: sig, A.lambda_tilde: lt}
        lo = max(mpmath.mpf(0), 1 - 1 / params["kappa"]) + mpmath.mpf(10)**-40
        v[A.a_coeff] = mpmath.mpf(1) if kinf else mpmath.findroot(
            lambda a_: _mp(PA.SELF_CONSISTENCY_A, {**v, A.a_coeff: a_}, pairs), (lo, 2),
            solver="anderson")
        v[A.M] = _mp(PA.M_OF_A_STABLE, v, pairs)
        v[A.M_prime] = _mp(st(PA.M_PRIME_STABLE), v, pairs)
        v[A.a_prime] = _mp(st(PA.A_PRIME_STABLE), v, pairs)
        return v

    if params["lam"] == 0 and params["tau"] > 1:
        lt = mpmath.mpf(0)
    else:
        eq = PA.RIDGE_ROOT_EQUATION if params["lam"] > 0 else PA.RIDGELESS_EQUATION
        lt = mpmath.findroot(lambda t: _mp(eq, at_sigma(t), pairs),
                             (mpmath.mpf(10)**-6, mpmath.mpf(100)), solver="anderson")
    v = at_sigma(lt)
    v[A.q] = _mp(PA.Q, v, pairs)
    e_icl = _mp(PA.E_SCALAR, v, pairs) + _mp(PA.E_MISALIGN_STABLE, v, pairs)
    return {"e_icl": e_icl, "e_tm": _mp(PA.E_TM, v, pairs), "sigma": v[A.sigma],
            "q": v[A.q], "lambda_tilde": lt}


def _toeplitz(d):
    return np.array([[2.0 if i == j else (0.5 if abs(i - j) == 1 else 0.0) for j in range(d)]
                     for i in range(d)])


POINTS = [  # (train, test, alpha, tau, kappa, rho, lam): ridge tau > 1; ridgeless tau < 1;
    # interpolating; kappa = inf with and without ridge; a full (non-diagonal) C_train
    ("powerlaw:1", "piano", "2", "3", "1/2", "1/4", "1/10"),
    ("piano", "identity", "3/2", "1/2", "3/2", "1/5", "0"),
    ("powerlaw:2", "powerlaw:1", "3", "2", "1", "1/10", "0"),
    ("powerlaw:1", "piano", "2", "1/2", "inf", "1/4", "1/10"),
    ("piano", "powerlaw:1", "2", "3", "inf", "1/4", "0"),
    ("toeplitz", "piano", "2", "1/2", "2", "1/4", "1/20"),
]


@pytest.mark.slow  # one solve at 40 digits and an mpmath root per point (seconds)
@pytest.mark.parametrize("point", POINTS, ids=lambda p: f"{p[0]}-{p[1]}-tau{p[3]}-k{p[4]}-l{p[6]}")
def test_alignment_solver_equals_paper_a_stated_equations(point):
    train, test, alpha, tau, kappa, rho, lam = point
    d = 12
    tr = _toeplitz(d) if train == "toeplitz" else train
    r = replica.solve("alignment", train=tr, test=test, d=d, alpha=alpha, tau=tau, kappa=kappa,
                      rho=rho, lam=lam, dps=40)
    assert r.converged
    with mpmath.workdps(60):
        pairs = spectral_pairs_mp(parse_spec(tr, d), parse_spec(test, d, "--test"))
        if train == "toeplitz":
            assert not pairs.commuting
        params = {k: (mpmath.inf if v == "inf" else mpmath.mpf(sympy.Rational(v)))
                  for k, v in dict(alpha=alpha, tau=tau, kappa=kappa, rho=rho, lam=lam).items()}
        want = _stated_solution(params, pairs)
        for key in ("e_icl", "e_tm", "sigma", "q"):
            assert agreement_digits(r[key], want[key], 40) >= 30, (key, r[key], want[key])


ISO_POINTS = [("2", "1/2", "3/2", "1/4", "1/10"), ("3", "3", "1/2", "1/2", "1/5"),
              ("3", "1/2", "1/2", "1/2", "0"), ("3/2", "2", "2", "1/10", "0"),
              ("2", "1/2", "inf", "1/4", "0"), ("2", "3", "inf", "1/4", "0")]


@pytest.mark.slow  # one solve at 40 digits per point
@pytest.mark.parametrize("point", ISO_POINTS, ids=lambda p: "-".join(p))
def test_isotropic_solver_equals_paper_b_closed_forms(point):
    """The isotropic solver (the unified free energy at C = I) against paper B's closed forms,
    evaluated here: the ridge form at the root of paper B's ridge equation, the ridgeless forms
    (ICL, and IDG = e_idg) for tau < 1 and tau > 1."""
    alpha, tau, kappa, rho, lam = point
    r = replica.solve("isotropic", alpha=alpha, tau=tau, kappa=kappa, rho=rho, lam=lam, dps=40)
    assert r.converged
    vals = {B.alpha: sympy.Rational(alpha), B.tau: sympy.Rational(tau), B.rho: sympy.Rational(rho),
            B.lam: sympy.Rational(lam)}
    kinf = kappa == "inf"

    def ev(e):
        e = e.subs(B.kappa, sympy.oo) if kinf else e.xreplace({B.kappa: sympy.Rational(kappa)})
        return sympy.N(e.xreplace(vals), 50)

    with mpmath.workdps(50):
        if lam != "0":
            xi = mpmath.findroot(lambda t: mpmath.mpf(ev(B.RIDGE_EQUATION.xreplace(
                {B.xi: sympy.Float(t, 60)}))), (mpmath.mpf(10)**-6, mpmath.mpf(100)),
                solver="anderson")
            icl = mpmath.mpf(ev(B.ICL_RIDGE.xreplace({B.xi: sympy.Float(xi, 60)})))
            idg = None
        elif sympy.Rational(tau) < 1:
            icl = mpmath.mpf(ev(B.ICL_RIDGELESS_TAU_LT_1))
            idg = mpmath.mpf(ev(B.IDG_RIDGELESS_TAU_LT_1)) if not kinf else None
        else:
            icl = mpmath.mpf(ev(B.ICL_RIDGELESS_TAU_GT_1))
            idg = mpmath.mpf(ev(B.IDG_RIDGELESS_TAU_GT_1))
        assert agreement_digits(r["e_icl"], icl, 40) >= 30, (r["e_icl"], icl)
        if idg is not None:
            assert agreement_digits(r["e_idg"], idg, 40) >= 30, (r["e_idg"], idg)
