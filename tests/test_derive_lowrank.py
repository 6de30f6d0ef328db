"""The low-rank free energy derived from the model (replica.derivations.lowrank_from_model): every
step's check passes, the derived free energy and observables are identical to the solver's, and a
deliberately wrong step (a sign, a missing factor, a wrong scaling) is caught."""

import pytest
import sympy

from replica.derivations import lowrank_from_model as M
from replica.models import lowrank as L
from replica.symbolic.replica_calculus import BETA, N_REPLICAS as n


@pytest.mark.parametrize("step", [s.name for s in M.steps()])
def test_step_check_passes(step):
    (s,) = [s for s in M.steps() if s.name == step]
    assert s.verify(), step


def test_derived_free_energy_is_the_solvers_r1():
    f, powers, parts = M.derived_free_energy()
    assert powers == (1, 1, 1)
    assert M.free_energy_difference(f) == 0
    # the energetic part alone is (tau/2kappa) E_tr/(1 + V)
    assert sympy.cancel(parts["energetic"] - L.tau / (2 * L.kappa) * L.E_TR / L.DELTA) == 0


def test_wrong_sign_of_the_energetic_part_is_caught():
    wrong = M.energetic_log(M.residual_covariance(), sign=-1)
    f, _, _ = M.derive_free_energy(energetic=wrong)
    assert M.free_energy_difference(f) != 0


def test_missing_factor_n_is_caught():
    # a coupling without the factor n in front of mhat m is not O(n): the replica limit refuses
    with pytest.raises(ValueError):
        M.derive_free_energy(coupling=M.coupling_log(m_factor=1))
    # an off-diagonal coupling counted without its n - 1 (the sign of the n -> 0 limit flips):
    # the beta^2 terms no longer cancel
    wrong = n / 2 * (M.Qhd * M.Qd - M.Qho * L.q) + n / 2 * (M.Qbhd * M.Qbd + M.Qbho * L.qbar) \
        - n * M.mh * L.m
    f, powers, _ = M.derive_free_energy(coupling=wrong)
    assert powers[2] == 2


def test_wrong_zero_temperature_scaling_is_caught():
    wrong = dict(M.ZERO_T_SCALINGS)
    wrong[M.Qho] = BETA * L.chihat          # off-diagonal conjugate of order beta, not beta^2
    wrong[M.Qhd] = BETA * L.qhat - BETA * L.chihat
    power, coeff = M.zero_temperature_part(M.coupling_log(), wrong)
    # the coupling still grows like beta, but the term chihat chi/2 of (R1) is lost
    assert power == 1 and not coeff.has(L.chihat)
    f, _, parts = M.derived_free_energy()
    f_wrong = f - parts["coupling"] - coeff
    assert M.free_energy_difference(f_wrong) != 0
    assert M.free_energy_difference(f - parts["coupling"]
                                    - M.zero_temperature_part(M.coupling_log())[1]) == 0


def test_observables_without_the_shared_field_are_caught(monkeypatch):
    law = dict(M.coordinate_law())
    law["common"] = (0, sympy.Integer(0))
    monkeypatch.setattr(M, "coordinate_law", lambda: law)
    M.derived_observables.cache_clear()
    try:
        assert M._check_observables() is False
        assert M._check_errors() is False
    finally:
        monkeypatch.undo()
        M.derived_observables.cache_clear()
    assert M._check_observables() and M._check_errors()


def test_context_check_rejects_a_wrong_variance(monkeypatch):
    # the covariance formula with sigma^2 missing from the isotropic part fails the exact check
    good = M.context_covariance_formula

    def wrong(w, D, c=None):
        eye = sympy.eye(D) if isinstance(D, int) else sympy.Identity(D)
        return good(w, D, c) - L.sigma**2 * D / M.Lc * eye
    monkeypatch.setattr(M, "context_covariance_formula", wrong)
    assert M._check_context_moments() is False


def test_context_moments_are_computed_at_every_dimension(monkeypatch):
    """The general-D moments are the mean w and (c + sigma^2) D/L I + w w^T/L; a formula whose
    rank-one part is doubled only where D is a symbol (the components at D = 2, 3 untouched)
    is caught by the general-D computation alone."""
    import sympy as sp
    mean, cov = M.context_moments_general_d()
    w, c = M.W_TASK, M.U.c_train
    assert M._collect_matrix_terms(mean) == {(w,): 1}
    assert M._collect_matrix_terms(cov) == {(): sp.expand((c + L.sigma**2) * M.D_sym / M.Lc),
                                            (w, w.T): 1 / M.Lc}
    good = M.context_covariance_formula

    def wrong(w, D, c=None):
        return good(w, D, c) + (0 if isinstance(D, int) else w * w.T / M.Lc)
    monkeypatch.setattr(M, "context_covariance_formula", wrong)
    assert M._check_context_moments() is False


def test_context_samples_agree_with_the_exact_moments():
    tab = M.context_table()
    for D, (mean_err, tmean, texact, tstd) in tab.items():
        assert abs(tmean - texact) < 4 * tstd / M.CONTEXT_SAMPLES ** 0.5
    # a wrong variance (sigma^2 counted twice) is far outside the sampling error at every size
    for D, (mean_err, tmean, texact, tstd) in tab.items():
        assert abs(tmean - (texact + 0.25 / 2)) > 4 * tstd / M.CONTEXT_SAMPLES ** 0.5


def test_entropic_factorisation_rejects_a_missing_kappa():
    # the per-eigenvalue form without the kappa in the field is not the explicit integral
    good = M.entropic_log_per_eigenvalue
    bad = (lambda det_shift=0: good() - n * L.kappa * M.mh**2 * M.s**2
           / (2 * M.entropic_block().A[0, 0]) * (1 - 1 / L.kappa))
    M.entropic_log_per_eigenvalue = bad
    try:
        assert M._check_entropic_factorisation() is False
    finally:
        M.entropic_log_per_eigenvalue = good
    assert M._check_entropic_factorisation()


def test_test_prompt_law_is_computed_at_every_dimension(monkeypatch):
    """The test-prompt moments computed at a symbolic D equal the displayed forms; a displayed
    E y_hat^2 without epsilon_test, or with tr(Gamma C Gamma) for tr(Gamma C Gamma^T), fails."""
    assert M._check_test_prompt_law()
    good = M.test_prompt_law_displayed

    def wrong():
        out = dict(good())
        out["yhyh"] = out["yhyh"].subs(L.ETEST, 0)
        return out
    monkeypatch.setattr(M, "test_prompt_law_displayed", wrong)
    assert M._check_test_prompt_law() is False
    G, C, D = M.Gamma_mat, M.C_mat, M.D_sym

    def reordered():
        out = dict(good())
        out["yhyh"] = sympy.Trace(G * C * G) / D + L.ETEST * sympy.Trace(G.T * G) / D
        return out
    monkeypatch.setattr(M, "test_prompt_law_displayed", reordered)
    assert M._check_test_prompt_law() is False
