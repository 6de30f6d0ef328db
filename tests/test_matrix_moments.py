"""Gaussian moments of matrix expressions at a symbolic dimension (replica.symbolic.matrix_moments):
the rules against explicit components, the general-D residual covariance against the component
computation at D = 2, and a planted wrong covariance caught."""

import numpy as np
import pytest
import sympy

from replica.derivations import unified as U
from replica.symbolic.matrix_moments import (MomentError, expand_traces, gaussian_average,
                                             replace_forms, scalar)

D = sympy.Symbol("D", positive=True)


def test_quadratic_form_and_outer_product_rules_match_components():
    """E[u^T v v^T w + v^T A v + 3] for v ~ N(0, Sigma) at D = 3 with random numbers: the
    general-D average, written out, equals the component-wise value u^T Sigma w + tr(A Sigma) + 3."""
    rng = np.random.default_rng(0)
    A, S = sympy.MatrixSymbol("A", D, D), sympy.MatrixSymbol("Sigma", D, D)
    u, v, w = (sympy.MatrixSymbol(n, D, 1) for n in "uvw")
    expr = u.T * v * v.T * w + v.T * A * v + 3 * sympy.Identity(1) + u.T * v
    avg = expand_traces(scalar(gaussian_average(expr, v, S)))
    An, Bn = rng.standard_normal((3, 3)), rng.standard_normal((3, 3))
    Sn = Bn @ Bn.T
    un, wn = rng.standard_normal((3, 1)), rng.standard_normal((3, 1))
    vals = {A.subs(D, 3): sympy.Matrix(An), S.subs(D, 3): sympy.Matrix(Sn),
            u.subs(D, 3): sympy.Matrix(un), w.subs(D, 3): sympy.Matrix(wn)}
    got = float(avg.subs(D, 3).subs(vals).doit())
    want = float((un.T @ Sn @ wn)[0, 0] + np.trace(An @ Sn) + 3)
    assert got == pytest.approx(want, rel=1e-12)


def _isserlis_4(S):
    """E[v_i v_j v_k v_l] for v ~ N(0, S), written component by component (Isserlis)."""
    return (np.einsum("ij,kl->ijkl", S, S) + np.einsum("ik,jl->ijkl", S, S)
            + np.einsum("il,jk->ijkl", S, S))


def _numbers(expr, names, n=3):
    return np.array(expr.subs(D, n).subs(names).doit().tolist(), dtype=float)


def test_degree_four_rules_match_isserlis_components():
    """E[v v^T A v v^T] (a matrix) and E[v^T A v v^T B v] (a scalar) at D = 3, random A, B and
    Sigma: the general-D averages, written out, equal the component-wise fourth moments."""
    rng = np.random.default_rng(1)
    A, B, S = (sympy.MatrixSymbol(n, D, D) for n in ("A", "B", "Sigma"))
    v = sympy.MatrixSymbol("v", D, 1)
    An, Bn, Cn = (rng.standard_normal((3, 3)) for _ in range(3))
    Sn = Cn @ Cn.T
    names = {A.subs(D, 3): sympy.Matrix(An), B.subs(D, 3): sympy.Matrix(Bn),
             S.subs(D, 3): sympy.Matrix(Sn)}
    E4 = _isserlis_4(Sn)
    outer = gaussian_average(v * v.T * A * v * v.T, v, S)
    assert np.allclose(_numbers(outer, names), np.einsum("ijkl,jk->il", E4, An), rtol=1e-12)
    forms = expand_traces(scalar(gaussian_average(v.T * A * v * v.T * B * v, v, S)))
    got = float(forms.subs(D, 3).subs(names).doit())
    assert got == pytest.approx(float(np.einsum("ijkl,ij,kl->", E4, An, Bn)), rel=1e-12)


def test_degree_four_with_an_empty_middle_and_a_planted_pairing_caught(monkeypatch):
    """E[v v^T v v^T] = 2 Sigma^2 + tr(Sigma) Sigma (A = I); dropping one of the three pairings
    makes the rule disagree with the components."""
    import replica.symbolic.matrix_moments as MM
    rng = np.random.default_rng(2)
    S = sympy.MatrixSymbol("Sigma", D, D)
    v = sympy.MatrixSymbol("v", D, 1)
    Cn = rng.standard_normal((3, 3))
    Sn = Cn @ Cn.T
    names = {S.subs(D, 3): sympy.Matrix(Sn)}
    want = np.einsum("ijkl,jk->il", _isserlis_4(Sn), np.eye(3))
    assert np.allclose(_numbers(gaussian_average(v * v.T * v * v.T, v, S), names), want)
    good = MM._degree_four
    monkeypatch.setattr(MM, "_degree_four", lambda *a: good(*a)[:2])
    assert not np.allclose(_numbers(gaussian_average(v * v.T * v * v.T, v, S), names), want)


def test_higher_degree_and_other_shapes_are_refused():
    v = sympy.MatrixSymbol("v", D, 1)
    u, w = sympy.MatrixSymbol("u", D, 1), sympy.MatrixSymbol("w", D, 1)
    with pytest.raises(MomentError, match="degree 6"):
        gaussian_average(v.T * v * v.T * v * v.T * v, v, sympy.Identity(D))
    with pytest.raises(MomentError, match="degree-4 term of another shape"):
        gaussian_average(v * u.T * v * w.T * v * v.T, v, sympy.Identity(D))


def test_residual_covariance_is_derived_at_every_dimension():
    K = U.residual_covariance_general_d()
    typed = (U.L.sigma**2 + U.c_train - U.m_a - U.m_b + U.Q_ab + U.eps_sym * U.Qbar_ab
             + U.Q_ab / U.L_context)
    assert sympy.expand(K - typed) == 0


def test_a_wrong_query_covariance_is_caught():
    """With the query covariance I instead of I/D the general-D average is not the residual
    covariance (the check of the low-rank step compares exactly this expression)."""
    Ga, Gb = sympy.MatrixSymbol("Gamma_a", D, D), sympy.MatrixSymbol("Gamma_b", D, D)
    w, x = sympy.MatrixSymbol("w", D, 1), sympy.MatrixSymbol("x", D, 1)
    r_a, r_b = x.T * w - x.T * Ga * w, x.T * w - x.T * Gb * w
    wrong = expand_traces(scalar(gaussian_average(r_a.T * r_b, x, sympy.Identity(D))))
    right = expand_traces(scalar(gaussian_average(r_a.T * r_b, x, sympy.Identity(D) / D)))
    forms = {w.T * w: D * U.c_train, w.T * Ga * w: D * U.m_a, w.T * Gb * w: D * U.m_b,
             w.T * Ga.T * Gb * w: D * U.Q_ab}
    assert sympy.expand(replace_forms(right, forms) - (U.c_train - U.m_a - U.m_b + U.Q_ab)) == 0
    assert sympy.expand(replace_forms(wrong, forms) - (U.c_train - U.m_a - U.m_b + U.Q_ab)) != 0


def test_low_rank_step_check_passes():
    from replica.derivations import lowrank_from_model as M
    assert M._check_residual_covariance()


def test_canonical_traces_identify_rotations_and_transposes_only():
    from replica.symbolic.matrix_moments import canonical_traces
    A, B, C = (sympy.MatrixSymbol(n, D, D) for n in "ABC")
    T = sympy.Trace
    assert canonical_traces(T(A * B * C) - T(B * C * A)) == 0
    assert canonical_traces(T(A * B * C) - T(C.T * B.T * A.T)) == 0
    assert canonical_traces(T(A * B.T) - T(B * A.T)) == 0
    assert canonical_traces(T(A * B * C) - T(A * C * B)) != 0
    assert canonical_traces(T(A * B) - T(A * B.T)) != 0


def test_a_form_left_in_a_trace_is_averaged_by_the_next_vector():
    """E_x E_t[x^T G t t^T G^T x] for t ~ N(0, I), x ~ N(0, I/D): the t average leaves
    tr(G^T x x^T G) in the coefficient; the x average still gives tr(G G^T)/D."""
    from replica.symbolic.matrix_moments import canonical_traces
    G = sympy.MatrixSymbol("G", D, D)
    x, t = sympy.MatrixSymbol("x", D, 1), sympy.MatrixSymbol("t", D, 1)
    eps = sympy.Symbol("eps", positive=True)
    e = x.T * G * (sympy.sqrt(eps) * t)
    avg = gaussian_average(gaussian_average(e.T * e, t, sympy.Identity(D)), x,
                           sympy.Identity(D) / D)
    assert canonical_traces(scalar(avg) - eps * sympy.Trace(G * G.T) / D) == 0
