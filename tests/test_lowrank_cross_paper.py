"""The cross-paper identity.

Paper A's theory with the two-atom training spectrum C_train = P/rho (``lowrank:rho`` at a d with
rho d an integer: the alignment theory depends only on the spectrum's atoms), noise variance
rho_A = sigma^2 and ridge lambda_A = (kappa/tau) lambda, reproduces the low-rank replica errors
with sigma_test = sigma and alpha_test = alpha:

    E_ICL(C_test = C_train) = eps_IDG,   E_ICL(C_test = I) = eps_ODG,   tau q^A = eps_TM.
"""

from fractions import Fraction as Fr

import mpmath
import pytest

import replica
from replica.numerics import agreement_digits
from replica.params import to_mpf

POINTS = [
    # tau < 1 with lambda > 0 (golden point 3, at sigma_test = sigma)
    dict(alpha=Fr(1), tau=Fr(1, 2), kappa=Fr(1, 2), rho=Fr(3, 10), sigma=Fr(1, 2), lam=Fr(1, 10)),
    # tau > 1 with lambda = 0 (golden point 1)
    dict(alpha=Fr(2), tau=Fr(9, 4), kappa=Fr(3, 2), rho=Fr(9, 10), sigma=Fr(3, 10), lam=Fr(0)),
    # tau > 1 with lambda > 0 (golden point 2)
    dict(alpha=Fr(23, 10), tau=Fr(17, 10), kappa=Fr(1), rho=Fr(1, 5), sigma=Fr(3, 1000),
         lam=Fr(3)),
    # task-scarce (rho > kappa), tau > 1, lambda = 0, large alpha
    dict(alpha=Fr(1000), tau=Fr(3), kappa=Fr(1, 5), rho=Fr(7, 10), sigma=Fr(1, 2), lam=Fr(0)),
    # tau < 1, small ridge, rho = 1 (full rank: paper B's isotropic case)
    dict(alpha=Fr(3), tau=Fr(2, 5), kappa=Fr(3, 2), rho=Fr(1), sigma=Fr(1), lam=Fr(1, 100)),
]


@pytest.mark.parametrize("p", POINTS, ids=lambda p: f"tau={p['tau']},lam={p['lam']}")
def test_lowrank_equals_alignment_with_a_two_atom_spectrum(p):
    dps = 40
    lr = replica.solve("lowrank", alpha=p["alpha"], tau=p["tau"], kappa=p["kappa"], rho=p["rho"],
                       sigma=p["sigma"], lam=p["lam"], sigma_test=p["sigma"], dps=dps)
    lam_a = p["kappa"] * p["lam"] / p["tau"]
    spec = f"lowrank:{p['rho']}"
    common = dict(alpha=p["alpha"], tau=p["tau"], kappa=p["kappa"], rho=p["sigma"] ** 2,
                  lam=lam_a)
    same = replica.solve("alignment", **common, d=10, train=spec, test=spec, dps=dps)
    iso = replica.solve("alignment", **common, d=10, train=spec, test="identity", dps=dps)
    assert lr.digits >= 35 and same.digits >= 35 and iso.digits >= 35
    with mpmath.workdps(dps):
        assert agreement_digits(lr["idg"], same["e_icl"], dps) >= 25
        assert agreement_digits(lr["odg"], iso["e_icl"], dps) >= 25
        assert agreement_digits(lr["tm"], to_mpf(p["tau"]) * same["q"], dps) >= 25
        # the effective ridge and noise: lambda/qhat = lambda_tilde, -z = sigma_A
        assert agreement_digits(-lr["z"], same["sigma"], dps) >= 25
        if p["lam"] > 0:
            assert agreement_digits(to_mpf(p["lam"]) / lr["qhat"], same["lambda_tilde"],
                                    dps) >= 25


def test_ridgeless_limit_at_tau_below_one_is_paper_a_ridgeless():
    """At tau < 1 there is no solution at lambda = 0, but lambda -> 0+ is regular:
    lambda/qhat -> paper A's effective ridge and the errors tend to A's ridgeless values (the
    difference is O(lambda))."""
    a, t, k, r, s = Fr(2), Fr(1, 2), Fr(3, 4), Fr(2, 5), Fr(1, 2)
    spec = f"lowrank:{r}"
    same = replica.solve("alignment", alpha=a, tau=t, kappa=k, rho=s**2, lam=0, d=10, train=spec,
                         test=spec, dps=30)
    iso = replica.solve("alignment", alpha=a, tau=t, kappa=k, rho=s**2, lam=0, d=10, train=spec,
                        test="identity", dps=30)
    devs = []
    for lam in (Fr(1, 10**8), Fr(1, 10**9)):
        lr = replica.solve("lowrank", alpha=a, tau=t, kappa=k, rho=r, sigma=s, lam=lam,
                           sigma_test=s, dps=30)
        with mpmath.workdps(30):
            assert agreement_digits(to_mpf(lam) / lr["qhat"], same["lambda_tilde"], 30) >= 7
            devs.append([abs(lr["idg"] - same["e_icl"]), abs(lr["odg"] - iso["e_icl"]),
                         abs(lr["tm"] - to_mpf(t) * same["q"])])
    with mpmath.workdps(30):
        for d1, d2 in zip(*devs):
            assert d1 < mpmath.mpf(10) ** -6 and 8 < d1 / d2 < 12  # O(lambda)
