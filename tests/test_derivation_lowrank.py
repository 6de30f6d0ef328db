"""The low-rank paper's derivation: every step's check passes, the saddle-point equations shown
are the ones derived from the free energy, the large-alpha results are what the paper states, and
the committed appendix ``derivations/lowrank.tex`` is what the code generates."""

import pytest
import sympy

from replica.derivations import lowrank as D
from replica.latex import to_latex
from replica.models import lowrank as L
from conftest import LazyDerivation

# the derivation is built once per process (tens of seconds): the full tier only
pytestmark = pytest.mark.slow


DOC = LazyDerivation("lowrank")  # built on first use, not while tests are collected


def test_saddle_point_equations_are_the_derived_ones():
    fp = L.fixed_point_equations()
    conj = DOC.step("conjugate_equations").objects
    order = DOC.step("order_equations").objects
    assert len(conj) == 5 and len(order) == 5
    for t in L.CONJUGATES:
        # Displayed with the named combinations: shorter, and exactly fp[t] once they are
        # substituted back.
        shown = conj[str(t)].rhs
        assert shown is not fp[t] and len(sympy.latex(shown)) < len(sympy.latex(fp[t]))
        back = shown.subs({D.E_tr_sym: L.E_TR, D.Delta_sym: L.DELTA}).subs(D.eps, L.EPS)
        assert sympy.cancel(back - fp[t]) == 0
    for t in L.ORDER_PARAMETERS:
        assert order[str(t)].rhs is fp[t]
    assert DOC.step("free_energy_r1").objects["f"].rhs is L.FREE_ENERGY


def test_the_closed_map_is_shown_with_named_combinations():
    shown = DOC.step("reduced_map_step").objects["q"].rhs
    assert {D.E_tr_sym, D.eps} <= shown.free_symbols and L.alpha not in shown.free_symbols
    phi, _ = L.reduced_map()
    assert len(sympy.latex(shown)) < len(sympy.latex(phi[L.q])) / 4


def test_a_wrong_named_combination_is_refused(monkeypatch):
    fp = L.fixed_point_equations()
    assert D.named_combinations(fp[L.chihat]) is not fp[L.chihat]
    monkeypatch.setattr(L, "E_TR", 1 + L.sigma**2 - 2 * L.m + L.q)  # epsilon qbar dropped
    with pytest.raises(ValueError, match="does not substitute back"):
        D.named_combinations(fp[L.chihat])


def test_large_alpha_results_match_the_spec_statements():
    a = D.large_alpha_limits()
    s2, tau, kappa, rho = L.sigma**2, L.tau, L.kappa, L.rho
    above = a["idg_rate_explicit"].subs({rho: sympy.Rational(7, 10), kappa: sympy.Rational(1, 2)})
    spec = s2 * (sympy.Rational(7, 10) - sympy.Rational(1, 2)) / (
        sympy.Rational(7, 10) * (tau - 1) * (1 + s2))
    assert sympy.simplify(above - spec) == 0
    odg = a["odg_rate"].subs(D.p0, 1 - sympy.Min(kappa, rho))
    assert sympy.simplify(odg - s2 * (1 - sympy.Min(kappa, rho)) / ((tau - 1) * (1 + s2))) == 0


def test_wrong_rate_is_caught(monkeypatch):
    # A limit derived from a wrong closed form (q0 without its structural term) must fail.
    cf = dict(L.LAMBDA0_CLOSED_FORM)
    cf[L.q0] = cf[L.q0].replace(lambda e: isinstance(e, L.GT[1]), lambda e: 0)
    monkeypatch.setattr(L, "LAMBDA0_CLOSED_FORM", cf)
    D.large_alpha_limits.cache_clear()
    try:
        assert D._check_idg_rate() is False
    finally:
        monkeypatch.undo()
        D.large_alpha_limits.cache_clear()
    assert D._check_idg_rate() is True


def test_display_names_d_and_l_for_the_shared_objects():
    tex = to_latex(D.W_HAT, D.SYMBOL_NAMES)
    assert tex.startswith(r"\frac{D}{L}") and r"\hat{w}" == to_latex(D.w_hat, D.SYMBOL_NAMES)
