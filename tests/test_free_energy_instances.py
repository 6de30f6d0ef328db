r"""Papers A (``alignment``) and B (``isotropic``) report the free energy (R1) at their solutions,
through the derived map to its variables (:func:`replica.models.alignment.free_energy_at_solution`).

Checked against computations that do not use that map:

* the low-rank model at full rank (:math:`\rho = 1`: tasks :math:`N(0, I)`, the isotropic
  case), solved by its own equations, with the noise standard deviation :math:`\sqrt{\rho_B}` and
  ridge :math:`\tau\lambda_B/\kappa`: the same value to 28+ digits;
* the unified free energy (:mod:`replica.derivations.unified`, task power a symbol) evaluated at
  the unified saddle point solved on its own (:func:`~replica.derivations.unified.
  solve_on_spectrum`), for an unnormalised ``C_train`` (task power 13/8: the rescaling of the
  labels in :func:`~replica.models.alignment.free_energy_at_solution`);
* linear attention trained by ridge on sampled data (paper A's features, with the :math:`y^2`
  column) at finite :math:`d`: the minimal objective per :math:`\kappa d^2` extrapolates to the
  free energy (slow).
"""

from fractions import Fraction as Fr

import mpmath
import numpy as np
import pytest
import sympy

import replica
from replica.models import alignment as A
from replica.models import lowrank as L
from replica.numerics import agreement_digits
from replica.params import to_mpf
from unnormalised_spectra import D as D_RAW, POINT, alignment_and_unified

DPS = 30


def test_r1_is_affine_in_the_five_variables_set_to_zero():
    """Every second derivative of (R1) within (m, q, qbar, chihat, chibarhat) vanishes (so at a
    saddle point its value does not depend on them); the check fails for a variable that enters
    non-linearly (qhat, chi)."""
    f = L.FREE_ENERGY.xreplace({L.z: L.Z_DEFINITION})
    xs = A.affine_variables()
    for a in xs:
        for b in xs:
            assert sympy.simplify(sympy.diff(f, a, b)) == 0, (a, b)
    assert sympy.simplify(sympy.diff(f, L.chi, L.chi)) != 0
    assert sympy.simplify(sympy.diff(f, L.qhat, L.qhat)) != 0


def test_the_two_forms_of_qhat_agree_on_the_ridge_equation():
    """qhat from its own equation and from the alias agree where the ridge equation of paper A
    holds (lambda_tilde M = 1 - tau + tau lambda/lambda_tilde, M = g(z), z = -eps - lambda_tilde):
    their difference is a multiple of it."""
    lt, lam_a = sympy.symbols("lt lam_a", positive=True)
    g0 = sympy.Symbol("g0")
    eps = (1 + L.sigma**2) / L.alpha
    at = {L.z: -eps - lt, L.lam: L.tau * lam_a / L.kappa}
    conj = A.qhat_at_saddle("conjugate").xreplace(at)
    alias = A.qhat_at_saddle("alias").xreplace(at)
    ridge = A.RIDGE_EQUATION.xreplace({A.M: g0, A.lambda_tilde: lt, A.lam: lam_a})
    diff = sympy.cancel(conj - alias)
    assert sympy.cancel(diff * lt * L.kappa / ridge) == 1
    assert diff != 0  # they are different expressions, equal only on the ridge equation


POINTS_B = [(Fr(2), Fr(1, 2), Fr(3, 2), Fr(1, 4), Fr(1, 10)),
            (Fr(3), Fr(3), Fr(1, 2), Fr(1, 4), Fr(1, 5)),
            (Fr(3, 2), Fr(2), Fr(2), Fr(1, 4), Fr(0))]


@pytest.mark.parametrize("p", POINTS_B, ids=["tau<1", "tau>1", "ridgeless"])
def test_isotropic_and_alignment_are_the_full_rank_lowrank_value(p):
    alpha, tau, kappa, rho_b, lam_b = p
    sigma = Fr(1, 2)
    assert sigma**2 == rho_b
    b = replica.solve("isotropic", alpha=alpha, tau=tau, kappa=kappa, rho=rho_b, lam=lam_b,
                      dps=DPS)
    a = replica.solve("alignment", alpha=alpha, tau=tau, kappa=kappa, rho=rho_b, lam=lam_b, d=8,
                      train="identity", test="identity", dps=DPS)
    lr = replica.solve("lowrank", alpha=alpha, tau=tau, kappa=kappa, rho=1, sigma=sigma,
                       lam=tau * lam_b / kappa, dps=DPS)
    with mpmath.workdps(DPS):
        assert agreement_digits(b["free_energy"], lr["free_energy"], DPS) >= 28
        assert agreement_digits(a["free_energy"], lr["free_energy"], DPS) >= 28
    # the comparison can fail: paper A's ridge taken as the low-rank one (no tau/kappa)
    if lam_b:
        wrong = replica.solve("lowrank", alpha=alpha, tau=tau, kappa=kappa, rho=1, sigma=sigma,
                              lam=lam_b, dps=DPS)
        with mpmath.workdps(DPS):
            assert agreement_digits(b["free_energy"], wrong["free_energy"], DPS) < 3


def test_alignment_free_energy_with_unnormalised_covariances(tmp_path):
    """Task power 13/8: the unified free energy (c a symbol) at the unified saddle point, solved
    on its own with eq. (17) supplying g and g', equals the alignment model's value; with the
    task power taken as 1 in the unified free energy it does not."""
    from replica.derivations import unified as U

    d = D_RAW
    a, u, trm, tem = alignment_and_unified(tmp_path, DPS)
    alpha, tau, kappa, rho_a, lam_a = (POINT[k] for k in ("alpha", "tau", "kappa", "rho", "lam"))
    with mpmath.workdps(DPS + 20):
        lam = to_mpf(tau * lam_a / kappa)
        g, g1, _, _, _ = U.deterministic_transforms(trm, tem, to_mpf(kappa), u["z"])
        c = mpmath.fsum(trm) / d
        num = {L.alpha: to_mpf(alpha), L.tau: to_mpf(tau), L.kappa: to_mpf(kappa), L.lam: lam,
               L.sigma: mpmath.sqrt(to_mpf(rho_a))}
        vals = {s: u[str(s)] for s in L.ORDER_PARAMETERS + L.CONJUGATES}
        vals[L.z] = u["z"]
        f = U.free_energy().xreplace({L.G[0](L.z): sympy.Float(g, DPS + 20),
                                      L.G[1](L.z): sympy.Float(g1, DPS + 20)})

        def value(power):
            e = f.xreplace({U.c_train: power}).xreplace(
                {k: sympy.Float(v, DPS + 20) for k, v in {**num, **vals}.items()})
            return mpmath.mpf(str(sympy.N(e, DPS + 10)))

        right, wrong = value(sympy.Float(c, DPS + 20)), value(1)
    assert c == mpmath.mpf(13) / 8
    with mpmath.workdps(DPS):
        assert agreement_digits(right, a["free_energy"], DPS) >= 28
        assert agreement_digits(wrong, a["free_energy"], DPS) < 3


def test_ridgeless_below_the_threshold_is_zero_and_the_limit_of_small_ridge():
    """tau < 1, lambda = 0: the minimum-norm interpolator, training objective 0; at lambda > 0
    small the value is O(lambda)."""
    p = dict(alpha=2, tau="1/2", kappa=2, rho="1/4")
    assert replica.solve("isotropic", dps=20, lam=0, **p)["free_energy"] == 0
    small = replica.solve("isotropic", dps=20, lam="1e-8", **p)["free_energy"]
    smaller = replica.solve("isotropic", dps=20, lam="1e-9", **p)["free_energy"]
    assert 0 < small < 1e-8 and abs(small / smaller - 10) < 1e-3
    a = replica.solve("alignment", dps=20, lam=0, d=10, train="powerlaw:1", test="identity", **p)
    assert a["free_energy"] == 0


def test_interpolating_variant_is_the_limit_of_the_ridge_variant():
    """tau > 1: lambda = 0 (no effective ridge, qhat from its own equation) and lambda = 1e-12
    (the ridge variant, qhat from the alias) agree to the ridge's order."""
    p = dict(alpha=2, tau=3, kappa=2, rho="1/4", d=10, train="powerlaw:1", test="identity")
    f0 = replica.solve("alignment", dps=20, lam=0, **p)["free_energy"]
    f1 = replica.solve("alignment", dps=20, lam="1e-12", **p)["free_energy"]
    assert f0 > 0 and abs(f1 - f0) < 1e-10 * f0


def test_kappa_infinite_reports_the_limit_zero():
    r = replica.solve("isotropic", dps=20, alpha=2, tau=2, kappa="inf", rho="1/4", lam="1/10")
    assert r["free_energy"] == 0 and any("kappa = inf" in n for n in r.notes)
    f = [replica.solve("isotropic", dps=20, alpha=2, tau=2, kappa=k, rho="1/4",
                       lam="1/10")["free_energy"] for k in (10, 100)]
    assert 0 < f[1] < f[0] / 5


def test_declared_and_noted():
    from replica.models import get

    for name in ("alignment", "isotropic"):
        prob = get(name)
        assert prob.free_energy == "free_energy" and prob.extremum == "min"
        assert "free_energy" in prob.groups
    r = replica.solve("isotropic", dps=15, alpha=2, tau=2, kappa=1, rho="1/4", lam="1/10")
    assert not any("not reported" in n for n in r.notes)
    assert any(n.startswith("free_energy: the replica-symmetric free energy") for n in r.notes)


@pytest.mark.slow
def test_alignment_free_energy_is_the_sampled_minimal_training_objective():
    """Paper A with C_train = powerlaw:1 (the theory at each d on that d's spectrum): d = 16, 24,
    32, 48, 100 seeds each: half of paper A's minimal objective per kappa d^2 extrapolates to the
    free energy within three standard errors; a theory 5 % off either way is rejected."""
    from replica.derivations.finite_size import fit
    from replica.simulate.experiment import make_experiment, theory_result, training_objective

    params = dict(alpha="2", tau="9/4", kappa="3/2", rho="1/10", lam="1/5", train="powerlaw:1",
                  test="identity")
    rows = []
    for d in (16, 24, 32, 48):
        exp = make_experiment("alignment", d, **params)
        theory = float(theory_result(exp, dps=20, at="realised")["free_energy"])
        v = np.array([training_objective(exp, np.random.SeedSequence(7, spawn_key=(d, s)))
                      for s in range(100)])
        rows.append(dict(d=d, key="f", mean=float(v.mean()), sem=float(v.std(ddof=1) / 10),
                         seeds=100, theory=theory))
    assert fit(rows, "f").consistent, fit(rows, "f")
    for shift in (0.05, -0.05):
        assert not fit(rows, "f", theory_shift=shift).consistent, shift
