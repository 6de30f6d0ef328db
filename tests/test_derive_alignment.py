"""Paper A derived from the model: the replica deterministic equivalent of the task covariance's
resolvent and the effective ridge of the pretraining problem
(:mod:`replica.derivations.alignment_from_model`, :mod:`replica.symbolic.deterministic_equivalent`).

Each check is run on the derived objects and on a deliberately wrong variant (a wrong sign, a
missing factor, a wrong scaling), which it must reject.
"""

from __future__ import annotations

import numpy as np
import pytest
import sympy

from replica.derivations import alignment_from_model as F
from replica.models import alignment as A
from replica.symbolic import LAMBDA_I
from replica.symbolic import deterministic_equivalent as DE
from replica.symbolic.spectral import SpectralAverage

# the derivation is built once per process (tens of seconds): the full tier only
pytestmark = pytest.mark.slow

G_RS, G = F.log_det_free_energy()
WRONG_SIGN = G + 2 * DE.omega * DE.omega_hat                 # + omega omegahat instead of -
MISSING_KAPPA = G.subs(DE.kappa, 1)  # kappa log(1 + omega/kappa) -> log(1 + omega)
WRONG_SCALING = G.subs(DE.kappa, 2 * DE.kappa)               # 2k tasks instead of k


def _wrong_field_term(g):
    """<log(z + omegahat lambda)> -> <log(z + omegahat lambda / 2)>: a missing factor 2 in the
    coupling of the fields to C."""
    return g.replace(lambda e: isinstance(e, SpectralAverage),
                     lambda e: SpectralAverage(e.args[0].subs(LAMBDA_I, LAMBDA_I / 2)))


def test_variational_log_det_form():
    """The variational log-determinant is <log(z + omegahat lambda)> + kappa log(1 + omega/kappa)
    - omega omegahat, and is finite and correct at C = 0: g = log z."""
    expected = (SpectralAverage(sympy.log(LAMBDA_I * DE.omega_hat + DE.z))
                + DE.kappa * sympy.log(1 + DE.omega / DE.kappa) - DE.omega * DE.omega_hat)
    assert sympy.simplify(sympy.expand_log(G - expected, force=True)) == 0


def test_off_diagonal_overlaps_are_stationary_at_zero():
    assert DE.off_diagonal_stationary(G_RS)
    # a term coupling the off-diagonal overlap to the diagonal one is caught
    assert not DE.off_diagonal_stationary(G_RS + DE.omega0 * DE.omega)


def test_replica_limit_rejects_a_missing_factor_of_n():
    """A wrong RS determinant det(A)^(n-1) det(A + B) (the n in front of B missing) does not
    vanish at n = 0, so its replica limit is refused."""
    from replica.symbolic.replica_calculus import replica_limit

    a, b = sympy.symbols("a b", positive=True)
    with pytest.raises(ValueError):
        replica_limit((DE.n - 1) * sympy.log(a) + sympy.log(a + b))


def test_stationarity_is_the_models_self_consistency():
    assert F.check_self_consistency(G)
    derived = DE.coefficient_equation(G, A.a_coeff)
    assert sympy.simplify(derived - A.SELF_CONSISTENCY_A) == 0
    for wrong in (WRONG_SIGN, MISSING_KAPPA, WRONG_SCALING, _wrong_field_term(G)):
        assert not F.check_self_consistency(wrong)


def test_resolvent_trace_is_eq_17():
    assert F.check_resolvent(G)
    assert not F.check_resolvent(MISSING_KAPPA)
    assert not F.check_resolvent(_wrong_field_term(G))


def test_log_det_and_resolvent_against_sampled_task_pools():
    """The variational log-determinant and M against (1/d) log det(R_k + z) and
    (1/d) tr(R_k + z)^-1 of sampled pools: within 3 s.e.m. at d = 400, rms error shrinking by
    more than 2 from d = 100 to d = 400; a wrong scaling (2k tasks) or a wrong field coupling
    is rejected."""
    assert F.check_empirical(G)
    rows = F.empirical_comparison(G, dims=(400,))
    for row in rows:
        assert abs(row[4]) < 3 * row[5] and abs(row[7]) < 3 * row[8]
    assert not F.check_empirical(WRONG_SCALING)
    assert not F.check_empirical(_wrong_field_term(G))


def test_context_second_moment_against_built_contexts():
    assert F.check_context_moment()

    def missing_noise(w, length, noise):
        return F.context_second_moment(w, length, 0.0)

    assert not F.check_context_moment(missing_noise)

    def no_one_over_ell(w, length, noise):
        dim = w.shape[0]
        return np.outer(w, w) + dim / length * (w @ w / dim + noise) * np.eye(dim)

    assert not F.check_context_moment(no_one_over_ell)


def test_feature_eigenvalue():
    assert F.check_feature_eigenvalue()
    # ell = d instead of ell = alpha d (a wrong scaling) is caught
    assert not F.check_feature_eigenvalue(F.LAMBDA_I + F.c_R + A.rho)


def test_effective_ridge_is_the_models_ridge_equation():
    g_ridge = F.ridge_free_energy(G)
    assert F.check_ridge_equation(g_ridge)
    assert sympy.simplify(F.effective_ridge_equation(g_ridge) - A.RIDGE_EQUATION) == 0
    # 1/tau samples per parameter instead of tau
    assert not F.check_ridge_equation(g_ridge.subs(A.tau, 1 / A.tau))
    # the context-noise shift forgotten: M is not the resolvent at sigma = s + lambdatilde
    unshifted = G.subs({DE.kappa: A.tau, DE.z: A.lam}, simultaneous=True)
    assert not F.check_ridge_equation(unshifted)


def test_ridgeless_limits():
    assert F.check_ridgeless()
    wrong = A.RIDGE_EQUATION.subs(A.lam, -A.lam)  # wrong sign of the ridge term
    assert not F.check_ridgeless(wrong)


def test_gaussian_equivalence_on_sampled_contexts():
    assert F.check_gaussian_equivalence()
    # the context noise s halved, or forgotten, is caught
    assert not F.check_gaussian_equivalence(shift_factor=0.5)
    assert not F.check_gaussian_equivalence(shift_factor=0.0)


def test_every_step_verifies_and_has_a_status():
    steps = F.steps()
    assert [s.name for s in steps] == list(F.STATUS)
    for s in steps:
        assert s.verify(), s.name
        kind, reason = F.STATUS[s.name]
        assert kind in ("computed", "stated")
        assert (kind == "stated") == bool(reason)


def test_isotropic_instance():
    assert F.check_isotropic_resolvent()
    assert F.check_isotropic_ridge()
    assert not F.check_isotropic_resolvent(MISSING_KAPPA)
    assert not F.check_isotropic_resolvent(WRONG_SIGN)
    assert not F.check_isotropic_ridge(A.RIDGE_EQUATION.subs(A.tau, 2 * A.tau))


def test_lowrank_instance():
    """The derived resolvent on P/rho agrees with the low-rank transform to all 50 digits (at
    least 40 required); a wrong scaling loses all of them; the ridge equations are identical."""
    assert F.lowrank_resolvent_digits() >= 40
    assert F.lowrank_resolvent_digits(WRONG_SCALING) < 5
    assert F.check_lowrank_ridge()
    # lambda_A = lambda (the kappa/tau of the two papers' ridge conventions forgotten)
    wrong = A.RIDGE_EQUATION.subs(A.lam, A.lam * A.tau / A.kappa)
    assert not F.check_lowrank_ridge(wrong)


def test_q_e_scalar_and_k_are_derived():
    assert F.check_q() and F.check_e_scalar() and F.check_k()
    mean_error, df2 = F.ridge_estimator_moments()
    # the degrees-of-freedom fraction without its 1/tau, or the fluctuation's error omitted
    assert not F.check_q(F.derived_q((mean_error, df2 * A.tau)))
    assert not F.check_q(F.derived_q((mean_error, df2 * 0)))
    # the fluctuation of the estimator counted twice in the scalar part
    assert not F.check_e_scalar(F.derived_e_scalar(F.derived_norm().subs(A.q, 2 * A.q)))
    # the fluctuation covariance with B + lambda_tilde instead of B
    r, f = F.r_i, F.f_r
    assert not F.check_k((1 - r * f) ** 2 + A.q * (r + A.sigma) * f**2)


def test_sampled_ridge_estimators():
    assert F.check_sampled_ridge()
    assert not F.check_sampled_ridge(2 * A.Q)              # a missing factor 1/2
    assert not F.check_sampled_ridge(A.Q.subs(A.tau, A.tau + 1))


def test_matrix_deterministic_equivalent():
    assert F.check_matrix_equivalent()
    assert not F.check_matrix_equivalent(coefficient=1.0)  # the population covariance (a = 1)


def test_task_memorisation_error():
    """e_tm = tau q for every C_train, and the sampled error on the pool's own tasks extrapolates
    to it (d = 16..40); a q 10% too large is rejected by the extrapolation."""
    assert F.check_e_tm()
    assert not F.check_e_tm(F.derived_e_tm() * 2)
    _, intercept, error = F.e_tm_extrapolation(sympy.Rational(11, 10) * A.Q)
    assert abs(intercept) > 2 * error


def test_reported_e_tm_is_the_derived_one():
    assert F.check_e_tm_model()
    # the test-length correction with the wrong sign is caught
    wrong = F.derived_e_tm() - (A.c_train + A.rho) * (1 / A.alpha_test - 1 / A.alpha) * \
        F.derived_norm().subs(A.q, F.derived_q())
    assert not F.check_e_tm_model(wrong)
