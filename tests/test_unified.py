"""The unified free energy (replica.derivations.unified): derived from the model for any task
covariance, and its instances -- the low-rank (R1) and its errors (identical), paper A's E_ICL and
e_TM on finite-d spectra (>= 30 digits), paper B's isotropic closed forms (>= 30 digits)."""

from fractions import Fraction as Fr

import mpmath
import pytest
import sympy

import replica
from replica.derivations import unified as U
from replica.models import lowrank as L
from replica.numerics import agreement_digits
from replica.params import to_mpf
from replica.spectra import parse_spec
from unnormalised_spectra import alignment_and_unified

pytestmark = pytest.mark.slow  # each derivation or solve takes seconds


def _lowrank_typed_overlaps():
    fp = L.fixed_point_equations()
    return {L.m: fp[L.m], L.q: fp[L.q], L.qbar: fp[L.qbar], L.mbar: L.MBAR, L.m0: L.M0,
            L.q0: L.Q0}


def test_free_energy_grows_like_beta_and_depends_on_the_task_power():
    f, powers, _ = U.derived_free_energy()
    assert powers == (1, 1, 1)
    assert f.has(U.c_train) and f.has(L.G[0](L.z))


def test_lowrank_instance_is_r1_identically():
    f = U.free_energy().xreplace(U.LOWRANK_MAP)
    assert sympy.cancel(sympy.expand(f - L.FREE_ENERGY)) == 0
    # a wrong task power is not (R1)
    f_wrong = U.free_energy().xreplace({U.c_train: 2})
    assert sympy.cancel(sympy.expand(f_wrong - L.FREE_ENERGY)) != 0


def test_lowrank_instance_saddle_point_equations_identical():
    fu = dict(U.saddle().fixed_point)
    fl = L.fixed_point_equations()
    for v in fl:
        assert sympy.cancel(fu[v].xreplace(U.LOWRANK_MAP) - fl[v]) == 0, v


def test_lowrank_instance_errors_identical():
    """TM: gamma = s; ODG: gamma = 1 (g_C = g, c_C = 1); IDG: gamma = mu/rho on the subspace
    projector (g_C = gtilde, c_C = 1); with g = rho gtilde - (1 - rho)/z on both sides."""
    der = U.derived_test_overlaps()
    typed = _lowrank_typed_overlaps()
    to_gt = L.COMPLEMENT_ATOM
    inst = {
        "tm": der["error_TM"].xreplace({U.c_train: 1}),
        "odg": der["error_C"].xreplace({U.GC[0](L.z): L.G[0](L.z), U.GC[1](L.z): L.G[1](L.z),
                                        U.c_C: 1, U.c_train: 1}),
        "idg": der["error_C"].xreplace({U.GC[0](L.z): L.GT[0](L.z), U.GC[1](L.z): L.GT[1](L.z),
                                        U.c_C: 1, U.c_train: 1}),
    }
    for prot, e in inst.items():
        want = L.error_expr(prot).xreplace(typed)
        assert sympy.cancel(sympy.expand((e - want).xreplace(to_gt))) == 0, prot
    # the IDG error with the full-space transform in place of the subspace one is not the IDG
    wrong = der["error_C"].xreplace({U.GC[0](L.z): L.G[0](L.z), U.GC[1](L.z): L.G[1](L.z),
                                     U.c_C: 1, U.c_train: 1})
    assert sympy.cancel(sympy.expand((wrong - L.error_expr("idg").xreplace(typed))
                                     .xreplace(to_gt))) != 0


def test_paper_a_map_gives_paper_a_ridge():
    """With the map, the unified ridge lambda is (tau/kappa) lambda_A, and the saddle point's
    u = lambda/qhat = -z - epsilon is paper A's lambda_tilde (sigma_A = epsilon + lambda_tilde):
    the conjugate equations give qhat = tau/(kappa Delta) and qbarhat = epsilon qhat."""
    fp = dict(U.saddle().fixed_point)
    assert sympy.simplify(fp[L.qbarhat] - U.EPS * fp[L.qhat]) == 0
    z_of = L.Z_DEFINITION.xreplace({L.qbarhat: U.EPS * L.qhat})
    sigma_A = sympy.simplify(-z_of)
    lt = L.lam / L.qhat
    # sigma_A = (rho_A + c)/alpha + lambda_tilde in paper A's parameters
    assert sympy.simplify((sigma_A - ((U.rho_A + U.c_train) / L.alpha + lt))
                          .xreplace(U.PAPER_A_MAP).subs(L.sigma, sympy.sqrt(U.rho_A))) == 0


POINTS = [
    # (train, test, alpha, tau, kappa, rho_A, lambda_A)
    ("powerlaw:1", "piano", Fr(2), Fr(3), Fr(1, 2), Fr(1, 4), Fr(1, 10)),
    ("piano", "identity", Fr(3, 2), Fr(1, 2), Fr(3, 2), Fr(1, 5), Fr(1, 20)),
    ("powerlaw:2", "powerlaw:1", Fr(3), Fr(2), Fr(1), Fr(1, 10), Fr(0)),
]
D = 20
DPS = 40


def _spectra(train, test):
    with mpmath.workdps(DPS + 20):
        return parse_spec(train, D).diag_mp(), parse_spec(test, D, "--test").diag_mp()


def _unified_at(train, test, alpha, tau, kappa, rho_A, lam_A, test_spec=None):
    tr, te = _spectra(train, test)
    with mpmath.workdps(DPS + 20):
        lam = to_mpf(tau) * to_mpf(lam_A) / to_mpf(kappa)   # PAPER_A_MAP
        sig = mpmath.sqrt(to_mpf(rho_A))
        return U.solve_on_spectrum(to_mpf(alpha), to_mpf(tau), to_mpf(kappa), lam,
                                   sig, tr, te, dps=DPS + 10)


@pytest.mark.parametrize("p", POINTS, ids=lambda p: f"{p[0]}/{p[1]}")
def test_paper_a_instance(p):
    train, test, alpha, tau, kappa, rho_A, lam_A = p
    A = replica.solve("alignment", alpha=alpha, tau=tau, kappa=kappa, rho=rho_A, lam=lam_A, d=D,
                      train=train, test=test, dps=DPS)
    u = _unified_at(*p)
    with mpmath.workdps(DPS):
        assert u["residual"] < mpmath.mpf(10) ** -45
        assert agreement_digits(u["error_C"], A["e_icl"], DPS) >= 30
        assert agreement_digits(u["error_TM"], to_mpf(tau) * A["q"], DPS) >= 30
        assert agreement_digits(u["error_TM"], A["e_tm"], DPS) >= 30
        assert agreement_digits(-u["z"], A["sigma"], DPS) >= 30
        if lam_A > 0:
            lam = to_mpf(tau) * to_mpf(lam_A) / to_mpf(kappa)
            assert agreement_digits(lam / u["qhat"], A["lambda_tilde"], DPS) >= 30


def test_paper_a_comparison_can_fail():
    """The test transform g_C replaced by g (the test covariance ignored): E_ICL on a piano test
    law is then off at the first digits."""
    train, test, *rest = POINTS[0]
    A = replica.solve("alignment", alpha=rest[0], tau=rest[1], kappa=rest[2], rho=rest[3],
                      lam=rest[4], d=D, train=train, test=test, dps=DPS)
    u = _unified_at(train, "identity", *rest)   # the error at C = I, not the piano law
    with mpmath.workdps(DPS):
        assert agreement_digits(u["error_C"], A["e_icl"], DPS) < 3


@pytest.mark.parametrize("p", [(Fr(2), Fr(1, 2), Fr(3, 2), Fr(1, 4), Fr(1, 10)),
                               (Fr(3), Fr(3), Fr(1, 2), Fr(1, 2), Fr(1, 5)),
                               (Fr(3, 2), Fr(2), Fr(2), Fr(1, 10), Fr(0))],
                         ids=["tau<1", "tau>1", "ridgeless"])
def test_paper_b_instance(p):
    alpha, tau, kappa, rho_A, lam_A = p
    B = replica.solve("isotropic", alpha=alpha, tau=tau, kappa=kappa, rho=rho_A, lam=lam_A,
                      dps=DPS)
    u = _unified_at("identity", "identity", alpha, tau, kappa, rho_A, lam_A)
    with mpmath.workdps(DPS):
        assert agreement_digits(u["error_C"], B["e_icl"], DPS) >= 30
        assert agreement_digits(u["error_TM"], B["e_idg"], DPS) >= 30
        assert agreement_digits(-u["z"], B["sigma"], DPS) >= 30


def test_paper_a_instance_with_unnormalised_covariances(tmp_path):
    """Raw (unnormalised) train and test covariances, task power c = 13/8 and test power 3/2:
    the task power enters the free energy (residual covariance, epsilon, <s> = c)."""
    A, u, _, _ = alignment_and_unified(tmp_path, DPS)
    with mpmath.workdps(DPS):
        assert agreement_digits(u["error_C"], A["e_icl"], DPS) >= 30
        assert agreement_digits(u["error_TM"], A["e_tm"], DPS) >= 30


def _random_points(k, seed):
    import random
    rnd = random.Random(seed)
    return [{x: sympy.Rational(rnd.randint(1, 60), rnd.randint(1, 60))
             for x in U.INSTANCE_SYMBOLS} for _ in range(k)]


def test_paper_a_errors_are_an_instance_exactly():
    """Paper A's E_ICL and e_TM (in M, M', <mu F>, <mu F'>, lambda_tilde) equal the unified
    saddle point's errors exactly (rational arithmetic) at random rational values of every
    symbol -- the transforms included, so the identity does not use eq. (17); and the check
    fails for the wrong pairing (the TM error against E_ICL)."""
    for v in _random_points(4, seed=7):
        assert U.paper_a_instance_difference(v) == {"error_C": 0, "error_TM": 0}
    v = _random_points(1, seed=8)[0]
    mine = U._unified_errors_at(v)
    theirs = U._paper_a_errors()
    assert sympy.nsimplify(mine["error_TM"] - theirs["error_C"].xreplace(v)) != 0


def test_paper_a_ridge_equation_is_the_conjugate_equation():
    assert sympy.simplify(U.kappa_qhat_at_saddle() - (L.tau - 1 + U.lt_A * U.g0)) == 0
    assert U.paper_a_ridge_equation_difference() == 0
