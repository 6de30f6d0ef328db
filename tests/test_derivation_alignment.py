"""Paper A's derivation: every step's check passes, the displays come from the library's objects,
and the committed appendix ``derivations/alignment.tex`` is what the code generates."""

import pytest

from replica.derivations import alignment as D
from replica.models import alignment as A
from replica.derivations import paper_a as PA
from replica.symbolic import LAMBDA_I
from conftest import LazyDerivation


DOC = LazyDerivation("alignment")  # built on first use, not while tests are collected


@pytest.mark.slow
def test_displays_are_the_library_objects():
    a = D.a_sym
    assert D.M_EQUATION.rhs.subs(a, PA.A_COEFF) == A.M - PA.SELF_CONSISTENCY
    assert DOC.step("q").objects["q"].rhs is PA.Q
    assert DOC.step("e_scalar").objects["e_scalar"].rhs is PA.E_SCALAR
    assert DOC.step("e_misalign").objects["k"].rhs is PA.K_I
    assert DOC.step("sigma").objects["sigma"].rhs is PA.SIGMA
    m_prime = DOC.step("m_prime").objects["M_prime"].rhs
    assert m_prime.subs(a, PA.A_COEFF) == PA.M_PRIME_CLOSED
    spike = DOC.step("optimal_spike").objects["spike"].rhs
    assert spike.subs(D.lambda_j, LAMBDA_I) == PA.K_I


def test_isotropic_reduction_reaches_30_digits():
    rows = D.isotropic_comparison()
    assert len(rows) == 5
    assert {p["tau"] for p, *_ in rows} >= {"1/2", 4}
    assert min(min(ai, ag) for *_, ai, ag in rows) >= 30
    assert all(ra.digits >= 30 and rb.digits >= 30 for _, ra, rb, _, _ in rows)


def test_k_decreases_with_lambda_on_piano():
    for base in (D.PIANO, D.PIANO_TAU_LT_1):
        _, lams, ks = D._k_values(base)
        assert lams[0] > lams[-1] and ks[0] < ks[-1]
        assert all(k1 < k2 for k1, k2 in zip(ks, ks[1:]))  # lams decrease along the list
