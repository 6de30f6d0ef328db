"""Low-rank model: the derivation from the free energy (R1), and the general saddle-point
mechanism it uses (``replica.symbolic.saddle``)."""

import pytest
import sympy

from replica.derivations import lowrank_steps as S
from replica.models import lowrank as L
from replica.symbolic.saddle import (Alias, SaddlePoint, SaddlePointError, is_zero,
                                     spectral_family, verify_steps)
from replica.symbolic.steps import Step


# ---------------------------------------------------------------------------------------------
# The general mechanism
# ---------------------------------------------------------------------------------------------
def test_spectral_family_derivatives_chain():
    f = spectral_family("phi_test")
    x = sympy.Symbol("x")
    assert sympy.diff(f[0](x), x) == f[1](x)
    assert sympy.diff(f[0](x), x, 3) == f[3](x)
    # chain rule through an argument that is an expression
    y = sympy.Symbol("y")
    assert sympy.diff(f[0](x * y), y) == x * f[1](x * y)
    assert str(f[2](x)) == "phi_test''(x)"
    assert sympy.latex(f[1](x)) == r"\phi_{test}'\left(x\right)"
    assert spectral_family("phi_test") is f  # one family per name
    assert f.order_of(f[2](x)) == 2
    assert f.members_in(f[0](x) + f[2](x)) == [f[0], f[2]]


def test_mechanism_on_a_toy_free_energy():
    """A free energy unrelated to the low-rank model: pairs (a, ahat), (b, bhat), an alias
    w = (mu + bhat)/ahat and an abstract h(w). The derived equations are checked against a
    hand computation and against differentiation of the explicit free energy."""
    a, b, ahat, bhat, c, mu = sympy.symbols("a b ahat bhat c mu", real=True)
    w = sympy.Symbol("w", real=True)
    h = spectral_family("h_toy")
    f = -ahat * a / 2 + bhat * b + c * sympy.log(1 + a) - b**2 / 2 - ahat * h[0](w) / 2
    sp = SaddlePoint(f, [(a, ahat), (b, bhat)], [Alias(w, (mu + bhat) / ahat, mu)])
    fp = sp.fixed_point
    assert list(fp) == [ahat, bhat, a, b]
    assert is_zero(fp[ahat] - 2 * c / (1 + a))
    assert is_zero(fp[bhat] - b)
    # d/dahat: -a/2 - h/2 - ahat/2 h'(w) dw/dahat, dw/dahat = -w/ahat  =>  a = -h + w h'
    assert is_zero(fp[a] - (-h[0](w) + w * h[1](w)))
    # d/dbhat: b - ahat/2 h'(w) / ahat  =>  b = h'/2
    assert is_zero(fp[b] - h[1](w) / 2)
    steps = sp.steps()
    assert all(isinstance(s, Step) for s in steps)
    assert all(verify_steps(steps).values())
    phi, aliases = sp.reduced_map()
    assert set(phi) == {a, b}
    assert is_zero(aliases[w] - (mu + b) * (1 + a) / (2 * c))


def test_mechanism_rejects_a_nonlinear_condition():
    a, ahat = sympy.symbols("a ahat", real=True)
    f = -ahat**3 * a / 3 + a**2 / 2
    with pytest.raises(SaddlePointError, match="not linear"):
        SaddlePoint(f, [(a, ahat)]).fixed_point


def test_mechanism_rejects_an_alias_through_an_alias():
    a, ahat = sympy.symbols("a ahat", real=True)
    w, v = sympy.symbols("w v")
    with pytest.raises(SaddlePointError):
        SaddlePoint(a * ahat, [(a, ahat)], [Alias(w, ahat), Alias(v, w + 1)])


# ---------------------------------------------------------------------------------------------
# The low-rank derivation
# ---------------------------------------------------------------------------------------------
def test_stationarity_of_R1_is_exactly_R2_to_R8():
    """Each derived fixed-point equation minus the authors' (R2)-(R3), (R5)-(R8) cancels to 0,
    with g and g' abstract."""
    residuals = L.SADDLE.compare(S.PUBLISHED_EQUATIONS)
    assert set(residuals) == set(S.PUBLISHED_EQUATIONS) and len(residuals) == 10
    for target, res in residuals.items():
        assert is_zero(res), (target, res)


def test_chain_rule_through_z_gives_the_z_dz_terms():
    """dz/dqhat = -z/qhat and dz/dqbarhat = -1/qhat appear in the derivatives."""
    z, qhat, qbarhat = L.z, L.qhat, L.qbarhat
    dz = sympy.diff(L.Z_DEFINITION, qhat)
    assert is_zero(L.SADDLE.realias(dz, avoid=(L.q,)) + z / qhat)
    assert is_zero(sympy.diff(L.Z_DEFINITION, qbarhat) + 1 / qhat)
    # q's equation contains z g'(z) terms only through that chain rule
    assert L.fixed_point_equations()[L.q].has(L.G[1](z))


def test_conjugates_at_the_saddle():
    fp = L.fixed_point_equations()
    assert is_zero(fp[L.qhat] - fp[L.mhat])
    assert is_zero(fp[L.qbarhat] - L.EPS * fp[L.qhat])
    assert is_zero(fp[L.chibarhat] - L.EPS * fp[L.chihat])


@pytest.mark.slow
@pytest.mark.parametrize("step", S.derivation_steps(), ids=lambda s: s.name)
def test_every_derivation_step_verifies(step):
    assert isinstance(step, Step)
    assert step.sentence and isinstance(step.objects, dict)
    assert step.verify(), step.name


def test_derivation_step_names_are_unique_and_complete():
    names = [s.name for s in S.derivation_steps()]
    assert len(names) == len(set(names))
    for must in ("free_energy", "agrees_with_published", "reduced_map", "spectral_closed_forms",
                 "spectral_atom_split",
                 "observables", "errors", "decomposition", "effective_ridge",
                 "lambda0_closed_form"):
        assert must in names
    assert sum(n.startswith("stationarity_") for n in names) == 10
    assert sum(n.startswith("fixed_point_") for n in names) == 10


def test_checks_are_not_vacuous():
    """A wrong reference equation is detected; a wrong closed form is detected."""
    wrong = dict(S.PUBLISHED_EQUATIONS)
    wrong[L.q] = wrong[L.q] + L.z**3 * L.G[1](L.z) / L.qhat**2 / 10
    assert not L.SADDLE.agrees_with(wrong)
    wrong_h = dict(S.PUBLISHED_EQUATIONS)
    wrong_h[L.chihat] = wrong_h[L.chihat] * L.Z_DEFINITION  # nonsense
    assert not L.SADDLE.agrees_with(wrong_h)


def test_decomposition_brackets_are_the_spec_ones():
    """S/T/R pieces of q and qbar (taken from the derived equations) equal the authors'
    brackets (R7)-(R8)."""
    z, g, g1, k = L.z, L.G[0](L.z), L.G[1](L.z), L.kappa
    qh, mh, ch, cbh = L.qhat, L.mhat, L.chihat, L.chibarhat
    pc = L.pieces()
    ref = {"q": {"S": mh**2 * (1 + 2 * z + 3 * z**2 * g + z**3 * g1) / qh**2,
                 "T": ch / k * (1 + 2 * z * g + z**2 * g1) / qh**2,
                 "R": cbh / k * (g + z * g1) / qh**2},
           "qbar": {"S": mh**2 * (1 + 2 * z * g + z**2 * g1) / qh**2,
                    "T": ch / k * (g + z * g1) / qh**2,
                    "R": cbh / k * g1 / qh**2}}
    for name, parts in ref.items():
        for key, expr in parts.items():
            assert is_zero(pc[name][key] - expr), (name, key)


def test_alpha_test_enters_only_through_qbar_over_alpha_test():
    for prot in L.ERROR_KEYS:
        e = L.error_expr(prot)
        assert is_zero(sympy.diff(e, L.alpha_test) + (1 + L.sigma_test**2) * L.qbar
                       / L.alpha_test**2)


def test_reduced_map_is_free_of_kappa():
    phi, z_theta = L.reduced_map()
    assert not any(e.has(L.kappa) for e in phi.values())
    assert is_zero(z_theta.subs(L.lam, 0) + L.EPS)
